//! `OpenAiClient` errors: retries, status errors, errors inside streams, malformed answers.

use crate::support::*;

#[tokio::test]
async fn rate_limit_is_retried_after_the_providers_delay() {
    let server = serve(
        post_at(
            ENDPOINT,
            ResponseTemplate::new(429)
                .insert_header("retry-after-ms", "150")
                .set_body_json(json!({"error": {"message": "Rate limit reached",
                                                "type": "requests"}})),
        )
        .up_to_n_times(1)
        .expect(1),
    )
    .await;
    post_at(ENDPOINT, sse_response(text_stream(&["ok"])))
        .expect(1)
        .mount(&server)
        .await;
    // The cap must not cut the provider's 150 ms here.
    let client = client(&server).with_max_backoff(Duration::from_secs(2));
    let started = Instant::now();
    let response = hello(&client).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.text.as_deref(), Some("ok"));
    assert!(
        started.elapsed() >= Duration::from_millis(150),
        "retried after {:?}, before the provider's retry-after-ms",
        started.elapsed()
    );
    assert_eq!(bodies(&server).await.len(), 2);
}

#[tokio::test]
async fn retry_after_is_capped_by_the_maximum_backoff() {
    let server = serve(
        post_at(
            ENDPOINT,
            ResponseTemplate::new(503).insert_header("retry-after", "60"),
        )
        .up_to_n_times(2)
        .expect(2),
    )
    .await;
    post_at(ENDPOINT, sse_response(text_stream(&["ok"])))
        .expect(1)
        .mount(&server)
        .await;
    let started = Instant::now();
    let response = hello(&client(&server))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.text.as_deref(), Some("ok"));
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn server_errors_exhaust_the_retries_with_the_providers_message() {
    let server = serve(post_at(ENDPOINT, ResponseTemplate::new(500).set_body_json(
            json!({"error": {"message": "The server had an error while processing your request.",
                             "type": "server_error", "code": null}}),
        )).expect(3)).await;
    let result = hello(&client(&server).with_max_retries(2)).await;
    match result {
        Err(ChatError::Status { status, message }) => {
            assert_eq!(status, 500);
            assert_eq!(
                message,
                "The server had an error while processing your request."
            );
        }
        other => panic!("expected a Status error, got {other:?}"),
    }
    assert_eq!(bodies(&server).await.len(), 3, "1 attempt + 2 retries");
}

#[tokio::test]
async fn client_errors_are_not_retried_and_plain_bodies_are_kept() {
    let server = serve(
        post_at(
            ENDPOINT,
            ResponseTemplate::new(401).set_body_json(
                json!({"error": {"message": "Incorrect API key provided: sk-test.",
                             "type": "invalid_request_error", "code": "invalid_api_key"}}),
            ),
        )
        .expect(1),
    )
    .await;
    match hello(&client(&server)).await {
        Err(ChatError::Status { status, message }) => {
            // The key the server echoes is redacted: no error shows it.
            assert_eq!(
                (status, message.as_str()),
                (401, "Incorrect API key provided: <redacted>.")
            );
        }
        other => panic!("expected a Status error, got {other:?}"),
    }

    let proxy = serve(
        post(ResponseTemplate::new(502).set_body_string("<html>Bad Gateway</html>")).expect(2),
    )
    .await;
    match hello(&client(&proxy).with_max_retries(1)).await {
        Err(ChatError::Status { status, message }) => {
            assert_eq!(
                (status, message.as_str()),
                (502, "<html>Bad Gateway</html>")
            );
        }
        other => panic!("expected a Status error, got {other:?}"),
    }
}

#[tokio::test]
async fn connection_failures_are_retried_then_reported() {
    let address = free_address();
    let client = client_for(&format!("http://{address}"), "")
        .with_max_retries(2)
        .with_backoff(Duration::from_millis(40))
        .with_max_backoff(Duration::from_secs(1));
    let started = Instant::now();
    let result = hello(&client).await;
    assert!(
        matches!(&result, Err(ChatError::Transport(_))),
        "expected a Transport error, got {result:?}"
    );
    // Two backoffs of at least 20 ms and 40 ms (half of 40 and 80, the rest is jitter).
    assert!(
        started.elapsed() >= Duration::from_millis(60),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn malformed_chunks_and_bodies_are_malformed_errors() {
    let server = serve(
        post_at(
            ENDPOINT,
            sse_response(format!(
                "data: {}\n\ndata: {{\"choices\": [{{\"delta\": {{\"content\": 5}}}}]}}\n\n\
             data: [DONE]\n\n",
                delta(json!({"content": "fine"}))
            )),
        )
        .up_to_n_times(1),
    )
    .await;
    post_at(ENDPOINT, sse_response("data: {not json\n\n".into()))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    post_at(
        ENDPOINT,
        ResponseTemplate::new(200).set_body_raw("<html>hi</html>", "application/json"),
    )
    .up_to_n_times(1)
    .mount(&server)
    .await;
    let client = client(&server);
    let deltas = Deltas::default();
    let history = [ChatMessage::user("hi")];

    match ask(&client, "", &history, &[], &deltas).await {
        Err(ChatError::Malformed(message)) => {
            assert!(message.contains("stream chunk 2"), "{message}");
            assert!(message.contains("choices[0].delta.content"), "{message}");
        }
        other => panic!("expected Malformed, got {other:?}"),
    }
    assert_eq!(deltas.take(), ["fine"]);

    match ask(&client, "", &history, &[], &deltas).await {
        Err(ChatError::Malformed(message)) => {
            assert!(message.contains("stream chunk 1"), "{message}");
            assert!(message.contains("{not json"), "{message}");
        }
        other => panic!("expected Malformed, got {other:?}"),
    }

    match ask(&client, "", &history, &[], &deltas).await {
        Err(ChatError::Malformed(message)) => {
            assert!(message.contains("response body"), "{message}");
            assert!(message.contains("<html>hi</html>"), "{message}");
        }
        other => panic!("expected Malformed, got {other:?}"),
    }
}

#[tokio::test]
async fn llama_cpp_error_fields_are_the_providers_error() {
    // llama.cpp sends a stream error as an `error:` field, not `data:`, then `[DONE]`.
    let server = serve(post_at(ENDPOINT, sse_response(
            "error: {\"code\":400,\"message\":\"the request exceeds the available context size, \
             try increasing it\",\"type\":\"exceed_context_size_error\"}\n\ndata: [DONE]\n\n"
                .into(),
        )).expect(1)).await;
    let (status, message) = status_error(hello(&client(&server)).await);
    assert_eq!(status, 400);
    assert_eq!(
        message,
        "the request exceeds the available context size, try increasing it"
    );
}

#[tokio::test]
async fn error_events_end_the_stream_with_the_providers_error() {
    let body = format!(
        "data: {}\n\n: keep-alive\n\nevent: error\ndata: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
        delta(json!({"content": "Partial"})),
        // Not wrapped in `{"error": ...}`: the event type says it is an error.
        json!({"message": "Upstream overloaded", "code": 502}),
        finish("stop"),
    );
    let server = serve(post_at(ENDPOINT, sse_response(body)).expect(1)).await;
    let deltas = Deltas::default();
    let result = hello_to(&client(&server), &deltas).await;
    assert_eq!(
        status_error(result),
        (502, "Upstream overloaded".to_owned())
    );
    assert_eq!(deltas.take(), ["Partial"]);
}

#[tokio::test]
async fn a_connection_closed_before_the_answer_is_retried_on_a_fresh_connection() {
    // What a request meets on a pooled connection the server closed: sent again (documented
    // policy, as the official SDKs do), on a new connection.
    let (listener, address) = loopback_listener();
    std::thread::spawn(move || {
        if let Ok((stream, _)) = listener.accept() {
            read_request(&stream);
        }
        // The retry gets a valid answer.
        if let Ok((mut stream, _)) = listener.accept() {
            read_request(&stream);
            let body = json!({"choices": [{"index": 0, "message": {"role": "assistant",
                              "content": "ok"}, "finish_reason": "stop"}]})
            .to_string();
            let response = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
                 connection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(response.as_bytes());
        }
    });
    let result = hello(&client_for(&format!("http://{address}"), "")).await;
    assert_eq!(result.map(|r| r.text).ok().flatten().as_deref(), Some("ok"));
}
