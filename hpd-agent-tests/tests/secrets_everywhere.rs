//! One planted secret, everywhere a secret goes: provider API keys (sent as `Authorization` or
//! `x-api-key` headers, echoed back by the server), MCP server headers (`Authorization:
//! Bearer ...`), an MCP URL's password, MCP server environment values (printed to stderr by
//! the server itself), the same in `AgentConfig`, and passwords in PostgreSQL and Redis store
//! URLs, plain and with TLS settings (bad ones, and, when `HPD_POSTGRES_TLS_URL` and
//! `HPD_REDIS_TLS_URL` are set, a wrong password and a wrong CA against the TLS-only servers),
//! and the access tokens an OAuth-protected `McpServer` is given or refuses. Every error text,
//! `Debug` rendering, event and line of a recording `tracing` subscriber is searched for it.
//! (The stores take no client certificate, so there is no TLS key path to leak.)

mod mcp_common;
mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hpd_agent::mcp::{
    JwtVerifier, McpHarness, McpServer, ProtectedResource, StaticTokenVerifier, TokenVerifier,
};
use hpd_agent::store::{PostgresSessionStore, RedisSessionStore};
use hpd_agent::{
    AgentBuilder, AgentConfig, AgentRunConfig, ChatClient, ChatResponse, ScriptedChatClient,
    ToolCall, config::McpServerConfig, providers::anthropic::AnthropicClient,
    providers::openai::OpenAiClient, providers::openai_responses::OpenAiResponsesClient,
};
use serde_json::json;
use support::{Recorder, echoing_server};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

const SECRET: &str = "hpd-planted-secret-7Qx9";

/// Everything collected, with where it came from.
#[derive(Default)]
struct Texts(Vec<(String, String)>);

impl Texts {
    fn add(&mut self, origin: &str, text: impl Into<String>) {
        self.0.push((origin.to_owned(), text.into()));
    }

    fn debug(&mut self, origin: &str, value: &dyn std::fmt::Debug) {
        self.add(origin, format!("{value:?}"));
        self.add(origin, format!("{value:#?}"));
    }
}

/// Runs one turn through `client`, keeping the error, `Debug` renderings and events.
async fn provider_turn(texts: &mut Texts, origin: &str, client: Arc<dyn ChatClient>) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let agent = AgentBuilder::new()
        .with_shared_chat_client(client)
        .build()
        .unwrap();
    texts.debug(origin, &agent);
    let error = agent
        .session()
        .run_with(
            "hi",
            AgentRunConfig::new().on_event(move |e| seen.lock().unwrap().push(format!("{e:?}"))),
        )
        .await
        .expect_err("the server refuses the key");
    texts.add(origin, error.to_string());
    texts.debug(origin, &error);
    for event in events.lock().unwrap().iter() {
        texts.add(origin, event.clone());
    }
}

async fn providers(texts: &mut Texts) {
    let fast = hpd_agent::providers::retry::RetryPolicy {
        max_retries: 1,
        backoff: Duration::from_millis(1),
        ..Default::default()
    };
    let server = echoing_server(SECRET).await;
    let openai = OpenAiClient::new("m", SECRET)
        .and_then(|c| c.with_base_url(format!("{}/v1", server.uri())))
        .unwrap()
        .with_retry_policy(fast);
    texts.debug("openai client", &openai);
    provider_turn(texts, "openai", Arc::new(openai)).await;

    let server = echoing_server(SECRET).await;
    let responses = OpenAiResponsesClient::new("m", SECRET)
        .and_then(|c| c.with_base_url(format!("{}/v1", server.uri())))
        .unwrap()
        .with_retry_policy(fast);
    texts.debug("responses client", &responses);
    provider_turn(texts, "responses", Arc::new(responses)).await;

    let server = echoing_server(SECRET).await;
    let anthropic = AnthropicClient::new("m", SECRET)
        .and_then(|c| c.with_base_url(server.uri()))
        .unwrap()
        .with_retry_policy(fast);
    texts.debug("anthropic client", &anthropic);
    provider_turn(texts, "anthropic", Arc::new(anthropic)).await;
}

/// A stdio server that prints its environment (the secret) to stderr and crashes mid-call.
async fn mcp_stdio(texts: &mut Texts) -> bool {
    let Some(python) = mcp_common::python(false) else {
        return false;
    };
    let harness = McpHarness::stdio(
        "Leaky",
        python,
        [mcp_common::fixture("fault_server.py"), "crash".to_owned()],
    )
    .with_env("FAULT_SECRET_TOKEN", SECRET)
    .with_timeout(Duration::from_secs(20))
    .without_collapse();
    texts.debug("mcp stdio harness", &harness);
    let harness = harness.connect().await.unwrap();
    texts.debug("mcp stdio dynamic harness", &harness);
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "crash", "{}")]),
        ChatResponse::text("it crashed"),
    ]);
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let agent = AgentBuilder::new()
        .with_harness(harness)
        .with_chat_client(model.clone())
        .on_event(move |e| seen.lock().unwrap().push(format!("{e:?}")))
        .build()
        .unwrap();
    let mut session = agent.session();
    session.run("crash it").await.unwrap();
    let requests = model.take_requests();
    let (crashed, _) = requests[1].tool_result("c1").unwrap();
    // The server's stderr is quoted, with the secret taken out.
    assert!(
        crashed.contains("env FAULT_SECRET_TOKEN=<redacted>"),
        "{crashed}"
    );
    texts.add("mcp stdio result", crashed);
    texts.debug("mcp stdio session", &session);
    for event in events.lock().unwrap().iter() {
        texts.add("mcp stdio event", event.clone());
    }
    true
}

/// An HTTP server that refuses the bearer token and echoes it.
async fn mcp_http(texts: &mut Texts) {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(401).set_body_string(format!("invalid token Bearer {SECRET}")),
        )
        .mount(&server)
        .await;
    let address = server.address();
    let url = format!("http://user:{SECRET}@{address}/mcp");
    let harness = McpHarness::http("Remote", &url)
        .with_header("Authorization", format!("Bearer {SECRET}"))
        .with_header("X-Api-Key", SECRET)
        .with_timeout(Duration::from_secs(5));
    texts.debug("mcp http harness", &harness);
    let error = harness.connect().await.expect_err("the server refuses");
    texts.add("mcp http error", error.to_string());
    texts.debug("mcp http error", &error);
}

/// An OAuth-protected server whose static token is the secret, and tokens that carry it and
/// are refused: the server's answers and logs, `Debug` of everything, the verifiers' refusals.
async fn mcp_oauth_server(texts: &mut Texts) {
    let verifier = StaticTokenVerifier::new(SECRET).with_scopes(["tools"]);
    texts.debug("oauth", &verifier);
    let resource = ProtectedResource::new("https://auth.example.test", verifier)
        .with_required_scopes(["tools", "more"]);
    texts.debug("oauth", &resource);
    let agent = AgentBuilder::new()
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    let server = McpServer::new(agent).with_oauth(resource);
    texts.debug("oauth", &server);
    let server = server
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    texts.debug("oauth", &server);
    let http = reqwest::Client::new();
    // The right token without a required scope (403), and wrong tokens that contain it (401).
    for token in [
        SECRET.to_owned(),
        format!("{SECRET}-wrong"),
        format!("x{SECRET}"),
    ] {
        let response = http
            .post(server.url())
            .bearer_auth(&token)
            .body("{}")
            .send()
            .await
            .unwrap();
        texts.add("oauth", format!("{:?}", response.headers()));
        texts.add("oauth", response.text().await.unwrap());
    }
    let jwt = JwtVerifier::new("https://auth.example.test", "http://127.0.0.1:9/jwks");
    for token in [SECRET.to_owned(), format!("eyJ.{SECRET}.sig")] {
        let refused = jwt
            .verify(&token, "http://127.0.0.1:1/mcp")
            .await
            .unwrap_err();
        texts.add("oauth", refused.to_string());
        texts.debug("oauth", &refused);
    }
    texts.debug("oauth", &jwt);
    server.shutdown().await;
}

async fn config(texts: &mut Texts) {
    let address = "127.0.0.1:9";
    let config = AgentConfig::from_value(json!({
        "mcp_servers": [
            {"name": "Files", "command": "true", "env": {"TOKEN": SECRET}},
            {"name": "Search", "url": format!("http://app:{SECRET}@{address}/mcp"),
             "headers": {"Authorization": format!("Bearer {SECRET}")}, "timeout_ms": 2000}
        ]
    }))
    .unwrap();
    texts.debug("config", &config);
    texts.debug(
        "server config",
        &McpServerConfig::http("S", "http://x/mcp").with_header("Authorization", SECRET),
    );
    let builder =
        AgentBuilder::from_config(config.clone()).with_chat_client(ScriptedChatClient::new());
    texts.debug("builder", &builder);
    match builder.build() {
        Ok(_) => panic!("mcp_servers need build_async"),
        Err(error) => {
            texts.add("build", error.to_string());
            texts.debug("build", &error);
        }
    }
    let error = AgentBuilder::from_config(config)
        .with_chat_client(ScriptedChatClient::new())
        .build_async()
        .await
        .expect_err("neither server can be reached");
    texts.add("build_async", error.to_string());
    texts.debug("build_async", &error);
}

async fn stores(texts: &mut Texts) {
    // A port nothing listens on, and URLs that do not parse.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap();
    for url in [
        format!("postgres://app:{SECRET}@{closed}/db?connect_timeout=2"),
        format!("postgres://app:{SECRET}@127.0.0.1:notaport/db"),
        format!(
            "host=127.0.0.1 port={} user=app password={SECRET} connect_timeout=2",
            closed.port()
        ),
    ] {
        let error = PostgresSessionStore::connect(&url)
            .await
            .expect_err("no PostgreSQL there");
        texts.add("postgres", error.to_string());
        texts.debug("postgres", &error);
    }
    // TLS settings that cannot work: a CA file that is not there, a mode that does not exist,
    // TLS asked of a plain URL.
    for url in [
        format!(
            "postgres://app:{SECRET}@{closed}/db?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem"
        ),
        format!("postgres://app:{SECRET}@{closed}/db?sslmode=verify-ca"),
        format!("host=127.0.0.1 password={SECRET} sslmode=require sslrootcert=/nonexistent/ca.pem"),
    ] {
        let error = PostgresSessionStore::connect(&url)
            .await
            .expect_err("bad TLS settings");
        texts.add("postgres-tls", error.to_string());
        texts.debug("postgres-tls", &error);
    }
    for url in [
        format!("rediss://:{SECRET}@{closed}/0?sslrootcert=/nonexistent/ca.pem"),
        format!("redis://:{SECRET}@{closed}/0?sslmode=verify-full"),
        format!("rediss://:{SECRET}@{closed}/0?sslmode=disable"),
    ] {
        let error = RedisSessionStore::connect(&url)
            .await
            .expect_err("bad TLS settings");
        texts.add("redis-tls", error.to_string());
        texts.debug("redis-tls", &error);
    }
    // The TLS-only servers, when running: a wrong password and a wrong CA over TLS.
    for (var, is_redis) in [("HPD_POSTGRES_TLS_URL", false), ("HPD_REDIS_TLS_URL", true)] {
        let Ok(url) = std::env::var(var) else {
            continue;
        };
        let Some(real) = url
            .split("://")
            .nth(1)
            .and_then(|rest| rest.split('@').next())
            .and_then(|authority| authority.split_once(':'))
            .map(|(_, password)| password.to_owned())
        else {
            continue;
        };
        let wrong_password = url.replace(&real, SECRET);
        let wrong_ca = wrong_password.replace("/ca.pem", "/wrong-ca.pem");
        for url in [wrong_password, wrong_ca] {
            let error = if is_redis {
                RedisSessionStore::connect(&url).await.map(drop)
            } else {
                PostgresSessionStore::connect(&url).await.map(drop)
            }
            .expect_err("refused");
            texts.add(var, error.to_string());
            texts.debug(var, &error);
        }
    }
    for url in [
        format!("redis://:{SECRET}@{closed}/0"),
        format!("redis://:{SECRET}@127.0.0.1:notaport/0"),
    ] {
        let error = RedisSessionStore::connect(&url)
            .await
            .expect_err("no Redis there");
        texts.add("redis", error.to_string());
        texts.debug("redis", &error);
    }
}

#[test]
fn a_planted_secret_shows_nowhere() {
    let recorder = Recorder::leak();
    let mut texts = tracing::subscriber::with_default(recorder, || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let mut texts = Texts::default();
            providers(&mut texts).await;
            let stdio = mcp_stdio(&mut texts).await;
            mcp_http(&mut texts).await;
            mcp_oauth_server(&mut texts).await;
            config(&mut texts).await;
            stores(&mut texts).await;
            (texts, stdio)
        })
    });
    let (ref mut collected, stdio) = texts;
    let lines = recorder.lines();
    assert!(
        lines.iter().any(|l| l.contains("retrying")),
        "provider retries are traced"
    );
    if stdio {
        assert!(
            lines
                .iter()
                .any(|l| l.contains("stderr: env FAULT_SECRET_TOKEN=<redacted>")),
            "the server's stderr is traced, scrubbed: {lines:#?}"
        );
    }
    for line in lines {
        collected.add("tracing", line);
    }
    // The texts say something: the provider's message and the config's names are kept.
    assert!(
        collected
            .0
            .iter()
            .any(|(_, t)| t.contains("Incorrect API key provided: <redacted>"))
    );
    assert!(
        collected
            .0
            .iter()
            .any(|(o, t)| o == "config" && t.contains("Authorization"))
    );
    let leaks: Vec<&(String, String)> = collected
        .0
        .iter()
        .filter(|(_, text)| text.contains(SECRET))
        .collect();
    assert!(leaks.is_empty(), "the secret leaked: {leaks:#?}");
    println!("searched {} texts", collected.0.len());
}
