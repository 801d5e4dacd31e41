//! The Responses API wire format: the request body, and the response object (a non-streamed
//! body, or the `response` of a stream's final event).

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::chat::{
    ChatError, ChatMessage, ChatRequest, ChatResponse, ContentPart, DeferredGroup, FinishReason,
    Reasoning, ToolCall, ToolChoice, ToolDefinition, Usage,
};
use crate::providers::http::{
    MAX_EXCERPT, arguments_text, arguments_to_send, embedded_error, parse_json, shorten,
};
use crate::providers::strict::{Dialect, strict_schema};

/// Builds the request body (before `extra` is merged). `additions`: the deferred tools are
/// loaded by `additional_tools` items, not by a tool search.
pub(super) fn request_body(
    model: &str,
    request: ChatRequest<'_>,
    streaming: bool,
    store: bool,
    additions: bool,
) -> Value {
    let options = request.options;
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    if !request.instructions.is_empty() {
        body.insert("instructions".into(), json!(request.instructions));
    }
    body.insert(
        "input".into(),
        Value::Array(input_items(&request, additions)),
    );
    // With additions the deferred tools appear only in the input, where they are loaded.
    let searched = !additions && !request.deferred.is_empty();
    if !request.tools.is_empty() || searched {
        let mut tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({"type": "function", "name": tool.name, "description": tool.description,
                       "parameters": *tool.parameters})
            })
            .collect();
        if searched {
            tools.extend(
                request
                    .deferred
                    .iter()
                    .map(|group| namespace(group, None, None)),
            );
            tools.push(tool_search(request.deferred));
        }
        body.insert("tools".into(), Value::Array(tools));
        if let Some(choice) = &options.tool_choice {
            let choice = match choice {
                ToolChoice::Auto => json!("auto"),
                ToolChoice::None => json!("none"),
                ToolChoice::Required => json!("required"),
                ToolChoice::Tool(name) => json!({"type": "function", "name": name}),
            };
            body.insert("tool_choice".into(), choice);
        }
        if let Some(parallel) = options.parallel_tool_calls {
            body.insert("parallel_tool_calls".into(), json!(parallel));
        }
    }
    if let Some(temperature) = options.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if let Some(top_p) = options.top_p {
        body.insert("top_p".into(), json!(top_p));
    }
    if let Some(max) = options.max_output_tokens {
        body.insert("max_output_tokens".into(), json!(max));
    }
    if let Some(output) = request.output {
        // The `text.format` of the Responses API reference: a `json_schema` format with
        // `name`, `description`, `schema` and `strict` at the format's own level.
        let mut format = json!({
            "type": "json_schema",
            "name": output.name(),
            "schema": output.openai_schema(),
            "strict": output.openai_strict(),
        });
        if let Some(description) = output.description() {
            format["description"] = json!(description);
        }
        body.insert("text".into(), json!({ "format": format }));
    }
    body.insert("store".into(), json!(store));
    body.insert("stream".into(), json!(streaming));
    Value::Object(body)
}

/// A deferred group as a `namespace` tool of `defer_loading` functions: all of them, or the
/// `loaded` ones (a `tool_search_output`), with `note` after the description.
fn namespace(group: &DeferredGroup, loaded: Option<&[String]>, note: Option<&str>) -> Value {
    let tools: Vec<Value> = group
        .tools
        .iter()
        .filter(|tool| loaded.is_none_or(|names| names.contains(&tool.name)))
        .map(|tool| {
            json!({"type": "function", "name": tool.name, "description": tool.description,
                   "parameters": *tool.parameters, "defer_loading": true})
        })
        .collect();
    let description = match note {
        Some(note) if !note.is_empty() => format!("{}\n\n{note}", group.description),
        _ => group.description.clone(),
    };
    json!({"type": "namespace", "name": group.name, "description": description, "tools": tools})
}

/// The client-executed `tool_search` tool: its one argument names a namespace.
fn tool_search(groups: &[DeferredGroup]) -> Value {
    let names: Vec<&str> = groups.iter().map(|g| g.name.as_str()).collect();
    json!({
        "type": "tool_search",
        "execution": "client",
        "description": "Loads the functions of one namespace, to call them next.",
        "parameters": {
            "type": "object",
            "properties": {"namespace": {"type": "string", "enum": names,
                                         "description": "The namespace to load."}},
            "required": ["namespace"],
            "additionalProperties": false
        }
    })
}

/// A loaded tool as a function of an `additional_tools` item (the `FunctionToolParam` of the
/// `AdditionalTools` input item in openai-python's `response_input_item_param.py`): its own
/// name, and `strict: true` with the strict form of its schema where that expresses it.
fn added_function(tool: &ToolDefinition) -> Value {
    let (parameters, strict) = match strict_schema(&tool.parameters, Dialect::OpenAi) {
        Some(strict) => (strict, true),
        None => ((*tool.parameters).clone(), false),
    };
    json!({"type": "function", "name": tool.name, "description": tool.description,
           "parameters": parameters, "strict": strict})
}

/// The `additional_tools` item that loads `names` (those the request defers; others are
/// left out), or `None` when it would load nothing.
fn additional_tools(request: &ChatRequest<'_>, names: &[&str]) -> Option<Value> {
    let tools: Vec<Value> = names
        .iter()
        .filter_map(|name| request.deferred_tool(name))
        .map(|(_, tool)| added_function(tool))
        .collect();
    (!tools.is_empty())
        .then(|| json!({"type": "additional_tools", "role": "developer", "tools": tools}))
}

/// The conversation as input items. Message items carry an explicit `"type": "message"`
/// (llama.cpp rejects them without). `additions`: a result that loads deferred tools is
/// followed, after the results of the same response, by one `additional_tools` item with
/// their definitions, and calls of them carry no namespace.
fn input_items(request: &ChatRequest<'_>, additions: bool) -> Vec<Value> {
    let history = request.messages;
    // The tools the results since the last assistant message load (with `additions`).
    let mut loading: Vec<&str> = Vec::new();
    // The ids of the tool searches made so far, whose results are `tool_search_output`s.
    let mut searches: Vec<&str> = Vec::new();
    let mut items = Vec::with_capacity(history.len());
    for message in history {
        if !matches!(message, ChatMessage::Tool { .. }) && !loading.is_empty() {
            items.extend(additional_tools(request, &loading));
            loading.clear();
        }
        match message {
            ChatMessage::User { content } => {
                items.push(json!({"type": "message", "role": "user", "content": content}));
            }
            ChatMessage::Assistant {
                content,
                tool_calls,
                reasoning,
            } => {
                // Reasoning can only go back in its encrypted form: with `store: false` the
                // server keeps no item an id could refer to.
                for thought in reasoning {
                    if let Some(encrypted) = &thought.signature {
                        let mut item = json!({"type": "reasoning", "encrypted_content": encrypted,
                                              "summary": []});
                        if !thought.text.is_empty() {
                            item["summary"] =
                                json!([{"type": "summary_text", "text": thought.text}]);
                        }
                        if let Some(id) = &thought.id {
                            item["id"] = json!(id);
                        }
                        items.push(item);
                    }
                }
                if let Some(text) = content.as_deref().filter(|t| !t.is_empty()) {
                    items.push(json!({"type": "message", "role": "assistant", "content": text}));
                }
                for call in tool_calls {
                    let arguments = arguments_to_send(&call.arguments);
                    if request.tool_search == Some(call.name.as_str()) {
                        searches.push(&call.id);
                        let arguments: Value =
                            serde_json::from_str(arguments).unwrap_or_else(|_| json!({}));
                        items.push(json!({"type": "tool_search_call", "call_id": call.id,
                                          "execution": "client", "status": "completed",
                                          "arguments": arguments}));
                        continue;
                    }
                    let mut item = json!({"type": "function_call", "call_id": call.id,
                                          "name": call.name, "arguments": arguments});
                    if !additions && let Some((group, _)) = request.deferred_tool(&call.name) {
                        item["namespace"] = json!(group.name);
                    }
                    items.push(item);
                }
            }
            ChatMessage::Tool {
                call_id,
                content,
                references,
                ..
            } if searches.contains(&call_id.as_str()) => {
                // The loaded namespace, with the result text (the container's function result
                // and system prompt) after its description; a search that found nothing loads
                // nothing.
                let tools: Vec<Value> = request
                    .deferred
                    .iter()
                    .filter(|g| g.tools.iter().any(|t| references.contains(&t.name)))
                    .map(|g| namespace(g, Some(references), Some(content)))
                    .collect();
                items.push(json!({"type": "tool_search_output", "call_id": call_id,
                                  "execution": "client", "status": "completed",
                                  "tools": tools}));
            }
            // `is_error` has no field in this API: the result text carries it.
            ChatMessage::Tool {
                call_id,
                content,
                parts,
                references,
                ..
            } => {
                if additions {
                    for name in references {
                        if !loading.contains(&name.as_str()) {
                            loading.push(name);
                        }
                    }
                }
                // With images: the output as a list of `input_text` and `input_image` parts,
                // in the result's order; what has no part type goes as its text form.
                let output = match crate::chat::parts_to_send(parts) {
                    Some(parts) => Value::Array(
                        parts
                            .iter()
                            .filter(|p| p.as_text() != Some(""))
                            .map(output_part)
                            .collect(),
                    ),
                    None => json!(content),
                };
                items.push(json!({"type": "function_call_output", "call_id": call_id,
                                  "output": output}));
            }
        }
    }
    if !loading.is_empty() {
        items.extend(additional_tools(request, &loading));
    }
    items
}

/// One part of a `function_call_output`'s output list: `input_image` (a data URL) for an image
/// type the API takes, `input_text` for everything else.
fn output_part(part: &ContentPart) -> Value {
    match part {
        ContentPart::Image { mime_type, data } if crate::chat::sendable_image(mime_type) => {
            json!({"type": "input_image", "image_url": crate::chat::data_url(mime_type, data),
                   "detail": "auto"})
        }
        other => json!({"type": "input_text", "text": other.text_form()}),
    }
}

#[derive(Deserialize, Default)]
pub(super) struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    input_tokens_details: Option<InputDetails>,
    #[serde(default)]
    output_tokens_details: Option<OutputDetails>,
}

#[derive(Deserialize)]
struct InputDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct OutputDetails {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

impl From<WireUsage> for Usage {
    fn from(usage: WireUsage) -> Self {
        Usage {
            input_tokens: usage.input_tokens.unwrap_or(0),
            output_tokens: usage.output_tokens.unwrap_or(0),
            cached_input_tokens: usage
                .input_tokens_details
                .and_then(|d| d.cached_tokens)
                .unwrap_or(0),
            reasoning_tokens: usage
                .output_tokens_details
                .and_then(|d| d.reasoning_tokens)
                .unwrap_or(0),
        }
    }
}

/// One output item.
#[derive(Deserialize, Debug, Clone, Default)]
pub(super) struct WireItem {
    #[serde(default, rename = "type")]
    pub(super) kind: String,
    #[serde(default)]
    pub(super) id: Option<String>,
    #[serde(default)]
    pub(super) call_id: Option<String>,
    #[serde(default)]
    pub(super) name: Option<String>,
    #[serde(default)]
    pub(super) arguments: Option<Value>,
    #[serde(default)]
    pub(super) content: Option<Vec<WireContent>>,
    #[serde(default)]
    pub(super) summary: Option<Vec<WireContent>>,
    #[serde(default)]
    pub(super) encrypted_content: Option<String>,
    /// `client` or `server`, on `tool_search_call` items.
    #[serde(default)]
    pub(super) execution: Option<String>,
}

/// A part of a message item (`output_text`, `refusal`) or of a reasoning summary.
#[derive(Deserialize, Debug, Clone, Default)]
pub(super) struct WireContent {
    #[serde(default)]
    pub(super) text: Option<String>,
    #[serde(default)]
    pub(super) refusal: Option<String>,
}

/// The response object.
#[derive(Deserialize, Default)]
pub(super) struct WireResponse {
    #[serde(default)]
    pub(super) status: Option<String>,
    #[serde(default)]
    pub(super) output: Option<Vec<WireItem>>,
    #[serde(default)]
    pub(super) usage: Option<WireUsage>,
    #[serde(default)]
    pub(super) incomplete_details: Option<IncompleteDetails>,
    #[serde(default)]
    pub(super) error: Option<Value>,
}

#[derive(Deserialize)]
pub(super) struct IncompleteDetails {
    #[serde(default)]
    pub(super) reason: Option<String>,
}

impl WireResponse {
    /// Why the model stopped, given whether it called tools.
    pub(super) fn finish_reason(&self, has_calls: bool) -> FinishReason {
        match self.status.as_deref() {
            Some("incomplete") => match self
                .incomplete_details
                .as_ref()
                .and_then(|d| d.reason.as_deref())
            {
                Some("max_output_tokens") => FinishReason::Length,
                Some("content_filter") => FinishReason::ContentFilter,
                Some(other) => FinishReason::Other(other.to_owned()),
                None => FinishReason::Other("incomplete".to_owned()),
            },
            _ if has_calls => FinishReason::ToolCalls,
            _ => FinishReason::Stop,
        }
    }

    /// The error of a `failed` response as [`ChatError::Status`].
    pub(super) fn failure(&self, http_status: u16) -> Option<ChatError> {
        let error = self.error.as_ref().filter(|e| !e.is_null());
        if self.status.as_deref() != Some("failed") && error.is_none() {
            return None;
        }
        Some(match error {
            Some(error) => embedded_error(error, http_status),
            None => ChatError::Status {
                status: http_status,
                message: "the response failed without an error message".into(),
            },
        })
    }
}

/// What one item contributes to a response.
pub(super) fn add_item(
    item: WireItem,
    search: &str,
    text: &mut String,
    calls: &mut Vec<ToolCall>,
    reasoning: &mut Vec<Reasoning>,
) -> Result<(), ChatError> {
    match item.kind.as_str() {
        "message" => {
            for part in item.content.unwrap_or_default() {
                text.push_str(&part.text.or(part.refusal).unwrap_or_default());
            }
        }
        "function_call" => {
            let name = item.name.unwrap_or_default();
            if name.is_empty() {
                return Err(ChatError::Malformed(format!(
                    "function_call item {} of the response has no name",
                    calls.len()
                )));
            }
            let id = item
                .call_id
                .filter(|id| !id.is_empty())
                .or(item.id.filter(|id| !id.is_empty()))
                .unwrap_or_else(|| format!("call_{}", calls.len()));
            calls.push(ToolCall {
                id,
                name,
                arguments: arguments_text(item.arguments),
            });
        }
        // A client-executed tool search (the native collapsing layout): the agent answers it.
        "tool_search_call" if item.execution.as_deref() != Some("server") => {
            let id = item
                .call_id
                .filter(|id| !id.is_empty())
                .or(item.id.filter(|id| !id.is_empty()))
                .unwrap_or_else(|| format!("call_{}", calls.len()));
            calls.push(ToolCall {
                id,
                name: search.to_owned(),
                arguments: arguments_text(item.arguments),
            });
        }
        "reasoning" => {
            let summary: String = item
                .summary
                .unwrap_or_default()
                .into_iter()
                .chain(item.content.unwrap_or_default())
                .filter_map(|part| part.text)
                .collect();
            reasoning.push(Reasoning {
                text: summary,
                signature: item.encrypted_content,
                id: item.id,
                ..Reasoning::default()
            });
        }
        // Items this client does not use (built-in tools...).
        _ => {}
    }
    Ok(())
}

/// Builds the response from a response object's output.
pub(super) fn response_from(
    response: WireResponse,
    http_status: u16,
    search: &str,
) -> Result<ChatResponse, ChatError> {
    if let Some(error) = response.failure(http_status) {
        return Err(error);
    }
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    let mut reasoning = Vec::new();
    let mut response = response;
    for item in response.output.take().unwrap_or_default() {
        add_item(item, search, &mut text, &mut tool_calls, &mut reasoning)?;
    }
    Ok(ChatResponse {
        text: (!text.is_empty()).then_some(text),
        finish_reason: response.finish_reason(!tool_calls.is_empty()),
        tool_calls,
        usage: response.usage.take().map(Usage::from).unwrap_or_default(),
        reasoning,
    })
}

/// The name a client-executed `tool_search_call` gets when the request names no tool search
/// (it then answers no tool the request offered): the item's own name in the API.
pub(crate) const SEARCH_CALL: &str = "tool_search";

/// Parses a non-streamed body; a client-executed tool search becomes a call named `search`.
pub(crate) fn parse_response(
    body: &str,
    http_status: u16,
    search: &str,
) -> Result<ChatResponse, ChatError> {
    let response: WireResponse = parse_json(body).map_err(|e| {
        ChatError::Malformed(format!(
            "the response body is not a Responses API response ({e}): {}",
            shorten(body.trim(), MAX_EXCERPT)
        ))
    })?;
    if response.output.is_none() && response.error.is_none() {
        return Err(ChatError::Malformed(format!(
            "the response body has no output: {}",
            shorten(body.trim(), MAX_EXCERPT)
        )));
    }
    response_from(response, http_status, search)
}
