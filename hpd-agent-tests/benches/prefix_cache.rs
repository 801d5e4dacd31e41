//! Prompt-cache friendliness: over one turn with two expansions, the share of each request that
//! is a prefix of the previous request (providers cache the longest unchanged prefix: tools,
//! then system text, then messages), for the flat layout, the default collapsed layout and the
//! cache-stable collapsed layout, and the tokens sent over the turn.
//!
//! ```sh
//! cargo bench -p hpd-agent-tests --bench prefix_cache
//! # and against a real llama.cpp server, which reports the prompt tokens it took from its cache:
//! HPD_LLAMA_URL=$(bash .ci/llama-server.sh start) cargo bench -p hpd-agent-tests --bench prefix_cache
//! ```
//!
//! The model is scripted: the collapsed layouts take 6 requests (container, member, container,
//! member, member of the first, answer); the flat layout makes the same member calls without the
//! two container calls, so 4 requests. Offline, a request is measured as the o200k_base tokens of
//! its tools (OpenAI `tools` JSON), then its system text, then each message as JSON. Live, every
//! request goes to the server through `OpenAiClient` (its reply is discarded and the script's is
//! used, so every layout sees the same conversation) and the server's `cached_tokens` is read.

mod catalog;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use hpd_agent::chat::{ChatMessage, ToolDefinition, Usage};
use hpd_agent::providers::openai::OpenAiClient;
use hpd_agent::{
    AgentBuilder, ChatClient, ChatResponse, ToolCall, async_trait, chat::ChatError,
    chat::ChatRequest, chat::ModelOptions, chat::TextSink,
};

#[derive(Clone, Copy, PartialEq)]
enum Layout {
    Flat,
    Collapsed,
    CacheStable,
}

impl Layout {
    fn name(self) -> &'static str {
        match self {
            Layout::Flat => "flat",
            Layout::Collapsed => "collapsed",
            Layout::CacheStable => "cache-stable collapsed",
        }
    }
}

/// What one request carried, and what the live server reported for it.
struct Seen {
    tools: Vec<Arc<ToolDefinition>>,
    instructions: String,
    messages: Vec<ChatMessage>,
    usage: Option<Usage>,
}

/// Answers from a script; with `live`, sends each request to the real server first.
struct Relay {
    script: Mutex<VecDeque<ChatResponse>>,
    seen: Arc<Mutex<Vec<Seen>>>,
    live: Option<OpenAiClient>,
}

#[async_trait]
impl ChatClient for Relay {
    async fn complete(
        &self,
        request: ChatRequest<'_>,
        text: TextSink<'_>,
    ) -> Result<ChatResponse, ChatError> {
        let usage = match &self.live {
            Some(client) => Some(client.complete(request, text).await?.usage),
            None => None,
        };
        self.seen.lock().expect("record").push(Seen {
            tools: request.tools.to_vec(),
            instructions: request.instructions.to_owned(),
            messages: request.messages.to_vec(),
            usage,
        });
        let mut reply = self
            .script
            .lock()
            .expect("script")
            .pop_front()
            .ok_or_else(|| ChatError::Config("script ran out".into()))?;
        if let Some(usage) = usage {
            reply.usage = usage;
        }
        Ok(reply)
    }
}

fn call(id: &str, name: &str, arguments: serde_json::Value) -> ChatResponse {
    ChatResponse::tool_calls(vec![ToolCall::new(id, name, arguments.to_string())])
}

fn script(layout: Layout) -> Vec<ChatResponse> {
    let window =
        serde_json::json!({"start": "2026-12-01T09:00:00Z", "end": "2026-12-01T18:00:00Z"});
    let create = call(
        "c2",
        "create_event",
        serde_json::json!({"title": "Design review", "window": window}),
    );
    let send = call(
        "c4",
        "send_message",
        serde_json::json!({"recipients": {"to": ["ana@example.com"], "cc": []},
                           "title": "Design review at 10:00"}),
    );
    let list = call("c5", "list_events", serde_json::json!({"window": window}));
    let done = ChatResponse::text("The review is booked and Ana is invited.");
    match layout {
        Layout::Flat => vec![create, send, list, done],
        _ => vec![
            call("c1", "CalendarTools", serde_json::json!({})),
            create,
            call("c3", "EmailTools", serde_json::json!({})),
            send,
            list,
            done,
        ],
    }
}

/// The tokens of a request in the order providers cache: tools, system text, messages.
fn request_tokens(seen: &Seen) -> Vec<u32> {
    let mut text = catalog::tools_json(&seen.tools);
    text.push('\n');
    text.push_str(&seen.instructions);
    for message in &seen.messages {
        text.push('\n');
        text.push_str(&serde_json::to_string(message).expect("message JSON"));
    }
    catalog::tokens(&text)
}

fn common_prefix(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

fn turn(
    layout: Layout,
    harnesses: usize,
    live: Option<OpenAiClient>,
    runtime: &tokio::runtime::Runtime,
) -> Vec<Seen> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let relay = Relay {
        script: Mutex::new(script(layout).into()),
        seen: Arc::clone(&seen),
        live,
    };
    let mut builder = catalog::synthetic::REGISTER[..harnesses]
        .iter()
        .fold(AgentBuilder::new(), |b, register| register(b))
        .with_instructions("You are a helpful assistant for a small design team.")
        .with_model_options(
            ModelOptions::default()
                .with_temperature(0.0)
                .with_max_output_tokens(1),
        )
        .with_chat_client(relay);
    builder = match layout {
        Layout::Flat => builder.without_harness_collapsing(),
        Layout::Collapsed => builder,
        Layout::CacheStable => {
            builder.with_collapsing_layout(hpd_agent::config::CollapsingLayout::Append)
        }
    };
    let agent = builder.build().expect("agent builds");
    runtime
        .block_on(agent.run("Book a design review tomorrow morning and invite Ana by email."))
        .expect("turn runs");
    std::mem::take(&mut *seen.lock().expect("record"))
}

fn percents(values: &[f64]) -> String {
    values
        .iter()
        .map(|s| format!("{:.1}%", s * 100.0))
        .collect::<Vec<_>>()
        .join(", ")
}

fn joined<T: ToString>(values: impl IntoIterator<Item = T>) -> String {
    values
        .into_iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn verdict(ok: bool) -> &'static str {
    if ok { "met" } else { "NOT met" }
}

/// Prints one table: per request its size and cached prefix, the share of the request that
/// prefix is, and the share of the previous request it keeps; then the goal lines.
fn table(label: &str, rows: &[(Layout, Vec<usize>, Vec<usize>)]) {
    println!(
        "| layout | requests | {label} per request | prefix shared with the previous request | share of the request | share of the previous request kept | lowest kept | total {label} |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let mut totals = Vec::new();
    let mut lowest_stable = 1.0_f64;
    for (layout, sizes, prefixes) in rows {
        let shares: Vec<f64> = sizes
            .iter()
            .zip(prefixes)
            .skip(1)
            .map(|(&n, &p)| p as f64 / n as f64)
            .collect();
        let kept: Vec<f64> = sizes
            .windows(2)
            .zip(prefixes.iter().skip(1))
            .map(|(w, &p)| p as f64 / w[0] as f64)
            .collect();
        let lowest = kept.iter().copied().fold(1.0, f64::min);
        let total: usize = sizes.iter().sum();
        if *layout == Layout::CacheStable {
            lowest_stable = lowest;
        }
        totals.push(total);
        println!(
            "| {} | {} | {} | {} | {} | {} | {:.1}% | {total} |",
            layout.name(),
            sizes.len(),
            joined(sizes),
            joined(prefixes.iter().skip(1)),
            percents(&shares),
            percents(&kept),
            lowest * 100.0
        );
    }
    println!(
        "goal: cache-stable keeps >= 90% of each previous request as the prefix of the next: {} (lowest {:.1}%)",
        verdict(lowest_stable >= 0.9),
        lowest_stable * 100.0
    );
    println!(
        "goal: cache-stable sends fewer {label} than flat over the turn: {} ({} vs {}, ratio {:.3})",
        verdict(totals[2] < totals[0]),
        totals[2],
        totals[0],
        totals[2] as f64 / totals[0] as f64
    );
}

fn offline(runtime: &tokio::runtime::Runtime) {
    println!("offline, synthetic catalog (20 harnesses x 8 functions), o200k_base tokens");
    let mut rows = Vec::new();
    for layout in [Layout::Flat, Layout::Collapsed, Layout::CacheStable] {
        let seen = turn(layout, 20, None, runtime);
        let tokens: Vec<Vec<u32>> = seen.iter().map(request_tokens).collect();
        let sizes = tokens.iter().map(Vec::len).collect();
        let mut prefixes = vec![0];
        prefixes.extend(tokens.windows(2).map(|w| common_prefix(&w[0], &w[1])));
        rows.push((layout, sizes, prefixes));
    }
    table("tokens", &rows);
}

fn live(url: &str, runtime: &tokio::runtime::Runtime) {
    // The server's context is 8192 tokens of its own tokenizer: the flat list of the first 4
    // harnesses (32 functions) fits, the whole catalog would not.
    const HARNESSES: usize = 4;
    println!(
        "live, llama.cpp at {url}, the synthetic catalog's first {HARNESSES} harnesses ({} functions); the server's prompt tokens and cached prompt tokens",
        HARNESSES * 8
    );
    let mut rows = Vec::new();
    for layout in [Layout::Flat, Layout::Collapsed, Layout::CacheStable] {
        let client = OpenAiClient::new("smollm2", "")
            .and_then(|c| c.with_base_url(format!("{url}/v1")))
            .expect("client")
            .with_timeout(std::time::Duration::from_secs(600))
            .with_streaming(false);
        let seen = turn(layout, HARNESSES, Some(client), runtime);
        let usage: Vec<Usage> = seen.iter().filter_map(|s| s.usage).collect();
        let sizes = usage
            .iter()
            .map(|u| usize::try_from(u.input_tokens).expect("size"))
            .collect();
        let prefixes = usage
            .iter()
            .map(|u| usize::try_from(u.cached_input_tokens).expect("size"))
            .collect();
        rows.push((layout, sizes, prefixes));
    }
    table("prompt tokens", &rows);
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    offline(&runtime);
    match std::env::var("HPD_LLAMA_URL") {
        Ok(url) => live(&url, &runtime),
        Err(_) => println!(
            "live measurement skipped: HPD_LLAMA_URL is unset (HPD_LLAMA_URL=$(bash .ci/llama-server.sh start))"
        ),
    }
}
