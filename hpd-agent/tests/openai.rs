//! `OpenAiClient` against real HTTP servers on loopback: `wiremock` for whole responses, and a
//! small hand-written server (std threads) for streams that arrive in pieces, stall or break.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hpd_agent::{
    ChatClient, ChatError, ChatMessage, ChatRequest, ChatResponse, OpenAiClient, ToolCall,
    ToolDefinition, Usage,
};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const ENDPOINT: &str = "/v1/chat/completions";

/// A client for `base` with a short backoff and timeout so failures are fast.
fn client_for(base: &str, key: &str) -> OpenAiClient {
    OpenAiClient::new("test-model", key)
        .and_then(|c| c.with_base_url(format!("{base}/v1")))
        .map(|c| {
            c.with_backoff(Duration::from_millis(1))
                .with_max_backoff(Duration::from_millis(20))
                .with_timeout(Duration::from_secs(5))
        })
        .unwrap_or_else(|e| panic!("client setup failed: {e}"))
}

fn client(server: &MockServer) -> OpenAiClient {
    client_for(&server.uri(), "sk-test")
}

/// Records what the client passes to the text sink.
#[derive(Default)]
struct Deltas(Mutex<Vec<String>>);

impl Deltas {
    fn sink(&self) -> impl Fn(&str) + Send + Sync + '_ {
        |delta| self.0.lock().unwrap().push(delta.to_owned())
    }

    fn take(&self) -> Vec<String> {
        std::mem::take(&mut self.0.lock().unwrap())
    }
}

/// An SSE body: one `data:` event per chunk, then `[DONE]`.
fn sse(chunks: &[Value]) -> String {
    let mut body = String::new();
    for chunk in chunks {
        body.push_str(&format!("data: {chunk}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    body
}

fn sse_response(body: String) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

fn delta(delta: Value) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "test-model",
           "choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
}

fn finish(reason: &str) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk",
           "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
}

fn usage(prompt: u64, completion: u64) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [],
           "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                     "total_tokens": prompt + completion}})
}

fn text_stream(parts: &[&str]) -> String {
    let mut chunks = vec![delta(json!({"role": "assistant", "content": ""}))];
    chunks.extend(parts.iter().map(|p| delta(json!({"content": p}))));
    chunks.push(finish("stop"));
    chunks.push(usage(12, 4));
    sse(&chunks)
}

fn tools() -> Vec<Arc<ToolDefinition>> {
    let numbers = json!({"type": "object",
                         "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                         "required": ["a", "b"]});
    vec![
        Arc::new(ToolDefinition {
            name: "add".into(),
            description: "Adds two integers".into(),
            parameters: Arc::new(numbers.clone()),
        }),
        Arc::new(ToolDefinition {
            name: "multiply".into(),
            description: "Multiplies two integers".into(),
            parameters: Arc::new(numbers),
        }),
    ]
}

fn tools_json() -> Value {
    let numbers = json!({"type": "object",
                         "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                         "required": ["a", "b"]});
    json!([
        {"type": "function", "function": {"name": "add", "description": "Adds two integers",
                                          "parameters": numbers}},
        {"type": "function", "function": {"name": "multiply",
                                          "description": "Multiplies two integers",
                                          "parameters": numbers}},
    ])
}

async fn ask(
    client: &OpenAiClient,
    instructions: &str,
    messages: &[ChatMessage],
    tools: &[Arc<ToolDefinition>],
    deltas: &Deltas,
) -> Result<ChatResponse, ChatError> {
    let request = ChatRequest {
        instructions,
        messages,
        tools,
    };
    client.complete(request, &deltas.sink()).await
}

async fn hello(client: &OpenAiClient) -> Result<ChatResponse, ChatError> {
    ask(
        client,
        "",
        &[ChatMessage::user("hi")],
        &[],
        &Deltas::default(),
    )
    .await
}

async fn bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| {
            r.body_json::<Value>()
                .unwrap_or_else(|e| panic!("request body: {e}"))
        })
        .collect()
}

fn has_tool_results(request: &Request) -> bool {
    request
        .body_json::<Value>()
        .ok()
        .and_then(|body| {
            body["messages"]
                .as_array()
                .map(|m| m.iter().any(|m| m["role"] == "tool"))
        })
        .unwrap_or(false)
}

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
        ChatResponse {
            text: None,
            tool_calls: vec![
                ToolCall::new("call_add", "add", r#"{"a": 2, "b": 3}"#),
                ToolCall::new("call_mul", "multiply", r#"{"a": 4, "b": 5}"#),
            ],
            usage: Usage {
                input_tokens: 50,
                output_tokens: 20
            },
        }
    );
    assert!(deltas.take().is_empty(), "tool calls are not text");

    history.push(ChatMessage::Assistant {
        content: None,
        tool_calls: first.tool_calls.clone(),
    });
    history.push(ChatMessage::Tool {
        call_id: "call_add".into(),
        content: "5".into(),
        is_error: false,
    });
    history.push(ChatMessage::Tool {
        call_id: "call_mul".into(),
        content: "Error: overflow".into(),
        is_error: true,
    });
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
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(ENDPOINT))
        .respond_with(sse_response(text_stream(&["Hel", "lo, ", "wor", "ld!"])))
        .expect(1)
        .mount(&server)
        .await;
    let deltas = Deltas::default();
    let history = [
        ChatMessage::user("Greet me"),
        ChatMessage::Assistant {
            content: Some("Earlier answer".into()),
            tool_calls: vec![],
        },
        ChatMessage::user("Again"),
    ];
    let response = ask(&client(&server), "", &history, &[], &deltas)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(deltas.take(), ["Hel", "lo, ", "wor", "ld!"]);
    assert_eq!(
        response,
        ChatResponse {
            text: Some("Hello, world!".into()),
            tool_calls: vec![],
            usage: Usage {
                input_tokens: 12,
                output_tokens: 4
            },
        }
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

/// What the raw server does after the response headers.
enum Ending {
    /// Sends the last chunk of the chunked encoding.
    Complete,
    /// Closes the connection mid-body.
    Cut,
    /// Stops sending but keeps the connection open this long.
    Stall(Duration),
}

/// Reads one HTTP request (head and `content-length` body) from `stream`; false when the
/// connection ended first.
fn read_request(stream: &TcpStream) -> bool {
    let mut reader = BufReader::new(stream);
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return false;
        }
        let lower = line.to_ascii_lowercase();
        if let Some(value) = lower.strip_prefix("content-length:") {
            length = value.trim().parse().unwrap_or(0);
        }
        if line == "\r\n" {
            break;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).is_ok()
}

const STREAM_HEAD: &str = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                           transfer-encoding: chunked\r\n\r\n";

/// Writes `piece` as one chunk of the chunked encoding.
fn write_chunk(stream: &mut TcpStream, piece: &str) -> bool {
    let chunk = format!("{:x}\r\n{piece}\r\n", piece.len());
    stream.write_all(chunk.as_bytes()).is_ok() && stream.flush().is_ok()
}

/// A one-connection HTTP server that answers with a chunked `text/event-stream` body written in
/// `pieces`, one write each with a pause in between, then ends as `ending` says.
fn raw_stream_server(pieces: Vec<&'static str>, ending: Ending) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
    let address = listener
        .local_addr()
        .unwrap_or_else(|e| panic!("address: {e}"));
    std::thread::spawn(move || {
        let Ok((mut stream, _)) = listener.accept() else {
            return;
        };
        if !read_request(&stream) || stream.write_all(STREAM_HEAD.as_bytes()).is_err() {
            return;
        }
        for piece in pieces {
            if !write_chunk(&mut stream, piece) {
                return;
            }
            std::thread::sleep(Duration::from_millis(15));
        }
        match ending {
            Ending::Complete => {
                let _ = stream.write_all(b"0\r\n\r\n");
                let _ = stream.flush();
            }
            Ending::Cut => {}
            Ending::Stall(pause) => std::thread::sleep(pause),
        }
    });
    address
}

/// A one-connection HTTP server that answers with a chunked `text/event-stream` body, writing
/// each piece after its pause, then ends the body.
fn timed_stream_server(pieces: Vec<(Duration, String)>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
    let address = listener
        .local_addr()
        .unwrap_or_else(|e| panic!("address: {e}"));
    std::thread::spawn(move || {
        let Ok((mut stream, _)) = listener.accept() else {
            return;
        };
        if !read_request(&stream) || stream.write_all(STREAM_HEAD.as_bytes()).is_err() {
            return;
        }
        for (pause, piece) in pieces {
            std::thread::sleep(pause);
            if !write_chunk(&mut stream, &piece) {
                return;
            }
        }
        let _ = stream.write_all(b"0\r\n\r\n");
        let _ = stream.flush();
    });
    address
}

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
    let response = ask(&client, "", &[ChatMessage::user("hi")], &[], &deltas)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.text.as_deref(), Some("Hello"));
    assert_eq!(deltas.take(), ["Hel", "lo"]);
}

#[tokio::test]
async fn rate_limit_is_retried_after_the_providers_delay() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(ENDPOINT))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after-ms", "150")
                .set_body_json(json!({"error": {"message": "Rate limit reached",
                                                "type": "requests"}})),
        )
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(ENDPOINT))
        .respond_with(sse_response(text_stream(&["ok"])))
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
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(ENDPOINT))
        .respond_with(ResponseTemplate::new(503).insert_header("retry-after", "60"))
        .up_to_n_times(2)
        .expect(2)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(ENDPOINT))
        .respond_with(sse_response(text_stream(&["ok"])))
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
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(ENDPOINT))
        .respond_with(ResponseTemplate::new(500).set_body_json(
            json!({"error": {"message": "The server had an error while processing your request.",
                             "type": "server_error", "code": null}}),
        ))
        .expect(3)
        .mount(&server)
        .await;
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
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(ENDPOINT))
        .respond_with(ResponseTemplate::new(401).set_body_json(
            json!({"error": {"message": "Incorrect API key provided: sk-test.",
                             "type": "invalid_request_error", "code": "invalid_api_key"}}),
        ))
        .expect(1)
        .mount(&server)
        .await;
    match hello(&client(&server)).await {
        Err(ChatError::Status { status, message }) => {
            assert_eq!(
                (status, message.as_str()),
                (401, "Incorrect API key provided: sk-test.")
            );
        }
        other => panic!("expected a Status error, got {other:?}"),
    }

    let proxy = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(502).set_body_string("<html>Bad Gateway</html>"))
        .expect(2)
        .mount(&proxy)
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
    // A port that was just free: nothing listens there.
    let address = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap_or_else(|e| panic!("{e}"));
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
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(ENDPOINT))
        .respond_with(sse_response(format!(
            "data: {}\n\ndata: {{\"choices\": [{{\"delta\": {{\"content\": 5}}}}]}}\n\n\
             data: [DONE]\n\n",
            delta(json!({"content": "fine"}))
        )))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(ENDPOINT))
        .respond_with(sse_response("data: {not json\n\n".into()))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path(ENDPOINT))
        .respond_with(
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
async fn a_stream_that_stops_before_done_is_an_error() {
    let server = MockServer::start().await;
    let body = format!(
        "data: {}\n\ndata: {}\n\n",
        delta(json!({"content": "The answer is"})),
        delta(
            json!({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                                     "function": {"name": "add", "arguments": "{\"a\": 1"}}]})
        ),
    );
    Mock::given(method("POST"))
        .and(path(ENDPOINT))
        .respond_with(sse_response(body))
        .expect(1)
        .mount(&server)
        .await;
    let deltas = Deltas::default();
    let result = ask(
        &client(&server),
        "",
        &[ChatMessage::user("hi")],
        &[],
        &deltas,
    )
    .await;
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
    match ask(&client, "", &[ChatMessage::user("hi")], &[], &deltas).await {
        Err(ChatError::Transport(message)) => {
            assert!(message.contains("interrupted"), "{message}");
        }
        other => panic!("expected a Transport error, got {other:?}"),
    }
    assert_eq!(deltas.take(), ["Partial"]);
}

#[tokio::test]
async fn a_slow_response_times_out() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(ENDPOINT))
        .respond_with(sse_response(text_stream(&["late"])).set_delay(Duration::from_secs(3)))
        .expect(1)
        .mount(&server)
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
    let result = ask(&client, "", &[ChatMessage::user("hi")], &[], &deltas).await;
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
async fn non_streaming_mode_reads_one_json_body() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(ENDPOINT))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
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
        })))
        .expect(1)
        .mount(&server)
        .await;
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
        ChatResponse {
            text: Some("Let me add those.".into()),
            tool_calls: vec![ToolCall::new("call_1", "add", r#"{"a":1,"b":2}"#)],
            usage: Usage {
                input_tokens: 30,
                output_tokens: 9
            },
        }
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
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(ENDPOINT))
        .respond_with(sse_response(text_stream(&["ok"])))
        .expect(2)
        .mount(&server)
        .await;
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

/// A status error's code and message, or a panic naming what came instead.
fn status_error(result: Result<ChatResponse, ChatError>) -> (u16, String) {
    match result {
        Err(ChatError::Status { status, message }) => (status, message),
        other => panic!("expected the provider's error, got {other:?}"),
    }
}

#[tokio::test]
async fn llama_cpp_error_fields_are_the_providers_error() {
    // llama.cpp sends a stream error as an `error:` field, not `data:`, then `[DONE]`.
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(ENDPOINT))
        .respond_with(sse_response(
            "error: {\"code\":400,\"message\":\"the request exceeds the available context size, \
             try increasing it\",\"type\":\"exceed_context_size_error\"}\n\ndata: [DONE]\n\n"
                .into(),
        ))
        .expect(1)
        .mount(&server)
        .await;
    let (status, message) = status_error(hello(&client(&server)).await);
    assert_eq!(status, 400);
    assert_eq!(
        message,
        "the request exceeds the available context size, try increasing it"
    );
}

#[tokio::test]
async fn error_events_end_the_stream_with_the_providers_error() {
    let server = MockServer::start().await;
    let body = format!(
        "data: {}\n\n: keep-alive\n\nevent: error\ndata: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
        delta(json!({"content": "Partial"})),
        // Not wrapped in `{"error": ...}`: the event type says it is an error.
        json!({"message": "Upstream overloaded", "code": 502}),
        finish("stop"),
    );
    Mock::given(method("POST"))
        .and(path(ENDPOINT))
        .respond_with(sse_response(body))
        .expect(1)
        .mount(&server)
        .await;
    let deltas = Deltas::default();
    let result = ask(
        &client(&server),
        "",
        &[ChatMessage::user("hi")],
        &[],
        &deltas,
    )
    .await;
    assert_eq!(
        status_error(result),
        (502, "Upstream overloaded".to_owned())
    );
    assert_eq!(deltas.take(), ["Partial"]);
}

#[tokio::test]
async fn done_before_any_chunk_is_malformed() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(ENDPOINT))
        .respond_with(sse_response(": hello\n\ndata: [DONE]\n\n".into()))
        .expect(1)
        .mount(&server)
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
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(ENDPOINT))
        .respond_with(sse_response(sse(&[
            delta(json!({"tool_calls": [{"id": "a", "type": "function",
                                         "function": {"name": "add", "arguments": "{\"a\""}}]})),
            delta(json!({"tool_calls": [{"id": "b", "type": "function",
                                         "function": {"name": "multiply", "arguments": "{}"}}]})),
            delta(json!({"tool_calls": [{"id": "a", "function": {"arguments": ": 1}"}}]})),
            finish("tool_calls"),
        ])))
        .expect(1)
        .mount(&server)
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
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(ENDPOINT))
        .respond_with(sse_response(sse(&[
            delta(json!({"tool_calls": [
                {"type": "function", "function": {"name": "add", "arguments": "{\"a\":1}"}},
                {"type": "function", "function": {"name": "multiply", "arguments": "{\"b\":2}"}},
            ]})),
            finish("tool_calls"),
        ])))
        .expect(1)
        .mount(&server)
        .await;
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
    let response = ask(&client, "", &[ChatMessage::user("hi")], &[], &deltas)
        .await
        .unwrap_or_else(|e| panic!("after {:?}: {e}", started.elapsed()));
    assert_eq!(response.text.as_deref(), Some("Hello"));
    assert_eq!(deltas.take(), ["Hel", "lo"]);
    assert!(started.elapsed() > timeout * 2, "{:?}", started.elapsed());
}

#[tokio::test]
async fn a_200_page_that_is_not_an_api_response_is_malformed() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            "<!doctype html><html><body>Open WebUI</body></html>",
            "text/html; charset=utf-8",
        ))
        .expect(2)
        .mount(&server)
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
    let mislabelled = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200).set_body_raw(
                json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"},
                                "finish_reason": "stop"}]})
                .to_string(),
                "text/plain",
            ),
        )
        .expect(1)
        .mount(&mislabelled)
        .await;
    let response = hello(&client(&mislabelled))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(response.text.as_deref(), Some("ok"));
}

#[tokio::test]
async fn a_connection_closed_after_the_request_is_not_retried() {
    // The server may have processed the request: it is not sent again (documented policy).
    let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
    let address = listener
        .local_addr()
        .unwrap_or_else(|e| panic!("address: {e}"));
    std::thread::spawn(move || {
        if let Ok((stream, _)) = listener.accept() {
            read_request(&stream);
        }
        // A retry would get a valid answer.
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
    assert!(
        matches!(&result, Err(ChatError::Transport(_))),
        "expected a Transport error, got {result:?}"
    );
}
