//! Provider faults through a whole agent, for every HTTP client (OpenAI Chat, Anthropic,
//! OpenAI Responses): connection refused, a server that accepts and never answers, a stream cut
//! in the middle of a tool call's arguments, a 200 with an HTML body, and a 429 storm. Each
//! turn fails with a clear error within the configured timeout and a bounded number of attempts
//! (with backoff and jitter), after a tool call already ran in that turn; the history stays
//! valid (every call answered), and a second run on the same session succeeds against a good
//! server, which receives the earlier call and its result.
//!
//! The client-level files cover parts of this for some clients (OpenAI Chat: refused
//! connections, timeouts, HTML pages, cut streams, single 429s; Anthropic and Responses: retried
//! statuses and cut streams); this file runs every fault for every client through a session.

use std::collections::VecDeque;

use hpd_agent::{
    AgentBuilder, HarnessBuilder, ScriptedChatClient, Session, Tool, ToolResult, async_trait,
    chat::TextSink, providers::anthropic::AnthropicClient,
    providers::openai_responses::OpenAiResponsesClient,
};

use crate::support::*;

/// How long a client waits for an answer in these tests.
const TIMEOUT: Duration = Duration::from_millis(400);

#[derive(Clone, Copy, Debug)]
pub(crate) enum Provider {
    OpenAi,
    Anthropic,
    Responses,
}

impl Provider {
    /// A client for the server at `base` (`http://host:port`).
    pub(crate) fn client(
        self,
        base: &str,
        max_retries: u32,
        backoff: Duration,
    ) -> Arc<dyn ChatClient> {
        fn setup<T>(e: ChatError) -> T {
            panic!("client setup failed: {e}")
        }
        macro_rules! tuned {
            ($client:expr) => {
                $client
                    .with_max_retries(max_retries)
                    .with_backoff(backoff)
                    .with_max_backoff(Duration::from_secs(2))
                    .with_timeout(TIMEOUT)
            };
        }
        match self {
            Provider::OpenAi => Arc::new(tuned!(
                OpenAiClient::new("test-model", "sk-fault")
                    .and_then(|c| c.with_base_url(format!("{base}/v1")))
                    .unwrap_or_else(setup)
            )),
            Provider::Anthropic => Arc::new(tuned!(
                AnthropicClient::new("claude-test", "sk-fault")
                    .and_then(|c| c.with_base_url(base))
                    .unwrap_or_else(setup)
            )),
            Provider::Responses => Arc::new(tuned!(
                OpenAiResponsesClient::new("gpt-test", "sk-fault")
                    .and_then(|c| c.with_base_url(format!("{base}/v1")))
                    .unwrap_or_else(setup)
            )),
        }
    }

    /// A streamed text reply.
    pub(crate) fn text_reply(self, text: &str) -> String {
        match self {
            Provider::OpenAi => text_stream(&[text]),
            Provider::Anthropic => named_sse(&[
                (
                    "message_start",
                    json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
                           "role": "assistant", "content": [], "model": "claude-test",
                           "stop_reason": null, "usage": {"input_tokens": 5, "output_tokens": 1}}}),
                ),
                (
                    "content_block_start",
                    json!({"type": "content_block_start", "index": 0,
                           "content_block": {"type": "text", "text": ""}}),
                ),
                (
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 0,
                           "delta": {"type": "text_delta", "text": text}}),
                ),
                (
                    "content_block_stop",
                    json!({"type": "content_block_stop", "index": 0}),
                ),
                (
                    "message_delta",
                    json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                           "usage": {"output_tokens": 3}}),
                ),
                ("message_stop", json!({"type": "message_stop"})),
            ]),
            Provider::Responses => named_sse(&[
                (
                    "response.output_item.added",
                    json!({"type": "response.output_item.added", "output_index": 0,
                           "item": {"id": "msg_1", "type": "message", "role": "assistant",
                                    "content": []}}),
                ),
                (
                    "response.output_text.delta",
                    json!({"type": "response.output_text.delta", "item_id": "msg_1",
                           "output_index": 0, "content_index": 0, "delta": text}),
                ),
                (
                    "response.completed",
                    json!({"type": "response.completed", "response": {"id": "resp_1",
                           "status": "completed", "output": [],
                           "usage": {"input_tokens": 5, "output_tokens": 3, "total_tokens": 8}}}),
                ),
            ]),
        }
    }

    /// The start of a streamed reply that calls `add`, ending inside its arguments.
    fn tool_call_prefix(self) -> String {
        match self {
            Provider::OpenAi => {
                let mut body = format!(
                    "data: {}\n\n",
                    delta(
                        json!({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_9",
                        "type": "function", "function": {"name": "add", "arguments": ""}}]})
                    )
                );
                body.push_str(&format!(
                    "data: {}\n\n",
                    delta(json!({"tool_calls": [{"index": 0,
                        "function": {"arguments": "{\"a\": 2, \"b\""}}]}))
                ));
                body
            }
            Provider::Anthropic => named_sse(&[
                (
                    "message_start",
                    json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
                           "role": "assistant", "content": [], "model": "claude-test",
                           "stop_reason": null, "usage": {"input_tokens": 5, "output_tokens": 1}}}),
                ),
                (
                    "content_block_start",
                    json!({"type": "content_block_start", "index": 0, "content_block":
                           {"type": "tool_use", "id": "toolu_9", "name": "add", "input": {}}}),
                ),
                (
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 0, "delta":
                           {"type": "input_json_delta", "partial_json": "{\"a\": 2, \"b\""}}),
                ),
            ]),
            Provider::Responses => named_sse(&[
                (
                    "response.output_item.added",
                    json!({"type": "response.output_item.added", "output_index": 0,
                           "item": {"id": "fc_9", "type": "function_call", "call_id": "call_9",
                                    "name": "add", "arguments": "", "status": "in_progress"}}),
                ),
                (
                    "response.function_call_arguments.delta",
                    json!({"type": "response.function_call_arguments.delta", "item_id": "fc_9",
                           "delta": "{\"a\": 2, \"b\""}),
                ),
            ]),
        }
    }

    /// A rate-limit error body in the provider's form.
    fn rate_limit_body(self) -> Value {
        match self {
            Provider::Anthropic => json!({"type": "error", "error":
                                          {"type": "rate_limit_error", "message": "Rate limit reached"}}),
            Provider::OpenAi | Provider::Responses => {
                json!({"error": {"message": "Rate limit reached", "type": "requests"}})
            }
        }
    }
}

/// A client that hands each request to the next of its clients, the last one for good.
struct Relay(Mutex<VecDeque<Arc<dyn ChatClient>>>);

impl Relay {
    fn new(clients: Vec<Arc<dyn ChatClient>>) -> Arc<Self> {
        Arc::new(Relay(Mutex::new(clients.into())))
    }

    /// From now on every request goes to `client`.
    fn switch_to(&self, client: Arc<dyn ChatClient>) {
        *self.0.lock().unwrap() = VecDeque::from([client]);
    }
}

#[async_trait]
impl ChatClient for Relay {
    async fn complete(
        &self,
        request: ChatRequest<'_>,
        text: TextSink<'_>,
    ) -> Result<ChatResponse, ChatError> {
        let next = {
            let mut clients = self.0.lock().unwrap();
            if clients.len() > 1 {
                clients.pop_front()
            } else {
                clients.front().cloned()
            }
        };
        let next = next.unwrap_or_else(|| panic!("the relay has no client"));
        next.complete(request, text).await
    }
}

/// A session whose first request is answered in process with a call of `add`; the next goes
/// to `faulty`.
fn session(faulty: Arc<dyn ChatClient>) -> (Session, Arc<Relay>) {
    let scripted =
        ScriptedChatClient::with_replies([ChatResponse::tool_calls(vec![ToolCall::new(
            "call_1",
            "add",
            r#"{"a": 2, "b": 3}"#,
        )])]);
    let relay = Relay::new(vec![Arc::new(scripted), faulty]);
    let add = Tool::new(
        "add",
        "Adds two integers",
        json!({"type": "object", "properties": {"a": {"type": "integer"},
               "b": {"type": "integer"}}, "required": ["a", "b"]}),
        |arguments: Value, _| async move {
            let sum = arguments["a"].as_i64().unwrap_or(0) + arguments["b"].as_i64().unwrap_or(0);
            ToolResult::ok(sum.to_string())
        },
    );
    let harness = HarnessBuilder::new("Adder").with_tool(add).build().unwrap();
    let agent = AgentBuilder::new()
        .with_harness(harness)
        .with_shared_chat_client(relay.clone())
        .build()
        .unwrap();
    (agent.session(), relay)
}

/// Every tool call of the history has exactly one result, after it.
fn assert_valid(history: &[ChatMessage]) {
    let mut open: Vec<&str> = Vec::new();
    for message in history {
        match message {
            ChatMessage::Assistant { tool_calls, .. } => {
                assert!(open.is_empty(), "unanswered calls {open:?}: {history:#?}");
                open = tool_calls.iter().map(|c| c.id.as_str()).collect();
            }
            ChatMessage::Tool { call_id, .. } => {
                let at = open.iter().position(|id| id == call_id);
                let at = at.unwrap_or_else(|| panic!("result without call {call_id}"));
                open.remove(at);
            }
            ChatMessage::User { .. } => assert!(open.is_empty(), "unanswered calls {open:?}"),
            other => panic!("a message kind this check does not know: {other:?}"),
        }
    }
    assert!(open.is_empty(), "unanswered calls {open:?}");
}

/// Runs the failing turn, checks the history, then runs again against a good server.
async fn fail_then_recover(
    provider: Provider,
    faulty: Arc<dyn ChatClient>,
    check: impl FnOnce(&hpd_agent::RunError, Duration),
) {
    let (mut session, relay) = session(faulty);
    let started = Instant::now();
    let error = session
        .run("What is 2+3?")
        .await
        .expect_err("the turn fails");
    println!("{provider:?}: {error} (after {:?})", started.elapsed());
    check(&error, started.elapsed());
    let history = session.history().to_vec();
    assert_eq!(
        history.len(),
        3,
        "{provider:?}: user, the call, its result: {history:#?}"
    );
    assert_valid(&history);

    let good = serve(post(sse_response(provider.text_reply("recovered"))).expect(1)).await;
    relay.switch_to(provider.client(&good.uri(), 0, Duration::from_millis(1)));
    let output = session
        .run("And now?")
        .await
        .unwrap_or_else(|e| panic!("{provider:?}: the session is usable again: {e}"));
    assert_eq!(output.text, "recovered");
    assert_valid(session.history());
    assert_eq!(session.history().len(), 5);
    // The good server got the whole conversation, the earlier call and its result included.
    let body = bodies(&good).await.remove(0).to_string();
    assert!(
        body.contains("What is 2+3?") && body.contains("And now?"),
        "{body}"
    );
    assert!(body.contains("call_1") && body.contains('5'), "{body}");
}

fn provider_error(error: &hpd_agent::RunError) -> &ChatError {
    match error {
        hpd_agent::RunError::Chat(e) => e,
        other => panic!("expected a provider error, got {other:?}"),
    }
}

async fn connection_refused(provider: Provider) {
    let address = free_address();
    let faulty = provider.client(&format!("http://{address}"), 2, Duration::from_millis(40));
    fail_then_recover(provider, faulty, |error, elapsed| {
        let e = provider_error(error);
        assert!(matches!(e, ChatError::Transport(_)), "{provider:?}: {e:?}");
        assert!(
            error.to_string().contains("provider request failed"),
            "{error}"
        );
        // Two retries after at least 20 and 40 ms (half of each backoff; the rest is jitter),
        // and far less than a hang.
        assert!(
            elapsed >= Duration::from_millis(60),
            "{provider:?}: {elapsed:?}"
        );
        assert!(
            elapsed < Duration::from_secs(10),
            "{provider:?}: {elapsed:?}"
        );
    })
    .await;
}

/// A server that accepts every connection, reads the request and never answers.
fn silent_server() -> SocketAddr {
    let (listener, address) = loopback_listener();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().take(4).flatten() {
            read_request(&stream);
            held.push(stream);
        }
        std::thread::sleep(Duration::from_secs(10));
    });
    address
}

async fn never_answers(provider: Provider) {
    let address = silent_server();
    let faulty = provider.client(&format!("http://{address}"), 2, Duration::from_millis(1));
    fail_then_recover(provider, faulty, |error, elapsed| {
        let e = provider_error(error);
        assert!(
            matches!(e, ChatError::Timeout(t) if *t == TIMEOUT),
            "{provider:?}: {e:?}"
        );
        assert_eq!(error.to_string(), "provider request timed out after 400ms");
        assert!(elapsed >= TIMEOUT, "{provider:?}: {elapsed:?}");
        // Not retried: one timeout, not three.
        assert!(elapsed < TIMEOUT * 2, "{provider:?}: {elapsed:?}");
    })
    .await;
}

async fn cut_in_tool_arguments(provider: Provider) {
    let prefix: &'static str = Box::leak(provider.tool_call_prefix().into_boxed_str());
    let (head, tail) = prefix.split_at(prefix.len() / 2);
    // The connection dropped mid-body, and a body that ends cleanly but too early.
    for cut in [true, false] {
        let ending = if cut { Ending::Cut } else { Ending::Complete };
        let address = raw_stream_server(vec![head, tail], ending);
        let faulty = provider.client(&format!("http://{address}"), 2, Duration::from_millis(1));
        fail_then_recover(provider, faulty, |error, elapsed| {
            let e = provider_error(error);
            assert!(
                matches!(e, ChatError::Transport(_) | ChatError::Malformed(_)),
                "{provider:?}: {e:?}"
            );
            assert!(
                elapsed < Duration::from_secs(5),
                "{provider:?}: {elapsed:?}"
            );
        })
        .await;
    }
}

async fn html_page(provider: Provider) {
    let server = serve(post(ResponseTemplate::new(200).set_body_raw(
        "<!doctype html><html><body>Sign in to continue</body></html>",
        "text/html",
    )))
    .await;
    let faulty = provider.client(&server.uri(), 2, Duration::from_millis(1));
    fail_then_recover(provider, faulty, |error, _| {
        let e = provider_error(error);
        match e {
            ChatError::Malformed(message) => {
                assert!(message.contains("text/html"), "{provider:?}: {message}");
                assert!(
                    message.contains("Sign in to continue"),
                    "{provider:?}: {message}"
                );
            }
            other => panic!("{provider:?}: expected Malformed, got {other:?}"),
        }
    })
    .await;
    // A page is not retried.
    assert_eq!(bodies(&server).await.len(), 1, "{provider:?}");
}

/// Answers 429 to everything and notes when each request came.
struct Storm {
    arrivals: Arc<Mutex<Vec<Instant>>>,
    body: Value,
}

impl wiremock::Respond for Storm {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        self.arrivals.lock().unwrap().push(Instant::now());
        ResponseTemplate::new(429).set_body_json(self.body.clone())
    }
}

async fn rate_limit_storm(provider: Provider) {
    let arrivals = Arc::new(Mutex::new(Vec::new()));
    let server = serve(post(Storm {
        arrivals: Arc::clone(&arrivals),
        body: provider.rate_limit_body(),
    }))
    .await;
    let backoff = Duration::from_millis(20);
    let faulty = provider.client(&server.uri(), 4, backoff);
    fail_then_recover(provider, faulty, |error, elapsed| {
        let e = provider_error(error);
        assert!(
            matches!(e, ChatError::Status { status: 429, message } if message == "Rate limit reached"),
            "{provider:?}: {e:?}"
        );
        assert!(elapsed < Duration::from_secs(10), "{provider:?}: {elapsed:?}");
    })
    .await;
    let arrivals = arrivals.lock().unwrap().clone();
    assert_eq!(arrivals.len(), 5, "{provider:?}: one request and 4 retries");
    // Exponential backoff with equal jitter: retry n waits between half and all of
    // backoff * 2^n.
    for (n, pair) in arrivals.windows(2).enumerate() {
        let gap = pair[1] - pair[0];
        let full = backoff * 2u32.pow(n as u32);
        assert!(gap >= full / 2, "{provider:?}: retry {n} after {gap:?}");
    }
}

macro_rules! fault_tests {
    ($($name:ident: $fault:ident($provider:ident);)*) => {
        $(
            #[tokio::test]
            async fn $name() {
                $fault(Provider::$provider).await;
            }
        )*
    };
}

fault_tests! {
    openai_connection_refused: connection_refused(OpenAi);
    anthropic_connection_refused: connection_refused(Anthropic);
    responses_connection_refused: connection_refused(Responses);
    openai_server_that_never_answers: never_answers(OpenAi);
    anthropic_server_that_never_answers: never_answers(Anthropic);
    responses_server_that_never_answers: never_answers(Responses);
    openai_stream_cut_in_tool_arguments: cut_in_tool_arguments(OpenAi);
    anthropic_stream_cut_in_tool_arguments: cut_in_tool_arguments(Anthropic);
    responses_stream_cut_in_tool_arguments: cut_in_tool_arguments(Responses);
    openai_html_page: html_page(OpenAi);
    anthropic_html_page: html_page(Anthropic);
    responses_html_page: html_page(Responses);
    openai_rate_limit_storm: rate_limit_storm(OpenAi);
    anthropic_rate_limit_storm: rate_limit_storm(Anthropic);
    responses_rate_limit_storm: rate_limit_storm(Responses);
}
