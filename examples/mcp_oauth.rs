//! OAuth 2.1 in both directions: an MCP server that takes access tokens of an authorization
//! server, and an MCP client that signs in to it.
//!
//! It needs a real authorization server: `.ci/oidc-provider.sh start` runs npm's
//! `oidc-provider` on loopback (dynamic registration, PKCE, JWT access tokens, a user who
//! consents at once) and prints its issuer URL:
//!
//! ```text
//! export HPD_OIDC_ISSUER=$(bash .ci/oidc-provider.sh start)
//! cargo run -p hpd-agent-examples --example mcp_oauth
//! ```
//!
//! The server is `McpServer::oauth` with a `JwtVerifier` from the issuer's metadata. The
//! client is `McpHarness::http(..).with_oauth(..)` with a `LoopbackRedirect`: the redirect URI is a
//! loopback port of this process. Where a desktop app would open the user's browser on the
//! authorization URL, the example plays the browser itself (it follows the authorization
//! server's redirects, which end at the loopback callback).

use std::time::Duration;

use hpd_agent::mcp::{
    JwtVerifier, LoopbackRedirect, McpHarness, McpOAuth, McpServer, ProtectedResource,
};
use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
use serde_json::json;

/// Follows the redirects from `url` the way a browser would (keeping cookies), until the
/// loopback callback has been fetched.
async fn play_browser(url: String) -> Result<(), String> {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| e.to_string())?;
    let mut cookies: Vec<String> = Vec::new();
    let mut url = reqwest::Url::parse(&url).map_err(|e| e.to_string())?;
    for _ in 0..10 {
        let mut request = http.get(url.clone());
        if !cookies.is_empty() {
            request = request.header("cookie", cookies.join("; "));
        }
        let response = request.send().await.map_err(|e| e.to_string())?;
        for value in response.headers().get_all("set-cookie") {
            let pair = value.to_str().unwrap_or("").split(';').next().unwrap_or("");
            let name = pair.split('=').next().unwrap_or("");
            cookies.retain(|cookie| cookie.split('=').next() != Some(name));
            cookies.push(pair.to_owned());
        }
        match response.headers().get("location") {
            Some(location) => {
                url = url
                    .join(location.to_str().map_err(|e| e.to_string())?)
                    .map_err(|e| e.to_string())?;
            }
            // The callback page of the loopback redirect: signed in.
            None => return Ok(()),
        }
    }
    Err("too many redirects".to_owned())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Ok(issuer) = std::env::var("HPD_OIDC_ISSUER") else {
        eprintln!(
            "mcp_oauth needs an OAuth authorization server: set HPD_OIDC_ISSUER to its issuer URL, \
             e.g. `export HPD_OIDC_ISSUER=$(bash .ci/oidc-provider.sh start)` (npm's oidc-provider on loopback)"
        );
        return Ok(());
    };

    // The server: its tools for tokens of `issuer` with the scope `mcp:tools`.
    let verifier = JwtVerifier::discover(issuer.as_str()).await?;
    let hello = Tool::new(
        "hello",
        "Greets the signed-in user",
        json!({"type": "object"}),
        |_, _| async { ToolResult::ok("hello from behind OAuth") },
    );
    let served = AgentBuilder::new()
        .with_harness(HarnessBuilder::new("Greeter").with_tool(hello).build()?)
        .with_chat_client(ScriptedChatClient::new())
        .build()?;
    let server = McpServer::new(served)
        .with_oauth(
            ProtectedResource::new(issuer.as_str(), verifier).with_required_scopes(["mcp:tools"]),
        )
        .serve_http("127.0.0.1:0".parse()?)
        .await?;
    println!("serving {} (tokens of {issuer})", server.url());

    // The client: a 401 starts the sign-in; the "browser" is played by a task.
    let redirect = LoopbackRedirect::bind(0)
        .await?
        .on_authorization_url(|url| {
            println!("authorization URL: {}…", &url[..url.len().min(80)]);
            let url = url.to_owned();
            tokio::spawn(async move {
                if let Err(error) = play_browser(url).await {
                    eprintln!("the browser failed: {error}");
                }
            });
        });
    let remote = McpHarness::http("Greeter", server.url())
        .with_oauth(McpOAuth::new(redirect).with_client_name("hpd-agent mcp_oauth example"))
        .without_collapse()
        .with_timeout(Duration::from_secs(30))
        .connect()
        .await?;
    println!("signed in; tools: {:?}", remote.tool_names());
    let agent = AgentBuilder::new()
        .with_harness(remote)
        .with_chat_client(ScriptedChatClient::new())
        .build()?;
    let outcome = agent
        .flat_tool_session()
        .call_tool("c1", "hello", "{}")
        .await?;
    println!("hello -> {}", outcome.result.text);
    server.shutdown().await;
    Ok(())
}
