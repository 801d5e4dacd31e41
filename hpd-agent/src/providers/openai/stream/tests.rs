//! Stream assembly: tool call routing, endings, errors, malformed chunks, and property tests.

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
    let (response, _) = feed_all(&[r#"{"error":{"message":"overloaded","code":503}}"#, "[DONE]"]);
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
