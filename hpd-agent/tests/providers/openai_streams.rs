//! `OpenAiClient` streams: reassembly across writes, endings, timeouts, tool call routing.

use crate::support::*;

#[tokio::test]
async fn events_split_across_network_writes_are_reassembled() {
    let address = raw_stream_server(
        vec![
            "data: {\"choices\":[{\"index\":0,\"del",
            "ta\":{\"content\":\"Hel\"}}]}\n",
            "\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"}}]}\n\nda",
            "ta: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
            ": keep-alive comment\n\ndata: [DONE]\n\n",
        ],
        Ending::Complete,
    );
    let deltas = Deltas::default();
    let client = client_for(&format!("http://{address}"), "");
    let response = hello_to(&client, &deltas)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.text.as_deref(), Some("Hello"));
    assert_eq!(deltas.take(), ["Hel", "lo"]);
}

#[tokio::test]
async fn a_stream_that_stops_before_done_is_an_error() {
    let body = format!(
        "data: {}\n\ndata: {}\n\n",
        delta(json!({"content": "The answer is"})),
        delta(
            json!({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                                     "function": {"name": "add", "arguments": "{\"a\": 1"}}]})
        ),
    );
    let server = serve(post_at(ENDPOINT, sse_response(body)).expect(1)).await;
    let deltas = Deltas::default();
    let result = hello_to(&client(&server), &deltas).await;
    match result {
        Err(ChatError::Transport(message)) => {
            assert!(message.contains("before [DONE]"), "{message}");
        }
        other => panic!("expected a Transport error, got {other:?}"),
    }
    assert_eq!(deltas.take(), ["The answer is"]);
}

#[tokio::test]
async fn a_connection_cut_mid_stream_is_an_error() {
    let address = raw_stream_server(
        vec!["data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Partial\"}}]}\n\n"],
        Ending::Cut,
    );
    let deltas = Deltas::default();
    let client = client_for(&format!("http://{address}"), "");
    match hello_to(&client, &deltas).await {
        Err(ChatError::Transport(message)) => {
            assert!(message.contains("interrupted"), "{message}");
        }
        other => panic!("expected a Transport error, got {other:?}"),
    }
    assert_eq!(deltas.take(), ["Partial"]);
}

#[tokio::test]
async fn a_slow_response_times_out() {
    let server = serve(
        post_at(
            ENDPOINT,
            sse_response(text_stream(&["late"])).set_delay(Duration::from_secs(3)),
        )
        .expect(1),
    )
    .await;
    let timeout = Duration::from_millis(200);
    let client = client(&server).with_timeout(timeout);
    let started = Instant::now();
    let result = hello(&client).await;
    assert!(
        matches!(result, Err(ChatError::Timeout(t)) if t == timeout),
        "expected Timeout, got {result:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_stalled_stream_times_out() {
    let address = raw_stream_server(
        vec!["data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Thinking\"}}]}\n\n"],
        Ending::Stall(Duration::from_secs(3)),
    );
    let timeout = Duration::from_millis(200);
    let client = client_for(&format!("http://{address}"), "").with_timeout(timeout);
    let deltas = Deltas::default();
    let started = Instant::now();
    let result = hello_to(&client, &deltas).await;
    assert!(
        matches!(result, Err(ChatError::Timeout(t)) if t == timeout),
        "expected Timeout, got {result:?}"
    );
    assert_eq!(deltas.take(), ["Thinking"]);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn done_before_any_chunk_is_malformed() {
    let server =
        serve(post_at(ENDPOINT, sse_response(": hello\n\ndata: [DONE]\n\n".into())).expect(1))
            .await;
    match hello(&client(&server)).await {
        Err(ChatError::Malformed(message)) => {
            assert!(message.contains("[DONE] before any chunk"), "{message}");
        }
        other => panic!("expected Malformed, got {other:?}"),
    }
}

#[tokio::test]
async fn index_less_interleaved_calls_are_routed_by_id() {
    let server = serve(
        post_at(
            ENDPOINT,
            sse_response(sse(&[
                delta(json!({"tool_calls": [{"id": "a", "type": "function",
                                         "function": {"name": "add", "arguments": "{\"a\""}}]})),
                delta(json!({"tool_calls": [{"id": "b", "type": "function",
                                         "function": {"name": "multiply", "arguments": "{}"}}]})),
                delta(json!({"tool_calls": [{"id": "a", "function": {"arguments": ": 1}"}}]})),
                finish("tool_calls"),
            ])),
        )
        .expect(1),
    )
    .await;
    let response = hello(&client(&server))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        response.tool_calls,
        vec![
            ToolCall::new("a", "add", r#"{"a": 1}"#),
            ToolCall::new("b", "multiply", "{}"),
        ]
    );
}

#[tokio::test]
async fn two_calls_in_one_delta_without_index_or_id_stay_two_calls() {
    let server = serve(post_at(ENDPOINT, sse_response(sse(&[
            delta(json!({"tool_calls": [
                {"type": "function", "function": {"name": "add", "arguments": "{\"a\":1}"}},
                {"type": "function", "function": {"name": "multiply", "arguments": "{\"b\":2}"}},
            ]})),
            finish("tool_calls"),
        ]))).expect(1)).await;
    let response = hello(&client(&server))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    // Ids synthesized from the position, as for a non-streamed body.
    assert_eq!(
        response.tool_calls,
        vec![
            ToolCall::new("call_0", "add", r#"{"a":1}"#),
            ToolCall::new("call_1", "multiply", r#"{"b":2}"#),
        ]
    );
}

#[tokio::test]
async fn keep_alive_comments_reset_the_stream_timeout() {
    // Ten comments 100 ms apart: 1.1 s without an event, never 400 ms without bytes.
    let tick = Duration::from_millis(100);
    let mut pieces = vec![(
        Duration::ZERO,
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n".to_owned(),
    )];
    pieces.extend((0..10).map(|_| (tick, ": PROCESSING\n\n".to_owned())));
    pieces.push((
        tick,
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\
         \"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
            .to_owned(),
    ));
    let address = timed_stream_server(pieces);
    let timeout = Duration::from_millis(400);
    let client = client_for(&format!("http://{address}"), "").with_timeout(timeout);
    let deltas = Deltas::default();
    let started = Instant::now();
    let response = hello_to(&client, &deltas)
        .await
        .unwrap_or_else(|e| panic!("after {:?}: {e}", started.elapsed()));
    assert_eq!(response.text.as_deref(), Some("Hello"));
    assert_eq!(deltas.take(), ["Hel", "lo"]);
    assert!(started.elapsed() > timeout * 2, "{:?}", started.elapsed());
}

#[tokio::test]
async fn a_200_page_that_is_not_an_api_response_is_malformed() {
    let server = serve(
        post(ResponseTemplate::new(200).set_body_raw(
            "<!doctype html><html><body>Open WebUI</body></html>",
            "text/html; charset=utf-8",
        ))
        .expect(2),
    )
    .await;
    for streaming in [true, false] {
        match hello(&client(&server).with_streaming(streaming)).await {
            Err(ChatError::Malformed(message)) => {
                assert!(message.contains("`text/html; charset=utf-8`"), "{message}");
                assert!(
                    message.contains("<!doctype html><html><body>Open WebUI"),
                    "{message}"
                );
            }
            other => panic!("streaming {streaming}: expected Malformed, got {other:?}"),
        }
    }

    // A completion under another content type is still read.
    let mislabelled = serve(
        post(
            ResponseTemplate::new(200).set_body_raw(
                json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"},
                                "finish_reason": "stop"}]})
                .to_string(),
                "text/plain",
            ),
        )
        .expect(1),
    )
    .await;
    let response = hello(&client(&mislabelled))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.text.as_deref(), Some("ok"));
}
