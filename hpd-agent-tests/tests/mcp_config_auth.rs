//! `mcp_servers[].auth`: the OAuth sign-in of an HTTP MCP server from JSON config: parsed with
//! the config's key folding, written back, refused where it does not belong, shown without its
//! secret, and used when the agent connects its servers.

use hpd_agent::mcp::{McpServer, ProtectedResource, StaticTokenVerifier};
use hpd_agent::{
    AgentBuilder, AgentConfig, HarnessBuilder, ScriptedChatClient, Tool, ToolResult,
    config::McpAuthConfig, config::McpServerConfig,
};
use serde_json::json;

#[test]
fn auth_parses_round_trips_and_hides_its_secret() {
    let config = AgentConfig::from_json(
        r#"{"McpServers": [{"Name": "Tracker", "Url": "https://tracker.example.com/mcp",
            "Auth": {"ClientId": "desktop", "ClientSecret": "s3cret-value-123", "Scopes": ["a", "b"],
                     "TokenFile": "/tmp/t.json", "RedirectPort": 8765}}]}"#,
    )
    .unwrap();
    let expected = McpServerConfig::http("Tracker", "https://tracker.example.com/mcp").with_auth(
        McpAuthConfig {
            client_id: Some("desktop".into()),
            client_secret: Some("s3cret-value-123".into()),
            scopes: vec!["a".into(), "b".into()],
            token_file: Some("/tmp/t.json".into()),
            redirect_port: Some(8765),
            ..McpAuthConfig::default()
        },
    );
    assert_eq!(config.mcp_servers[0], expected);
    let again = AgentConfig::from_json(&config.to_json()).unwrap();
    assert_eq!(again, config);
    let shown = format!("{config:?}");
    assert!(
        !shown.contains("s3cret-value-123") && shown.contains("desktop"),
        "{shown}"
    );
    // `{}` is every default.
    let empty = AgentConfig::from_json(
        r#"{"mcp_servers": [{"name": "T", "url": "http://127.0.0.1:1/mcp", "auth": {}}]}"#,
    )
    .unwrap();
    assert_eq!(empty.mcp_servers[0].auth, Some(McpAuthConfig::default()));
}

#[test]
fn auth_is_refused_where_it_does_not_belong() {
    let cases = [
        (
            r#"{"mcp_servers": [{"name": "F", "command": "x", "auth": {}}]}"#,
            "'auth' belongs to an HTTP server",
        ),
        (
            r#"{"mcp_servers": [{"name": "T", "url": "http://x/mcp", "auth": {"client_secret": "s"}}]}"#,
            "'client_secret' needs the 'client_id'",
        ),
        (
            r#"{"mcp_servers": [{"name": "T", "url": "http://x/mcp", "auth": {"scope": ["a"]}}]}"#,
            "scope",
        ),
    ];
    for (json, wanted) in cases {
        let error = AgentConfig::from_json(json).unwrap_err();
        assert!(
            error.message().contains(wanted),
            "{json}: {}",
            error.message()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_server_signs_in_when_it_is_refused() {
    // A server whose authorization server is not there: the configured sign-in starts (and
    // fails at discovery), which a server without `auth` would not try.
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
        .with_oauth(ProtectedResource::new(
            "http://127.0.0.1:9",
            StaticTokenVerifier::new("never-given-token"),
        ))
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let config = AgentConfig::from_json(&format!(
        r#"{{"mcp_servers": [{{"name": "Remote", "url": "{}", "auth": {{}}, "timeout_ms": 5000}}]}}"#,
        server.url()
    ))
    .unwrap();
    let error = AgentBuilder::from_config(config)
        .with_chat_client(ScriptedChatClient::new())
        .build_async()
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("the OAuth sign-in failed"), "{error}");
    server.shutdown().await;
}
