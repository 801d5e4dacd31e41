//! What the provider tests share: client setup, SSE bodies, and a small hand-written HTTP
//! server (std threads) for streams that arrive in pieces, stall or break.

pub use std::io::{BufRead, BufReader, Read, Write};
pub use std::net::{SocketAddr, TcpListener, TcpStream};
pub use std::sync::{Arc, Mutex};
pub use std::time::{Duration, Instant};

pub use hpd_agent::{
    ChatClient, ChatMessage, ChatResponse, ToolCall, chat::ChatError, chat::ChatRequest,
    chat::FinishReason, chat::ToolDefinition, chat::Usage, providers::openai::OpenAiClient,
};
pub use serde_json::{Value, json};
pub use wiremock::matchers::{method, path};
pub use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

pub const ENDPOINT: &str = "/v1/chat/completions";

/// The client `$new` (a `Result`) makes, with a short backoff and timeout so failures are
/// fast; a panic when it fails.
macro_rules! fast_client {
    ($new:expr) => {
        $new.map(|c| {
            c.with_backoff(Duration::from_millis(1))
                .with_max_backoff(Duration::from_millis(20))
                .with_timeout(Duration::from_secs(5))
        })
        .unwrap_or_else(|e| panic!("client setup failed: {e}"))
    };
}
pub(crate) use fast_client;

/// A client for `base` with a short backoff and timeout so failures are fast.
pub fn client_for(base: &str, key: &str) -> OpenAiClient {
    fast_client!(
        OpenAiClient::new("test-model", key).and_then(|c| c.with_base_url(format!("{base}/v1")))
    )
}

pub fn client(server: &MockServer) -> OpenAiClient {
    client_for(&server.uri(), "sk-test")
}

/// Records what the client passes to the text sink.
#[derive(Default)]
pub struct Deltas(Mutex<Vec<String>>);

impl Deltas {
    pub fn sink(&self) -> impl Fn(&str) + Send + Sync + '_ {
        |delta| self.0.lock().unwrap().push(delta.to_owned())
    }

    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut self.0.lock().unwrap())
    }
}

/// An SSE body: one `data:` event per chunk, then `[DONE]`.
pub fn sse(chunks: &[Value]) -> String {
    let mut body = String::new();
    for chunk in chunks {
        body.push_str(&format!("data: {chunk}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    body
}

/// A loopback server with `mock` mounted.
pub async fn serve(mock: Mock) -> MockServer {
    let server = MockServer::start().await;
    mock.mount(&server).await;
    server
}

/// Answers every POST with `response`.
pub fn post(response: impl Respond + 'static) -> Mock {
    Mock::given(method("POST")).respond_with(response)
}

/// Answers every POST to `route` with `response`.
pub fn post_at(route: &str, response: impl Respond + 'static) -> Mock {
    Mock::given(method("POST"))
        .and(path(route))
        .respond_with(response)
}

pub fn sse_response(body: String) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}

pub fn delta(delta: Value) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "test-model",
           "choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
}

pub fn finish(reason: &str) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk",
           "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
}

pub fn usage(prompt: u64, completion: u64) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [],
           "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                     "total_tokens": prompt + completion}})
}

pub fn text_stream(parts: &[&str]) -> String {
    let mut chunks = vec![delta(json!({"role": "assistant", "content": ""}))];
    chunks.extend(parts.iter().map(|p| delta(json!({"content": p}))));
    chunks.push(finish("stop"));
    chunks.push(usage(12, 4));
    sse(&chunks)
}

pub fn tools() -> Vec<Arc<ToolDefinition>> {
    let numbers = json!({"type": "object",
                         "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                         "required": ["a", "b"]});
    vec![
        Arc::new(ToolDefinition::new(
            "add",
            "Adds two integers",
            numbers.clone(),
        )),
        Arc::new(ToolDefinition::new(
            "multiply",
            "Multiplies two integers",
            numbers,
        )),
    ]
}

pub fn tools_json() -> Value {
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

pub async fn ask(
    client: &OpenAiClient,
    instructions: &str,
    messages: &[ChatMessage],
    tools: &[Arc<ToolDefinition>],
    deltas: &Deltas,
) -> Result<ChatResponse, ChatError> {
    let request = ChatRequest::new(instructions, messages, tools);
    client.complete(request, &deltas.sink()).await
}

/// Says "hi" through `client`, the text going to `deltas`.
pub async fn hello_to(client: &OpenAiClient, deltas: &Deltas) -> Result<ChatResponse, ChatError> {
    ask(client, "", &[ChatMessage::user("hi")], &[], deltas).await
}

pub async fn hello(client: &OpenAiClient) -> Result<ChatResponse, ChatError> {
    hello_to(client, &Deltas::default()).await
}

pub async fn bodies(server: &MockServer) -> Vec<Value> {
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

pub fn has_tool_results(request: &Request) -> bool {
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

/// What the raw server does after the response headers.
pub enum Ending {
    /// Sends the last chunk of the chunked encoding.
    Complete,
    /// Closes the connection mid-body.
    Cut,
    /// Stops sending but keeps the connection open this long.
    Stall(Duration),
}

/// Reads one HTTP request (head and `content-length` body) from `stream`; false when the
/// connection ended first.
pub fn read_request(stream: &TcpStream) -> bool {
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

pub const STREAM_HEAD: &str = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                           transfer-encoding: chunked\r\n\r\n";

/// Writes `piece` as one chunk of the chunked encoding.
pub fn write_chunk(stream: &mut TcpStream, piece: &str) -> bool {
    let chunk = format!("{:x}\r\n{piece}\r\n", piece.len());
    stream.write_all(chunk.as_bytes()).is_ok() && stream.flush().is_ok()
}

/// A listener on a free loopback port, and its address.
pub fn loopback_listener() -> (TcpListener, SocketAddr) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
    let address = listener
        .local_addr()
        .unwrap_or_else(|e| panic!("address: {e}"));
    (listener, address)
}

/// A loopback address that was just free: nothing listens there.
pub fn free_address() -> SocketAddr {
    loopback_listener().1
}

/// A one-connection HTTP server that reads the request, sends the head of a chunked
/// `text/event-stream` response and leaves the body to `body` (on its own thread).
fn stream_server(body: impl FnOnce(&mut TcpStream) + Send + 'static) -> SocketAddr {
    let (listener, address) = loopback_listener();
    std::thread::spawn(move || {
        let Ok((mut stream, _)) = listener.accept() else {
            return;
        };
        if !read_request(&stream) || stream.write_all(STREAM_HEAD.as_bytes()).is_err() {
            return;
        }
        body(&mut stream);
    });
    address
}

/// Ends the body of a chunked response.
fn end_chunks(stream: &mut TcpStream) {
    let _ = stream.write_all(b"0\r\n\r\n");
    let _ = stream.flush();
}

/// A one-connection HTTP server that answers with a chunked `text/event-stream` body written in
/// `pieces`, one write each with a pause in between, then ends as `ending` says.
pub fn raw_stream_server(pieces: Vec<&'static str>, ending: Ending) -> SocketAddr {
    stream_server(move |stream| {
        for piece in pieces {
            if !write_chunk(stream, piece) {
                return;
            }
            std::thread::sleep(Duration::from_millis(15));
        }
        match ending {
            Ending::Complete => end_chunks(stream),
            Ending::Cut => {}
            Ending::Stall(pause) => std::thread::sleep(pause),
        }
    })
}

/// A one-connection HTTP server that answers with a chunked `text/event-stream` body, writing
/// each piece after its pause, then ends the body.
pub fn timed_stream_server(pieces: Vec<(Duration, String)>) -> SocketAddr {
    stream_server(move |stream| {
        for (pause, piece) in pieces {
            std::thread::sleep(pause);
            if !write_chunk(stream, &piece) {
                return;
            }
        }
        end_chunks(stream);
    })
}

/// A status error's code and message, or a panic naming what came instead.
pub fn status_error(result: Result<ChatResponse, ChatError>) -> (u16, String) {
    match result {
        Err(ChatError::Status { status, message }) => (status, message),
        other => panic!("expected the provider's error, got {other:?}"),
    }
}

/// An SSE body of named events: `event: {name}` and `data: {json}` each.
pub fn named_sse(events: &[(&str, Value)]) -> String {
    events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect()
}

/// A tool loop so far: a question, a response with two calls, their results (the second an
/// error).
pub fn tool_loop_history() -> Vec<ChatMessage> {
    vec![
        ChatMessage::user("What is 2+3 and 4*5?"),
        ChatMessage::Assistant {
            content: Some("Let me compute.".into()),
            tool_calls: vec![
                ToolCall::new("call_add", "add", r#"{"a": 2, "b": 3}"#),
                ToolCall::new("call_mul", "multiply", "not json"),
            ],
            reasoning: vec![],
        },
        ChatMessage::tool("call_add", "5", false),
        ChatMessage::tool("call_mul", "Invalid arguments for 'multiply'", true),
    ]
}

/// Sends one request through any client.
pub async fn send(
    client: &dyn ChatClient,
    request: ChatRequest<'_>,
    deltas: &Deltas,
) -> Result<ChatResponse, ChatError> {
    client.complete(request, &deltas.sink()).await
}

/// `body` in pieces of `size` bytes (on char boundaries), each written after a short pause.
pub fn in_pieces(body: &str, size: usize) -> Vec<(Duration, String)> {
    let mut pieces = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        let mut end = size.min(rest.len());
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        pieces.push((Duration::from_millis(1), rest[..end].to_owned()));
        rest = &rest[end..];
    }
    pieces
}
