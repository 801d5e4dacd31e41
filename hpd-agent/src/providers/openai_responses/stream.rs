//! Assembling a [`ChatResponse`] from the events of a Responses API stream.

use serde::Deserialize;
use serde_json::Value;

use crate::chat::{ChatError, ChatResponse, TextSink, Usage};
use crate::providers::http::{
    MAX_EXCERPT, StreamParser, arguments_text, embedded_error, event_error, parse_json, shorten,
};
use crate::providers::pending::{Pending, PendingCalls};
use crate::providers::sse::{Flow, SseEvent};

use super::wire::{WireItem, WireResponse, add_item};

/// The `data` of one stream event; which fields are set depends on `type`.
#[derive(Deserialize)]
struct Event {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    item_id: Option<String>,
    #[serde(default)]
    output_index: Option<u64>,
    #[serde(default)]
    item: Option<WireItem>,
    #[serde(default)]
    delta: Option<String>,
    #[serde(default)]
    arguments: Option<Value>,
    #[serde(default)]
    response: Option<WireResponse>,
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    code: Option<Value>,
}

/// An output item being assembled: its `output_index` and the item as the server last sent
/// it. Its streamed text (message items) or reasoning text (reasoning items) and its streamed
/// arguments (function calls) are kept by [`PendingCalls`].
#[derive(Debug)]
struct Head {
    output_index: Option<u64>,
    item: WireItem,
}

/// Builds a [`ChatResponse`] from the events of a stream.
#[derive(Debug)]
pub(crate) struct StreamAssembler {
    http_status: u16,
    events: usize,
    items: PendingCalls<Head>,
    /// The response of the final `response.completed` or `response.incomplete` event.
    last: Option<WireResponseBox>,
    /// The name a client-executed tool search call gets (the request's `tool_search`).
    search: Box<str>,
}

/// The final response, boxed so the assembler stays small.
struct WireResponseBox(Box<WireResponse>);

impl std::fmt::Debug for WireResponseBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WireResponse")
    }
}

impl StreamAssembler {
    pub(crate) fn new(http_status: u16) -> Self {
        StreamAssembler {
            http_status,
            events: 0,
            items: PendingCalls::default(),
            last: None,
            search: super::wire::SEARCH_CALL.into(),
        }
    }

    /// The assembler for a request whose client-executed tool search has this name.
    pub(crate) fn with_tool_search(mut self, name: &str) -> Self {
        self.search = name.into();
        self
    }

    /// The item an event names by `item_id` (else `output_index`), started as `kind` when it
    /// is not known yet (servers may skip `output_item.added`).
    fn item(
        &mut self,
        id: Option<&str>,
        output_index: Option<u64>,
        kind: &str,
    ) -> &mut Pending<Head> {
        self.items.find_or_start(
            |head| match id {
                Some(id) => head.item.id.as_deref() == Some(id),
                None => output_index.is_some() && head.output_index == output_index,
            },
            || Head {
                output_index,
                item: WireItem {
                    kind: kind.to_owned(),
                    id: id.map(str::to_owned),
                    ..WireItem::default()
                },
            },
        )
    }

    /// Feeds the `data` of one event.
    pub(super) fn feed(&mut self, data: &str, sink: TextSink<'_>) -> Result<Flow, ChatError> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(Flow::Continue);
        }
        if data == "[DONE]" {
            return Ok(if self.last.is_some() {
                Flow::Done
            } else {
                Flow::Continue
            });
        }
        self.events += 1;
        let event: Event = parse_json(data).map_err(|e| {
            ChatError::Malformed(format!(
                "stream event {} is not a Responses API event ({e}): {}",
                self.events,
                shorten(data, MAX_EXCERPT)
            ))
        })?;
        let id = event.item_id.as_deref();
        match event.kind.as_str() {
            "response.output_item.added" => {
                let item = event.item.unwrap_or_default();
                let partial = self.item(item.id.as_deref(), event.output_index, &item.kind);
                partial.head.item = item;
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                let delta = event.delta.unwrap_or_default();
                if !delta.is_empty() {
                    sink(&delta);
                    self.item(id, event.output_index, "message")
                        .text
                        .push_str(&delta);
                }
            }
            "response.function_call_arguments.delta" => {
                let delta = event.delta.unwrap_or_default();
                self.item(id, event.output_index, "function_call")
                    .push_arguments(&delta);
            }
            "response.function_call_arguments.done" => {
                if let Some(arguments) = event.arguments {
                    self.item(id, event.output_index, "function_call").arguments =
                        Some(arguments_text(Some(arguments)));
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                let delta = event.delta.unwrap_or_default();
                self.item(id, event.output_index, "reasoning")
                    .text
                    .push_str(&delta);
            }
            "response.output_item.done" => {
                let item = event.item.unwrap_or_default();
                let partial = self.item(item.id.as_deref(), event.output_index, &item.kind);
                partial.head.item = item;
            }
            "response.completed" | "response.incomplete" => {
                self.last = Some(WireResponseBox(Box::new(
                    event.response.unwrap_or_default(),
                )));
                return Ok(Flow::Done);
            }
            "response.failed" => {
                let response = event.response.unwrap_or_default();
                return Err(response.failure(self.http_status).unwrap_or_else(|| {
                    ChatError::Status {
                        status: self.http_status,
                        message: "the response failed without an error message".into(),
                    }
                }));
            }
            "error" => {
                let error = match event.error.filter(|e| !e.is_null()) {
                    Some(error) => error,
                    None => serde_json::json!({"message": event.message, "code": event.code}),
                };
                return Err(embedded_error(&error, self.http_status));
            }
            // `response.created`, `response.in_progress`, content part events and event types
            // added later.
            _ => {}
        }
        Ok(Flow::Continue)
    }

    /// The response once the stream has ended (`done`: with a final response event).
    pub(super) fn finish_stream(self, done: bool) -> Result<ChatResponse, ChatError> {
        let Some(WireResponseBox(last)) = self.last.filter(|_| done) else {
            return Err(ChatError::Transport(format!(
                "the stream ended before response.completed after {} event(s); the response is \
                 incomplete",
                self.events
            )));
        };
        let mut last = *last;
        let mut text = String::new();
        let mut tool_calls = Vec::new();
        let mut reasoning = Vec::new();
        if self.items.is_empty() {
            // A server that sent only the final event: its output is the answer.
            for item in last.output.take().unwrap_or_default() {
                add_item(
                    item,
                    &self.search,
                    &mut text,
                    &mut tool_calls,
                    &mut reasoning,
                )?;
            }
        }
        for partial in self.items {
            let mut item = partial.head.item;
            match item.kind.as_str() {
                "message" if !partial.text.is_empty() => text.push_str(&partial.text),
                "function_call" => {
                    let complete = item
                        .arguments
                        .as_ref()
                        .is_some_and(|a| a.as_str() != Some(""));
                    if !complete && let Some(streamed) = partial.arguments {
                        item.arguments = Some(Value::String(streamed));
                    }
                    add_item(
                        item,
                        &self.search,
                        &mut text,
                        &mut tool_calls,
                        &mut reasoning,
                    )?;
                }
                "reasoning" if !partial.text.is_empty() => {
                    item.summary = None;
                    item.content = None;
                    add_item(
                        item,
                        &self.search,
                        &mut text,
                        &mut tool_calls,
                        &mut reasoning,
                    )?;
                    if let Some(thought) = reasoning.last_mut() {
                        thought.text = partial.text;
                    }
                }
                _ => add_item(
                    item,
                    &self.search,
                    &mut text,
                    &mut tool_calls,
                    &mut reasoning,
                )?,
            }
        }
        Ok(ChatResponse {
            text: (!text.is_empty()).then_some(text),
            finish_reason: last.finish_reason(!tool_calls.is_empty()),
            tool_calls,
            usage: last.usage.take().map(Usage::from).unwrap_or_default(),
            reasoning,
        })
    }
}

impl StreamParser for StreamAssembler {
    /// Feeds one server-sent event; an `error:` field (llama.cpp) is the provider's error too.
    fn feed_event(&mut self, event: &SseEvent, sink: TextSink<'_>) -> Result<Flow, ChatError> {
        match event_error::<Event>(event, self.http_status) {
            Some(error) => Err(error),
            None => self.feed(&event.data, sink),
        }
    }

    fn finish(self, done: bool) -> Result<ChatResponse, ChatError> {
        self.finish_stream(done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::collection::vec;
    use proptest::prelude::*;
    use proptest::sample::select;
    use serde_json::json;

    use crate::providers::openai_responses::wire::{SEARCH_CALL, parse_response};
    use crate::providers::test_support::{check_events, feed_data, json_values};

    fn feed_all(events: &[String]) -> Result<ChatResponse, ChatError> {
        feed_data(StreamAssembler::new(200), events)
    }

    #[test]
    fn a_server_that_sends_only_the_final_event_is_read_from_its_output() {
        let events = [
            json!({"type": "response.completed", "response": {"status": "completed",
            "output": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}]}})
            .to_string(),
        ];
        let response = feed_all(&events).unwrap();
        assert_eq!(response.tool_calls, [crate::ToolCall::new("c", "f", "{}")]);
        assert_eq!(response.finish_reason, crate::chat::FinishReason::ToolCalls);
    }

    /// Caught by the `openai_responses` fuzz target's check (every tool call has an id) on a
    /// hand-written input: an empty `id` (with an empty or missing
    /// `call_id`) gave a tool call with an empty id, which no tool result can answer.
    #[test]
    fn function_calls_with_empty_ids_get_a_synthesized_id() {
        let item = json!({"type": "function_call", "id": "", "call_id": "", "name": "f", "arguments": "{}"});
        let body = json!({"status": "completed", "output": [item]}).to_string();
        let expected = [crate::ToolCall::new("call_0", "f", "{}")];
        assert_eq!(
            parse_response(&body, 200, SEARCH_CALL).unwrap().tool_calls,
            expected
        );
        let events = [
            json!({"type": "response.output_item.added", "output_index": 0,
                   "item": {"type": "function_call", "id": "", "name": "f"}})
            .to_string(),
            json!({"type": "response.function_call_arguments.delta", "output_index": 0, "delta": "{}"})
                .to_string(),
            json!({"type": "response.completed", "response": {"status": "completed"}}).to_string(),
        ];
        assert_eq!(feed_all(&events).unwrap().tool_calls, expected);
    }

    const KEYS: &[&str] = &[
        "type",
        "item_id",
        "output_index",
        "item",
        "delta",
        "arguments",
        "response",
        "error",
        "message",
        "code",
        "id",
        "call_id",
        "name",
        "content",
        "summary",
        "text",
        "status",
        "output",
        "usage",
        "incomplete_details",
        "reason",
        "encrypted_content",
    ];
    const TYPES: &[&str] = &[
        "response.output_item.added",
        "response.output_text.delta",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
        "response.incomplete",
        "response.failed",
        "error",
        "message",
        "function_call",
        "reasoning",
        "completed",
        "incomplete",
        "failed",
    ];

    fn json() -> impl Strategy<Value = Value> {
        json_values(KEYS, TYPES)
    }

    fn event() -> impl Strategy<Value = Value> {
        let id = select(&["fc_1", "fc_2", "msg_1"][..]);
        prop_oneof![
            (id.clone(), select(&["function_call", "message", "reasoning"][..]), select(&["", "f"][..]))
                .prop_map(|(id, kind, name)| json!({"type": "response.output_item.added",
                    "item": {"id": id, "type": kind, "call_id": id, "name": name}})),
            (id.clone(), "[a-z ]{0,4}").prop_map(|(id, d)| json!({"type": "response.output_text.delta", "item_id": id, "delta": d})),
            (id.clone(), "[{}\":a-z0-9]{0,5}").prop_map(|(id, d)| json!({"type": "response.function_call_arguments.delta", "item_id": id, "delta": d})),
            id.prop_map(|id| json!({"type": "response.output_item.done", "item": {"id": id, "type": "function_call", "name": "g", "arguments": "{}"}})),
            select(&["completed", "incomplete"][..]).prop_map(|s| json!({"type": format!("response.{s}"), "response": {"status": s}})),
        ]
    }

    fn check(events: &[String]) {
        check_events(StreamAssembler::new(200), events, |b, s| {
            parse_response(b, s, SEARCH_CALL)
        });
    }

    proptest! {
        #[test]
        fn arbitrary_events_give_a_response_or_an_error(
            events in vec(prop_oneof![json().prop_map(|v| v.to_string()), any::<String>()], 0..8)
        ) {
            check(&events);
        }

        #[test]
        fn shaped_events_give_named_calls_or_an_error(
            events in vec(event().prop_map(|v| v.to_string()), 0..12)
        ) {
            check(&events);
        }
    }
}
