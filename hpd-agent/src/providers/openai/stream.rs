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
pub(super) struct StreamAssembler {
    http_status: u16,
    chunks: usize,
    text: String,
    calls: Vec<PartialCall>,
    usage: Usage,
    reasoning: String,
    finish_reason: Option<String>,
}

impl StreamAssembler {
    pub(super) fn new(http_status: u16) -> Self {
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
mod tests {
    use super::*;
    use crate::providers::http::provider_message;
    use std::sync::Mutex;

    use super::super::wire::parse_completion;

    fn event(event: &str, data: &str, error: Option<&str>) -> SseEvent {
        SseEvent {
            event: event.into(),
            data: data.into(),
            error: error.map(str::to_owned),
        }
    }

    fn feed_all(chunks: &[&str]) -> (Result<ChatResponse, ChatError>, Vec<String>) {
        let seen = Mutex::new(Vec::new());
        let sink = |delta: &str| seen.lock().unwrap().push(delta.to_owned());
        let mut assembler = StreamAssembler::new(200);
        let mut done = false;
        for chunk in chunks {
            match assembler.feed(chunk, &sink) {
                Ok(Flow::Done) => {
                    done = true;
                    break;
                }
                Ok(Flow::Continue) => {}
                Err(e) => return (Err(e), seen.into_inner().unwrap()),
            }
        }
        (assembler.finish_stream(done), seen.into_inner().unwrap())
    }

    #[test]
    fn tool_calls_are_routed_by_index_id_or_position() {
        let (response, _) = feed_all(&[
            // Index 0 then 1, interleaved.
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"g","arguments":"{\"x\""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":":1}"}}]}}]}"#,
            // Index 0 reused with a new id: a third call.
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"h","arguments":{"y":2}}}]}}]}"#,
            // No index, no id: the last call; no id at all: a synthesized one.
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"name":"i"}}]}}]}"#,
            r#"{"choices":[{"index":1,"delta":{"content":"other choice"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            "[DONE]",
        ]);
        let response = response.unwrap();
        assert_eq!(response.text, None);
        assert_eq!(
            response.tool_calls,
            vec![
                ToolCall::new("a", "f", "{}"),
                ToolCall::new("b", "g", r#"{"x":1}"#),
                ToolCall::new("c", "hi", r#"{"y":2}"#),
            ]
        );

        let (response, _) = feed_all(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"f","arguments":"{}"}}]}}]}"#,
            "[DONE]",
        ]);
        assert_eq!(
            response.unwrap().tool_calls,
            vec![ToolCall::new("call_0", "f", "{}")]
        );
    }

    #[test]
    fn index_less_deltas_are_routed_by_id_then_array_position() {
        let (response, _) = feed_all(&[
            // By id across all calls, not only the last one.
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{\"x\""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"g","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"arguments":":1}"}}]}}]}"#,
            // Two elements of one array without index or id: two calls; the first one continues
            // the last call (b), the second starts a new call.
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":""}},{"function":{"name":"h","arguments":"[]"}}]}}]}"#,
            // An element with a new id never joins a call an earlier element of its array went
            // to, even one without an id yet...
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"!"}},{"id":"d","function":{"name":"i"}}]}}]}"#,
            // ...but an id-less call from an earlier array adopts the id.
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":""}},{"function":{"name":"j"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"e","function":{"arguments":"{}"}}]}}]}"#,
            // The same id twice in one array: one call.
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"arguments":"?"}},{"id":"a","function":{"arguments":"?"}}]}}]}"#,
            "[DONE]",
        ]);
        assert_eq!(
            response.unwrap().tool_calls,
            vec![
                ToolCall::new("a", "f", r#"{"x":1}??"#),
                ToolCall::new("b", "g", "{}"),
                ToolCall::new("call_2", "h", "[]!"),
                ToolCall::new("d", "i", ""),
                ToolCall::new("e", "j", "{}"),
            ]
        );
    }

    #[test]
    fn done_before_any_chunk_is_malformed() {
        for chunks in [&["[DONE]"][..], &["", "[DONE]"][..]] {
            let (response, _) = feed_all(chunks);
            match response {
                Err(ChatError::Malformed(message)) => {
                    assert!(message.contains("before any chunk"), "{message}");
                }
                other => panic!("expected Malformed, got {other:?}"),
            }
        }
        let (response, _) = feed_all(&[r#"{"choices":[]}"#, "[DONE]"]);
        assert_eq!(response.unwrap(), ChatResponse::default());
    }

    #[test]
    fn error_fields_and_events_are_the_providers_error() {
        let sink = |_: &str| {};
        let cases = [
            (
                event(
                    "",
                    "",
                    Some(r#"{"code":400,"message":"too long","type":"x"}"#),
                ),
                400,
                "too long",
            ),
            (
                event(
                    "error",
                    r#"{"error":{"message":"overloaded","code":"503"}}"#,
                    None,
                ),
                503,
                "overloaded",
            ),
            (event("error", r#"{"error":"gone"}"#, None), 200, "gone"),
            (event("error", r#""quoted""#, None), 200, "quoted"),
            (event("error", " plain text ", None), 200, "plain text"),
            (
                event("error", "", None),
                200,
                "(the stream reported an error without a message)",
            ),
            // The error field wins over data.
            (event("", r#"{"choices":[]}"#, Some("a\nb")), 200, "a\nb"),
        ];
        for (event, status, message) in cases {
            let mut assembler = StreamAssembler::new(200);
            match assembler.feed_event(&event, &sink) {
                Err(ChatError::Status {
                    status: got_status,
                    message: got,
                }) => assert_eq!((got_status, got.as_str()), (status, message), "{event:?}"),
                other => panic!("{event:?}: expected Status, got {other:?}"),
            }
        }
        let mut assembler = StreamAssembler::new(200);
        assert_eq!(
            assembler
                .feed_event(&event("message", "[DONE]", None), &sink)
                .unwrap(),
            Flow::Done
        );
    }

    #[test]
    fn a_tool_call_without_a_name_is_malformed() {
        let (response, _) = feed_all(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"arguments":"{}"}}]}}]}"#,
            "[DONE]",
        ]);
        match response {
            Err(ChatError::Malformed(message)) => {
                assert!(message.contains("no function name"), "{message}");
            }
            other => panic!("expected Malformed, got {other:?}"),
        }
    }

    #[test]
    fn stream_end_needs_done_or_finish_reason() {
        let (response, seen) = feed_all(&[r#"{"choices":[{"delta":{"content":"Hel"}}]}"#]);
        assert!(
            matches!(response, Err(ChatError::Transport(_))),
            "{response:?}"
        );
        assert_eq!(seen, ["Hel"]);
        let (response, _) =
            feed_all(&[r#"{"choices":[{"delta":{"content":"Hi"},"finish_reason":"stop"}]}"#]);
        assert_eq!(response.unwrap().text.as_deref(), Some("Hi"));
    }

    #[test]
    fn errors_inside_a_stream_are_status_errors() {
        let (response, _) =
            feed_all(&[r#"{"error":{"message":"overloaded","code":503}}"#, "[DONE]"]);
        match response {
            Err(ChatError::Status { status, message }) => {
                assert_eq!((status, message.as_str()), (503, "overloaded"));
            }
            other => panic!("expected Status, got {other:?}"),
        }
        let (response, _) = feed_all(&[r#"{"error":{"message":"bad","code":"invalid"}}"#]);
        assert!(
            matches!(response, Err(ChatError::Status { status: 200, .. })),
            "{response:?}"
        );
    }

    #[test]
    fn malformed_chunks_name_the_path() {
        let (response, _) = feed_all(&[
            r#"{"choices":[{"delta":{"content":"ok"}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":"zero"}]}}]}"#,
        ]);
        match response {
            Err(ChatError::Malformed(message)) => {
                assert!(message.contains("stream chunk 2"), "{message}");
                assert!(
                    message.contains("choices[0].delta.tool_calls[0].index"),
                    "{message}"
                );
            }
            other => panic!("expected Malformed, got {other:?}"),
        }
        let (response, _) = feed_all(&[r#"{"choices":[]} trailing"#]);
        assert!(
            matches!(response, Err(ChatError::Malformed(_))),
            "{response:?}"
        );
    }

    mod no_panics {
        use super::*;
        use proptest::collection::vec;
        use proptest::prelude::*;
        use proptest::sample::select;
        use serde_json::json;

        const KEYS: &[&str] = &[
            "choices",
            "index",
            "delta",
            "message",
            "content",
            "refusal",
            "tool_calls",
            "id",
            "type",
            "function",
            "name",
            "arguments",
            "finish_reason",
            "usage",
            "prompt_tokens",
            "completion_tokens",
            "error",
            "code",
        ];

        /// JSON whose keys are mostly the API's, so parsing gets past the first level.
        fn json() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                any::<i64>().prop_map(Value::from),
                (0u64..4).prop_map(Value::from),
                any::<f64>().prop_map(Value::from),
                "[a-z{}\\[\\]\":,]{0,6}".prop_map(Value::from),
            ];
            leaf.prop_recursive(5, 48, 5, |inner| {
                prop_oneof![
                    vec(inner.clone(), 0..4).prop_map(Value::Array),
                    vec((select(KEYS), inner), 0..5).prop_map(|fields| {
                        Value::Object(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
                    }),
                ]
            })
        }

        /// Well-shaped tool call deltas with optional parts, to exercise the routing.
        fn tool_call_chunk() -> impl Strategy<Value = Value> {
            let call = (
                proptest::option::of(0u64..3),
                proptest::option::of(select(&["", "a", "b", "c"][..])),
                proptest::option::of(select(&["", "f", "g", "fg"][..])),
                proptest::option::of("[{}\":a-z0-9]{0,5}"),
            )
                .prop_map(|(index, id, name, arguments)| {
                    json!({"index": index, "id": id,
                           "function": {"name": name, "arguments": arguments}})
                });
            (
                vec(call, 0..3),
                proptest::option::of(select(&["stop", "tool_calls"][..])),
            )
                .prop_map(|(calls, finish)| {
                    json!({"choices": [{"index": 0,
                                        "delta": {"content": "x", "tool_calls": calls},
                                        "finish_reason": finish}]})
                })
        }

        fn check(chunks: &[String]) {
            let chunks: Vec<&str> = chunks.iter().map(String::as_str).collect();
            let (result, _) = feed_all(&chunks);
            if let Ok(response) = result {
                for call in &response.tool_calls {
                    assert!(!call.id.is_empty() && !call.name.is_empty(), "{call:?}");
                }
            }
            for chunk in chunks {
                let _ = parse_completion(chunk, 200);
                let _ = provider_message(chunk);
            }
        }

        proptest! {
            #[test]
            fn arbitrary_chunks_give_a_response_or_an_error(
                chunks in vec(
                    prop_oneof![
                        json().prop_map(|v| v.to_string()),
                        any::<String>(),
                        Just("[DONE]".to_owned()),
                    ],
                    0..8,
                )
            ) {
                check(&chunks);
            }

            #[test]
            fn arbitrary_tool_call_deltas_give_named_calls_or_an_error(
                chunks in vec(tool_call_chunk().prop_map(|v| v.to_string()), 0..8),
                done in any::<bool>(),
            ) {
                let mut chunks = chunks;
                if done {
                    chunks.push("[DONE]".to_owned());
                }
                check(&chunks);
            }
        }
    }
}
