//! The Chat Completions wire format: the request body, and the body of a non-streamed answer.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::chat::{
    ChatError, ChatMessage, ChatRequest, ChatResponse, ContentPart, FinishReason, Reasoning,
    ToolCall, ToolChoice, Usage,
};
use crate::output::OutputSchema;
use crate::providers::http::{
    MAX_EXCERPT, arguments_text, arguments_to_send, embedded_error, parse_json, shorten,
};

/// The request body. `None` fields are left out, so the server's defaults apply.
#[derive(Serialize)]
pub(super) struct WireRequest<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parallel_tool_calls: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    top_p: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    stop: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<i64>,
    /// Structured output: `{"type": "json_schema", "json_schema": {...}}` (a typed run).
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<Value>,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum WireMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: UserContent<'a>,
    },
    Assistant {
        content: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        reasoning_content: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<WireToolCall<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: &'a str,
    },
}

/// A user message's content: its text, or content parts (the images of tool results).
#[derive(Serialize)]
#[serde(untagged)]
enum UserContent<'a> {
    Text(&'a str),
    Parts(Vec<Value>),
}

#[derive(Serialize)]
struct WireToolCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunctionCall<'a>,
}

#[derive(Serialize)]
struct WireFunctionCall<'a> {
    name: &'a str,
    arguments: &'a str,
}

#[derive(Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunctionDefinition<'a>,
}

#[derive(Serialize)]
struct WireFunctionDefinition<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

/// The wire form of a tool choice.
fn tool_choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::None => json!("none"),
        ToolChoice::Required => json!("required"),
        ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
    }
}

/// The `response_format` of a typed run: the Chat Completions `json_schema` format (the
/// `ResponseFormatJSONSchema` type of the API reference: `name`, `description`, `schema`,
/// `strict`), which llama.cpp's server reads the same way.
fn response_format(output: &OutputSchema) -> Value {
    let mut format = json!({
        "name": output.name(),
        "schema": output.openai_schema(),
        "strict": output.openai_strict(),
    });
    if let Some(description) = output.description() {
        format["description"] = json!(description);
    }
    json!({"type": "json_schema", "json_schema": format})
}

impl<'a> WireRequest<'a> {
    pub(super) fn new(model: &'a str, request: ChatRequest<'a>, streaming: bool) -> Self {
        let options = request.options;
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        if !request.instructions.is_empty() {
            messages.push(WireMessage::System {
                content: request.instructions,
            });
        }
        // Tool messages take text only: the images of the tool results of one response follow
        // them in one user message, before whatever comes next.
        let mut images: Vec<Value> = Vec::new();
        for message in request.messages {
            if !matches!(message, ChatMessage::Tool { .. }) {
                flush_images(&mut messages, &mut images);
            }
            messages.push(match message {
                ChatMessage::User { content } => WireMessage::User {
                    content: UserContent::Text(content),
                },
                ChatMessage::Assistant {
                    content,
                    tool_calls,
                    reasoning,
                } => WireMessage::Assistant {
                    // The API rejects an assistant message with neither content nor tool calls.
                    content: match content {
                        Some(text) => Some(text.as_str()),
                        None if tool_calls.is_empty() => Some(""),
                        None => None,
                    },
                    // Reasoning goes back only inside a tool loop, where servers that think
                    // (DeepSeek, llama.cpp with thinking models) need it; others ignore it.
                    reasoning_content: (!tool_calls.is_empty())
                        .then(|| reasoning_text(reasoning))
                        .flatten(),
                    tool_calls: tool_calls
                        .iter()
                        .map(|call| WireToolCall {
                            id: &call.id,
                            kind: "function",
                            function: WireFunctionCall {
                                name: &call.name,
                                arguments: arguments_to_send(&call.arguments),
                            },
                        })
                        .collect(),
                },
                // `is_error` has no field in this API: the result text carries it.
                ChatMessage::Tool {
                    call_id,
                    content,
                    parts,
                    ..
                } => {
                    if let Some(parts) = crate::chat::parts_to_send(parts) {
                        let shown: Vec<Value> = parts
                            .iter()
                            .filter_map(|part| match part {
                                ContentPart::Image { mime_type, data }
                                    if crate::chat::sendable_image(mime_type) =>
                                {
                                    Some(json!({"type": "image_url", "image_url": {
                                        "url": crate::chat::data_url(mime_type, data)}}))
                                }
                                _ => None,
                            })
                            .collect();
                        images.push(json!({"type": "text", "text": format!(
                            "The {} of the tool call {call_id}:",
                            if shown.len() == 1 { "image" } else { "images" }
                        )}));
                        images.extend(shown);
                    }
                    WireMessage::Tool {
                        tool_call_id: call_id,
                        content,
                    }
                }
            });
        }
        flush_images(&mut messages, &mut images);
        let has_tools = !request.tools.is_empty();
        WireRequest {
            model,
            messages,
            tools: request
                .tools
                .iter()
                .map(|tool| WireTool {
                    kind: "function",
                    function: WireFunctionDefinition {
                        name: &tool.name,
                        description: &tool.description,
                        parameters: &tool.parameters,
                    },
                })
                .collect(),
            // The API rejects both without tools.
            tool_choice: options
                .tool_choice
                .as_ref()
                .filter(|_| has_tools)
                .map(tool_choice),
            parallel_tool_calls: options.parallel_tool_calls.filter(|_| has_tools),
            temperature: options.temperature,
            top_p: options.top_p,
            max_completion_tokens: options.max_output_tokens,
            stop: &options.stop,
            seed: options.seed,
            response_format: request.output.map(response_format),
            stream: streaming,
            stream_options: streaming.then_some(StreamOptions {
                include_usage: true,
            }),
        }
    }
}

/// Sends the images collected from tool results as one user message, if there are any.
fn flush_images(messages: &mut Vec<WireMessage<'_>>, images: &mut Vec<Value>) {
    if !images.is_empty() {
        messages.push(WireMessage::User {
            content: UserContent::Parts(std::mem::take(images)),
        });
    }
}

/// The reasoning texts of one message, joined; `None` when there is none.
fn reasoning_text(reasoning: &[Reasoning]) -> Option<String> {
    let texts: Vec<&str> = reasoning
        .iter()
        .map(|r| r.text.as_str())
        .filter(|t| !t.is_empty())
        .collect();
    (!texts.is_empty()).then(|| texts.concat())
}

/// The finish reason of the API's vocabulary.
pub(super) fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "stop" => FinishReason::Stop,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "length" => FinishReason::Length,
        "content_filter" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}

#[derive(Deserialize)]
pub(super) struct WireUsage {
    #[serde(default)]
    pub(super) prompt_tokens: Option<u64>,
    #[serde(default)]
    pub(super) completion_tokens: Option<u64>,
    #[serde(default)]
    pub(super) prompt_tokens_details: Option<PromptDetails>,
    #[serde(default)]
    pub(super) completion_tokens_details: Option<CompletionDetails>,
}

#[derive(Deserialize)]
pub(super) struct PromptDetails {
    #[serde(default)]
    pub(super) cached_tokens: Option<u64>,
}

#[derive(Deserialize)]
pub(super) struct CompletionDetails {
    #[serde(default)]
    pub(super) reasoning_tokens: Option<u64>,
}

impl From<WireUsage> for Usage {
    fn from(usage: WireUsage) -> Self {
        Usage {
            input_tokens: usage.prompt_tokens.unwrap_or(0),
            output_tokens: usage.completion_tokens.unwrap_or(0),
            cached_input_tokens: usage
                .prompt_tokens_details
                .and_then(|d| d.cached_tokens)
                .unwrap_or(0),
            reasoning_tokens: usage
                .completion_tokens_details
                .and_then(|d| d.reasoning_tokens)
                .unwrap_or(0),
        }
    }
}

#[derive(Deserialize)]
pub(super) struct Completion {
    #[serde(default)]
    pub(super) choices: Option<Vec<CompletionChoice>>,
    #[serde(default)]
    pub(super) usage: Option<WireUsage>,
    #[serde(default)]
    pub(super) error: Option<Value>,
}

#[derive(Deserialize)]
pub(super) struct CompletionChoice {
    #[serde(default)]
    pub(super) index: Option<u64>,
    #[serde(default)]
    pub(super) message: Option<CompletionMessage>,
    #[serde(default)]
    pub(super) finish_reason: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct CompletionMessage {
    #[serde(default)]
    pub(super) content: Option<String>,
    #[serde(default)]
    pub(super) refusal: Option<String>,
    #[serde(default)]
    pub(super) reasoning_content: Option<String>,
    #[serde(default)]
    pub(super) tool_calls: Option<Vec<CompletionToolCall>>,
}

#[derive(Deserialize)]
pub(super) struct CompletionToolCall {
    #[serde(default)]
    pub(super) id: Option<String>,
    #[serde(default)]
    pub(super) function: Option<FunctionPart>,
}

#[derive(Deserialize)]
pub(super) struct FunctionPart {
    #[serde(default)]
    pub(super) name: Option<String>,
    #[serde(default)]
    pub(super) arguments: Option<Value>,
}

/// Parses a non-streamed body.
pub(crate) fn parse_completion(body: &str, http_status: u16) -> Result<ChatResponse, ChatError> {
    let completion: Completion = parse_json(body).map_err(|e| {
        ChatError::Malformed(format!(
            "the response body is not a chat completion ({e}): {}",
            shorten(body.trim(), MAX_EXCERPT)
        ))
    })?;
    if let Some(error) = &completion.error
        && !error.is_null()
    {
        return Err(embedded_error(error, http_status));
    }
    let choices = completion.choices.unwrap_or_default();
    let choice = choices
        .into_iter()
        .find(|c| c.index.unwrap_or(0) == 0)
        .ok_or_else(|| ChatError::Malformed("the response has no choices".into()))?;
    let message = choice.message.ok_or_else(|| {
        ChatError::Malformed("the response's first choice has no `message`".into())
    })?;
    let mut tool_calls = Vec::new();
    for (position, call) in message
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .enumerate()
    {
        let function = call.function.unwrap_or(FunctionPart {
            name: None,
            arguments: None,
        });
        let name = function.name.unwrap_or_default();
        if name.is_empty() {
            return Err(ChatError::Malformed(format!(
                "tool call {position} of the response has no function name"
            )));
        }
        tool_calls.push(ToolCall {
            id: call
                .id
                .filter(|id| !id.is_empty())
                .unwrap_or_else(|| format!("call_{position}")),
            name,
            arguments: arguments_text(function.arguments),
        });
    }
    let text = message
        .content
        .filter(|t| !t.is_empty())
        .or_else(|| message.refusal.filter(|t| !t.is_empty()));
    let finish_reason = match choice.finish_reason.as_deref() {
        Some(reason) => finish_reason(reason),
        None if tool_calls.is_empty() => FinishReason::Stop,
        None => FinishReason::ToolCalls,
    };
    Ok(ChatResponse {
        text,
        tool_calls,
        usage: completion.usage.map(Usage::from).unwrap_or_default(),
        finish_reason,
        reasoning: message
            .reasoning_content
            .filter(|t| !t.is_empty())
            .map(Reasoning::text)
            .into_iter()
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_streamed_bodies() {
        let response = parse_completion(
            r#"{"choices":[{"index":0,"message":{"role":"assistant","content":null,
                "tool_calls":[{"id":"x","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}},
                              {"type":"function","function":{"name":"g","arguments":{"b":2}}}]},
                "finish_reason":"tool_calls"}],
               "usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}"#,
            200,
        )
        .unwrap();
        assert_eq!(
            response,
            ChatResponse {
                text: None,
                tool_calls: vec![
                    ToolCall::new("x", "f", r#"{"a":1}"#),
                    ToolCall::new("call_1", "g", r#"{"b":2}"#),
                ],
                usage: Usage {
                    input_tokens: 7,
                    output_tokens: 3,
                    ..Usage::default()
                },
                finish_reason: FinishReason::ToolCalls,
                reasoning: vec![],
            }
        );
        assert!(matches!(
            parse_completion(r#"{"choices":[]}"#, 200),
            Err(ChatError::Malformed(_))
        ));
        assert!(matches!(
            parse_completion(r#"{"error":{"message":"no"}}"#, 200),
            Err(ChatError::Status { status: 200, .. })
        ));
        match parse_completion(r#"{"choices":[{"message":{"content":5}}]}"#, 200) {
            Err(ChatError::Malformed(message)) => {
                assert!(message.contains("choices[0].message.content"), "{message}");
            }
            other => panic!("expected Malformed, got {other:?}"),
        }
    }
}
