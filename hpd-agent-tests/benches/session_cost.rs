//! Session cost: what whole sessions of 1, 5, 20 and 50 turns send, per collapsing layout, and
//! what a provider's prompt cache makes of it.
//!
//! ```sh
//! eval "$(bash .ci/mcp-servers.sh)"       # the MCP catalog; without it only the synthetic one
//! cargo bench -p hpd-agent-tests --bench session_cost
//! # the live part, against a llama.cpp server (its own cached-token counts):
//! HPD_LLAMA_URL=$(bash .ci/llama-server.sh start) cargo bench -p hpd-agent-tests --bench session_cost
//! # the live part alone, for some lengths (default 1,5; the server's context holds no more):
//! HPD_LLAMA_URL=... HPD_SESSION_COST_LIVE_ONLY=1 HPD_SESSION_COST_LIVE_TURNS=1 \
//!   cargo bench -p hpd-agent-tests --bench session_cost
//! ```
//!
//! Every turn of a session is one user message, one container call (harness `t mod H` at turn
//! `t`: a different one each turn, cycling), one member call (two on odd turns) and a text
//! answer; the flat layout makes the member calls only. In `fixed` the members are called
//! through [`hpd_agent::config::CALL_TOOL`], in the native layouts by name once the container result
//! loaded them (in native-Responses the container call is the client-executed `tool_search`
//! naming the namespace). The model is scripted, the agent is real: a relay around the script
//! records every request the agent sends. The native layouts are driven by the relay reporting
//! the provider's form of deferred loading (`ChatClient::deferred_tools`), since the real clients
//! need the vendors' hosts.
//!
//! Offline, a request is the `o200k_base` tokens of a canonical rendering of what enters the
//! model's context, in order: the tool list (OpenAI Chat `tools` JSON), the system text, each
//! message as JSON. The cached part is the longest common token prefix with the previous request
//! of the session, as a cache with one slot keeps it. The native layouts render as the vendors
//! document them:
//! - native-Anthropic: deferred tools are neither in the context nor in the prefix; each
//!   `tool_reference` of a tool result is replaced, where it sits, by the definition it names;
//! - native-Responses: the tool list holds each namespace's name and description and the
//!   `tool_search` tool; the definitions a `tool_search_output` loaded are placed at the end of
//!   the context on every later request (so they are never part of the cached prefix).
//!
//! Billed input cost is in units of the uncached input price: Anthropic's rule bills uncached
//! tokens as cache writes (1.25x) and cached reads at 0.1x; OpenAI's bills uncached at 1x and
//! cached at 0.1x.
//!
//! Live, every request of the same scripted sessions goes to the llama.cpp server through
//! `OpenAiClient` (the reply is discarded and the script's used, so each layout sends the
//! conversation it sends offline), and the figures are the server's own `prompt_tokens` and
//! `cached_tokens`. Each live session starts cold without restarting the server (which other
//! users may share): its system text begins with a number of its own, and the chat template
//! puts the system text first, so no earlier session's cached prompt matches beyond the
//! template's first tokens (`<|im_start|>system\n`).

mod catalog;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use hpd_agent::chat::{ChatMessage, DeferredGroup, ToolDefinition, Usage};
use hpd_agent::providers::openai::OpenAiClient;
use hpd_agent::{
    AgentBuilder, ChatClient, ChatResponse, ToolCall, async_trait, chat::ChatError,
    chat::ChatRequest, chat::DeferredTools, chat::ModelOptions, chat::TextSink, config::CALL_TOOL,
    config::CollapsingLayout, harness::DynamicHarness,
};
use serde_json::{Value, json};

/// Session lengths, in turns.
const LENGTHS: [usize; 4] = [1, 5, 20, 50];

/// The system text of every session.
const INSTRUCTIONS: &str = "You are a helpful assistant for a small product team. Use the tools to do what the user asks, then answer in one or two sentences.";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Layout {
    Flat,
    Hide,
    Append,
    Fixed,
    NativeAnthropic,
    NativeResponses,
}

const LAYOUTS: [Layout; 6] = [
    Layout::Flat,
    Layout::Hide,
    Layout::Append,
    Layout::Fixed,
    Layout::NativeAnthropic,
    Layout::NativeResponses,
];

impl Layout {
    fn name(self) -> &'static str {
        match self {
            Layout::Flat => "flat",
            Layout::Hide => "hide",
            Layout::Append => "append",
            Layout::Fixed => "fixed",
            Layout::NativeAnthropic => "native-Anthropic",
            Layout::NativeResponses => "native-Responses",
        }
    }

    fn form(self) -> DeferredTools {
        match self {
            Layout::NativeAnthropic => DeferredTools::ToolReferences,
            Layout::NativeResponses => DeferredTools::ToolSearch,
            _ => DeferredTools::Unsupported,
        }
    }

    fn configure(self, builder: AgentBuilder) -> AgentBuilder {
        match self {
            Layout::Flat => builder.without_harness_collapsing(),
            Layout::Hide => builder.with_collapsing_layout(CollapsingLayout::Hide),
            Layout::Append => builder.with_collapsing_layout(CollapsingLayout::Append),
            Layout::Fixed => builder.with_collapsing_layout(CollapsingLayout::Fixed),
            Layout::NativeAnthropic | Layout::NativeResponses => {
                builder.with_collapsing_layout(CollapsingLayout::Native)
            }
        }
    }
}

/// What one request carried, and what the live server reported for it.
struct Seen {
    tools: Vec<Arc<ToolDefinition>>,
    deferred: Vec<DeferredGroup>,
    instructions: String,
    messages: Vec<ChatMessage>,
    usage: Option<Usage>,
}

/// Answers from a script and records each request; reports `form` as its deferred loading;
/// with `live`, sends each request to the real server first.
struct Relay {
    script: Mutex<VecDeque<ChatResponse>>,
    seen: Arc<Mutex<Vec<Seen>>>,
    form: DeferredTools,
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
            deferred: request.deferred.to_vec(),
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

    fn deferred_tools(&self) -> DeferredTools {
        self.form
    }
}

/// One collapsed harness of a catalog: its name and the member calls a turn may make.
struct Harness {
    name: String,
    calls: Vec<(String, Value)>,
}

/// A catalog: how to register it and what each harness's turns call.
struct Catalog {
    register: Box<dyn Fn(AgentBuilder) -> AgentBuilder>,
    harnesses: Vec<Harness>,
}

/// One turn's plan: the harness, the member calls.
struct Turn {
    harness: String,
    calls: Vec<(String, Value)>,
}

fn plan(catalog: &Catalog, turns: usize) -> Vec<Turn> {
    (0..turns)
        .map(|t| {
            let harness = &catalog.harnesses[t % catalog.harnesses.len()];
            let count = 1 + t % 2;
            let round = t / catalog.harnesses.len();
            let calls = (0..count)
                .map(|k| harness.calls[(round * 2 + k) % harness.calls.len()].clone())
                .collect();
            Turn {
                harness: harness.name.clone(),
                calls,
            }
        })
        .collect()
}

fn call(id: String, name: &str, arguments: &Value) -> ChatResponse {
    ChatResponse::tool_calls(vec![ToolCall::new(id, name, arguments.to_string())])
}

/// The model's replies for a session in `layout`.
fn script(layout: Layout, turns: &[Turn]) -> Vec<ChatResponse> {
    let mut replies = Vec::new();
    for (t, turn) in turns.iter().enumerate() {
        match layout {
            Layout::Flat => {}
            Layout::NativeResponses => replies.push(call(
                format!("t{t}s"),
                "tool_search",
                &json!({"namespace": turn.harness}),
            )),
            _ => replies.push(call(format!("t{t}c"), &turn.harness, &json!({}))),
        }
        for (k, (member, arguments)) in turn.calls.iter().enumerate() {
            let id = format!("t{t}m{k}");
            replies.push(match layout {
                Layout::Fixed => call(
                    id,
                    CALL_TOOL,
                    &json!({"name": member, "arguments": arguments}),
                ),
                _ => call(id, member, arguments),
            });
        }
        replies.push(ChatResponse::text(format!(
            "Done: the {} step of turn {t} went through; the result is above.",
            turn.harness
        )));
    }
    replies
}

fn user_message(t: usize, turn: &Turn) -> String {
    format!(
        "Turn {t}: please take care of the next item on my list; it needs {}.",
        turn.harness
    )
}

/// A number no other live session of any run used: the time in microseconds.
fn session_number() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros())
}

/// Runs one session and returns every request it sent.
fn session(
    catalog: &Catalog,
    layout: Layout,
    turns: usize,
    live: Option<OpenAiClient>,
    runtime: &tokio::runtime::Runtime,
) -> Result<Vec<Seen>, String> {
    let turns = plan(catalog, turns);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen_live = live.is_some();
    let relay = Relay {
        script: Mutex::new(script(layout, &turns).into()),
        seen: Arc::clone(&seen),
        form: layout.form(),
        live,
    };
    // A live session's system text starts with a number of its own (see the file's docs).
    let instructions = if seen_live {
        format!("Session {}. {INSTRUCTIONS}", session_number())
    } else {
        INSTRUCTIONS.to_owned()
    };
    let builder = (catalog.register)(AgentBuilder::new())
        .with_instructions(instructions)
        .with_max_iterations(8)
        .with_model_options(
            ModelOptions::default()
                .with_temperature(0.0)
                .with_max_output_tokens(1),
        )
        .with_chat_client(relay);
    let agent = layout
        .configure(builder)
        .build()
        .map_err(|e| e.to_string())?;
    let mut session = agent.session();
    runtime.block_on(async {
        for (t, turn) in turns.iter().enumerate() {
            session
                .run(user_message(t, turn))
                .await
                .map_err(|e| format!("turn {t}: {e}"))?;
        }
        Ok::<(), String>(())
    })?;
    // Every call of the script must have run as a call of the member it names: an error result
    // would mean the layout or the plan is wrong, and the figures would measure that instead.
    for message in session.history() {
        if let ChatMessage::Tool {
            is_error: true,
            content,
            ..
        } = message
        {
            return Err(format!("a call failed: {content}"));
        }
    }
    Ok(std::mem::take(&mut *seen.lock().expect("record")))
}

// ---------------------------------------------------------------------------------------------
// The canonical rendering of a request's context.

fn function_json(tool: &ToolDefinition) -> Value {
    json!({"type": "function", "function": {"name": tool.name, "description": tool.description,
           "parameters": *tool.parameters}})
}

/// The tool list as it enters the model's context.
fn tools_text(layout: Layout, seen: &Seen) -> String {
    let mut list: Vec<Value> = seen.tools.iter().map(|t| function_json(t)).collect();
    if layout == Layout::NativeResponses && !seen.deferred.is_empty() {
        // Up front, a namespace is its name and description; its functions are deferred.
        list.extend(
            seen.deferred.iter().map(
                |g| json!({"type": "namespace", "name": g.name, "description": g.description}),
            ),
        );
        let names: Vec<&str> = seen.deferred.iter().map(|g| g.name.as_str()).collect();
        list.push(json!({"type": "tool_search", "execution": "client",
            "description": "Loads the functions of one namespace, to call them next.",
            "parameters": {"type": "object", "properties": {"namespace": {"type": "string",
                "enum": names, "description": "The namespace to load."}},
                "required": ["namespace"], "additionalProperties": false}}));
    }
    Value::Array(list).to_string()
}

/// The definition a reference names, from the request's deferred groups.
fn referenced<'a>(seen: &'a Seen, name: &str) -> Option<(&'a DeferredGroup, &'a ToolDefinition)> {
    seen.deferred.iter().find_map(|g| {
        g.tools
            .iter()
            .find(|t| t.name == name)
            .map(|t| (g, t.as_ref()))
    })
}

/// The whole context of a request as text, in the order providers cache it.
fn context_text(layout: Layout, seen: &Seen) -> String {
    let mut text = tools_text(layout, seen);
    text.push('\n');
    text.push_str(&seen.instructions);
    // native-Responses: the namespaces loaded so far, in load order, with the tools loaded.
    let mut loaded: Vec<(&DeferredGroup, String, Vec<&ToolDefinition>)> = Vec::new();
    for message in &seen.messages {
        text.push('\n');
        match message {
            ChatMessage::Tool {
                call_id,
                content,
                references,
                ..
            } if !references.is_empty() && layout == Layout::NativeAnthropic => {
                // Each reference is expanded into its definition where it sits.
                let definitions: Vec<Value> = references
                    .iter()
                    .filter_map(|r| referenced(seen, r))
                    .map(|(_, t)| function_json(t))
                    .collect();
                text.push_str(
                    &json!({"role": "tool", "call_id": call_id, "content": content,
                            "tools": definitions})
                    .to_string(),
                );
            }
            ChatMessage::Tool {
                call_id,
                content,
                references,
                ..
            } if !references.is_empty() && layout == Layout::NativeResponses => {
                // In place, the output item; its definitions go to the end of the context.
                text.push_str(
                    &json!({"type": "tool_search_output", "call_id": call_id}).to_string(),
                );
                for name in references {
                    let Some((group, tool)) = referenced(seen, name) else {
                        continue;
                    };
                    match loaded.iter_mut().find(|(g, _, _)| g.name == group.name) {
                        Some((_, _, tools)) => {
                            if !tools.iter().any(|t| t.name == tool.name) {
                                tools.push(tool);
                            }
                        }
                        None => loaded.push((group, content.clone(), vec![tool])),
                    }
                }
            }
            other => text.push_str(&serde_json::to_string(other).expect("message JSON")),
        }
    }
    if !loaded.is_empty() {
        let namespaces: Vec<Value> = loaded
            .iter()
            .map(|(group, note, tools)| {
                json!({"type": "namespace", "name": group.name,
                       "description": format!("{}\n\n{note}", group.description),
                       "tools": tools.iter().map(|t| function_json(t)).collect::<Vec<_>>()})
            })
            .collect();
        text.push('\n');
        text.push_str(&Value::Array(namespaces).to_string());
    }
    text
}

fn common_prefix(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

// ---------------------------------------------------------------------------------------------
// Figures.

/// The measured figures of one session.
struct Figures {
    requests: usize,
    /// Per request: tokens, cached tokens.
    sizes: Vec<u64>,
    cached: Vec<u64>,
    /// Tool tokens of the first request (offline only).
    first_tools: Option<usize>,
}

impl Figures {
    fn input(&self) -> u64 {
        self.sizes.iter().sum()
    }

    fn cached_total(&self) -> u64 {
        self.cached.iter().sum()
    }

    /// Anthropic's rule: uncached written at 1.25x, cached read at 0.1x.
    fn anthropic(&self) -> f64 {
        let uncached = (self.input() - self.cached_total()) as f64;
        1.25 * uncached + 0.1 * self.cached_total() as f64
    }

    /// OpenAI's rule: uncached at 1x, cached at 0.1x.
    fn openai(&self) -> f64 {
        let uncached = (self.input() - self.cached_total()) as f64;
        uncached + 0.1 * self.cached_total() as f64
    }

    /// The lowest share of the previous request kept as cached prefix, and at which request
    /// (1-based); `None` for a single request.
    fn lowest_kept(&self) -> Option<(f64, usize)> {
        self.sizes
            .windows(2)
            .zip(self.cached.iter().skip(1))
            .enumerate()
            .map(|(i, (w, &c))| (c as f64 / w[0] as f64, i + 2))
            .min_by(|a, b| a.0.total_cmp(&b.0))
    }
}

fn offline_figures(layout: Layout, seen: &[Seen]) -> Figures {
    let tokens: Vec<Vec<u32>> = seen
        .iter()
        .map(|s| catalog::tokens(&context_text(layout, s)))
        .collect();
    let mut cached = vec![0];
    cached.extend(
        tokens
            .windows(2)
            .map(|w| common_prefix(&w[0], &w[1]) as u64),
    );
    Figures {
        requests: seen.len(),
        sizes: tokens.iter().map(|t| t.len() as u64).collect(),
        cached,
        first_tools: seen
            .first()
            .map(|s| catalog::tokens(&tools_text(layout, s)).len()),
    }
}

fn live_figures(seen: &[Seen]) -> Figures {
    let usage: Vec<Usage> = seen.iter().filter_map(|s| s.usage).collect();
    Figures {
        requests: seen.len(),
        sizes: usage.iter().map(|u| u.input_tokens).collect(),
        cached: usage.iter().map(|u| u.cached_input_tokens).collect(),
        first_tools: None,
    }
}

fn verdict(ok: bool) -> &'static str {
    if ok { "met" } else { "NOT met" }
}

/// Prints the table of one catalog and, offline, the goal lines of `fixed` and the native
/// layouts.
fn report(label: &str, rows: &[(Layout, usize, Result<Figures, String>)], offline: bool) {
    println!("\n{label}");
    println!(
        "| layout | turns | requests | vs flat | input tokens | last request | cached | cached share | lowest kept (request) | Anthropic rule | vs flat | OpenAI rule | vs flat |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let flat = |turns: usize| {
        rows.iter()
            .find(|(l, n, _)| *l == Layout::Flat && *n == turns)
            .and_then(|(_, _, f)| f.as_ref().ok())
    };
    for (layout, turns, figures) in rows {
        let figures = match figures {
            Ok(figures) => figures,
            Err(why) => {
                println!("| {} | {turns} | failed: {why} |", layout.name());
                continue;
            }
        };
        let base = flat(*turns);
        let ratio = |value: f64, of: &dyn Fn(&Figures) -> f64| match base {
            Some(base) => format!("{:.3}", value / of(base)),
            None => "-".to_owned(),
        };
        let lowest = match figures.lowest_kept() {
            Some((share, at)) => format!("{:.1}% ({at})", share * 100.0),
            None => "-".to_owned(),
        };
        println!(
            "| {} | {turns} | {} | {} | {} | {} | {} | {:.1}% | {lowest} | {:.0} | {} | {:.0} | {} |",
            layout.name(),
            figures.requests,
            ratio(figures.requests as f64, &|f| f.requests as f64),
            figures.input(),
            figures.sizes.last().copied().unwrap_or(0),
            figures.cached_total(),
            100.0 * figures.cached_total() as f64 / figures.input() as f64,
            figures.anthropic(),
            ratio(figures.anthropic(), &Figures::anthropic),
            figures.openai(),
            ratio(figures.openai(), &Figures::openai),
        );
    }
    if !offline {
        return;
    }
    for (layout, turns, figures) in rows {
        if !matches!(
            layout,
            Layout::Fixed | Layout::NativeAnthropic | Layout::NativeResponses
        ) {
            continue;
        }
        let (Ok(figures), Some(base)) = (figures, flat(*turns)) else {
            continue;
        };
        let kept = figures.lowest_kept();
        let a = figures.anthropic() / base.anthropic();
        let o = figures.openai() / base.openai();
        let tools = figures.first_tools.unwrap_or(0) as f64;
        let flat_tools = base.first_tools.unwrap_or(1) as f64;
        let fewer = 1.0 - tools / flat_tools;
        println!(
            "goals {label} {} {turns} turns: (a) >= 99% kept: {}{}; (b) below flat: {} (Anthropic {a:.3}, OpenAI {o:.3}); (c) >= 92% fewer first-request tool tokens: {} ({:.1}% fewer, {tools} vs {flat_tools}, ratio {:.3})",
            layout.name(),
            match kept {
                Some((share, _)) => verdict(share >= 0.99),
                None => "met (one request)",
            },
            match kept {
                Some((share, at)) => format!(" (lowest {:.2}% at request {at})", share * 100.0),
                None => String::new(),
            },
            verdict(a < 1.0 && o < 1.0),
            verdict(fewer >= 0.92),
            fewer * 100.0,
            tools / flat_tools,
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Catalogs.

/// A minimal valid instance of a JSON schema: the required properties only, first enum
/// values, `$ref`s into the root's `$defs` followed.
fn instance(schema: &Value, root: &Value) -> Value {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let name = reference.rsplit('/').next().unwrap_or_default();
        let target = root
            .get("$defs")
            .or_else(|| root.get("definitions"))
            .and_then(|d| d.get(name))
            .cloned()
            .unwrap_or(Value::Null);
        return instance(&target, root);
    }
    if let Some(first) = schema.get("enum").and_then(|e| e.get(0)) {
        return first.clone();
    }
    if let Some(value) = schema.get("const") {
        return value.clone();
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(options) = schema.get(key).and_then(Value::as_array)
            && let Some(option) = options
                .iter()
                .find(|o| o.get("type").and_then(Value::as_str) != Some("null"))
        {
            return instance(option, root);
        }
    }
    let kind = match schema.get("type") {
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .find(|k| *k != "null")
            .unwrap_or("object"),
        Some(Value::String(kind)) => kind.as_str(),
        _ if schema.get("properties").is_some() => "object",
        _ => "string",
    };
    match kind {
        "object" => {
            let mut object = serde_json::Map::new();
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
                for (name, property) in properties {
                    if required.contains(&name.as_str()) {
                        object.insert(name.clone(), instance(property, root));
                    }
                }
            }
            Value::Object(object)
        }
        "array" => {
            let item = schema
                .get("items")
                .map_or(json!("x"), |i| instance(i, root));
            json!([item])
        }
        "integer" => json!(
            schema
                .get("minimum")
                .and_then(Value::as_i64)
                .unwrap_or(1)
                .max(1)
        ),
        "number" => json!(2.5),
        "boolean" => json!(true),
        _ => json!("2026-12-01T09:00:00Z"),
    }
}

/// The deferred groups of an agent built from `register` (every collapsed harness with its
/// member definitions), read from the first request of a native session.
fn groups(
    register: &dyn Fn(AgentBuilder) -> AgentBuilder,
    runtime: &tokio::runtime::Runtime,
) -> Vec<DeferredGroup> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let relay = Relay {
        script: Mutex::new(VecDeque::from([ChatResponse::text("ok")])),
        seen: Arc::clone(&seen),
        form: DeferredTools::ToolReferences,
        live: None,
    };
    let agent = register(AgentBuilder::new())
        .with_collapsing_layout(CollapsingLayout::Native)
        .with_chat_client(relay)
        .build()
        .expect("agent builds");
    runtime.block_on(agent.run("list")).expect("probe runs");
    let seen = seen.lock().expect("record");
    seen[0].deferred.clone()
}

fn synthetic(count: usize, runtime: &tokio::runtime::Runtime) -> Catalog {
    let register = move |b: AgentBuilder| {
        catalog::synthetic::REGISTER[..count]
            .iter()
            .fold(b, |b, register| register(b))
    };
    let harnesses = groups(&register, runtime)
        .into_iter()
        .map(|g| Harness {
            name: g.name.clone(),
            calls: g
                .tools
                .iter()
                .map(|t| (t.name.clone(), instance(&t.parameters, &t.parameters)))
                .collect(),
        })
        .collect();
    Catalog {
        register: Box::new(register),
        harnesses,
    }
}

/// The member calls a turn makes on each MCP reference server: calls that read or compute and
/// give the same result every time (no clock, no growing state).
fn mcp_calls(
    harness: &str,
    scratch: &std::path::Path,
    repo: &std::path::Path,
) -> Vec<(String, Value)> {
    let scratch = scratch.display().to_string();
    let repo = repo.display().to_string();
    let calls: Vec<(&str, Value)> = match harness {
        "Everything" => vec![
            ("echo", json!({"message": "The design review is at 10:00."})),
            ("get-sum", json!({"a": 17, "b": 25})),
            ("get-structured-content", json!({"location": "Chicago"})),
        ],
        "Filesystem" => vec![
            ("list_allowed_directories", json!({})),
            ("list_directory", json!({"path": scratch})),
            (
                "get_file_info",
                json!({"path": format!("{scratch}/notes.txt")}),
            ),
            (
                "read_text_file",
                json!({"path": format!("{scratch}/notes.txt")}),
            ),
        ],
        "Memory" => vec![
            ("read_graph", json!({})),
            ("search_nodes", json!({"query": "design review"})),
        ],
        "SequentialThinking" => vec![(
            "sequentialthinking",
            json!({"thought": "List the open items, then pick the most urgent one.",
                   "nextThoughtNeeded": false, "thoughtNumber": 1, "totalThoughts": 1}),
        )],
        "Time" => vec![(
            "convert_time",
            json!({"source_timezone": "Europe/Paris", "time": "10:00",
                   "target_timezone": "America/New_York"}),
        )],
        "Git" => vec![
            ("git_status", json!({"repo_path": repo})),
            (
                "git_branch",
                json!({"repo_path": repo, "branch_type": "local"}),
            ),
            ("git_diff_unstaged", json!({"repo_path": repo})),
        ],
        _ => Vec::new(),
    };
    calls.into_iter().map(|(n, a)| (n.to_owned(), a)).collect()
}

/// A scratch folder with a file and a git repository of one commit, for the MCP calls.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("scratch folder");
    std::fs::write(dir.path().join("notes.txt"), "Design review at 10:00.\n").expect("notes");
    let repo = dir.path().join("repo");
    std::fs::create_dir(&repo).expect("repo");
    std::fs::write(repo.join("README.md"), "# Demo\n").expect("readme");
    for args in [
        &["init", "-q", "-b", "main"][..],
        &["add", "README.md"],
        &[
            "-c",
            "user.name=Bench",
            "-c",
            "user.email=bench@example.com",
            "commit",
            "-q",
            "-m",
            "First commit",
        ],
    ] {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(&repo)
            .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
            .status()
            .expect("git runs");
        assert!(status.success(), "git {args:?} failed");
    }
    dir
}

fn mcp(harnesses: Vec<DynamicHarness>, scratch: &std::path::Path) -> Catalog {
    let names: Vec<String> = harnesses.iter().map(|h| h.name().to_owned()).collect();
    let repo = scratch.join("repo");
    let register = move |b: AgentBuilder| catalog::register_mcp(b, &harnesses);
    Catalog {
        register: Box::new(register),
        harnesses: names
            .iter()
            .map(|name| Harness {
                name: name.clone(),
                calls: mcp_calls(name, scratch, &repo),
            })
            .collect(),
    }
}

/// Makes a catalog for one session: the MCP servers are started afresh for each, so every
/// session sees the same results (the sequential-thinking server counts the thoughts it got).
type Make<'a> = &'a dyn Fn() -> Result<Catalog, String>;

/// Runs one session on a fresh catalog, and closes the catalog inside the runtime (the MCP
/// connections need it to shut down).
fn fresh_session(
    make: Make<'_>,
    layout: Layout,
    turns: usize,
    live: Option<OpenAiClient>,
    runtime: &tokio::runtime::Runtime,
) -> Result<Vec<Seen>, String> {
    let catalog = make()?;
    let seen = session(&catalog, layout, turns, live, runtime);
    runtime.block_on(async move { drop(catalog) });
    seen
}

fn offline(label: &str, make: Make<'_>, runtime: &tokio::runtime::Runtime) {
    let mut rows = Vec::new();
    for &turns in &LENGTHS {
        for layout in LAYOUTS {
            let figures = fresh_session(make, layout, turns, None, runtime)
                .map(|seen| offline_figures(layout, &seen));
            rows.push((layout, turns, figures));
        }
    }
    report(&format!("offline, {label}, o200k_base tokens"), &rows, true);
}

fn live(
    url: &str,
    label: &str,
    make: Make<'_>,
    lengths: &[usize],
    runtime: &tokio::runtime::Runtime,
) {
    let mut rows = Vec::new();
    for &turns in lengths {
        // llama.cpp has no deferred loading: native falls back to fixed there.
        for layout in [Layout::Flat, Layout::Hide, Layout::Append, Layout::Fixed] {
            let client = OpenAiClient::new("smollm2", "")
                .and_then(|c| c.with_base_url(format!("{url}/v1")))
                .expect("client")
                .with_timeout(std::time::Duration::from_secs(600))
                .with_streaming(false);
            let figures = fresh_session(make, layout, turns, Some(client), runtime)
                .map(|seen| live_figures(&seen));
            // Each session as it ends: a long run shows what it measured so far.
            match &figures {
                Ok(f) => println!(
                    "live {} {turns} turns: prompt tokens {:?}, cached {:?}",
                    layout.name(),
                    f.sizes,
                    f.cached
                ),
                Err(why) => println!("live {} {turns} turns: failed: {why}", layout.name()),
            }
            rows.push((layout, turns, figures));
        }
    }
    report(
        &format!(
            "live, llama.cpp at {url}, {label}; the server's prompt tokens and cached prompt tokens"
        ),
        &rows,
        false,
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let rt = &runtime;
    let synthetic_of = |count: usize| move || Ok(synthetic(count, rt));
    if std::env::var("HPD_SESSION_COST_LIVE_ONLY").is_err() {
        offline(
            "synthetic catalog, 20 harnesses x 8 functions",
            &synthetic_of(20),
            &runtime,
        );
        offline(
            "synthetic catalog, first 4 harnesses x 8 functions",
            &synthetic_of(4),
            &runtime,
        );
        let scratch = scratch();
        let make_mcp = || {
            let harnesses = runtime.block_on(catalog::mcp_catalog(scratch.path()))?;
            Ok(mcp(harnesses, scratch.path()))
        };
        match make_mcp() {
            Ok(probe) => {
                runtime.block_on(async move { drop(probe) });
                offline(
                    "MCP reference servers, 6 harnesses, 51 functions",
                    &make_mcp,
                    &runtime,
                );
            }
            Err(why) => println!("\nMCP catalog skipped: {why}"),
        }
    }
    match std::env::var("HPD_LLAMA_URL") {
        Ok(url) => {
            let url = url.trim().trim_end_matches('/').to_owned();
            // The server's context is 8192 tokens of its own tokenizer: the flat list of the
            // first 4 harnesses fits, with sessions of up to 5 turns.
            // HPD_SESSION_COST_LIVE_TURNS: the lengths to run live, e.g. `1` (default `1,5`).
            let lengths: Vec<usize> = std::env::var("HPD_SESSION_COST_LIVE_TURNS")
                .ok()
                .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect())
                .filter(|l: &Vec<usize>| !l.is_empty())
                .unwrap_or_else(|| vec![1, 5]);
            live(
                &url,
                "synthetic catalog, first 4 harnesses x 8 functions",
                &synthetic_of(4),
                &lengths,
                &runtime,
            );
        }
        Err(_) => println!(
            "\nlive measurement skipped: HPD_LLAMA_URL is unset (HPD_LLAMA_URL=$(bash .ci/llama-server.sh start))"
        ),
    }
}
