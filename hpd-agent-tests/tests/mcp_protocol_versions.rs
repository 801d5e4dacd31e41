//! Which protocol revision the project's MCP server and client settle on: a flat server also
//! offers the stateless 2026-07-28, which rmcp's `Auto` lifecycle (what `McpHarness` uses)
//! takes; a collapsing server keeps to the revisions with sessions (2025-11-25), reached with
//! `initialize`.

use hpd_agent::mcp::{McpHarness, McpHttpServer, McpServer};
use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::json;

async fn serve(flat: bool, collapse: bool) -> McpHttpServer {
    let ping = Tool::new(
        "ping",
        "Answers pong",
        json!({"type": "object"}),
        |_, _| async { ToolResult::ok("pong") },
    );
    let mut harness = HarnessBuilder::new("Net").with_tool(ping);
    if collapse {
        harness = harness.with_collapse("Network checks");
    }
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_harness(harness.build().unwrap())
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    let server = McpServer::new(agent);
    let server = if flat {
        server.without_collapse()
    } else {
        server
    };
    server
        .with_unauthenticated_access()
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap()
}

/// The revision an rmcp client with the `Auto` lifecycle settles on, or why it settles on
/// none.
async fn negotiated(server: &McpHttpServer) -> Result<ProtocolVersion, String> {
    let info = ClientConfig::new(ClientCapabilities::default(), Implementation::new("t", "1"))
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE);
    let client = info
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_uri(server.url()),
            ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: Some(ProtocolVersion::V_2025_11_25),
            },
        )
        .await
        .map_err(|error| format!("{error:?}"))?;
    let version = client.peer().peer_info().unwrap().protocol_version.clone();
    client.cancel().await.unwrap();
    Ok(version)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flat_server_speaks_2026_07_28_and_a_collapsing_one_2025_11_25() {
    let flat = serve(true, true).await;
    assert_eq!(negotiated(&flat).await, Ok(ProtocolVersion::V_2026_07_28));
    // The collapsing server answers `server/discover` with the revisions it has, the newest
    // being 2025-11-25; rmcp's `Auto` does not fall back on that answer, McpHarness does
    // (with `initialize`).
    let collapsing = serve(false, true).await;
    let refused = negotiated(&collapsing).await.unwrap_err();
    assert!(refused.contains("NoCompatibleProtocolVersion"), "{refused}");
    assert!(
        refused.contains(r#"ProtocolVersion("2025-11-25")]"#),
        "{refused}"
    );

    // McpHarness works with both, and sees the collapsing server's container.
    for (server, tools) in [(&flat, vec!["ping"]), (&collapsing, vec!["Net"])] {
        let harness = McpHarness::http("Remote", server.url())
            .without_collapse()
            .connect()
            .await
            .unwrap();
        assert_eq!(harness.tool_names(), tools);
    }
    flat.shutdown().await;
    collapsing.shutdown().await;
}
