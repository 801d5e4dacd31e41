//! `tools/call` over streamable HTTP on loopback, with 1, 16 and 64 concurrent clients, each
//! with a session of the 2025-11-25 revision (`initialize`) and then without one (the stateless
//! 2026-07-28 revision, `server/discover`, which `McpHarness` uses where the server offers it),
//! against hpd-agent's `McpServer` (a flat harness with one `Tool`) and a bare rmcp
//! `ServerHandler` with the same tool behind rmcp's `StreamableHttpService` on hyper. Each
//! server runs in a child process of its own, so its resident memory can be read
//! (`/proc/PID/status`, `VmRSS`, after the load). The client is rmcp's, the same for both. Each
//! step loads the two servers in turn, five rounds of 3 s each, and reports the medians.
//!
//! ```text
//! cargo run --release                 # the whole table
//! cargo run --release -- serve hpd    # one server, printing its URL
//! cargo run --release -- load URL 16 5 # 16 clients for 5 s on a running server (a profiler's)
//! cargo run --release -- load URL 16 5 stateless
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, Tool as McpTool,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _, RequestContext};
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt as _};
use serde_json::{Map, Value, json};
use tokio::io::AsyncBufReadExt as _;

const DURATION: Duration = Duration::from_secs(3);
const ROUNDS: usize = 5;
const SESSIONS: [usize; 3] = [1, 16, 64];

fn schema() -> Value {
    json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
}

/// hpd-agent's server: the tool as a run-time `Tool` in a flat harness.
async fn serve_hpd() -> String {
    use hpd_agent::mcp::McpServer;
    use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
    let echo = Tool::new("echo", "Echoes a text", schema(), |args, _| async move {
        ToolResult::ok(args["text"].as_str().unwrap_or_default().to_owned())
    });
    let agent = AgentBuilder::new()
        .with_harness(
            HarnessBuilder::new("Bench")
                .with_tool(echo)
                .build()
                .unwrap(),
        )
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    let server = McpServer::new(agent)
        .without_collapse()
        .with_unauthenticated_access()
        .with_max_connections(4096)
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let url = server.url();
    std::mem::forget(server); // serves until the process is killed
    url
}

/// The bare rmcp server.
#[derive(Clone)]
struct Bare;

impl ServerHandler for Bare {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let Value::Object(schema) = schema() else {
            unreachable!()
        };
        Ok(ListToolsResult::with_all_items(vec![McpTool::new(
            "echo",
            "Echoes a text",
            Arc::new(schema),
        )]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("text"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        Ok(CallToolResponse::Complete(CallToolResult::success(vec![
            ContentBlock::text(text),
        ])))
    }
}

async fn serve_rmcp() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let service = StreamableHttpService::new(
        || Ok(Bare),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let service = service.clone();
            tokio::spawn(async move {
                let handler = hyper::service::service_fn(move |request| {
                    let service = service.clone();
                    async move { Ok::<_, std::convert::Infallible>(service.handle(request).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), handler)
                    .await;
            });
        }
    });
    format!("http://{addr}/mcp")
}

/// Resident memory of `pid` in KiB.
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kib| kib.parse().ok())
        })
        .unwrap_or(0)
}

/// `sessions` clients calling `echo` for `duration`: calls per second, p50, p99 and the calls made.
async fn load(
    url: &str,
    sessions: usize,
    duration: Duration,
    stateless: bool,
) -> (f64, Duration, Duration, usize) {
    let mut clients = Vec::new();
    for _ in 0..sessions {
        let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url.to_owned());
        let client = if stateless {
            let lifecycle = ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            };
            ().serve_with_lifecycle(transport, lifecycle).await
        } else {
            ().serve(transport).await
        };
        clients.push(client.unwrap());
    }
    let mut arguments = Map::new();
    arguments.insert("text".into(), Value::from("hello"));
    // Warm up.
    for client in &clients {
        let params = CallToolRequestParams::new("echo").with_arguments(arguments.clone());
        client.call_tool(params).await.unwrap();
    }
    let started = Instant::now();
    let mut tasks = Vec::new();
    for client in clients {
        let arguments = arguments.clone();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            while started.elapsed() < duration {
                let params = CallToolRequestParams::new("echo").with_arguments(arguments.clone());
                let call = Instant::now();
                client.call_tool(params).await.unwrap();
                latencies.push(call.elapsed());
            }
            let _ = client.cancel().await;
            latencies
        }));
    }
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.unwrap());
    }
    let elapsed = started.elapsed().as_secs_f64();
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)];
    (
        latencies.len() as f64 / elapsed,
        at(0.50),
        at(0.99),
        latencies.len(),
    )
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("serve") {
        let url = match args.get(1).map(String::as_str) {
            Some("hpd") => serve_hpd().await,
            _ => serve_rmcp().await,
        };
        println!("{url}");
        std::future::pending::<()>().await;
    }
    if args.first().map(String::as_str) == Some("load") {
        let (Some(url), Some(sessions)) = (args.get(1), args.get(2).and_then(|n| n.parse().ok()))
        else {
            eprintln!("usage: mcp-load load URL CLIENTS [SECONDS [stateless]]");
            std::process::exit(2);
        };
        let seconds = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(5);
        let stateless = args.get(4).map(String::as_str) == Some("stateless");
        let (rate, p50, p99, calls) =
            load(url, sessions, Duration::from_secs(seconds), stateless).await;
        println!(
            "{sessions} clients: {calls} calls (and {sessions} to warm up), {rate:.0} calls/s, p50 {:.3} ms, p99 {:.3} ms",
            p50.as_secs_f64() * 1e3,
            p99.as_secs_f64() * 1e3
        );
        return;
    }
    // Both servers run at once (an idle one costs nothing), and each step loads them in turn,
    // ROUNDS times: a machine whose load drifts then weighs on both alike. The table gives the
    // median of the rounds.
    let mut servers = Vec::new();
    for which in ["rmcp", "hpd"] {
        let mut child = tokio::process::Command::new(std::env::current_exe().unwrap())
            .args(["serve", which])
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let pid = child.id().unwrap();
        let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let url = lines.next_line().await.unwrap().unwrap();
        servers.push((which, child, pid, url));
    }
    println!(
        "| server | revision | clients | calls/s | p50 | p99 | server RSS after | calls/s of the rounds |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for stateless in [false, true] {
        for clients in SESSIONS {
            let mut rounds: Vec<Vec<(f64, Duration, Duration)>> = vec![Vec::new(); servers.len()];
            for _ in 0..ROUNDS {
                for (i, (_, _, _, url)) in servers.iter().enumerate() {
                    let (rate, p50, p99, _) = load(url, clients, DURATION, stateless).await;
                    rounds[i].push((rate, p50, p99));
                }
            }
            for ((which, _, pid, _), rounds) in servers.iter().zip(rounds) {
                let median = |key: fn(&(f64, Duration, Duration)) -> f64| {
                    let mut values: Vec<f64> = rounds.iter().map(key).collect();
                    values.sort_by(f64::total_cmp);
                    values[values.len() / 2]
                };
                let all: Vec<String> = rounds.iter().map(|r| format!("{:.0}", r.0)).collect();
                println!(
                    "| {} | {} | {clients} | {:.0} | {:.3} ms | {:.3} ms | {:.1} MiB | {} |",
                    if *which == "hpd" {
                        "hpd-agent McpServer"
                    } else {
                        "bare rmcp"
                    },
                    if stateless {
                        "2026-07-28 (stateless)"
                    } else {
                        "2025-11-25 (sessions)"
                    },
                    median(|r| r.0),
                    median(|r| r.1.as_secs_f64()) * 1e3,
                    median(|r| r.2.as_secs_f64()) * 1e3,
                    rss_kib(*pid) as f64 / 1024.0,
                    all.join(", ")
                );
            }
        }
    }
    for (_, mut child, _, _) in servers {
        child.kill().await.unwrap();
    }
}
