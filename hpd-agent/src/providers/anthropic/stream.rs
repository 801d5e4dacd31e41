//! Assembling a [`ChatResponse`] from the events of a Messages API stream.

use serde::Deserialize;
use serde_json::Value;

use crate::chat::{ChatError, ChatResponse, TextSink};
use crate::providers::http::{MAX_EXCERPT, StreamParser, event_error, parse_json, shorten};
use crate::providers::pending::{Pending, PendingCalls, append};
use crate::providers::sse::{Flow, SseEvent};

use super::wire::{Part, WireUsage, api_error, response_from_parts};

/// The `data` of one stream event; which fields are set depends on `type`.
#[derive(Deserialize)]
struct Event {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    message: Option<StartMessage>,
    #[serde(default)]
    content_block: Option<Value>,
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct StartMessage {
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct Delta {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    partial_json: Option<String>,
    #[serde(default)]
    thinking: Option<String>,
    #[serde(default)]
    signature: Option<String>,
    #[serde(default)]
    stop_reason: Option<String>,
}

/// How a content block started: its index, the block as `content_block_start` sent it, and
/// its signature (of a thinking block), appended to by `signature_delta`s. The block's text
/// and its `input_json_delta` pieces are kept by [`PendingCalls`].
#[derive(Debug)]
struct Head {
    index: u64,
    start: Value,
    signature: Option<String>,
}

/// Builds a [`ChatResponse`] from the events of a stream.
#[derive(Debug)]
pub(crate) struct StreamAssembler {
    http_status: u16,
    events: usize,
    started: bool,
    blocks: PendingCalls<Head>,
    usage: WireUsage,
    stop_reason: Option<String>,
}

impl StreamAssembler {
    pub(crate) fn new(http_status: u16) -> Self {
        StreamAssembler {
            http_status,
            events: 0,
            started: false,
            blocks: PendingCalls::default(),
            usage: WireUsage::default(),
            stop_reason: None,
        }
    }

    fn block(&mut self, index: Option<u64>, kind: &str) -> Result<&mut Pending<Head>, ChatError> {
        let index = index.ok_or_else(|| {
            ChatError::Malformed(format!(
                "stream event {}: {kind} without an index",
                self.events
            ))
        })?;
        let events = self.events;
        self.blocks.find(|head| head.index == index).ok_or_else(|| {
            ChatError::Malformed(format!(
                "stream event {events}: {kind} for content block {index}, which was never started"
            ))
        })
    }

    /// Feeds the `data` of one event.
    pub(super) fn feed(&mut self, data: &str, sink: TextSink<'_>) -> Result<Flow, ChatError> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(Flow::Continue);
        }
        self.events += 1;
        let event: Event = parse_json(data).map_err(|e| {
            ChatError::Malformed(format!(
                "stream event {} is not a Messages API event ({e}): {}",
                self.events,
                shorten(data, MAX_EXCERPT)
            ))
        })?;
        match event.kind.as_str() {
            "message_start" => {
                self.started = true;
                if let Some(usage) = event.message.and_then(|m| m.usage) {
                    self.usage.update(usage);
                }
            }
            "content_block_start" => {
                let start = event.content_block.unwrap_or(Value::Null);
                if !start.is_object() {
                    return Err(ChatError::Malformed(format!(
                        "stream event {}: content_block_start without a content_block",
                        self.events
                    )));
                }
                let index = event.index.ok_or_else(|| {
                    ChatError::Malformed(format!(
                        "stream event {}: content_block_start without an index",
                        self.events
                    ))
                })?;
                // The text a block starts with: the answer's for a text block (streamed like
                // its deltas), the thought's for a thinking block.
                let is_text = start["type"] == "text";
                let field = if is_text { "text" } else { "thinking" };
                let text = start[field].as_str().unwrap_or_default().to_owned();
                if is_text && !text.is_empty() {
                    sink(&text);
                }
                let head = Head {
                    index,
                    signature: start["signature"].as_str().map(str::to_owned),
                    start,
                };
                self.blocks.start(head, text);
            }
            "content_block_delta" => {
                let delta = event.delta.ok_or_else(|| {
                    ChatError::Malformed(format!(
                        "stream event {}: content_block_delta without a delta",
                        self.events
                    ))
                })?;
                let block = self.block(event.index, "content_block_delta")?;
                // Text deltas belong to text blocks and thinking deltas to thinking blocks;
                // one sent to another kind of block is dropped, so the streamed text is
                // always the answer's text.
                let kind = block.head.start["type"].as_str().unwrap_or_default();
                match delta.kind.as_deref() {
                    Some("text_delta") if kind == "text" => {
                        let text = delta.text.unwrap_or_default();
                        if !text.is_empty() {
                            sink(&text);
                            block.text.push_str(&text);
                        }
                    }
                    Some("input_json_delta") => {
                        block.push_arguments(&delta.partial_json.unwrap_or_default());
                    }
                    Some("thinking_delta") if kind == "thinking" => {
                        block.text.push_str(&delta.thinking.unwrap_or_default());
                    }
                    Some("signature_delta") => append(
                        &mut block.head.signature,
                        &delta.signature.unwrap_or_default(),
                    ),
                    // Deltas this client does not use (citations...).
                    _ => {}
                }
            }
            "content_block_stop" => {
                self.block(event.index, "content_block_stop")?;
            }
            "message_delta" => {
                if let Some(reason) = event.delta.and_then(|d| d.stop_reason) {
                    self.stop_reason = Some(reason);
                }
                if let Some(usage) = event.usage {
                    self.usage.update(usage);
                }
            }
            "message_stop" => return Ok(Flow::Done),
            "error" => {
                let error = event.error.unwrap_or(Value::Null);
                return Err(api_error(&error, self.http_status));
            }
            // `ping` and event types added later.
            _ => {}
        }
        Ok(Flow::Continue)
    }

    /// The response once the stream has ended (`done`: with `message_stop`).
    pub(super) fn finish_stream(self, done: bool) -> Result<ChatResponse, ChatError> {
        if !self.started {
            return Err(ChatError::Malformed(format!(
                "the stream ended after {} event(s) without a message_start: the server sent no message",
                self.events
            )));
        }
        if !done && self.stop_reason.is_none() {
            return Err(ChatError::Transport(format!(
                "the stream ended before message_stop and without a stop_reason after {} \
                 event(s); the response is incomplete",
                self.events
            )));
        }
        let mut parts = Vec::with_capacity(self.blocks.len());
        for block in self.blocks {
            let head = block.head;
            let field = |name: &str| head.start[name].as_str().unwrap_or_default().to_owned();
            parts.push(match head.start["type"].as_str() {
                Some("text") => Part::Text(block.text),
                Some("thinking") => Part::Thinking {
                    text: block.text,
                    signature: head.signature,
                },
                Some("redacted_thinking") => Part::Redacted(field("data")),
                Some("tool_use") => Part::ToolUse {
                    id: field("id"),
                    name: field("name"),
                    // The streamed pieces as the model sent them; without any, the start's
                    // `input` (an object, `{}` when empty).
                    arguments: match block.arguments {
                        Some(json) => json,
                        None => match &head.start["input"] {
                            Value::Null => String::new(),
                            input => input.to_string(),
                        },
                    },
                },
                // Block types this client does not use.
                _ => continue,
            });
        }
        response_from_parts(parts, self.stop_reason.as_deref(), self.usage.usage())
    }
}

impl StreamParser for StreamAssembler {
    /// Feeds one server-sent event. The event's `data` carries its `type`; an `error:` field
    /// (llama.cpp) is the provider's error too.
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

    use crate::providers::anthropic::wire::parse_message;
    use crate::providers::test_support::{check_events, feed_data, json_values};

    fn feed_all(events: &[String]) -> Result<ChatResponse, ChatError> {
        feed_data(StreamAssembler::new(200), events)
    }

    /// Found while writing the `anthropic_messages` fuzz target's check that the streamed text
    /// is the answer's text: text sent for a block that is not a
    /// text block (a `text` field in a `tool_use` start, a `text_delta` for a thinking block)
    /// was streamed but left out of the answer, and a `thinking_delta` for a text block went
    /// into the answer without being streamed.
    #[test]
    fn streamed_text_is_the_text_of_text_blocks_only() {
        let events = [
            json!({"type": "message_start", "message": {}}),
            json!({"type": "content_block_start", "index": 0,
                   "content_block": {"type": "thinking", "thinking": "Let me", "text": "no"}}),
            json!({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "text_delta", "text": "not text"}}),
            json!({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "thinking_delta", "thinking": " think"}}),
            json!({"type": "content_block_start", "index": 1,
                   "content_block": {"type": "text", "text": "Hel"}}),
            json!({"type": "content_block_delta", "index": 1,
                   "delta": {"type": "thinking_delta", "thinking": "not a thought"}}),
            json!({"type": "content_block_delta", "index": 1,
                   "delta": {"type": "text_delta", "text": "lo"}}),
            json!({"type": "content_block_start", "index": 2,
                   "content_block": {"type": "tool_use", "id": "t", "name": "f", "text": "no"}}),
            json!({"type": "content_block_delta", "index": 2,
                   "delta": {"type": "text_delta", "text": "no"}}),
            json!({"type": "message_stop"}),
        ];
        let streamed = std::sync::Mutex::new(String::new());
        let sink = |delta: &str| streamed.lock().unwrap().push_str(delta);
        let mut assembler = StreamAssembler::new(200);
        for event in &events {
            if assembler.feed(&event.to_string(), &sink).unwrap() == Flow::Done {
                break;
            }
        }
        let response = assembler.finish_stream(true).unwrap();
        assert_eq!(streamed.into_inner().unwrap(), "Hello");
        assert_eq!(response.text.as_deref(), Some("Hello"));
        assert_eq!(response.reasoning[0].text, "Let me think");
        assert_eq!(response.tool_calls, [crate::ToolCall::new("t", "f", "")]);
    }

    /// Found while checking what the fuzz builds miss (`cargo fuzz run -O` turns overflow
    /// checks off): the prompt count adds three counts the server sends, which overflowed.
    #[test]
    fn token_counts_past_u64_max_saturate() {
        let max = u64::MAX;
        let usage = json!({"input_tokens": max, "output_tokens": max,
                           "cache_read_input_tokens": max, "cache_creation_input_tokens": 1});
        let events = [
            json!({"type": "message_start", "message": {"usage": usage}}).to_string(),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}}).to_string(),
        ];
        let response = feed_all(&events).unwrap();
        assert_eq!(response.usage.input_tokens, max);
        assert_eq!(response.usage.cached_input_tokens, max);
        let body = json!({"content": [], "usage": usage}).to_string();
        assert_eq!(parse_message(&body, 200).unwrap().usage.input_tokens, max);
    }

    #[test]
    fn deltas_for_blocks_never_started_are_malformed() {
        let events = [
            json!({"type": "message_start", "message": {"usage": {"input_tokens": 1}}}),
            json!({"type": "content_block_delta", "index": 3,
                   "delta": {"type": "text_delta", "text": "x"}}),
        ]
        .map(|e| e.to_string());
        match feed_all(&events) {
            Err(ChatError::Malformed(message)) => {
                assert!(message.contains("never started"), "{message}");
            }
            other => panic!("expected Malformed, got {other:?}"),
        }
        match feed_all(&[json!({"type": "message_stop"}).to_string()]) {
            Err(ChatError::Malformed(message)) => {
                assert!(message.contains("message_start"), "{message}");
            }
            other => panic!("expected Malformed, got {other:?}"),
        }
    }

    const KEYS: &[&str] = &[
        "type",
        "index",
        "message",
        "content_block",
        "delta",
        "usage",
        "error",
        "text",
        "partial_json",
        "thinking",
        "signature",
        "stop_reason",
        "id",
        "name",
        "input",
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "content",
        "data",
    ];
    const TYPES: &[&str] = &[
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "ping",
        "error",
        "text",
        "tool_use",
        "thinking",
        "redacted_thinking",
        "text_delta",
        "input_json_delta",
        "thinking_delta",
        "signature_delta",
        "message",
    ];

    fn json() -> impl Strategy<Value = Value> {
        json_values(KEYS, TYPES)
    }

    /// Well-shaped events with random parts, so the block bookkeeping is exercised.
    fn event() -> impl Strategy<Value = Value> {
        let block = prop_oneof![
            Just(json!({"type": "text", "text": ""})),
            (select(&["", "a", "b"][..]), select(&["", "f", "g"][..])).prop_map(
                |(id, name)| json!({"type": "tool_use", "id": id, "name": name, "input": {}})
            ),
            Just(json!({"type": "thinking", "thinking": ""})),
            Just(json!({"type": "redacted_thinking", "data": "x"})),
        ];
        let delta = prop_oneof![
            "[a-z ]{0,4}".prop_map(|t| json!({"type": "text_delta", "text": t})),
            "[{}\":a-z0-9]{0,5}"
                .prop_map(|j| json!({"type": "input_json_delta", "partial_json": j})),
            "[a-z]{0,4}".prop_map(|t| json!({"type": "thinking_delta", "thinking": t})),
            "[a-z]{0,4}".prop_map(|s| json!({"type": "signature_delta", "signature": s})),
        ];
        prop_oneof![
            Just(json!({"type": "message_start", "message": {"usage": {"input_tokens": 3}}})),
            (0u64..3, block).prop_map(|(i, b)| json!({"type": "content_block_start", "index": i, "content_block": b})),
            (0u64..3, delta).prop_map(|(i, d)| json!({"type": "content_block_delta", "index": i, "delta": d})),
            (0u64..3).prop_map(|i| json!({"type": "content_block_stop", "index": i})),
            select(&["end_turn", "tool_use", "max_tokens"][..]).prop_map(|r| json!({"type": "message_delta", "delta": {"stop_reason": r}, "usage": {"output_tokens": 2}})),
            Just(json!({"type": "ping"})),
            Just(json!({"type": "message_stop"})),
        ]
    }

    fn check(events: &[String]) {
        check_events(StreamAssembler::new(200), events, parse_message);
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
