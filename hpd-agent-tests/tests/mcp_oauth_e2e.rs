//! End to end, against a real authorization server (npm `oidc-provider`, started by
//! `.ci/oidc-provider.sh`; its issuer URL in `HPD_OIDC_ISSUER`): the project's MCP client
//! signs in to the project's MCP server with tokens that authorization server issued:
//! discovery, dynamic registration, PKCE, the code through the handler, a tool call, a
//! refresh. Tokens for another audience, expired ones and ones without a required scope are
//! refused by the server.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use hpd_agent::mcp::{
    AuthorizationHandler, JwtVerifier, McpHarness, McpHttpServer, McpOAuth, McpServer,
    MemoryTokenStore, ProtectedResource, TokenStore,
};
use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
use serde_json::json;

const REDIRECT_URI: &str = "http://127.0.0.1:1/callback";

/// The browser: follows the authorization server's redirects (its sign-in and consent finish
/// at once), keeping its cookies, until it is sent to the redirect URI.
#[derive(Default)]
struct Browser {
    sign_ins: Arc<AtomicUsize>,
}

#[async_trait]
impl AuthorizationHandler for Browser {
    fn redirect_uri(&self) -> String {
        REDIRECT_URI.to_owned()
    }

    async fn authorize(&self, authorization_url: &str) -> Result<String, String> {
        self.sign_ins.fetch_add(1, Ordering::SeqCst);
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
            let Some(location) = response.headers().get("location") else {
                return Err(format!(
                    "{url} answered {} without a redirect",
                    response.status()
                ));
            };
            let next = url
                .join(location.to_str().map_err(|e| e.to_string())?)
                .map_err(|e| e.to_string())?;
            if next.as_str().starts_with(REDIRECT_URI) {
                return Ok(next.to_string());
            }
            url = next;
        }
        Err("too many redirects".to_owned())
    }
}

async fn serve(
    issuer: &str,
    configure: impl FnOnce(JwtVerifier) -> JwtVerifier,
    scopes: &[&str],
) -> McpHttpServer {
    let verifier = configure(
        JwtVerifier::discover(issuer)
            .await
            .unwrap()
            .with_leeway(Duration::ZERO),
    );
    let whoami = Tool::new(
        "whoami",
        "Says hello",
        json!({"type": "object"}),
        |_, _| async { ToolResult::ok("hello, signed-in user") },
    );
    let agent = AgentBuilder::new()
        .with_harness(
            HarnessBuilder::new("Greeter")
                .with_tool(whoami)
                .build()
                .unwrap(),
        )
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    McpServer::new(agent)
        .with_oauth(
            ProtectedResource::new(issuer, verifier).with_required_scopes(scopes.iter().copied()),
        )
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap()
}

/// The access token the store keeps.
async fn access_token(store: &MemoryTokenStore) -> String {
    let tokens = serde_json::to_value(store.load().await.unwrap().unwrap()).unwrap();
    tokens["token_response"]["access_token"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// A `tools/list` POST with `token`: the status.
async fn status_with(server: &McpHttpServer, token: &str) -> u16 {
    reqwest::Client::new()
        .post(server.url())
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}})
            .to_string(),
        )
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_signs_in_to_the_server_with_tokens_of_a_real_authorization_server() {
    let Ok(issuer) = std::env::var("HPD_OIDC_ISSUER") else {
        hpd_agent_tests::skip!(
            "skipped: HPD_OIDC_ISSUER is not set (start one with `bash .ci/oidc-provider.sh start`)"
        );
        return;
    };
    let server = serve(&issuer, |v| v, &["mcp:tools"]).await;
    let store = Arc::new(MemoryTokenStore::new());
    let browser = Browser::default();
    let sign_ins = browser.sign_ins.clone();
    let oauth = McpOAuth::new(browser)
        .with_client_name("hpd-agent e2e test")
        .with_token_store(SharedStore(store.clone()));
    let harness = McpHarness::http("Greeter", server.url())
        .with_oauth(oauth)
        .without_collapse()
        .connect()
        .await
        .unwrap();
    assert_eq!(
        sign_ins.load(Ordering::SeqCst),
        1,
        "one sign-in through the handler"
    );
    let kept = store.load().await.unwrap().unwrap();
    assert!(
        kept.scopes().iter().any(|s| s == "mcp:tools"),
        "{:?}",
        kept.scopes()
    );
    let agent = AgentBuilder::new()
        .with_harness(harness)
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    let tools = agent.flat_tool_session();
    let called = tools.call_tool("c1", "whoami", "{}").await.unwrap();
    assert_eq!(
        (called.result.text.as_str(), called.result.is_error),
        ("hello, signed-in user", false)
    );
    let first_token = access_token(&store).await;

    // The token lives HPD_OIDC_ACCESS_TOKEN_TTL (10) seconds; close to its end the client
    // refreshes it, without a new sign-in.
    tokio::time::sleep(Duration::from_secs(7)).await;
    let called = tools.call_tool("c2", "whoami", "{}").await.unwrap();
    assert!(!called.result.is_error, "{}", called.result.text);
    let refreshed = access_token(&store).await;
    assert_ne!(refreshed, first_token, "the access token was refreshed");
    assert_eq!(sign_ins.load(Ordering::SeqCst), 1, "no second sign-in");

    // Refusals, with tokens this authorization server issued.
    assert_eq!(status_with(&server, &refreshed).await, 200);
    let elsewhere = serve(
        &issuer,
        |v| v.with_audience("http://127.0.0.1:1/other"),
        &["mcp:tools"],
    )
    .await;
    assert_eq!(
        status_with(&elsewhere, &refreshed).await,
        401,
        "wrong audience"
    );
    let admin = serve(
        &issuer,
        |v| v.with_audience(server.url()),
        &["mcp:tools", "mcp:admin"],
    )
    .await;
    assert_eq!(status_with(&admin, &refreshed).await, 403, "missing scope");
    tokio::time::sleep(Duration::from_secs(11)).await;
    assert_eq!(status_with(&server, &refreshed).await, 401, "expired");
    server.shutdown().await;
}

/// A store shared with the test, so it can read the tokens.
struct SharedStore(Arc<MemoryTokenStore>);

#[async_trait]
impl TokenStore for SharedStore {
    async fn load(
        &self,
    ) -> Result<Option<hpd_agent::mcp::StoredTokens>, hpd_agent::mcp::TokenStoreError> {
        self.0.load().await
    }
    async fn save(
        &self,
        tokens: hpd_agent::mcp::StoredTokens,
    ) -> Result<(), hpd_agent::mcp::TokenStoreError> {
        self.0.save(tokens).await
    }
    async fn clear(&self) -> Result<(), hpd_agent::mcp::TokenStoreError> {
        self.0.clear().await
    }
}
