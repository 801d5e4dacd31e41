//! Context economy: the tool definitions the first request of a turn carries, flat vs
//! collapsed, and after 1 and 3 expansions, in bytes and o200k_base tokens; and whether every
//! function is reachable with one extra call (its container's).
//!
//! ```sh
//! eval "$(bash .ci/mcp-servers.sh)"
//! cargo bench -p hpd-agent-tests --bench context_economy
//! ```
//!
//! Without the MCP variables only the synthetic catalog is measured (the skip is printed).

mod catalog;

use std::collections::BTreeSet;
use std::sync::Arc;

use hpd_agent::chat::ToolDefinition;
use hpd_agent::{
    AgentBuilder, ChatResponse, ScriptedChatClient, ToolCall, providers::scripted::RecordedRequest,
};

/// Bytes and tokens of one tool list.
fn size(tools: &[Arc<ToolDefinition>]) -> (usize, usize) {
    let json = catalog::tools_json(tools);
    (json.len(), catalog::tokens(&json).len())
}

fn run(
    builder: AgentBuilder,
    replies: Vec<ChatResponse>,
    runtime: &tokio::runtime::Runtime,
) -> Vec<RecordedRequest> {
    let client = ScriptedChatClient::with_replies(replies);
    let agent = builder
        .with_instructions("You are a helpful assistant.")
        .with_chat_client(client.clone())
        .build()
        .expect("agent builds");
    runtime.block_on(agent.run("Help me.")).expect("turn runs");
    client.requests()
}

fn measure(name: &str, make: &dyn Fn() -> AgentBuilder, runtime: &tokio::runtime::Runtime) {
    let flat = run(
        make().without_harness_collapsing(),
        vec![ChatResponse::text("ok")],
        runtime,
    );
    let flat_tools = &flat[0].tools;
    let first = run(make(), vec![ChatResponse::text("ok")], runtime);
    let containers: Vec<String> = first[0]
        .tools
        .iter()
        .filter(|t| !flat_tools.iter().any(|f| f.name == t.name))
        .map(|t| t.name.clone())
        .collect();
    assert!(containers.len() >= 3, "{name}: fewer than 3 containers");

    // One turn that expands the first three containers: requests 1 and 3 follow 1 and 3
    // expansions.
    let mut replies: Vec<ChatResponse> = containers[..3]
        .iter()
        .enumerate()
        .map(|(i, c)| ChatResponse::tool_calls(vec![ToolCall::new(format!("c{i}"), c, "{}")]))
        .collect();
    replies.push(ChatResponse::text("ok"));
    let expanded = run(make(), replies, runtime);

    // Reachability: the tools of the first request plus what each container call reveals, with
    // one call each, are every function of the flat list.
    let mut reachable: BTreeSet<String> = first[0].tools.iter().map(|t| t.name.clone()).collect();
    for container in &containers {
        let requests = run(
            make(),
            vec![
                ChatResponse::tool_calls(vec![ToolCall::new("c", container, "{}")]),
                ChatResponse::text("ok"),
            ],
            runtime,
        );
        reachable.extend(requests[1].tools.iter().map(|t| t.name.clone()));
    }
    let unreachable: Vec<&str> = flat_tools
        .iter()
        .map(|t| t.name.as_str())
        .filter(|n| !reachable.contains(*n))
        .collect();

    let (flat_bytes, flat_tokens) = size(flat_tools);
    let (first_bytes, first_tokens) = size(&first[0].tools);
    let (one_bytes, one_tokens) = size(&expanded[1].tools);
    let (three_bytes, three_tokens) = size(&expanded[3].tools);
    let saved = 100.0 * (1.0 - first_tokens as f64 / flat_tokens as f64);
    println!(
        "| {name} | {} | {} | {flat_bytes} / {flat_tokens} | {first_bytes} / {first_tokens} | {saved:.1}% | {one_bytes} / {one_tokens} | {three_bytes} / {three_tokens} | {} |",
        flat_tools.len(),
        containers.len(),
        if unreachable.is_empty() {
            "all, 1 extra call".to_owned()
        } else {
            format!("NOT reachable: {}", unreachable.join(", "))
        }
    );
    let verdict = if saved >= 92.0 { "met" } else { "NOT met" };
    println!(
        "goal {name}: >= 92% fewer tool tokens on the first request: {verdict} ({saved:.1}% fewer, collapsed/flat = {:.3})",
        first_tokens as f64 / flat_tokens as f64
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    println!("tool definitions as sent (OpenAI Chat `tools` JSON), bytes / o200k_base tokens");
    println!(
        "| catalog | functions | containers | flat first request | collapsed first request | fewer tokens | after 1 expansion | after 3 expansions | reachable |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    measure(
        "synthetic 20x8",
        &|| catalog::synthetic::register(AgentBuilder::new()),
        &runtime,
    );
    let scratch = tempfile::tempdir().expect("scratch folder");
    match runtime.block_on(catalog::mcp_catalog(scratch.path())) {
        Ok(harnesses) => {
            measure(
                "MCP reference servers",
                &|| catalog::register_mcp(AgentBuilder::new(), &harnesses),
                &runtime,
            );
            runtime.block_on(async move { drop(harnesses) });
        }
        Err(why) => println!("MCP catalog skipped: {why}"),
    }
}
