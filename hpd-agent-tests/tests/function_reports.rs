//! Progress and log messages from inside a function (`FunctionContext::report_progress` and
//! `FunctionContext::log`): `AgentEvent`s in an agent's run, MCP notifications when served.

// MCP logging is deprecated in rmcp (SEP-2577, from 2026-07-28 on); the served revisions have it.
#![allow(deprecated)]

use std::sync::{Arc, Mutex};

use hpd_agent::mcp::McpServer;
use hpd_agent::{
    AgentBuilder, AgentEvent, ChatResponse, HarnessBuilder, ScriptedChatClient, Tool, ToolCall,
    ToolResult, tool::LogLevel,
};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation,
    LoggingMessageNotificationParam, ProgressNotificationParam, ProtocolVersion,
};
use rmcp::service::NotificationContext;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt as _};
use serde_json::json;

/// A tool that reports 1, 2 and 3 of 3 and logs at three levels.
fn reporting_tool() -> Tool {
    Tool::new(
        "import",
        "Imports three files",
        json!({"type": "object", "properties": {}}),
        |_, ctx| async move {
            ctx.log(LogLevel::Debug, "looking for files");
            for done in 1..=3 {
                ctx.report_progress(f64::from(done), Some(3.0), Some(&format!("file {done}")));
            }
            ctx.log(LogLevel::Info, "imported");
            ctx.log(LogLevel::Warning, "one file was empty");
            ToolResult::ok("3 files")
        },
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_become_agent_events_of_the_call() {
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "import", "{}")]),
        ChatResponse::text("done"),
    ]);
    let agent = AgentBuilder::new()
        .with_harness(
            HarnessBuilder::new("Files")
                .tool(reporting_tool())
                .build()
                .unwrap(),
        )
        .with_chat_client(model)
        .on_event(move |event| {
            let line = match event {
                AgentEvent::ToolProgress {
                    call_id,
                    name,
                    progress,
                    total,
                    message,
                } => format!("{call_id} {name} progress {progress}/{total:?} {message:?}"),
                AgentEvent::ToolLog {
                    call_id,
                    name,
                    level,
                    message,
                } => format!("{call_id} {name} {level}: {message}"),
                AgentEvent::ToolCallFinished { call_id, .. } => format!("{call_id} finished"),
                _ => return,
            };
            seen.lock().unwrap().push(line);
        })
        .build()
        .unwrap();
    agent.run("import").await.unwrap();
    assert_eq!(
        *events.lock().unwrap(),
        [
            "c1 import debug: looking for files",
            r#"c1 import progress 1/Some(3.0) Some("file 1")"#,
            r#"c1 import progress 2/Some(3.0) Some("file 2")"#,
            r#"c1 import progress 3/Some(3.0) Some("file 3")"#,
            "c1 import info: imported",
            "c1 import warning: one file was empty",
            "c1 finished",
        ]
    );
}

/// A client that keeps the notifications it gets.
#[derive(Clone, Default)]
struct Recorder {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    logs: Arc<Mutex<Vec<LoggingMessageNotificationParam>>>,
}

impl Recorder {
    /// Waits (at most five seconds) until `logs` log messages and `progress` progress
    /// notifications arrived, and a moment longer for any that should not come.
    async fn settle(&self, logs: usize, progress: usize) {
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
        while (self.logs.lock().unwrap().len() < logs
            || self.progress.lock().unwrap().len() < progress)
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

impl ClientHandler for Recorder {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.logs.lock().unwrap().push(params);
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("recorder", "1"),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn served_reports_become_mcp_notifications() {
    let agent = AgentBuilder::new()
        .with_harness(
            HarnessBuilder::new("Files")
                .tool(reporting_tool())
                .build()
                .unwrap(),
        )
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    let server = McpServer::new(agent)
        .bearer_token("reports-token")
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let recorder = Recorder::default();
    let mut headers = std::collections::HashMap::new();
    headers.insert(
        http_header("authorization"),
        "Bearer reports-token".parse().unwrap(),
    );
    let config =
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            server.url(),
        )
        .custom_headers(headers);
    let client = recorder
        .clone()
        .serve(StreamableHttpClientTransport::from_config(config))
        .await
        .unwrap();

    // Before `logging/setLevel`: log messages at `info` and above.
    let result = client
        .call_tool(CallToolRequestParams::new("import"))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false));
    // The server sends them before the result, but the client handles each notification on a
    // task of its own: wait for them.
    recorder.settle(2, 3).await;
    // rmcp's client hands each notification to its handler on a task of its own, so they may
    // be recorded out of the order they were sent in (the conformance suite checks that
    // order on the wire): compare them sorted.
    let levels = |logs: &[LoggingMessageNotificationParam]| -> Vec<String> {
        let mut levels: Vec<String> = logs
            .iter()
            .map(|log| format!("{:?} {}", log.level, log.data))
            .collect();
        levels.sort();
        levels
    };
    assert_eq!(
        levels(&recorder.logs.lock().unwrap()),
        [r#"Info "imported""#, r#"Warning "one file was empty""#]
    );

    // After `logging/setLevel` to debug: every report.
    recorder.logs.lock().unwrap().clear();
    recorder.progress.lock().unwrap().clear();
    client
        .set_level(rmcp::model::SetLevelRequestParams::new(
            rmcp::model::LoggingLevel::Debug,
        ))
        .await
        .unwrap();
    // rmcp's client puts a progress token of its own into every request.
    client
        .call_tool(CallToolRequestParams::new("import"))
        .await
        .unwrap();
    recorder.settle(3, 3).await;
    let mut progress = recorder.progress.lock().unwrap().clone();
    progress.sort_by(|a, b| a.progress.total_cmp(&b.progress));
    assert_eq!(
        progress
            .iter()
            .map(|p| (p.progress, p.total, p.message.clone()))
            .collect::<Vec<_>>(),
        (1..=3)
            .map(|n| (f64::from(n), Some(3.0), Some(format!("file {n}"))))
            .collect::<Vec<_>>()
    );
    assert!(
        progress
            .iter()
            .all(|p| p.progress_token == progress[0].progress_token)
    );
    assert_eq!(
        levels(&recorder.logs.lock().unwrap()),
        [
            r#"Debug "looking for files""#,
            r#"Info "imported""#,
            r#"Warning "one file was empty""#
        ]
    );
    client.cancel().await.unwrap();
    server.shutdown().await;
}

fn http_header(name: &'static str) -> http::HeaderName {
    http::HeaderName::from_static(name)
}
