//! `OpenAiClient` and the wider provider contract: model options on the wire (including
//! `extra`), finish reasons, usage with cached and reasoning tokens, reasoning text.

use hpd_agent::{chat::ModelOptions, chat::Reasoning, chat::ToolChoice};

use crate::support::*;

#[tokio::test]
async fn model_options_are_sent_and_extra_is_merged_last() {
    let server = serve(post_at(ENDPOINT, sse_response(text_stream(&["ok"])))).await;
    let client = client(&server);
    let tools = tools();
    let history = [ChatMessage::user("hi")];
    let options = ModelOptions::new()
        .with_temperature(0.5)
        .with_top_p(0.8)
        .with_max_output_tokens(128)
        .with_stop(["\n\n", "END"])
        .with_seed(42)
        .with_tool_choice(ToolChoice::tool("add"))
        .with_parallel_tool_calls(false)
        .with_extra("logprobs", json!(true))
        .with_extra("stream_options", json!({"include_usage": false}));
    let request = ChatRequest::new("", &history, &tools).with_options(&options);
    send(&client, request, &Deltas::default()).await.unwrap();
    for choice in [ToolChoice::Auto, ToolChoice::None, ToolChoice::Required] {
        let options = ModelOptions::new().with_tool_choice(choice);
        let request = ChatRequest::new("", &history, &tools).with_options(&options);
        send(&client, request, &Deltas::default()).await.unwrap();
    }
    // Without tools, tool_choice and parallel_tool_calls are not sent (the API rejects them).
    let options = ModelOptions::new()
        .with_tool_choice(ToolChoice::Required)
        .with_parallel_tool_calls(true);
    let request = ChatRequest::new("", &history, &[]).with_options(&options);
    send(&client, request, &Deltas::default()).await.unwrap();
    let bodies = bodies(&server).await;
    let first = &bodies[0];
    assert_eq!(first["temperature"], 0.5);
    assert_eq!(first["top_p"], 0.8);
    assert_eq!(first["max_completion_tokens"], 128);
    assert_eq!(first["stop"], json!(["\n\n", "END"]));
    assert_eq!(first["seed"], 42);
    assert_eq!(
        first["tool_choice"],
        json!({"type": "function", "function": {"name": "add"}})
    );
    assert_eq!(first["parallel_tool_calls"], false);
    assert_eq!(first["logprobs"], true);
    assert_eq!(
        first["stream_options"],
        json!({"include_usage": false}),
        "extra wins"
    );
    let choices: Vec<&Value> = bodies[1..4].iter().map(|b| &b["tool_choice"]).collect();
    assert_eq!(
        choices,
        [&json!("auto"), &json!("none"), &json!("required")]
    );
    let last = &bodies[4];
    for absent in [
        "tool_choice",
        "parallel_tool_calls",
        "tools",
        "temperature",
        "stop",
        "seed",
    ] {
        assert!(last.get(absent).is_none(), "{absent}: {last}");
    }
}

#[tokio::test]
async fn finish_reasons_are_mapped() {
    for (reason, expected) in [
        ("stop", FinishReason::Stop),
        ("length", FinishReason::Length),
        ("content_filter", FinishReason::ContentFilter),
        ("tool_calls", FinishReason::ToolCalls),
        ("eos", FinishReason::Other("eos".into())),
    ] {
        let body = sse(&[delta(json!({"content": "text"})), finish(reason)]);
        let server = serve(post(sse_response(body.clone()))).await;
        let response = hello(&client(&server)).await.unwrap();
        assert_eq!(response.finish_reason, expected, "{reason}");
        let whole = parse_whole(&server, reason).await;
        assert_eq!(whole.finish_reason, expected, "{reason}, not streamed");
    }
}

/// The same reason through a non-streamed body.
async fn parse_whole(server: &MockServer, reason: &str) -> ChatResponse {
    server.reset().await;
    post(ResponseTemplate::new(200).set_body_json(json!({
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "text"},
                         "finish_reason": reason}]})))
    .mount(server)
    .await;
    hello(&client(server).with_streaming(false)).await.unwrap()
}

#[tokio::test]
async fn usage_reports_cached_and_reasoning_tokens() {
    let body = sse(&[
        delta(json!({"content": "ok"})),
        finish("stop"),
        json!({"choices": [], "usage": {"prompt_tokens": 356, "completion_tokens": 32,
               "prompt_tokens_details": {"cached_tokens": 355},
               "completion_tokens_details": {"reasoning_tokens": 12}}}),
    ]);
    let server = serve(post(sse_response(body))).await;
    let response = hello(&client(&server)).await.unwrap();
    assert_eq!(
        response.usage,
        Usage::new(356, 32)
            .with_cached_input_tokens(355)
            .with_reasoning_tokens(12)
    );
}

#[tokio::test]
async fn reasoning_content_is_kept_and_sent_back_inside_tool_loops() {
    let body = sse(&[
        delta(json!({"reasoning_content": "First add, "})),
        delta(json!({"reasoning_content": "then answer."})),
        delta(json!({"content": "5"})),
        finish("stop"),
    ]);
    let server = serve(post(sse_response(body))).await;
    let deltas = Deltas::default();
    let response = ask(
        &client(&server),
        "",
        &[ChatMessage::user("2+3")],
        &[],
        &deltas,
    )
    .await
    .unwrap();
    assert_eq!(deltas.take(), ["5"], "reasoning is not answer text");
    assert_eq!(
        response.reasoning,
        [Reasoning::text("First add, then answer.")]
    );

    let mut history = tool_loop_history();
    if let ChatMessage::Assistant { reasoning, .. } = &mut history[1] {
        reasoning.push(Reasoning::text("I need two tools."));
    }
    history.push(ChatMessage::Assistant {
        content: Some("Done.".into()),
        tool_calls: vec![],
        reasoning: vec![Reasoning::text("not needed again")],
    });
    history.push(ChatMessage::user("Thanks"));
    ask(&client(&server), "", &history, &tools(), &deltas)
        .await
        .unwrap();
    let body = &bodies(&server).await[1];
    assert_eq!(
        body["messages"][1]["reasoning_content"],
        "I need two tools."
    );
    assert!(
        body["messages"][4].get("reasoning_content").is_none(),
        "only inside tool loops: {}",
        body["messages"][4]
    );
    // The history's call whose arguments are not JSON goes back with `{}` (llama.cpp parses
    // the arguments of every call it is sent, and answers HTTP 500 to text that does not
    // parse); the well-formed one goes back as the model wrote it.
    let calls = &body["messages"][1]["tool_calls"];
    assert_eq!(calls[0]["function"]["arguments"], r#"{"a": 2, "b": 3}"#);
    assert_eq!(calls[1]["function"]["name"], "multiply");
    assert_eq!(calls[1]["function"]["arguments"], "{}");
}
