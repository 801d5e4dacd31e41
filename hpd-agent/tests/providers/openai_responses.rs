//! `OpenAiResponsesClient`: request shape (typed items, store, options), stream assembly,
//! errors in the stream, retries, finish reasons, usage with cached tokens.

use hpd_agent::{
    chat::ModelOptions, chat::Reasoning, chat::ToolChoice,
    providers::openai_responses::OpenAiResponsesClient,
};

use crate::support::*;

const RESPONSES: &str = "/v1/responses";

fn responses(base: &str, key: &str) -> OpenAiResponsesClient {
    fast_client!(
        OpenAiResponsesClient::new("gpt-test", key)
            .and_then(|c| c.with_base_url(format!("{base}/v1")))
    )
}

fn completed(output: Value, usage: Value) -> (&'static str, Value) {
    (
        "response.completed",
        json!({"type": "response.completed", "response": {"id": "resp_1", "object": "response",
               "status": "completed", "output": output, "usage": usage}}),
    )
}

fn usage(input: u64, cached: u64, output: u64) -> Value {
    json!({"input_tokens": input, "input_tokens_details": {"cached_tokens": cached},
           "output_tokens": output, "output_tokens_details": {"reasoning_tokens": 2},
           "total_tokens": input + output})
}

fn text_events(text: &str) -> Vec<(&'static str, Value)> {
    vec![
        (
            "response.created",
            json!({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}}),
        ),
        (
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": 0,
                   "item": {"id": "msg_1", "type": "message", "role": "assistant", "content": []}}),
        ),
        (
            "response.output_text.delta",
            json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0,
                   "content_index": 0, "delta": text}),
        ),
    ]
}

fn text_reply(text: &str) -> String {
    let mut events = text_events(text);
    events.push(completed(json!([]), usage(10, 0, 3)));
    named_sse(&events)
}

#[tokio::test]
async fn requests_are_typed_items_with_store_off_and_the_options() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(RESPONSES))
        .and(wiremock::matchers::header(
            "authorization",
            "Bearer sk-test",
        ))
        .respond_with(sse_response(text_reply("ok")))
        .expect(1)
        .mount(&server)
        .await;
    let mut history = tool_loop_history();
    if let ChatMessage::Assistant { reasoning, .. } = &mut history[1] {
        reasoning.push(
            Reasoning::text("Sum first.")
                .with_signature("gAAAA-encrypted")
                .with_id("rs_1"),
        );
        // Without its encrypted form it cannot go back (the server stores nothing).
        reasoning.push(Reasoning::text("plain"));
    }
    history.push(ChatMessage::Assistant {
        content: Some("5 and an error.".into()),
        tool_calls: vec![],
        reasoning: vec![],
    });
    history.push(ChatMessage::user("Thanks"));
    let options = ModelOptions::new()
        .with_temperature(0.0)
        .with_top_p(0.5)
        .with_max_output_tokens(100)
        .with_stop(["never sent"])
        .with_seed(3)
        .with_tool_choice(ToolChoice::tool("add"))
        .with_parallel_tool_calls(false)
        .with_extra("include", json!(["reasoning.encrypted_content"]))
        .with_extra("store", json!(true));
    let tools = tools();
    let request = ChatRequest::new("Be exact.", &history, &tools).with_options(&options);
    send(
        &responses(&server.uri(), "sk-test"),
        request,
        &Deltas::default(),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let body = &bodies(&server).await[0];
    let numbers = &tools_json()[0]["function"]["parameters"];
    assert_eq!(
        body,
        &json!({
            "model": "gpt-test",
            "instructions": "Be exact.",
            "input": [
                {"type": "message", "role": "user", "content": "What is 2+3 and 4*5?"},
                {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAA-encrypted",
                 "summary": [{"type": "summary_text", "text": "Sum first."}]},
                {"type": "message", "role": "assistant", "content": "Let me compute."},
                {"type": "function_call", "call_id": "call_add", "name": "add",
                 "arguments": "{\"a\": 2, \"b\": 3}"},
                // Arguments that are not a JSON object go back as `{}`: servers that
                // parse them would refuse the request.
                {"type": "function_call", "call_id": "call_mul", "name": "multiply",
                 "arguments": "{}"},
                {"type": "function_call_output", "call_id": "call_add", "output": "5"},
                {"type": "function_call_output", "call_id": "call_mul",
                 "output": "Invalid arguments for 'multiply'"},
                {"type": "message", "role": "assistant", "content": "5 and an error."},
                {"type": "message", "role": "user", "content": "Thanks"},
            ],
            "tools": [
                {"type": "function", "name": "add", "description": "Adds two integers",
                 "parameters": numbers},
                {"type": "function", "name": "multiply", "description": "Multiplies two integers",
                 "parameters": numbers},
            ],
            "tool_choice": {"type": "function", "name": "add"},
            "parallel_tool_calls": false,
            "temperature": 0.0,
            "top_p": 0.5,
            "max_output_tokens": 100,
            // `extra` wins over the client's own field.
            "store": true,
            "stream": true,
            "include": ["reasoning.encrypted_content"],
        })
    );
}

#[tokio::test]
async fn without_tools_no_tool_choice_and_store_is_off() {
    let server = serve(post(sse_response(text_reply("ok")))).await;
    let options = ModelOptions::new()
        .with_tool_choice(ToolChoice::Required)
        .with_parallel_tool_calls(true);
    let history = [ChatMessage::user("hi")];
    let request = ChatRequest::new("", &history, &[]).with_options(&options);
    send(&responses(&server.uri(), ""), request, &Deltas::default())
        .await
        .unwrap();
    let body = &bodies(&server).await[0];
    assert_eq!(body["store"], false);
    for absent in [
        "tool_choice",
        "parallel_tool_calls",
        "tools",
        "instructions",
    ] {
        assert!(body.get(absent).is_none(), "{absent}: {body}");
    }
}

#[tokio::test]
async fn streams_assemble_text_and_split_arguments_of_several_calls() {
    let mut events = text_events("Comp");
    events.push((
        "response.output_text.delta",
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "delta": "uting."}),
    ));
    for (n, id, name) in [(1, "fc_1", "add"), (2, "fc_2", "multiply")] {
        events.push((
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": n,
                   "item": {"id": id, "type": "function_call", "call_id": format!("call_{n}"),
                            "name": name, "arguments": "", "status": "in_progress"}}),
        ));
    }
    for (id, delta) in [
        ("fc_1", "{\"a\":"),
        ("fc_2", "{\"a\": 4,"),
        ("fc_1", " 2, \"b\": 3}"),
        ("fc_2", " \"b\": 5}"),
    ] {
        events.push((
            "response.function_call_arguments.delta",
            json!({"type": "response.function_call_arguments.delta", "item_id": id, "delta": delta}),
        ));
    }
    events.push(completed(json!([]), usage(400, 380, 30)));
    let server = serve(post(sse_response(named_sse(&events)))).await;
    let deltas = Deltas::default();
    let tools = tools();
    let response = send(
        &responses(&server.uri(), ""),
        ChatRequest::new("", &[ChatMessage::user("2+3, 4*5")], &tools),
        &deltas,
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(deltas.take(), ["Comp", "uting."]);
    assert_eq!(
        response,
        ChatResponse::tool_calls(vec![
            ToolCall::new("call_1", "add", r#"{"a": 2, "b": 3}"#),
            ToolCall::new("call_2", "multiply", r#"{"a": 4, "b": 5}"#),
        ])
        .with_text("Computing.")
        .with_usage(
            Usage::new(400, 30)
                .with_cached_input_tokens(380)
                .with_reasoning_tokens(2)
        )
        .with_finish_reason(FinishReason::ToolCalls)
    );
}

#[tokio::test]
async fn incomplete_responses_say_why() {
    for (reason, expected) in [
        ("max_output_tokens", FinishReason::Length),
        ("content_filter", FinishReason::ContentFilter),
    ] {
        let mut events = text_events("Once upon");
        events.push((
            "response.incomplete",
            json!({"type": "response.incomplete", "response": {"status": "incomplete",
                   "incomplete_details": {"reason": reason}, "output": [],
                   "usage": usage(5, 0, 2)}}),
        ));
        let server = serve(post(sse_response(named_sse(&events)))).await;
        let response = send(
            &responses(&server.uri(), ""),
            ChatRequest::new("", &[ChatMessage::user("story")], &[]),
            &Deltas::default(),
        )
        .await
        .unwrap();
        assert_eq!(response.finish_reason, expected, "{reason}");
        assert_eq!(response.text.as_deref(), Some("Once upon"));
    }
}

#[tokio::test]
async fn whole_bodies_are_read_when_not_streaming() {
    let server = serve(post(ResponseTemplate::new(200).set_body_json(json!({
            "id": "resp_1", "object": "response", "status": "completed",
            "output": [
                {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "think"}],
                 "encrypted_content": "enc"},
                {"type": "message", "role": "assistant",
                 "content": [{"type": "output_text", "text": "Sure.", "annotations": []}]},
                {"type": "function_call", "id": "fc_1", "call_id": "call_9", "name": "add",
                 "arguments": "{\"a\":1,\"b\":2}"},
            ],
            "usage": usage(7, 6, 3),
        })))).await;
    let deltas = Deltas::default();
    let response = send(
        &responses(&server.uri(), "").with_streaming(false),
        ChatRequest::new("", &[ChatMessage::user("1+2")], &tools()),
        &deltas,
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(deltas.take(), ["Sure."]);
    assert_eq!(
        response.tool_calls,
        [ToolCall::new("call_9", "add", r#"{"a":1,"b":2}"#)]
    );
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(
        response.reasoning,
        [Reasoning::text("think")
            .with_signature("enc")
            .with_id("rs_1")]
    );
    assert_eq!(response.usage.cached_input_tokens, 6);
}

#[tokio::test]
async fn failed_responses_and_error_events_are_status_errors() {
    let cases = [
        (
            "response.failed",
            json!({"type": "response.failed", "response": {"status": "failed",
                   "error": {"code": "server_error", "message": "The model crashed"}}}),
            (200, "The model crashed"),
        ),
        (
            "error",
            json!({"type": "error", "code": "rate_limit_exceeded", "message": "Too fast", "param": null}),
            (200, "Too fast"),
        ),
        (
            "error",
            json!({"type": "error", "error": {"code": 503, "message": "busy"}}),
            (503, "busy"),
        ),
    ];
    for (name, data, (status, message)) in cases {
        let mut events = text_events("Hel");
        events.push((name, data));
        let server = serve(post(sse_response(named_sse(&events))).expect(1)).await;
        let result = send(
            &responses(&server.uri(), ""),
            ChatRequest::new("", &[ChatMessage::user("hi")], &[]),
            &Deltas::default(),
        )
        .await;
        assert_eq!(status_error(result), (status, message.to_owned()), "{name}");
    }
}

#[tokio::test]
async fn server_errors_are_retried_and_a_cut_stream_is_an_error() {
    let server = serve(
        post(
            ResponseTemplate::new(503)
                .insert_header("retry-after", "0")
                .set_body_json(json!({"error": {"message": "busy"}})),
        )
        .up_to_n_times(2),
    )
    .await;
    post(sse_response(text_reply("done"))).mount(&server).await;
    let response = send(
        &responses(&server.uri(), ""),
        ChatRequest::new("", &[ChatMessage::user("hi")], &[]),
        &Deltas::default(),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.text.as_deref(), Some("done"));
    assert_eq!(bodies(&server).await.len(), 3);

    let address = timed_stream_server(vec![(Duration::ZERO, named_sse(&text_events("Hel")))]);
    let result = send(
        &responses(&format!("http://{address}"), ""),
        ChatRequest::new("", &[ChatMessage::user("hi")], &[]),
        &Deltas::default(),
    )
    .await;
    assert!(
        matches!(&result, Err(ChatError::Transport(m)) if m.contains("response.completed")),
        "{result:?}"
    );
}

#[tokio::test]
async fn events_split_across_network_writes_are_reassembled() {
    let mut events = text_events("Hé");
    events.push((
        "response.output_item.added",
        json!({"type": "response.output_item.added", "output_index": 1,
               "item": {"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "add"}}),
    ));
    for delta in ["{\"a\": 1, ", "\"b\": 2}"] {
        events.push((
            "response.function_call_arguments.delta",
            json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": delta}),
        ));
    }
    events.push(completed(json!([]), usage(3, 1, 5)));
    let address = timed_stream_server(in_pieces(&named_sse(&events), 7));
    let deltas = Deltas::default();
    let response = send(
        &responses(&format!("http://{address}"), ""),
        ChatRequest::new("", &[ChatMessage::user("1+2")], &tools()),
        &deltas,
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(deltas.take(), ["Hé"]);
    assert_eq!(
        response.tool_calls,
        [ToolCall::new("call_1", "add", r#"{"a": 1, "b": 2}"#)]
    );
    assert_eq!(response.usage.cached_input_tokens, 1);
}
