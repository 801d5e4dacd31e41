//! What the context benchmarks share: the two catalogs, the wire form of tool definitions and
//! the token counter.

#![allow(dead_code)]

pub mod synthetic;

use std::sync::Arc;

use hpd_agent::chat::ToolDefinition;
use hpd_agent::mcp::McpHarness;
use hpd_agent::{AgentBuilder, harness::DynamicHarness};
use tiktoken_rs::CoreBPE;

/// The o200k_base encoder (its ranks are compiled into `tiktoken-rs`; nothing is downloaded).
pub fn encoder() -> &'static CoreBPE {
    tiktoken_rs::o200k_base_singleton()
}

/// Tokens of `text` under o200k_base.
pub fn tokens(text: &str) -> Vec<u32> {
    encoder().encode_ordinary(text)
}

/// The tool list as an OpenAI Chat Completions request carries it (compact JSON of
/// `[{"type": "function", "function": {name, description, parameters}}, ...]`).
pub fn tools_json(tools: &[Arc<ToolDefinition>]) -> String {
    let list: Vec<serde_json::Value> = tools
        .iter()
        .map(|t| {
            serde_json::json!({
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": *t.parameters,
                }
            })
        })
        .collect();
    serde_json::Value::Array(list).to_string()
}

/// One MCP reference server of the real catalog: harness name, the env var holding its command
/// line, a description, and the arguments and environment it needs.
struct Server {
    harness: &'static str,
    var: &'static str,
    description: &'static str,
}

const SERVERS: [Server; 6] = [
    Server {
        harness: "Everything",
        var: "HPD_MCP_EVERYTHING",
        description: "The MCP reference test server: echo, sums, samples and resources",
    },
    Server {
        harness: "Filesystem",
        var: "HPD_MCP_FILESYSTEM",
        description: "Read, write, search and list files in the allowed folders",
    },
    Server {
        harness: "Memory",
        var: "HPD_MCP_MEMORY",
        description: "A knowledge graph of entities, relations and observations",
    },
    Server {
        harness: "SequentialThinking",
        var: "HPD_MCP_SEQUENTIAL_THINKING",
        description: "Step-by-step reasoning with revisions and branches",
    },
    Server {
        harness: "Time",
        var: "HPD_MCP_TIME",
        description: "Current time and time-zone conversion",
    },
    Server {
        harness: "Git",
        var: "HPD_MCP_GIT",
        description: "Status, diffs, commits and branches of a git repository",
    },
];

/// The MCP reference servers, connected (their tool lists read from the servers), or why not.
///
/// # Errors
///
/// A server variable is unset (run `eval "$(bash .ci/mcp-servers.sh)"`), or a server could
/// not be started or listed.
pub async fn mcp_catalog(scratch: &std::path::Path) -> Result<Vec<DynamicHarness>, String> {
    mcp_catalog_with(scratch, true).await
}

/// [`mcp_catalog`], with the servers' resources offered as harness members (`list_resources`,
/// `read_resource`) only when `resources` is set (else `McpHarness::without_resources`).
///
/// # Errors
///
/// As [`mcp_catalog`].
pub async fn mcp_catalog_with(
    scratch: &std::path::Path,
    resources: bool,
) -> Result<Vec<DynamicHarness>, String> {
    let mut harnesses = Vec::new();
    for server in &SERVERS {
        let line = std::env::var(server.var).map_err(|_| {
            format!(
                "{} is unset; run eval \"$(bash .ci/mcp-servers.sh)\"",
                server.var
            )
        })?;
        let mut words = line.split_whitespace().map(str::to_owned);
        let command = words.next().ok_or(format!("{} is empty", server.var))?;
        let mut args: Vec<String> = words.collect();
        if server.harness == "Filesystem" {
            args.push(scratch.display().to_string());
        }
        let mut harness =
            McpHarness::stdio(server.harness, command, args).with_collapse(server.description);
        if !resources {
            harness = harness.without_resources();
        }
        if server.harness == "Memory" {
            harness = harness.with_env(
                "MEMORY_FILE_PATH",
                scratch.join("memory.jsonl").display().to_string(),
            );
        }
        let connected = harness
            .connect()
            .await
            .map_err(|e| format!("{}: {e}", server.harness))?;
        harnesses.push(connected);
    }
    Ok(harnesses)
}

/// An agent builder with the MCP harnesses registered, in order.
pub fn register_mcp(mut builder: AgentBuilder, harnesses: &[DynamicHarness]) -> AgentBuilder {
    for harness in harnesses {
        builder = builder.with_harness(harness.clone());
    }
    builder
}
