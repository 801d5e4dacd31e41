//! Assembling a [`ChatResponse`] from the chunks of a Chat Completions stream.

use serde::Deserialize;
use serde_json::Value;

use crate::chat::{ChatError, ChatResponse, FinishReason, Reasoning, TextSink, ToolCall, Usage};
use crate::providers::http::{
    MAX_EXCERPT, StreamParser, arguments_text, embedded_error, parse_json, shorten, stream_error,
};
use crate::providers::sse::{Flow, SseEvent};

use super::wire::{FunctionPart, WireUsage, finish_reason};

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Option<Vec<ChunkChoice>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct ChunkChoice {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
    /// Reasoning text (llama.cpp, vLLM, DeepSeek).
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Deserialize)]
struct ToolCallDelta {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionPart>,
}

/// A tool call being assembled from stream deltas.
#[derive(Debug)]
struct PartialCall {
    index: Option<u64>,
    id: String,
    name: String,
    arguments: String,
}

/// Builds a [`ChatResponse`] from the `data` of the events of a stream.
#[derive(Debug)]
pub(crate) struct StreamAssembler {
    http_status: u16,
    chunks: usize,
    text: String,
    calls: Vec<PartialCall>,
    usage: Usage,
    reasoning: String,
    finish_reason: Option<String>,
}

impl StreamAssembler {
    pub(crate) fn new(http_status: u16) -> Self {
        StreamAssembler {
            http_status,
            chunks: 0,
            text: String::new(),
            calls: Vec::new(),
            usage: Usage::default(),
            reasoning: String::new(),
            finish_reason: None,
        }
    }

    /// Feeds the `data` of one event.
    pub(super) fn feed(&mut self, data: &str, sink: TextSink<'_>) -> Result<Flow, ChatError> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(Flow::Continue);
        }
        if data == "[DONE]" {
            return Ok(Flow::Done);
        }
        self.chunks += 1;
        let chunk: Chunk = parse_json(data).map_err(|e| {
            ChatError::Malformed(format!(
                "stream chunk {} is not a chat completion chunk ({e}): {}",
                self.chunks,
                shorten(data, MAX_EXCERPT)
            ))
        })?;
        if let Some(error) = &chunk.error
            && !error.is_null()
        {
            return Err(embedded_error(error, self.http_status));
        }
        if let Some(usage) = chunk.usage {
            self.usage = usage.into();
        }
        for choice in chunk.choices.unwrap_or_default() {
            if choice.index.unwrap_or(0) != 0 {
                continue;
            }
            if let Some(delta) = choice.delta {
                for part in [delta.content, delta.refusal].into_iter().flatten() {
                    if !part.is_empty() {
                        sink(&part);
                        self.text.push_str(&part);
                    }
                }
                if let Some(reasoning) = delta.reasoning_content {
                    self.reasoning.push_str(&reasoning);
                }
                let mut routed = Vec::new();
                for call in delta.tool_calls.unwrap_or_default() {
                    let position = self.add_call_delta(call, &routed);
                    routed.push(position);
                }
            }
            if let Some(reason) = choice.finish_reason {
                self.finish_reason = Some(reason);
            }
        }
        Ok(Flow::Continue)
    }

    /// Routes a delta to its call and returns the call's position. With an `index`: the last
    /// call at that index, starting a new call when a different `id` arrives at an index already
    /// used (some servers reuse index 0). Without `index`: the last call with the same `id`
    /// among all calls so far; else the last call, when the delta has no `id` or that call has
    /// none yet; else a new call. `routed` holds the calls earlier elements of the same
    /// `tool_calls` array went to: an element without `index` is not merged into one of them
    /// except by `id`, since the elements of one array are different calls.
    fn add_call_delta(&mut self, delta: ToolCallDelta, routed: &[usize]) -> usize {
        let id = delta.id.filter(|id| !id.is_empty());
        let position = match delta.index {
            Some(index) => self.calls.iter().rposition(|call| {
                call.index == Some(index)
                    && id
                        .as_deref()
                        .is_none_or(|id| call.id.is_empty() || call.id == id)
            }),
            None => id
                .as_deref()
                .and_then(|id| self.calls.iter().rposition(|call| call.id == id))
                .or_else(|| {
                    let last = self.calls.len().checked_sub(1)?;
                    let open = id.is_none() || self.calls[last].id.is_empty();
                    (open && !routed.contains(&last)).then_some(last)
                }),
        };
        let position = position.unwrap_or_else(|| {
            self.calls.push(PartialCall {
                index: delta.index,
                id: String::new(),
                name: String::new(),
                arguments: String::new(),
            });
            self.calls.len() - 1
        });
        let call = &mut self.calls[position];
        if let Some(id) = id {
            call.id = id;
        }
        if let Some(function) = delta.function {
            if let Some(name) = function.name {
                // Servers send the whole name once; a few repeat it in later deltas.
                if call.name.is_empty() || call.name != name {
                    if name.starts_with(&call.name) || call.name.is_empty() {
                        call.name = name;
                    } else {
                        call.name.push_str(&name);
                    }
                }
            }
            call.arguments.push_str(&arguments_text(function.arguments));
        }
        position
    }

    /// The response, once the stream has ended (`done`: with `[DONE]`).
    pub(super) fn finish_stream(self, done: bool) -> Result<ChatResponse, ChatError> {
        if !done && self.finish_reason.is_none() {
            return Err(ChatError::Transport(format!(
                "the stream ended before [DONE] and without a finish_reason after {} chunk(s); \
                 the response is incomplete",
                self.chunks
            )));
        }
        if self.chunks == 0 {
            return Err(ChatError::Malformed(
                "the stream sent [DONE] before any chunk: the server sent no response".into(),
            ));
        }
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for (position, call) in self.calls.into_iter().enumerate() {
            if call.name.is_empty() {
                return Err(ChatError::Malformed(format!(
                    "tool call {position} of the stream (id '{}') has no function name",
                    call.id
                )));
            }
            tool_calls.push(ToolCall {
                id: if call.id.is_empty() {
                    format!("call_{position}")
                } else {
                    call.id
                },
                name: call.name,
                arguments: call.arguments,
            });
        }
        let finish_reason = match self.finish_reason.as_deref() {
            Some(reason) => finish_reason(reason),
            None if tool_calls.is_empty() => FinishReason::Stop,
            None => FinishReason::ToolCalls,
        };
        Ok(ChatResponse {
            text: (!self.text.is_empty()).then_some(self.text),
            tool_calls,
            usage: self.usage,
            finish_reason,
            reasoning: if self.reasoning.is_empty() {
                Vec::new()
            } else {
                vec![Reasoning::text(self.reasoning)]
            },
        })
    }
}

impl StreamParser for StreamAssembler {
    /// Feeds one server-sent event: an error it carries (an `error` field or an `error` event)
    /// ends the stream as the provider's error; otherwise its `data` is a chunk.
    fn feed_event(&mut self, event: &SseEvent, sink: TextSink<'_>) -> Result<Flow, ChatError> {
        if let Some(error) = &event.error {
            return Err(stream_error(error, self.http_status));
        }
        if event.event == "error" {
            return Err(stream_error(&event.data, self.http_status));
        }
        self.feed(&event.data, sink)
    }

    fn finish(self, done: bool) -> Result<ChatResponse, ChatError> {
        self.finish_stream(done)
    }
}

#[cfg(test)]
mod tests;
