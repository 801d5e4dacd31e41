//! Which protocol revision the project's MCP server and client settle on: a flat server and a
//! collapsing one in the `fixed` layout (also `native`, served as `fixed`) keep no state
//! between requests and also offer the stateless 2026-07-28, which rmcp's `Auto` lifecycle
//! (what `McpHarness` uses) takes; a collapsing server in the `hide` or `append` layout keeps
//! its expansions in the session and so keeps to the revisions with sessions (2025-11-25),
//! reached with `initialize`.

use hpd_agent::config::CollapsingLayout;
use hpd_agent::mcp::{McpHarness, McpHttpServer, McpServer};
use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::json;

/// Serves a harness `Net` with one tool, collapsed behind a container, in `layout`, or flat.
async fn serve(flat: bool, layout: CollapsingLayout) -> McpHttpServer {
    let ping = Tool::new(
        "ping",
        "Answers pong",
        json!({"type": "object"}),
        |_, _| async { ToolResult::ok("pong") },
    );
    let harness = HarnessBuilder::new("Net")
        .with_tool(ping)
        .with_collapse("Network checks");
    let agent = AgentBuilder::new()
        .with_collapsing_layout(layout)
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
async fn flat_and_fixed_servers_speak_2026_07_28_and_hide_and_append_2025_11_25() {
    let mut servers = Vec::new();
    for (flat, layout) in [
        (true, CollapsingLayout::Hide),
        (false, CollapsingLayout::Fixed),
        (false, CollapsingLayout::Native),
    ] {
        let server = serve(flat, layout).await;
        assert_eq!(
            negotiated(&server).await,
            Ok(ProtocolVersion::V_2026_07_28),
            "flat: {flat}, {layout}"
        );
        servers.push((server, if flat { "ping" } else { "Net" }));
    }
    for layout in [CollapsingLayout::Hide, CollapsingLayout::Append] {
        // The server answers `server/discover` with the revisions it has, the newest being
        // 2025-11-25; rmcp's `Auto` does not fall back on that answer, McpHarness does (with
        // `initialize`).
        let server = serve(false, layout).await;
        let refused = negotiated(&server).await.unwrap_err();
        assert!(refused.contains("NoCompatibleProtocolVersion"), "{refused}");
        assert!(
            refused.contains(r#"ProtocolVersion("2025-11-25")]"#),
            "{refused}"
        );
        servers.push((server, "Net"));
    }

    // McpHarness works with all of them, and sees the collapsing servers' container.
    for (server, first) in &servers {
        let harness = McpHarness::http("Remote", server.url())
            .without_collapse()
            .connect()
            .await
            .unwrap();
        assert_eq!(harness.tool_names()[0], *first);
    }
    for (server, _) in servers {
        server.shutdown().await;
    }
}
