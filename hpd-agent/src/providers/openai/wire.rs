//! The Chat Completions wire format: the request body, and the body of a non-streamed answer.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::chat::{ChatError, ChatMessage, ChatRequest, ChatResponse, ToolCall, Usage};
use crate::providers::http::{MAX_EXCERPT, arguments_text, embedded_error, parse_json, shorten};

#[derive(Serialize)]
pub(super) struct WireRequest<'a> {
    pub(super) model: &'a str,
    pub(super) messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) tools: Vec<WireTool<'a>>,
    pub(super) stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) stream_options: Option<StreamOptions>,
}

#[derive(Serialize)]
pub(super) struct StreamOptions {
    pub(super) include_usage: bool,
}

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub(super) enum WireMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: &'a str,
    },
    Assistant {
        content: Option<&'a str>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<WireToolCall<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: &'a str,
    },
}

#[derive(Serialize)]
pub(super) struct WireToolCall<'a> {
    pub(super) id: &'a str,
    #[serde(rename = "type")]
    pub(super) kind: &'static str,
    pub(super) function: WireFunctionCall<'a>,
}

#[derive(Serialize)]
pub(super) struct WireFunctionCall<'a> {
    pub(super) name: &'a str,
    pub(super) arguments: &'a str,
}

#[derive(Serialize)]
pub(super) struct WireTool<'a> {
    #[serde(rename = "type")]
    pub(super) kind: &'static str,
    pub(super) function: WireFunctionDefinition<'a>,
}

#[derive(Serialize)]
pub(super) struct WireFunctionDefinition<'a> {
    pub(super) name: &'a str,
    pub(super) description: &'a str,
    pub(super) parameters: &'a Value,
}

impl<'a> WireRequest<'a> {
    pub(super) fn new(model: &'a str, request: ChatRequest<'a>, streaming: bool) -> Self {
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        if !request.instructions.is_empty() {
            messages.push(WireMessage::System {
                content: request.instructions,
            });
        }
        messages.extend(request.messages.iter().map(|message| {
            match message {
                ChatMessage::User { content } => WireMessage::User { content },
                ChatMessage::Assistant {
                    content,
                    tool_calls,
                } => WireMessage::Assistant {
                    // The API rejects an assistant message with neither content nor tool calls.
                    content: match content {
                        Some(text) => Some(text.as_str()),
                        None if tool_calls.is_empty() => Some(""),
                        None => None,
                    },
                    tool_calls: tool_calls
                        .iter()
                        .map(|call| WireToolCall {
                            id: &call.id,
                            kind: "function",
                            function: WireFunctionCall {
                                name: &call.name,
                                // Servers that parse the arguments reject "".
                                arguments: if call.arguments.trim().is_empty() {
                                    "{}"
                                } else {
                                    &call.arguments
                                },
                            },
                        })
                        .collect(),
                },
                // `is_error` has no field in this API: the result text carries it.
                ChatMessage::Tool {
                    call_id, content, ..
                } => WireMessage::Tool {
                    tool_call_id: call_id,
                    content,
                },
            }
        }));
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
            stream: streaming,
            stream_options: streaming.then_some(StreamOptions {
                include_usage: true,
            }),
        }
    }
}

#[derive(Deserialize)]
pub(super) struct WireUsage {
    #[serde(default)]
    pub(super) prompt_tokens: Option<u64>,
    #[serde(default)]
    pub(super) completion_tokens: Option<u64>,
}

impl From<WireUsage> for Usage {
    fn from(usage: WireUsage) -> Self {
        Usage {
            input_tokens: usage.prompt_tokens.unwrap_or(0),
            output_tokens: usage.completion_tokens.unwrap_or(0),
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
}

#[derive(Deserialize)]
pub(super) struct CompletionMessage {
    #[serde(default)]
    pub(super) content: Option<String>,
    #[serde(default)]
    pub(super) refusal: Option<String>,
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
pub(super) fn parse_completion(body: &str, http_status: u16) -> Result<ChatResponse, ChatError> {
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
    Ok(ChatResponse {
        text,
        tool_calls,
        usage: completion.usage.map(Usage::from).unwrap_or_default(),
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
                    output_tokens: 3
                },
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
