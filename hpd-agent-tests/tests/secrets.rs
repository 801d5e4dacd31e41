//! API keys never show: not in errors (even when the server echoes the key), not in `Debug`
//! output, not in agent events, not in `tracing` output (retries log their errors).

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hpd_agent::{
    AgentBuilder, AgentRunConfig, ChatClient, providers::anthropic::AnthropicClient,
    providers::openai::OpenAiClient, providers::openai_responses::OpenAiResponsesClient,
};
use support::{Recorder, echoing_server};
use wiremock::MockServer;

const KEY: &str = "sk-very-secret-key-123";

/// Runs one failing turn through `client` and returns everything the run let out.
fn leaks(client: Box<dyn ChatClient>, debug: String) -> Vec<String> {
    let recorder = Recorder::leak();
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
    let lines = recorder.lines();
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
            servers.push(echoing_server(KEY).await);
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
