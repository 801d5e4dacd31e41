//! The secrets of an OAuth sign-in (the access token, the refresh token, a client secret)
//! never show in `Debug` output, errors, events or traces, of this crate or of rmcp's OAuth
//! client: a real sign-in against `oidc-provider` (`HPD_OIDC_ISSUER`, started by
//! `.ci/oidc-provider.sh`) to the project's own server, recorded at every level and target.

mod support;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use hpd_agent::mcp::{
    AuthorizationHandler, JwtVerifier, McpHarness, McpOAuth, McpServer, MemoryTokenStore,
    ProtectedResource, StoredTokens, TokenStore, TokenStoreError,
};
use hpd_agent::{
    AgentBuilder, AgentRunConfig, ChatResponse, HarnessBuilder, ScriptedChatClient, Tool, ToolCall,
    ToolResult,
};
use serde_json::json;

const REDIRECT_URI: &str = "http://127.0.0.1:1/callback";
const CLIENT_SECRET: &str = "hpd-planted-client-secret-Zk3";

/// Follows the authorization server's redirects (keeping cookies) to the callback.
struct Browser;

#[async_trait]
impl AuthorizationHandler for Browser {
    fn redirect_uri(&self) -> String {
        REDIRECT_URI.to_owned()
    }

    async fn authorize(&self, authorization_url: &str) -> Result<String, String> {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| e.to_string())?;
        let mut cookies: Vec<String> = Vec::new();
        let mut url = reqwest::Url::parse(authorization_url).map_err(|e| e.to_string())?;
        for _ in 0..10 {
            let mut request = http.get(url.clone());
            if !cookies.is_empty() {
                request = request.header("cookie", cookies.join("; "));
            }
            let response = request.send().await.map_err(|e| e.to_string())?;
            for value in response.headers().get_all("set-cookie") {
                let pair = value.to_str().unwrap_or("").split(';').next().unwrap_or("");
                let name = pair.split('=').next().unwrap_or("").to_owned();
                cookies.retain(|c| !c.starts_with(&format!("{name}=")));
                cookies.push(pair.to_owned());
            }
            let location = response
                .headers()
                .get("location")
                .ok_or_else(|| format!("{url} answered {}", response.status()))?;
            url = url
                .join(location.to_str().map_err(|e| e.to_string())?)
                .map_err(|e| e.to_string())?;
            if url.as_str().starts_with(REDIRECT_URI) {
                return Ok(url.to_string());
            }
        }
        Err("too many redirects".to_owned())
    }
}

/// A store the test can read.
struct Shared(Arc<MemoryTokenStore>);

#[async_trait]
impl TokenStore for Shared {
    async fn load(&self) -> Result<Option<StoredTokens>, TokenStoreError> {
        self.0.load().await
    }
    async fn save(&self, tokens: StoredTokens) -> Result<(), TokenStoreError> {
        self.0.save(tokens).await
    }
    async fn clear(&self) -> Result<(), TokenStoreError> {
        self.0.clear().await
    }
}

#[test]
fn no_oauth_secret_shows_anywhere() {
    let Ok(issuer) = std::env::var("HPD_OIDC_ISSUER") else {
        hpd_agent_tests::skip!(
            "skipped: HPD_OIDC_ISSUER is not set (start one with `bash .ci/oidc-provider.sh start`)"
        );
        return;
    };
    let recorder = support::Recorder::leak_every_target();
    // Global: the transport and the sign-in run on the runtime's worker threads.
    tracing::subscriber::set_global_default(recorder).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut texts: Vec<String> = Vec::new();
    let secrets = runtime.block_on(async {
        let verifier = JwtVerifier::discover(issuer.as_str()).await.unwrap();
        let hello = Tool::new(
            "hello",
            "Says hello",
            json!({"type": "object"}),
            |_, _| async { ToolResult::ok("hello") },
        );
        let served = AgentBuilder::new()
            .with_harness(HarnessBuilder::new("G").with_tool(hello).build().unwrap())
            .with_chat_client(ScriptedChatClient::new())
            .build()
            .unwrap();
        let server = McpServer::new(served)
            .with_oauth(
                ProtectedResource::new(issuer.as_str(), verifier)
                    .with_required_scopes(["mcp:tools"]),
            )
            .serve_http("127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
        let store = Arc::new(MemoryTokenStore::new());
        let oauth = McpOAuth::new(Browser).with_token_store(Shared(store.clone()));
        let harness = McpHarness::http("Remote", server.url())
            .with_oauth(oauth.clone())
            .without_collapse()
            .connect()
            .await
            .unwrap();
        let events = Arc::new(Mutex::new(Vec::new()));
        let seen = events.clone();
        let model = ScriptedChatClient::with_replies([
            ChatResponse::tool_calls(vec![ToolCall::new("c1", "hello", "{}")]),
            ChatResponse::text("done"),
        ]);
        let agent = AgentBuilder::new()
            .with_harness(harness)
            .with_chat_client(model)
            .build()
            .unwrap();
        agent
            .session()
            .run_with(
                "hi",
                AgentRunConfig::new()
                    .on_event(move |e| seen.lock().unwrap().push(format!("{e:?}"))),
            )
            .await
            .unwrap();
        texts.extend(events.lock().unwrap().iter().cloned());
        texts.push(format!("{agent:?}"));
        texts.push(format!("{oauth:?}"));
        let kept = store.load().await.unwrap().unwrap();
        texts.push(format!("{kept:?}"));
        texts.push(format!("{kept:#?}"));
        texts.push(format!("{store:?}"));
        // A pre-registered client whose secret the authorization server does not know: the
        // sign-in fails, and the error does not quote the secret.
        let refused = McpHarness::http("Other", server.url())
            .with_oauth(
                McpOAuth::new(Browser)
                    .with_client_id("unknown-client")
                    .with_client_secret(CLIENT_SECRET),
            )
            .connect()
            .await
            .unwrap_err();
        texts.push(refused.to_string());
        texts.push(format!("{refused:?}"));
        server.shutdown().await;
        let tokens = serde_json::to_value(&kept).unwrap();
        let mut secrets = vec![CLIENT_SECRET.to_owned()];
        for key in ["access_token", "refresh_token"] {
            if let Some(secret) = tokens["token_response"][key].as_str() {
                secrets.push(secret.to_owned());
            }
        }
        secrets
    });
    assert!(
        secrets.len() == 3,
        "the sign-in issued an access and a refresh token"
    );
    let lines = recorder.lines();
    assert!(
        lines.iter().any(|l| l.contains("signing in")),
        "the sign-in is traced"
    );
    texts.extend(lines);
    for secret in &secrets {
        let leaks: Vec<&String> = texts
            .iter()
            .filter(|t| t.contains(secret.as_str()))
            .collect();
        assert!(leaks.is_empty(), "a secret leaked: {leaks:#?}");
    }
}
