//! The Messages API wire format: the request body, and the body of a non-streamed answer.

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::chat::{
    ChatError, ChatMessage, ChatRequest, ChatResponse, ContentPart, FinishReason, Reasoning,
    ToolCall, ToolChoice, Usage,
};
use crate::providers::http::{MAX_EXCERPT, embedded_error, parse_json, shorten};
use crate::providers::strict::{Dialect, strict_schema};

/// What the request builder needs besides the request.
pub(super) struct Settings<'a> {
    pub(super) model: &'a str,
    pub(super) streaming: bool,
    pub(super) prompt_caching: bool,
    pub(super) default_max_tokens: u32,
    /// Deferred tools are loaded by `tool_addition` blocks in system messages (the
    /// mid-conversation tool changes), not by `tool_reference` blocks in results.
    pub(super) additions: bool,
}

/// The beta of the mid-conversation tool changes (`anthropic-beta`), as the SDK's
/// `AnthropicBetaParam` (anthropic-sdk-python, `types/anthropic_beta_param.py`) names it.
pub(super) const TOOL_CHANGES_BETA: &str = "mid-conversation-tool-changes-2026-07-01";

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// Builds the request body (before `extra` is merged).
pub(super) fn request_body(request: ChatRequest<'_>, settings: &Settings<'_>) -> Value {
    let options = request.options;
    let mut body = Map::new();
    body.insert("model".into(), json!(settings.model));
    body.insert(
        "max_tokens".into(),
        json!(
            options
                .max_output_tokens
                .unwrap_or(settings.default_max_tokens)
        ),
    );
    if !request.instructions.is_empty() {
        let mut block = json!({"type": "text", "text": request.instructions});
        if settings.prompt_caching {
            block["cache_control"] = ephemeral();
        }
        body.insert("system".into(), json!([block]));
    }
    let mut messages = messages(&request, settings.additions);
    if settings.prompt_caching
        && let Some(block) = messages
            .last_mut()
            .and_then(|m| m["content"].as_array_mut())
            .and_then(|blocks| blocks.last_mut())
        && !matches!(
            block["type"].as_str(),
            Some("thinking" | "redacted_thinking")
        )
    {
        block["cache_control"] = ephemeral();
    }
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let mut tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({"name": tool.name, "description": tool.description,
                       "input_schema": *tool.parameters})
            })
            .collect();
        // The cache breakpoint goes on the last tool that is not deferred: a deferred tool
        // may not carry one (the tool search page of the Messages API documentation).
        if settings.prompt_caching
            && let Some(last) = tools.last_mut()
        {
            last["cache_control"] = ephemeral();
        }
        // Deferred tools (the native collapsing layout) follow, marked: they stay out of the
        // model's context, and of the cached prefix, until a tool result references them.
        // Anthropic requires at least one tool that is not deferred; the containers are.
        // With tool additions, a member whose schema qualifies is declared `strict` (the
        // `strict` of `BetaToolParam`; strict mode and `defer_loading` combine, the tool use
        // with prompt caching page says), so its calls by its own name follow its schema.
        for group in request.deferred {
            tools.extend(group.tools.iter().map(|tool| {
                let mut definition = json!({"name": tool.name, "description": tool.description,
                       "input_schema": *tool.parameters, "defer_loading": true});
                if settings.additions
                    && let Some(strict) = strict_schema(&tool.parameters, Dialect::Anthropic)
                {
                    definition["input_schema"] = strict;
                    definition["strict"] = json!(true);
                }
                definition
            }));
        }
        body.insert("tools".into(), Value::Array(tools));
        let mut choice = match &options.tool_choice {
            None => None,
            Some(ToolChoice::Auto) => Some(json!({"type": "auto"})),
            Some(ToolChoice::None) => Some(json!({"type": "none"})),
            Some(ToolChoice::Required) => Some(json!({"type": "any"})),
            Some(ToolChoice::Tool(name)) => Some(json!({"type": "tool", "name": name})),
        };
        if options.parallel_tool_calls == Some(false) {
            let choice = choice.get_or_insert_with(|| json!({"type": "auto"}));
            // `none` takes no such flag: no calls at all.
            if choice["type"] != "none" {
                choice["disable_parallel_tool_use"] = json!(true);
            }
        }
        if let Some(choice) = choice {
            body.insert("tool_choice".into(), choice);
        }
    }
    if let Some(temperature) = options.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if let Some(top_p) = options.top_p {
        body.insert("top_p".into(), json!(top_p));
    }
    if !options.stop.is_empty() {
        body.insert("stop_sequences".into(), json!(options.stop));
    }
    if let Some(output) = request.output {
        // JSON outputs of the structured outputs page: `output_config.format` (generally
        // available; the beta's top-level `output_format` is deprecated). See `crate::output`
        // for why this and not a forced tool.
        body.insert(
            "output_config".into(),
            json!({"format": {"type": "json_schema", "schema": output.anthropic_schema()}}),
        );
    }
    body.insert("stream".into(), json!(settings.streaming));
    Value::Object(body)
}

/// The `system` message that adds `names` (those the request defers: the API adds only
/// declared tools) mid-conversation: one `tool_addition` block a tool, naming it by a
/// `tool_reference` (`BetaRequestToolAdditionBlockParam` with `BetaToolChangeToolReferenceParam`
/// in anthropic-sdk-python), or `None` when it would add nothing.
fn tool_additions(request: &ChatRequest<'_>, names: &[&str]) -> Option<Value> {
    let blocks: Vec<Value> = names
        .iter()
        .filter(|name| request.deferred_tool(name).is_some())
        .map(|name| json!({"type": "tool_addition", "tool": {"type": "tool_reference", "name": name}}))
        .collect();
    (!blocks.is_empty()).then(|| json!({"role": "system", "content": blocks}))
}

/// The conversation as Messages API messages. Consecutive messages of one role are merged
/// into one (the results of one response's calls become one user message). `additions`: the
/// tools results load are added by one `system` message after the user message of those
/// results, instead of `tool_reference` blocks in them.
fn messages(request: &ChatRequest<'_>, additions: bool) -> Vec<Value> {
    let history = request.messages;
    let mut messages: Vec<Value> = Vec::with_capacity(history.len());
    // The tools the results since the last other message load (with `additions`).
    let mut loading: Vec<&str> = Vec::new();
    for message in history {
        if !matches!(message, ChatMessage::Tool { .. }) && !loading.is_empty() {
            messages.extend(tool_additions(request, &loading));
            loading.clear();
        }
        let (role, blocks) = match message {
            ChatMessage::User { content } => {
                ("user", vec![json!({"type": "text", "text": content})])
            }
            ChatMessage::Assistant {
                content,
                tool_calls,
                reasoning,
            } => {
                let mut blocks: Vec<Value> = reasoning.iter().filter_map(thinking_block).collect();
                if let Some(text) = content.as_deref().filter(|t| !t.is_empty()) {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for call in tool_calls {
                    blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name,
                                       "input": tool_input(&call.arguments)}));
                }
                ("assistant", blocks)
            }
            ChatMessage::Tool {
                call_id,
                content,
                is_error,
                references,
                parts,
            } => {
                let references: &[String] = if additions {
                    for name in references {
                        if !loading.contains(&name.as_str()) {
                            loading.push(name);
                        }
                    }
                    &[]
                } else {
                    references
                };
                let mut block = json!({"type": "tool_result", "tool_use_id": call_id});
                if let Some(parts) = crate::chat::parts_to_send(parts) {
                    // Text and image blocks in the result's order; what the API takes no
                    // block for goes as its text form. References follow, as below.
                    let mut blocks: Vec<Value> = parts
                        .iter()
                        .filter(|p| p.as_text() != Some(""))
                        .map(result_block)
                        .collect();
                    blocks.extend(
                        references
                            .iter()
                            .map(|name| json!({"type": "tool_reference", "tool_name": name})),
                    );
                    block["content"] = Value::Array(blocks);
                } else if !references.is_empty() {
                    // The result's text, then one `tool_reference` block a deferred tool it
                    // loads: the API expands each into that tool's definition here.
                    let mut parts = Vec::with_capacity(references.len() + 1);
                    if !content.is_empty() {
                        parts.push(json!({"type": "text", "text": content}));
                    }
                    parts.extend(
                        references
                            .iter()
                            .map(|name| json!({"type": "tool_reference", "tool_name": name})),
                    );
                    block["content"] = Value::Array(parts);
                } else if !content.is_empty() {
                    block["content"] = json!(content);
                }
                if *is_error {
                    block["is_error"] = json!(true);
                }
                ("user", vec![block])
            }
        };
        // The API rejects empty text blocks and empty messages.
        let blocks: Vec<Value> = blocks
            .into_iter()
            .filter(|b| b["type"] != "text" || b["text"].as_str().is_some_and(|t| !t.is_empty()))
            .collect();
        if blocks.is_empty() {
            continue;
        }
        match messages.last_mut() {
            Some(last) if last["role"] == role => {
                if let Some(content) = last["content"].as_array_mut() {
                    content.extend(blocks);
                }
            }
            _ => messages.push(json!({"role": role, "content": blocks})),
        }
    }
    if !loading.is_empty() {
        messages.extend(tool_additions(request, &loading));
    }
    messages
}

/// One content block of a `tool_result`: `text`, or `image` with a base64 `source` (the types
/// the API takes: PNG, JPEG, GIF, WebP); any other part as a text block of its text form.
fn result_block(part: &ContentPart) -> Value {
    match part {
        ContentPart::Image { mime_type, data } if crate::chat::sendable_image(mime_type) => {
            json!({"type": "image", "source": {"type": "base64",
                   "media_type": mime_type.to_ascii_lowercase().replace("image/jpg", "image/jpeg"),
                   "data": crate::chat::base64(data)}})
        }
        other => json!({"type": "text", "text": other.text_form()}),
    }
}

/// A thinking block to send back: only reasoning this API signed (or redacted) is accepted.
fn thinking_block(reasoning: &Reasoning) -> Option<Value> {
    if let Some(data) = &reasoning.redacted {
        return Some(json!({"type": "redacted_thinking", "data": data}));
    }
    let signature = reasoning.signature.as_ref()?;
    Some(json!({"type": "thinking", "thinking": reasoning.text, "signature": signature}))
}

/// The `input` object of a `tool_use` block. Arguments that are not a JSON object (the model
/// sent malformed JSON; its result already says so) are sent as `{}`: the API takes only
/// objects.
fn tool_input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(object)) => Value::Object(object),
        _ => json!({}),
    }
}

/// The stop reason of the API's vocabulary.
pub(super) fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "tool_use" => FinishReason::ToolCalls,
        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
        "refusal" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}

/// Usage counts as the API reports them.
#[derive(Deserialize, Default, Debug, Clone, Copy)]
pub(super) struct WireUsage {
    #[serde(default)]
    pub(super) input_tokens: Option<u64>,
    #[serde(default)]
    pub(super) output_tokens: Option<u64>,
    #[serde(default)]
    pub(super) cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    pub(super) cache_creation_input_tokens: Option<u64>,
}

impl WireUsage {
    /// Counts in `later` replace these (a stream's `message_delta` repeats some).
    pub(super) fn update(&mut self, later: WireUsage) {
        self.input_tokens = later.input_tokens.or(self.input_tokens);
        self.output_tokens = later.output_tokens.or(self.output_tokens);
        self.cache_read_input_tokens = later
            .cache_read_input_tokens
            .or(self.cache_read_input_tokens);
        self.cache_creation_input_tokens = later
            .cache_creation_input_tokens
            .or(self.cache_creation_input_tokens);
    }

    /// `input_tokens` of the API counts only the uncached part; [`Usage`] counts the whole
    /// prompt.
    pub(super) fn usage(self) -> Usage {
        let cached = self.cache_read_input_tokens.unwrap_or(0);
        Usage {
            // Saturating: the counts come from the server, and a sum past `u64::MAX` must not
            // panic (or wrap to a small count).
            input_tokens: self
                .input_tokens
                .unwrap_or(0)
                .saturating_add(cached)
                .saturating_add(self.cache_creation_input_tokens.unwrap_or(0)),
            output_tokens: self.output_tokens.unwrap_or(0),
            cached_input_tokens: cached,
            reasoning_tokens: 0,
        }
    }
}

/// One content block of an answer.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireBlock {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        #[serde(default)]
        id: String,
        #[serde(default)]
        name: String,
        #[serde(default)]
        input: Option<Value>,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: Option<String>,
    },
    RedactedThinking {
        #[serde(default)]
        data: String,
    },
    /// Block types this client does not use (server tool results, citations...).
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct WireMessage {
    #[serde(default)]
    content: Vec<WireBlock>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    error: Option<Value>,
}

/// A content block of an answer, as the response needs it.
pub(super) enum Part {
    Text(String),
    ToolUse {
        id: String,
        name: String,
        /// The arguments as JSON text.
        arguments: String,
    },
    Thinking {
        text: String,
        signature: Option<String>,
    },
    Redacted(String),
}

impl Part {
    /// The part of a block of a non-streamed answer; `None` for blocks this client ignores.
    fn from_block(block: WireBlock) -> Option<Part> {
        Some(match block {
            WireBlock::Text { text } => Part::Text(text),
            WireBlock::ToolUse { id, name, input } => Part::ToolUse {
                id,
                name,
                arguments: match input {
                    None | Some(Value::Null) => String::new(),
                    Some(input) => input.to_string(),
                },
            },
            WireBlock::Thinking {
                thinking,
                signature,
            } => Part::Thinking {
                text: thinking,
                signature,
            },
            WireBlock::RedactedThinking { data } => Part::Redacted(data),
            WireBlock::Other => return None,
        })
    }
}

/// Builds a response from its parts, in order.
pub(super) fn response_from_parts(
    parts: Vec<Part>,
    stop_reason: Option<&str>,
    usage: Usage,
) -> Result<ChatResponse, ChatError> {
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    let mut reasoning = Vec::new();
    for part in parts {
        match part {
            Part::Text(part) => text.push_str(&part),
            Part::ToolUse {
                id,
                name,
                arguments,
            } => {
                if name.is_empty() {
                    return Err(ChatError::Malformed(format!(
                        "tool_use block {} of the response has no name",
                        tool_calls.len()
                    )));
                }
                let id = if id.is_empty() {
                    format!("toolu_{}", tool_calls.len())
                } else {
                    id
                };
                tool_calls.push(ToolCall {
                    id,
                    name,
                    arguments,
                });
            }
            Part::Thinking { text, signature } => reasoning.push(Reasoning {
                text,
                signature,
                ..Reasoning::default()
            }),
            Part::Redacted(data) => reasoning.push(Reasoning {
                redacted: Some(data),
                ..Reasoning::default()
            }),
        }
    }
    let finish_reason = match stop_reason {
        Some(reason) => finish_reason(reason),
        None if tool_calls.is_empty() => FinishReason::Stop,
        None => FinishReason::ToolCalls,
    };
    Ok(ChatResponse {
        text: (!text.is_empty()).then_some(text),
        tool_calls,
        usage,
        finish_reason,
        reasoning,
    })
}

/// The HTTP status an error `type` of the API stands for, for errors sent inside a 200 answer.
pub(super) fn error_status(kind: Option<&str>, http_status: u16) -> u16 {
    match kind {
        Some("invalid_request_error") => 400,
        Some("authentication_error") => 401,
        Some("permission_error") => 403,
        Some("not_found_error") => 404,
        Some("request_too_large") => 413,
        Some("rate_limit_error") => 429,
        Some("api_error") => 500,
        Some("overloaded_error") => 529,
        _ => http_status,
    }
}

/// An `error` object of the API as a [`ChatError::Status`].
pub(super) fn api_error(error: &Value, http_status: u16) -> ChatError {
    match embedded_error(error, http_status) {
        ChatError::Status { status, message } => ChatError::Status {
            status: if status == http_status {
                error_status(error["type"].as_str(), http_status)
            } else {
                status
            },
            message,
        },
        other => other,
    }
}

/// Parses a non-streamed body.
pub(crate) fn parse_message(body: &str, http_status: u16) -> Result<ChatResponse, ChatError> {
    let message: WireMessage = parse_json(body).map_err(|e| {
        ChatError::Malformed(format!(
            "the response body is not a message ({e}): {}",
            shorten(body.trim(), MAX_EXCERPT)
        ))
    })?;
    if let Some(error) = message.error.as_ref().filter(|e| !e.is_null()) {
        return Err(api_error(error, http_status));
    }
    if message.kind.as_deref().is_some_and(|k| k != "message") {
        return Err(ChatError::Malformed(format!(
            "the response body is a '{}', not a message: {}",
            message.kind.unwrap_or_default(),
            shorten(body.trim(), MAX_EXCERPT)
        )));
    }
    response_from_parts(
        message
            .content
            .into_iter()
            .filter_map(Part::from_block)
            .collect(),
        message.stop_reason.as_deref(),
        message.usage.unwrap_or_default().usage(),
    )
}
