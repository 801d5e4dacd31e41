//! `AnthropicClient`: request shape (headers, system, blocks, cache breakpoints, options),
//! stream assembly, errors in the stream, retries, stop reasons, usage with cached tokens.

use hpd_agent::{
    chat::ModelOptions, chat::Reasoning, chat::ToolChoice, providers::anthropic::AnthropicClient,
};

use crate::support::*;

const MESSAGES: &str = "/v1/messages";

fn anthropic(base: &str, key: &str) -> AnthropicClient {
    fast_client!(AnthropicClient::new("claude-test", key).and_then(|c| c.with_base_url(base)))
}

fn message_start(input: u64, cache_read: u64) -> (&'static str, Value) {
    (
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
               "role": "assistant", "content": [], "model": "claude-test", "stop_reason": null,
               "usage": {"input_tokens": input, "cache_read_input_tokens": cache_read,
                         "cache_creation_input_tokens": 2, "output_tokens": 1}}}),
    )
}

fn block_start(index: u64, block: Value) -> (&'static str, Value) {
    (
        "content_block_start",
        json!({"type": "content_block_start", "index": index, "content_block": block}),
    )
}

fn block_delta(index: u64, delta: Value) -> (&'static str, Value) {
    (
        "content_block_delta",
        json!({"type": "content_block_delta", "index": index, "delta": delta}),
    )
}

fn block_stop(index: u64) -> (&'static str, Value) {
    (
        "content_block_stop",
        json!({"type": "content_block_stop", "index": index}),
    )
}

fn message_end(reason: &str, output: u64) -> Vec<(&'static str, Value)> {
    vec![
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": null},
                   "usage": {"output_tokens": output}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ]
}

fn text_reply(text: &str, reason: &str) -> String {
    let mut events = vec![
        message_start(10, 0),
        block_start(0, json!({"type": "text", "text": ""})),
        block_delta(0, json!({"type": "text_delta", "text": text})),
        block_stop(0),
    ];
    events.extend(message_end(reason, 3));
    named_sse(&events)
}

#[tokio::test]
async fn requests_carry_headers_system_blocks_cache_breakpoints_and_options() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(MESSAGES))
        .and(wiremock::matchers::header("x-api-key", "sk-ant-test"))
        .and(wiremock::matchers::header(
            "anthropic-version",
            "2023-06-01",
        ))
        .respond_with(sse_response(text_reply("ok", "end_turn")))
        .expect(1)
        .mount(&server)
        .await;
    let mut history = tool_loop_history();
    history[1] = ChatMessage::Assistant {
        content: Some("Let me compute.".into()),
        tool_calls: match &history[1] {
            ChatMessage::Assistant { tool_calls, .. } => tool_calls.clone(),
            _ => unreachable!(),
        },
        reasoning: vec![
            Reasoning::text("Two sums.").with_signature("sig-1"),
            Reasoning::redacted("opaque"),
            // Unsigned reasoning (from another provider) cannot go back.
            Reasoning::text("unsigned"),
        ],
    };
    let options = ModelOptions::new()
        .with_temperature(0.2)
        .with_top_p(0.9)
        .with_max_output_tokens(300)
        .with_stop(["END"])
        .with_seed(7)
        .with_tool_choice(ToolChoice::Required)
        .with_parallel_tool_calls(false)
        .with_extra(
            "thinking",
            json!({"type": "enabled", "budget_tokens": 1024}),
        )
        .with_extra("metadata", json!({"user_id": "u1"}));
    let tools = tools();
    let request = ChatRequest::new("Be exact.", &history, &tools).with_options(&options);
    let response = send(
        &anthropic(&server.uri(), "sk-ant-test"),
        request,
        &Deltas::default(),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.text.as_deref(), Some("ok"));
    let body = &bodies(&server).await[0];
    let ephemeral = json!({"type": "ephemeral"});
    let numbers = &tools_json()[0]["function"]["parameters"];
    assert_eq!(
        body,
        &json!({
            "model": "claude-test",
            "max_tokens": 300,
            "system": [{"type": "text", "text": "Be exact.", "cache_control": ephemeral}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "What is 2+3 and 4*5?"}]},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "Two sums.", "signature": "sig-1"},
                    {"type": "redacted_thinking", "data": "opaque"},
                    {"type": "text", "text": "Let me compute."},
                    {"type": "tool_use", "id": "call_add", "name": "add", "input": {"a": 2, "b": 3}},
                    // Arguments that are not a JSON object go as {}.
                    {"type": "tool_use", "id": "call_mul", "name": "multiply", "input": {}},
                ]},
                // Both results in one user message; the last block is a cache breakpoint.
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "call_add", "content": "5"},
                    {"type": "tool_result", "tool_use_id": "call_mul",
                     "content": "Invalid arguments for 'multiply'", "is_error": true,
                     "cache_control": ephemeral},
                ]},
            ],
            "tools": [
                {"name": "add", "description": "Adds two integers", "input_schema": numbers},
                {"name": "multiply", "description": "Multiplies two integers",
                 "input_schema": numbers, "cache_control": ephemeral},
            ],
            "tool_choice": {"type": "any", "disable_parallel_tool_use": true},
            "temperature": 0.2,
            "top_p": 0.9,
            "stop_sequences": ["END"],
            "stream": true,
            "thinking": {"type": "enabled", "budget_tokens": 1024},
            "metadata": {"user_id": "u1"},
        })
    );
}

#[tokio::test]
async fn tool_choice_forms_defaults_and_caching_off() {
    let server = serve(post(sse_response(text_reply("ok", "end_turn")))).await;
    let client = anthropic(&server.uri(), "").with_prompt_caching(false);
    let tools = tools();
    let history = [ChatMessage::user("hi")];
    for choice in [ToolChoice::Auto, ToolChoice::None, ToolChoice::tool("add")] {
        let options = ModelOptions::new().with_tool_choice(choice);
        let request = ChatRequest::new("", &history, &tools).with_options(&options);
        send(&client, request, &Deltas::default()).await.unwrap();
    }
    // Without tools no tool_choice is sent; `extra` replaces the client's own fields.
    let options = ModelOptions::new()
        .with_tool_choice(ToolChoice::Required)
        .with_extra("max_tokens", json!(5));
    let request = ChatRequest::new("", &history, &[]).with_options(&options);
    send(&client, request, &Deltas::default()).await.unwrap();
    let bodies = bodies(&server).await;
    let choices: Vec<&Value> = bodies.iter().map(|b| &b["tool_choice"]).collect();
    assert_eq!(
        choices,
        [
            &json!({"type": "auto"}),
            &json!({"type": "none"}),
            &json!({"type": "tool", "name": "add"}),
            &Value::Null,
        ]
    );
    assert_eq!(bodies[0]["max_tokens"], 4096, "the default max_tokens");
    assert_eq!(bodies[3]["max_tokens"], 5);
    assert!(bodies[0].get("system").is_none(), "no empty system");
    let text = bodies.iter().map(Value::to_string).collect::<String>();
    assert!(!text.contains("cache_control"), "caching off: {text}");
}

#[tokio::test]
async fn streams_assemble_text_thinking_and_split_tool_inputs() {
    let mut events = vec![
        message_start(20, 100),
        ("ping", json!({"type": "ping"})),
        block_start(0, json!({"type": "thinking", "thinking": ""})),
        block_delta(0, json!({"type": "thinking_delta", "thinking": "Add "})),
        block_delta(
            0,
            json!({"type": "thinking_delta", "thinking": "then multiply."}),
        ),
        block_delta(0, json!({"type": "signature_delta", "signature": "EqQB"})),
        block_stop(0),
        block_start(1, json!({"type": "text", "text": ""})),
        block_delta(1, json!({"type": "text_delta", "text": "Com"})),
        block_delta(1, json!({"type": "text_delta", "text": "puting."})),
        block_stop(1),
        block_start(
            2,
            json!({"type": "tool_use", "id": "toolu_a", "name": "add", "input": {}}),
        ),
        block_start(
            3,
            json!({"type": "tool_use", "id": "toolu_m", "name": "multiply", "input": {}}),
        ),
        block_delta(
            2,
            json!({"type": "input_json_delta", "partial_json": "{\"a\": 2,"}),
        ),
        block_delta(
            3,
            json!({"type": "input_json_delta", "partial_json": "{\"a\""}),
        ),
        block_delta(
            2,
            json!({"type": "input_json_delta", "partial_json": " \"b\": 3}"}),
        ),
        block_delta(
            3,
            json!({"type": "input_json_delta", "partial_json": ": 4, \"b\": 5}"}),
        ),
        block_stop(2),
        block_stop(3),
        block_start(
            4,
            json!({"type": "tool_use", "id": "toolu_n", "name": "add", "input": {}}),
        ),
        block_stop(4),
    ];
    events.extend(message_end("tool_use", 42));
    let server = serve(post(sse_response(named_sse(&events)))).await;
    let deltas = Deltas::default();
    let history = [ChatMessage::user("2+3, 4*5")];
    let tools = tools();
    let response = send(
        &anthropic(&server.uri(), "k"),
        ChatRequest::new("", &history, &tools),
        &deltas,
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(deltas.take(), ["Com", "puting."]);
    assert_eq!(
        response,
        ChatResponse::tool_calls(vec![
            ToolCall::new("toolu_a", "add", r#"{"a": 2, "b": 3}"#),
            ToolCall::new("toolu_m", "multiply", r#"{"a": 4, "b": 5}"#),
            ToolCall::new("toolu_n", "add", "{}"),
        ])
        .with_text("Computing.")
        .with_usage(
            Usage::new(122, 42)
                .with_cached_input_tokens(100)
                .with_reasoning_tokens(0)
        )
        .with_finish_reason(FinishReason::ToolCalls)
        .with_reasoning(vec![
            Reasoning::text("Add then multiply.").with_signature("EqQB")
        ])
    );
}

#[tokio::test]
async fn stop_reasons_map_to_finish_reasons() {
    for (reason, expected) in [
        ("end_turn", FinishReason::Stop),
        ("stop_sequence", FinishReason::Stop),
        ("max_tokens", FinishReason::Length),
        ("model_context_window_exceeded", FinishReason::Length),
        ("refusal", FinishReason::ContentFilter),
        ("pause_turn", FinishReason::Other("pause_turn".into())),
    ] {
        let server = serve(post(sse_response(text_reply("partial", reason)))).await;
        let response = send(
            &anthropic(&server.uri(), ""),
            ChatRequest::new("", &[ChatMessage::user("hi")], &[]),
            &Deltas::default(),
        )
        .await
        .unwrap();
        assert_eq!(response.finish_reason, expected, "{reason}");
    }
}

#[tokio::test]
async fn whole_bodies_are_read_when_not_streaming() {
    let server = serve(post(ResponseTemplate::new(200).set_body_json(json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [
            {"type": "thinking", "thinking": "hm", "signature": "s"},
            {"type": "text", "text": "Sure."},
            {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 1, "b": 2}},
            {"type": "server_tool_use", "id": "x", "name": "web_search", "input": {}},
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 5, "cache_read_input_tokens": 50, "output_tokens": 9},
    }))))
    .await;
    let deltas = Deltas::default();
    let response = send(
        &anthropic(&server.uri(), "").with_streaming(false),
        ChatRequest::new("", &[ChatMessage::user("1+2")], &tools()),
        &deltas,
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(deltas.take(), ["Sure."]);
    assert_eq!(
        response.tool_calls,
        [ToolCall::new("toolu_1", "add", r#"{"a":1,"b":2}"#)]
    );
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(
        (
            response.usage.input_tokens,
            response.usage.cached_input_tokens
        ),
        (55, 50)
    );
    assert_eq!(response.reasoning[0].signature.as_deref(), Some("s"));
    assert_eq!(bodies(&server).await[0]["stream"], false);
}

#[tokio::test]
async fn error_events_in_the_stream_are_status_errors() {
    let events = [
        message_start(1, 0),
        block_start(0, json!({"type": "text", "text": ""})),
        block_delta(0, json!({"type": "text_delta", "text": "Hel"})),
        (
            "error",
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ),
    ];
    let server = serve(post(sse_response(named_sse(&events))).expect(1)).await;
    let deltas = Deltas::default();
    let result = send(
        &anthropic(&server.uri(), ""),
        ChatRequest::new("", &[ChatMessage::user("hi")], &[]),
        &deltas,
    )
    .await;
    assert_eq!(status_error(result), (529, "Overloaded".to_owned()));
    assert_eq!(deltas.take(), ["Hel"], "never retried once text went out");
}

#[tokio::test]
async fn overloaded_rate_limited_and_server_errors_are_retried() {
    let overloaded =
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let server =
        serve(post(ResponseTemplate::new(529).set_body_json(overloaded.clone())).up_to_n_times(1))
            .await;
    post(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "0")
                .set_body_json(json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}})),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    post(ResponseTemplate::new(500).set_body_string("oops"))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    post(sse_response(text_reply("finally", "end_turn")))
        .mount(&server)
        .await;
    let response = send(
        &anthropic(&server.uri(), ""),
        ChatRequest::new("", &[ChatMessage::user("hi")], &[]),
        &Deltas::default(),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.text.as_deref(), Some("finally"));
    assert_eq!(bodies(&server).await.len(), 4, "3 failures, then success");

    let server = serve(post(ResponseTemplate::new(529).set_body_json(overloaded)).expect(2)).await;
    let result = send(
        &anthropic(&server.uri(), "").with_max_retries(1),
        ChatRequest::new("", &[ChatMessage::user("hi")], &[]),
        &Deltas::default(),
    )
    .await;
    assert_eq!(status_error(result), (529, "Overloaded".to_owned()));
}

#[tokio::test]
async fn a_stream_cut_before_its_stop_reason_is_an_error() {
    let body = named_sse(&[
        message_start(1, 0),
        block_start(0, json!({"type": "text", "text": ""})),
        block_delta(0, json!({"type": "text_delta", "text": "Hel"})),
    ]);
    let address = timed_stream_server(vec![(Duration::ZERO, body)]);
    let result = send(
        &anthropic(&format!("http://{address}"), ""),
        ChatRequest::new("", &[ChatMessage::user("hi")], &[]),
        &Deltas::default(),
    )
    .await;
    assert!(
        matches!(&result, Err(ChatError::Transport(m)) if m.contains("message_stop")),
        "{result:?}"
    );
}

#[tokio::test]
async fn the_key_never_shows_in_errors_or_debug() {
    let server = serve(post(ResponseTemplate::new(401).set_body_json(json!({"type": "error",
            "error": {"type": "authentication_error", "message": "invalid x-api-key sk-ant-secret-1"}})))).await;
    let client = anthropic(&server.uri(), "sk-ant-secret-1");
    let debug = format!("{client:?}");
    assert!(
        !debug.contains("sk-ant-secret-1") && debug.contains("<redacted>"),
        "{debug}"
    );
    let result = send(
        &client,
        ChatRequest::new("", &[ChatMessage::user("hi")], &[]),
        &Deltas::default(),
    )
    .await;
    let (status, message) = status_error(result);
    assert_eq!(status, 401);
    assert_eq!(message, "invalid x-api-key <redacted>");
}

#[tokio::test]
async fn events_split_across_network_writes_are_reassembled() {
    let mut events = vec![
        message_start(3, 0),
        block_start(0, json!({"type": "text", "text": ""})),
        block_delta(0, json!({"type": "text_delta", "text": "Hé"})),
        block_stop(0),
        block_start(
            1,
            json!({"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}}),
        ),
        block_delta(
            1,
            json!({"type": "input_json_delta", "partial_json": "{\"a\": 1, "}),
        ),
        block_delta(
            1,
            json!({"type": "input_json_delta", "partial_json": "\"b\": 2}"}),
        ),
        block_stop(1),
    ];
    events.extend(message_end("tool_use", 5));
    let address = timed_stream_server(in_pieces(&named_sse(&events), 7));
    let deltas = Deltas::default();
    let response = send(
        &anthropic(&format!("http://{address}"), ""),
        ChatRequest::new("", &[ChatMessage::user("1+2")], &tools()),
        &deltas,
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(deltas.take(), ["Hé"]);
    assert_eq!(
        response.tool_calls,
        [ToolCall::new("toolu_1", "add", r#"{"a": 1, "b": 2}"#)]
    );
}
