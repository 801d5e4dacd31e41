//! `OpenAiClient` requests and answers: the wire shape of a conversation, streamed and whole answers, the key.

use crate::support::*;

#[tokio::test]
async fn multi_turn_tool_calling_conversation() {
    let server = MockServer::start().await;
    // Turn 1: two tool calls, ids and names in their first chunks, arguments in pieces.
    let calls = sse(&[
        delta(json!({"role": "assistant", "content": null})),
        delta(
            json!({"tool_calls": [{"index": 0, "id": "call_add", "type": "function",
                                     "function": {"name": "add", "arguments": ""}}]}),
        ),
        delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"a\""}}]})),
        delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": ": 2, "}}]})),
        delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"b\": 3}"}}]})),
        delta(
            json!({"tool_calls": [{"index": 1, "id": "call_mul", "type": "function",
                                     "function": {"name": "multiply", "arguments": ""}}]}),
        ),
        delta(json!({"tool_calls": [{"index": 1, "function": {"arguments": "{\"a\": 4"}}]})),
        delta(json!({"tool_calls": [{"index": 1, "function": {"arguments": ", \"b\": 5}"}}]})),
        finish("tool_calls"),
        usage(50, 20),
    ]);
    Mock::given(method("POST"))
        .and(path(ENDPOINT))
        .and(|r: &Request| !has_tool_results(r))
        .respond_with(sse_response(calls))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(ENDPOINT))
        .and(has_tool_results)
        .respond_with(sse_response(text_stream(&["2 + 3 = 5", "; 4 * 5 failed."])))
        .expect(1)
        .mount(&server)
        .await;

    let client = client(&server);
    let tools = tools();
    let deltas = Deltas::default();
    let instructions = "You are a calculator.";
    let mut history = vec![ChatMessage::user("What is 2+3 and 4*5?")];

    let first = ask(&client, instructions, &history, &tools, &deltas)
        .await
        .unwrap_or_else(|e| panic!("turn 1: {e}"));
    assert_eq!(
        first,
        ChatResponse::tool_calls(vec![
            ToolCall::new("call_add", "add", r#"{"a": 2, "b": 3}"#),
            ToolCall::new("call_mul", "multiply", r#"{"a": 4, "b": 5}"#),
        ])
        .with_usage(Usage::new(50, 20))
        .with_finish_reason(FinishReason::ToolCalls)
    );
    assert!(deltas.take().is_empty(), "tool calls are not text");

    history.push(ChatMessage::Assistant {
        content: None,
        tool_calls: first.tool_calls.clone(),
        reasoning: vec![],
    });
    history.push(ChatMessage::tool("call_add", "5", false));
    history.push(ChatMessage::tool("call_mul", "Error: overflow", true));
    let second = ask(&client, instructions, &history, &tools, &deltas)
        .await
        .unwrap_or_else(|e| panic!("turn 2: {e}"));
    assert_eq!(second.text.as_deref(), Some("2 + 3 = 5; 4 * 5 failed."));
    assert!(second.tool_calls.is_empty());
    assert_eq!(deltas.take(), ["2 + 3 = 5", "; 4 * 5 failed."]);

    let bodies = bodies(&server).await;
    assert_eq!(bodies.len(), 2);
    let system = json!({"role": "system", "content": "You are a calculator."});
    let user = json!({"role": "user", "content": "What is 2+3 and 4*5?"});
    assert_eq!(
        bodies[0],
        json!({
            "model": "test-model",
            "messages": [system, user],
            "tools": tools_json(),
            "stream": true,
            "stream_options": {"include_usage": true},
        })
    );
    assert_eq!(
        bodies[1],
        json!({
            "model": "test-model",
            "messages": [
                system,
                user,
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_add", "type": "function",
                     "function": {"name": "add", "arguments": "{\"a\": 2, \"b\": 3}"}},
                    {"id": "call_mul", "type": "function",
                     "function": {"name": "multiply", "arguments": "{\"a\": 4, \"b\": 5}"}},
                ]},
                // No is_error field: the wire format has none.
                {"role": "tool", "tool_call_id": "call_add", "content": "5"},
                {"role": "tool", "tool_call_id": "call_mul", "content": "Error: overflow"},
            ],
            "tools": tools_json(),
            "stream": true,
            "stream_options": {"include_usage": true},
        })
    );
}

#[tokio::test]
async fn streamed_text_reaches_the_sink_in_order() {
    let server = serve(
        post_at(
            ENDPOINT,
            sse_response(text_stream(&["Hel", "lo, ", "wor", "ld!"])),
        )
        .expect(1),
    )
    .await;
    let deltas = Deltas::default();
    let history = [
        ChatMessage::user("Greet me"),
        ChatMessage::Assistant {
            content: Some("Earlier answer".into()),
            tool_calls: vec![],
            reasoning: vec![],
        },
        ChatMessage::user("Again"),
    ];
    let response = ask(&client(&server), "", &history, &[], &deltas)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(deltas.take(), ["Hel", "lo, ", "wor", "ld!"]);
    assert_eq!(
        response,
        ChatResponse::default()
            .with_text("Hello, world!")
            .with_usage(Usage::new(12, 4))
            .with_finish_reason(FinishReason::Stop)
    );
    // Empty instructions: no system message; no tools: no `tools` key.
    assert_eq!(
        bodies(&server).await,
        [json!({
            "model": "test-model",
            "messages": [
                {"role": "user", "content": "Greet me"},
                {"role": "assistant", "content": "Earlier answer"},
                {"role": "user", "content": "Again"},
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
        })]
    );
}

#[tokio::test]
async fn non_streaming_mode_reads_one_json_body() {
    let server = serve(post_at(ENDPOINT, ResponseTemplate::new(200).set_body_json(json!({
            "id": "chatcmpl-2",
            "object": "chat.completion",
            "model": "test-model",
            "choices": [{
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "Let me add those.",
                    "tool_calls": [{"id": "call_1", "type": "function",
                                    "function": {"name": "add", "arguments": "{\"a\":1,\"b\":2}"}}],
                },
                "finish_reason": "tool_calls",
            }],
            "usage": {"prompt_tokens": 30, "completion_tokens": 9, "total_tokens": 39},
        }))).expect(1)).await;
    let client = client(&server).with_streaming(false);
    let deltas = Deltas::default();
    let tools = tools();
    let response = ask(
        &client,
        "Use tools.",
        &[ChatMessage::user("1+2?")],
        &tools,
        &deltas,
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        response,
        ChatResponse::tool_calls(vec![ToolCall::new("call_1", "add", r#"{"a":1,"b":2}"#)])
            .with_text("Let me add those.")
            .with_usage(Usage::new(30, 9))
            .with_finish_reason(FinishReason::ToolCalls)
    );
    assert_eq!(
        deltas.take(),
        ["Let me add those."],
        "the sink gets the whole text once"
    );
    assert_eq!(
        bodies(&server).await,
        [json!({
            "model": "test-model",
            "messages": [
                {"role": "system", "content": "Use tools."},
                {"role": "user", "content": "1+2?"},
            ],
            "tools": tools_json(),
            "stream": false,
        })]
    );
}

#[tokio::test]
async fn the_api_key_is_sent_as_a_bearer_token_only_when_set() {
    let server = serve(post_at(ENDPOINT, sse_response(text_stream(&["ok"]))).expect(2)).await;
    hello(&client_for(&server.uri(), "sk-test"))
        .await
        .unwrap_or_else(|e| panic!("with key: {e}"));
    hello(&client_for(&server.uri(), ""))
        .await
        .unwrap_or_else(|e| panic!("without key: {e}"));
    let requests = server.received_requests().await.unwrap_or_default();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0]
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok()),
        Some("Bearer sk-test")
    );
    assert_eq!(requests[1].headers.get("authorization"), None);
    let user_agent = requests[0]
        .headers
        .get("user-agent")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    assert!(user_agent.starts_with("hpd-agent/"), "{user_agent}");
    assert_eq!(
        requests[0]
            .headers
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("application/json")
    );
}
