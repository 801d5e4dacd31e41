//! API keys never show: not in errors (even when the server echoes the key), not in `Debug`
//! output, not in agent events, not in `tracing` output (retries log their errors).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use hpd_agent::{
    AgentBuilder, AgentRunConfig, AnthropicClient, ChatClient, OpenAiClient, OpenAiResponsesClient,
};
use serde_json::json;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "sk-very-secret-key-123";

/// Records every event and span of the crate as text.
#[derive(Default)]
struct Recorder {
    next: AtomicU64,
    lines: Mutex<Vec<String>>,
}

struct Fields(String);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!(" {}={value:?}", field.name()));
    }
}

impl Subscriber for &'static Recorder {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target().starts_with("hpd_agent")
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut fields = Fields(String::new());
        span.record(&mut fields);
        self.lines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(format!("span {}{}", span.metadata().name(), fields.0));
        Id::from_u64(self.next.fetch_add(1, Ordering::SeqCst) + 1)
    }

    fn record(&self, _span: &Id, _values: &Record<'_>) {}

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields(String::new());
        event.record(&mut fields);
        self.lines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(format!("event {}{}", event.metadata().target(), fields.0));
    }

    fn enter(&self, _span: &Id) {}

    fn exit(&self, _span: &Id) {}
}

/// A server that fails with the key in its message: 503 once (retried, so traced), then 401.
async fn echoing_server() -> MockServer {
    let server = MockServer::start().await;
    let body = json!({"type": "error", "error": {"type": "authentication_error",
                      "message": format!("Incorrect API key provided: {KEY}")}});
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(503).set_body_json(body.clone()))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(401).set_body_json(body))
        .mount(&server)
        .await;
    server
}

/// Runs one failing turn through `client` and returns everything the run let out.
fn leaks(client: Box<dyn ChatClient>, debug: String) -> Vec<String> {
    let recorder: &'static Recorder = Box::leak(Box::default());
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let error = tracing::subscriber::with_default(recorder, || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let agent = AgentBuilder::new()
                .with_chat_client(client)
                .build()
                .unwrap();
            let agent_debug = format!("{agent:?}");
            let result = agent
                .session()
                .run_with(
                    "hi",
                    AgentRunConfig::new()
                        .on_event(move |e| seen.lock().unwrap().push(format!("{e:?}"))),
                )
                .await;
            let error = result.expect_err("the server refuses the key");
            vec![agent_debug, error.to_string(), format!("{error:?}")]
        })
    });
    let mut texts = error;
    texts.push(debug);
    texts.extend(events.lock().unwrap().iter().cloned());
    let lines = recorder.lines.lock().unwrap().clone();
    assert!(
        lines.iter().any(|l| l.contains("retrying")),
        "the retry was traced: {lines:?}"
    );
    texts.extend(lines);
    texts
}

fn check(texts: &[String]) {
    assert!(
        texts
            .iter()
            .any(|t| t.contains("Incorrect API key provided: <redacted>")),
        "the provider's message is kept, without the key: {texts:#?}"
    );
    for text in texts {
        assert!(!text.contains(KEY), "the key leaked: {text}");
    }
}

#[test]
fn no_client_lets_its_key_out() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let servers: Vec<MockServer> = runtime.block_on(async {
        let mut servers = Vec::new();
        for _ in 0..3 {
            servers.push(echoing_server().await);
        }
        servers
    });
    let fast = |retry: hpd_agent::providers::retry::RetryPolicy| {
        hpd_agent::providers::retry::RetryPolicy {
            max_retries: 1,
            backoff: Duration::from_millis(1),
            ..retry
        }
    };
    let openai = OpenAiClient::new("m", KEY)
        .and_then(|c| c.with_base_url(format!("{}/v1", servers[0].uri())))
        .unwrap()
        .with_retry_policy(fast(Default::default()));
    check(&leaks(Box::new(openai.clone()), format!("{openai:?}")));
    let responses = OpenAiResponsesClient::new("m", KEY)
        .and_then(|c| c.with_base_url(format!("{}/v1", servers[1].uri())))
        .unwrap()
        .with_retry_policy(fast(Default::default()));
    check(&leaks(
        Box::new(responses.clone()),
        format!("{responses:?}"),
    ));
    let anthropic = AnthropicClient::new("m", KEY)
        .and_then(|c| c.with_base_url(servers[2].uri()))
        .unwrap()
        .with_retry_policy(fast(Default::default()));
    check(&leaks(
        Box::new(anthropic.clone()),
        format!("{anthropic:?}"),
    ));
}
