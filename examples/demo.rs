//! The main demo: what collapsing buys, request by request.
//!
//! One agent with five harnesses: a plain `WeatherTools`, a collapsed `MathTools` with container
//! instructions, collapsed `FileTools` and `Calendar`, and a collapsed `Inventory` built at run
//! time from a stock table (a [`DynamicHarness`]). For every model request the demo prints the tools the
//! model saw with their token count next to what the flat list (every function, collapsing off)
//! would cost, the active container instructions, each tool call with its result, and at the
//! end the answer and the turn's totals. The tool definitions are taken from the requests the
//! provider receives (a [`ChatClient`] wrapper sees each one), and counted as
//! `hpd-agent-tests/benches/context_economy.rs` counts them for `BENCHMARKS.md`: the compact JSON
//! of an OpenAI Chat Completions `tools` array, in `o200k_base` tokens.
//!
//! The provider comes from the environment, and the demo prints which one it uses:
//!
//! - `HPD_PROVIDER=openai` (OpenAI Chat Completions or any compatible server),
//!   `HPD_PROVIDER=openai_responses` (OpenAI Responses) or `HPD_PROVIDER=anthropic` (Anthropic
//!   Messages) picks one; each reads its own variables (`OPENAI_API_KEY`, `OPENAI_BASE_URL`,
//!   `OPENAI_MODEL`, default `gpt-4o-mini`; `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`,
//!   `ANTHROPIC_MODEL`, default `claude-sonnet-4-5`). A local server needs no key.
//! - Without `HPD_PROVIDER`: Anthropic when `ANTHROPIC_API_KEY` is set, else OpenAI Chat
//!   Completions when `OPENAI_API_KEY` is set.
//! - Otherwise a scripted model plays the conversation offline, in the default layout (`native`,
//!   which is `fixed` on a client without deferred loading, as the demo's tracing client is):
//!   it opens the `Inventory` container, calls its functions through `call_function`, calls
//!   `multiply` while `MathTools` is still collapsed (the runtime expands it: *recovery*), sends
//!   a bad argument once and corrects it, then answers.
//!
//! Colours are used when stdout is a terminal; `NO_COLOR` (set and not empty) turns them off,
//! `CLICOLOR_FORCE` (set, not empty and not `0`) turns them on for a pipe.
//!
//! ```text
//! cargo run -p hpd-agent-examples --example demo
//! HPD_PROVIDER=openai OPENAI_BASE_URL=http://127.0.0.1:8080/v1 cargo run -p hpd-agent-examples --example demo
//! ```

mod demo_tools;

use std::io::IsTerminal as _;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use demo_tools::{Calendar, FileTools, MathTools, WeatherTools};
use hpd_agent::chat::ToolDefinition;
use hpd_agent::harness::HarnessInfo;
use hpd_agent::{
    AgentBuilder, AgentEvent, AgentRunConfig, ChatClient, ChatResponse, HarnessBuilder,
    ScriptedChatClient, Tool, ToolCall, ToolHarness, ToolResult, async_trait, chat::ChatError,
    chat::ChatRequest, chat::ModelOptions, chat::TextSink, config::CALL_TOOL,
    config::CollapsingLayout, harness::DynamicHarness, providers::anthropic::AnthropicClient,
    providers::openai::OpenAiClient, providers::openai_responses::OpenAiResponsesClient,
};
use serde_json::{Value, json};

const QUESTION: &str = "We are 12 for a picnic in Oslo tomorrow. How is the weather? Please \
                        reserve 4 picnic blankets and tell me what they cost.";

/// The line printed when no real model is configured.
const SCRIPTED: &str = "A scripted model plays the conversation: no API key needed (set OPENAI_API_KEY for a real model)";

/// Longest line the trace prints, in characters.
const WIDTH: usize = 98;
/// Width of the label column (`instructions` and two spaces), after a two-space indent.
const LABEL: usize = 14;
/// Width of the text after the label column.
const TEXT: usize = WIDTH - 2 - LABEL;

// ---------------------------------------------------------------------------------------------
// The dynamic harness: inventory tools built from a stock table at run time.

/// The warehouse's stock table as it might come from a file or a database: SKU, item, units in
/// stock, unit price in cents.
const STOCK_TABLE: &str = "\
sku,item,stock,price_cents
PB-100,Picnic blanket,9,2450
CB-200,Cooler box,3,5900
PS-300,Plate set (8 plates),14,1200
UM-400,Beach umbrella,0,3400
FC-500,Folding chair,20,1800
";

/// One row of the stock table.
#[derive(Debug, Clone)]
struct Item {
    sku: String,
    name: String,
    stock: u32,
    price_cents: u64,
}

impl Item {
    fn describe(&self) -> String {
        format!(
            "{} {}: {} in stock, {}.{:02} EUR ({} cents) each",
            self.sku,
            self.name,
            self.stock,
            self.price_cents / 100,
            self.price_cents % 100,
            self.price_cents
        )
    }
}

/// Parses the stock table, saying which line is wrong.
fn parse_stock(table: &str) -> Result<Vec<Item>, String> {
    table
        .lines()
        .enumerate()
        .skip(1)
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            let wrong = |what: &str| format!("stock table line {}: {what}: '{line}'", i + 1);
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            let [sku, name, stock, price] = fields[..] else {
                return Err(wrong("expected 4 fields"));
            };
            Ok(Item {
                sku: sku.to_owned(),
                name: name.to_owned(),
                stock: stock.parse().map_err(|_| wrong("bad stock"))?,
                price_cents: price.parse().map_err(|_| wrong("bad price"))?,
            })
        })
        .collect()
}

type Stock = Arc<Mutex<Vec<Item>>>;

/// The `Inventory` harness: four tools over the table, the SKU parameters listing the table's
/// SKUs; collapsed, with container instructions.
fn inventory_harness(items: Vec<Item>) -> Result<DynamicHarness, Box<dyn std::error::Error>> {
    let skus: Vec<&str> = items.iter().map(|item| item.sku.as_str()).collect();
    let sku_schema = json!({"type": "string", "enum": skus, "description": "The item's SKU."});
    let stock: Stock = Arc::new(Mutex::new(items));

    let find_item = {
        let stock = stock.clone();
        Tool::new(
            "find_item",
            "Finds stock items whose name contains every word of the query",
            json!({
                "type": "object",
                "properties": {"query": {"type": "string", "description": "Words of the item's name."}},
                "required": ["query"]
            }),
            move |args: Value, _ctx| {
                let stock = stock.clone();
                async move {
                    let Some(query) = args["query"].as_str() else {
                        return ToolResult::error("'query' must be a string");
                    };
                    let words: Vec<String> =
                        query.split_whitespace().map(str::to_lowercase).collect();
                    let items = stock.lock().unwrap_or_else(PoisonError::into_inner);
                    let found: Vec<String> = items
                        .iter()
                        .filter(|item| {
                            let name = item.name.to_lowercase();
                            words.iter().all(|w| name.contains(w.as_str()))
                        })
                        .map(Item::describe)
                        .collect();
                    if found.is_empty() {
                        ToolResult::ok(format!("no item matches '{query}'"))
                    } else {
                        ToolResult::ok(found.join("\n"))
                    }
                }
            },
        )
    };

    let stock_level = {
        let stock = stock.clone();
        Tool::new(
            "stock_level",
            "Units in stock and unit price of one item",
            json!({"type": "object", "properties": {"sku": sku_schema}, "required": ["sku"]}),
            move |args: Value, _ctx| {
                let stock = stock.clone();
                async move {
                    let items = stock.lock().unwrap_or_else(PoisonError::into_inner);
                    match find_sku(&items, &args) {
                        Ok(i) => ToolResult::ok(items[i].describe()),
                        Err(e) => ToolResult::error(e),
                    }
                }
            },
        )
    };

    let reserve = {
        let stock = stock.clone();
        Tool::new(
            "reserve",
            "Reserves units of an item for an event, taking them out of stock",
            json!({
                "type": "object",
                "properties": {
                    "sku": sku_schema,
                    "quantity": {"type": "integer", "minimum": 1, "description": "Units to reserve."}
                },
                "required": ["sku", "quantity"]
            }),
            move |args: Value, _ctx| {
                let stock = stock.clone();
                async move {
                    let mut items = stock.lock().unwrap_or_else(PoisonError::into_inner);
                    let i = match find_sku(&items, &args) {
                        Ok(i) => i,
                        Err(e) => return ToolResult::error(e),
                    };
                    let item = &mut items[i];
                    let Some(quantity) = args["quantity"]
                        .as_u64()
                        .and_then(|q| u32::try_from(q).ok())
                        .filter(|q| *q >= 1)
                    else {
                        return ToolResult::error(
                            "'quantity' must be a whole number of at least 1",
                        );
                    };
                    if quantity > item.stock {
                        return ToolResult::error(format!(
                            "only {} of {} in stock",
                            item.stock, item.sku
                        ));
                    }
                    item.stock -= quantity;
                    ToolResult::ok(format!(
                        "reserved {quantity} x {} ({}); {} left",
                        item.sku, item.name, item.stock
                    ))
                }
            },
        )
    };

    let list_items = Tool::new(
        "list_items",
        "Lists every stock item with its stock and price",
        json!({"type": "object", "properties": {}}),
        move |_args: Value, _ctx| {
            let stock = stock.clone();
            async move {
                let items = stock.lock().unwrap_or_else(PoisonError::into_inner);
                let lines: Vec<String> = items.iter().map(Item::describe).collect();
                ToolResult::ok(lines.join("\n"))
            }
        },
    );

    Ok(HarnessBuilder::new("Inventory")
        .with_collapse("Warehouse stock: find, check and reserve items")
        .with_system_prompt("Quote SKUs exactly. Reserve only what the user asked for.")
        .with_tools([find_item, stock_level, reserve, list_items])
        .build()?)
}

/// The index of the item whose SKU `args["sku"]` names.
fn find_sku(items: &[Item], args: &Value) -> Result<usize, String> {
    let Some(sku) = args["sku"].as_str() else {
        return Err("'sku' must be a string".to_owned());
    };
    items
        .iter()
        .position(|item| item.sku == sku)
        .ok_or_else(|| {
            let known: Vec<&str> = items.iter().map(|item| item.sku.as_str()).collect();
            format!("unknown SKU '{sku}'; the SKUs are {}", known.join(", "))
        })
}

// ---------------------------------------------------------------------------------------------
// The agent and its model.

/// The agent of the demo, without its chat client.
fn agent_builder(inventory: &DynamicHarness) -> AgentBuilder {
    AgentBuilder::new()
        .with_instructions("You are a helpful assistant for an events team. Use the tools.")
        .with_tool_harness::<WeatherTools>()
        .with_tool_harness::<MathTools>()
        .with_tool_harness::<FileTools>()
        .with_tool_harness::<Calendar>()
        .with_harness(inventory.clone())
        .with_model_options(
            ModelOptions::new()
                .with_temperature(0.0)
                .with_max_output_tokens(1024),
        )
}

/// The conversation the scripted model plays offline, in the default layout (`fixed` here): the model
/// opens a container, reads its functions' schemas in the result, and calls them through the
/// call tool [`CALL_TOOL`].
fn scripted_model() -> ScriptedChatClient {
    let call = |id: &str, name: &str, args: &str| ToolCall::new(id, name, args);
    let through = |id: &str, function: &str, args: &str| {
        let arguments = json!({"name": function, "arguments": serde_json::from_str::<Value>(args)
            .expect("the script's arguments are JSON")});
        ToolCall::new(id, CALL_TOOL, arguments.to_string())
    };
    ScriptedChatClient::with_replies([
        // Request 1: the plain tool, and the container that holds the stock tools.
        ChatResponse::tool_calls(vec![
            call("call_1", "get_weather", r#"{"city": "Oslo"}"#),
            call("call_2", "Inventory", "{}"),
        ]),
        // Request 2: a function of the now open container, through the call tool.
        ChatResponse::tool_calls(vec![through(
            "call_3",
            "find_item",
            r#"{"query": "picnic blanket"}"#,
        )]),
        // Request 3: `multiply` is in the collapsed MathTools: recovery expands it.
        ChatResponse::tool_calls(vec![
            through("call_4", "reserve", r#"{"sku": "PB-100", "quantity": 4}"#),
            through("call_5", "multiply", r#"{"a": 4, "b": 24.5}"#),
        ]),
        // Request 4: a bad argument (`multiply` takes integers): an error result.
        ChatResponse::tool_calls(vec![through(
            "call_6",
            "multiply",
            r#"{"a": 4, "b": 24.5}"#,
        )]),
        // Request 5: corrected, in cents.
        ChatResponse::tool_calls(vec![through(
            "call_7",
            "multiply",
            r#"{"a": 4, "b": 2450}"#,
        )]),
        ChatResponse::text(
            "It is sunny in Oslo. I reserved 4 picnic blankets (PB-100, 5 left in stock); \
             at 24.50 EUR each they cost 4 x 2450 cents = 98.00 EUR.",
        ),
    ])
}

/// A variable's value, `None` when unset or empty.
fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The provider the environment asks for (see the file's docs), and a line saying which.
fn chat_client() -> Result<(Box<dyn ChatClient>, String), Box<dyn std::error::Error>> {
    let provider = match var("HPD_PROVIDER") {
        Some(provider) => provider.to_ascii_lowercase(),
        None if var("ANTHROPIC_API_KEY").is_some() => "anthropic".to_owned(),
        None if var("OPENAI_API_KEY").is_some() => "openai".to_owned(),
        None => return Ok((Box::new(scripted_model()), SCRIPTED.to_owned())),
    };
    let openai_model = || var("OPENAI_MODEL").unwrap_or_else(|| "gpt-4o-mini".to_owned());
    Ok(match provider.as_str() {
        "openai" => {
            let client = OpenAiClient::from_env(openai_model())?;
            let line = format!(
                "provider openai (Chat Completions) at {}, model {}",
                client.base_url(),
                client.model()
            );
            (Box::new(client), line)
        }
        "openai_responses" => {
            let client = OpenAiResponsesClient::from_env(openai_model())?;
            let line = format!(
                "provider openai_responses (Responses API) at {}, model {}",
                client.base_url(),
                client.model()
            );
            (Box::new(client), line)
        }
        "anthropic" => {
            let model = var("ANTHROPIC_MODEL").unwrap_or_else(|| "claude-sonnet-4-5".to_owned());
            let client = AnthropicClient::from_env(model)?;
            let line = format!(
                "provider anthropic (Messages API) at {}, model {}",
                client.base_url(),
                client.model()
            );
            (Box::new(client), line)
        }
        other => {
            return Err(format!(
                "HPD_PROVIDER is '{other}'; expected openai, openai_responses or anthropic"
            )
            .into());
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Counting tool tokens the way BENCHMARKS.md does.

/// The tool list as an OpenAI Chat Completions request carries it: the compact JSON of
/// `[{"type": "function", "function": {name, description, parameters}}, ...]`.
fn tools_json(tools: &[Arc<ToolDefinition>]) -> String {
    let list: Vec<Value> = tools
        .iter()
        .map(|t| {
            json!({
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": *t.parameters}
            })
        })
        .collect();
    Value::Array(list).to_string()
}

/// `o200k_base` tokens of a tool list (the ranks are compiled into `tiktoken-rs`).
fn tool_tokens(tools: &[Arc<ToolDefinition>]) -> usize {
    tiktoken_rs::o200k_base_singleton()
        .encode_ordinary(&tools_json(tools))
        .len()
}

// ---------------------------------------------------------------------------------------------
// Output: colours, columns, wrapping.

/// ANSI colours, or none.
#[derive(Debug, Clone, Copy)]
struct Paint {
    on: bool,
}

impl Paint {
    /// Colours when stdout is a terminal (not `TERM=dumb`); `NO_COLOR` set and not empty turns
    /// them off, else `CLICOLOR_FORCE` set, not empty and not `0` turns them on.
    fn from_env() -> Paint {
        let value = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        let on = if value("NO_COLOR").is_some() {
            false
        } else if value("CLICOLOR_FORCE").is_some_and(|v| v != "0") {
            true
        } else {
            std::io::stdout().is_terminal() && value("TERM").is_none_or(|t| t != "dumb")
        };
        Paint { on }
    }

    /// `text` in the SGR style `code` (`1` bold, `2` dim, `31` red, ...).
    fn paint(self, code: &str, text: &str) -> String {
        if self.on && !code.is_empty() && !text.is_empty() {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }
}

const BOLD: &str = "1";
const DIM: &str = "2";
const RED: &str = "31";
const GREEN: &str = "32";
const YELLOW: &str = "33";
const BOLD_YELLOW: &str = "1;33";
const BOLD_BLUE: &str = "1;34";
const MAGENTA: &str = "35";
const CYAN: &str = "36";
const BOLD_GREEN: &str = "1;32";
const BOLD_CYAN: &str = "1;36";

/// `text` on one line of at most `width` characters, cut with an ellipsis.
fn clip(text: &str, width: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= width {
        return line;
    }
    let mut cut: String = line.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// `text` wrapped into at most `max_lines` lines, the last one cut with an ellipsis.
fn wrap_clipped(text: &str, width: usize, max_lines: usize) -> Vec<String> {
    let mut lines = wrap(text, width);
    if lines.len() > max_lines {
        // What no longer fits is longer than one line, so `clip` cuts it.
        let rest = lines.split_off(max_lines.max(1) - 1).join(" ");
        lines.push(clip(&rest, width));
    }
    lines
}

/// `text` in lines of at most `width` characters, broken at spaces (a longer word is split).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut len = 0;
    for word in text.split_whitespace() {
        let chars: Vec<char> = word.chars().collect();
        for piece in chars.chunks(width.max(1)) {
            if len > 0 && len + 1 + piece.len() > width {
                lines.push(std::mem::take(&mut line));
                len = 0;
            }
            if len > 0 {
                line.push(' ');
                len += 1;
            }
            line.extend(piece);
            len += piece.len();
        }
    }
    if len > 0 || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// Prints `lines` under a label: the first line after the label, the others aligned with it.
/// `label_style` colours the label, `style` the text.
fn print_labelled(paint: Paint, label: &str, label_style: &str, style: &str, lines: &[String]) {
    for (i, line) in lines.iter().enumerate() {
        let label = if i == 0 { label } else { "" };
        let padded = format!("{label:<LABEL$}");
        println!(
            "  {}{}",
            paint.paint(label_style, &padded),
            paint.paint(style, line)
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The trace: a chat client wrapper sees each request, event handlers see each tool call.

/// A tool call between its start and its result.
#[derive(Debug)]
struct PendingCall {
    id: String,
    name: String,
    arguments: String,
    /// The container this call expanded, and whether by recovery.
    expanded: Option<(String, bool)>,
}

#[derive(Debug, Default)]
struct TraceState {
    requests: usize,
    /// Tool tokens of every request so far.
    sent_tokens: usize,
    pending: Vec<PendingCall>,
}

/// What the trace prints with, and what it has counted.
#[derive(Debug)]
struct Trace {
    paint: Paint,
    /// The collapsing layout of the demo's agent: the default.
    layout: CollapsingLayout,
    /// Every function's definition, as the agent sends them with collapsing off, and their
    /// tokens: set once the agent is built (its model client holds the trace).
    flat: OnceLock<(Vec<Arc<ToolDefinition>>, usize)>,
    state: Mutex<TraceState>,
}

impl Trace {
    fn new(paint: Paint) -> Trace {
        Trace {
            paint,
            layout: CollapsingLayout::default(),
            flat: OnceLock::new(),
            state: Mutex::default(),
        }
    }

    /// Records the flat list the requests are compared with.
    fn set_flat(&self, flat: Vec<Arc<ToolDefinition>>) {
        let tokens = tool_tokens(&flat);
        // Set once, before the turn; a second call would change nothing.
        let _ = self.flat.set((flat, tokens));
    }

    /// The flat list and its tokens (empty before [`set_flat`](Self::set_flat)).
    fn flat(&self) -> (&[Arc<ToolDefinition>], usize) {
        self.flat
            .get()
            .map_or((&[], 0), |(tools, tokens)| (tools.as_slice(), *tokens))
    }

    fn state(&self) -> std::sync::MutexGuard<'_, TraceState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn line(&self, label: &str, label_style: &str, style: &str, lines: &[String]) {
        print_labelled(self.paint, label, label_style, style, lines);
    }

    /// The request header: tools, their tokens against the flat list, container instructions.
    fn request(&self, request: &ChatRequest<'_>) {
        let p = self.paint;
        let (flat, flat_tokens) = self.flat();
        let tokens = tool_tokens(request.tools);
        let number = {
            let mut state = self.state();
            state.requests += 1;
            state.sent_tokens += tokens;
            state.requests
        };
        let title = format!("── request {number} ");
        let rule = "─".repeat(WIDTH.saturating_sub(title.chars().count()));
        println!("\n{}", p.paint(BOLD_CYAN, &format!("{title}{rule}")));

        // The call tool counts with the functions: it is a tool, not a container.
        let is_function = |name: &str| name == CALL_TOOL || flat.iter().any(|f| f.name == name);
        let (functions, containers): (Vec<&str>, Vec<&str>) = request
            .tools
            .iter()
            .map(|t| t.name.as_str())
            .partition(|name| is_function(name));
        let list = |names: &[&str]| {
            if names.is_empty() {
                vec!["none".to_owned()]
            } else {
                wrap(&names.join(", "), TEXT)
            }
        };
        self.line("tools", DIM, GREEN, &list(&functions));
        self.line("containers", DIM, YELLOW, &list(&containers));
        let saved = 100.0 * (1.0 - tokens as f64 / flat_tokens.max(1) as f64);
        println!(
            "  {}{} for these {} tools vs {} for all {} functions flat: {}",
            p.paint(DIM, &format!("{:<LABEL$}", "tokens")),
            p.paint(BOLD, &tokens.to_string()),
            request.tools.len(),
            p.paint(BOLD, &flat_tokens.to_string()),
            flat.len(),
            p.paint(BOLD_GREEN, &format!("{saved:.1}% saved"))
        );

        let sections = container_instructions(request.instructions);
        if sections.is_empty() {
            self.line("instructions", DIM, DIM, &["none".to_owned()]);
        }
        for (i, (harness, text)) in sections.iter().enumerate() {
            let label = if i == 0 { "instructions" } else { "" };
            let lines = wrap(&format!("{harness}: {text}"), TEXT);
            self.line(label, DIM, MAGENTA, &lines);
        }
    }

    /// What the model said: text besides tool calls, or the answer.
    fn reply(&self, response: &ChatResponse) {
        let text = response.text.as_deref().unwrap_or_default().trim();
        if response.tool_calls.is_empty() {
            let text = if text.is_empty() { "(no text)" } else { text };
            self.line("answer", BOLD_GREEN, BOLD_GREEN, &wrap(text, TEXT));
        } else if !text.is_empty() {
            self.line("model says", DIM, "", &wrap(text, TEXT));
        }
    }

    fn event(&self, event: &AgentEvent) {
        match event {
            AgentEvent::ToolCallStarted {
                call_id,
                name,
                arguments,
            } => self.state().pending.push(PendingCall {
                id: call_id.clone(),
                name: name.clone(),
                arguments: arguments.clone(),
                expanded: None,
            }),
            AgentEvent::ContainerExpanded { harness, recovery } => {
                // During a call it belongs to the call started last; otherwise (a forced tool
                // choice) it is printed on its own.
                let mut state = self.state();
                match state.pending.last_mut() {
                    Some(call) if call.expanded.is_none() => {
                        call.expanded = Some((harness.clone(), *recovery));
                    }
                    _ => {
                        drop(state);
                        self.expanded(harness, *recovery, None);
                    }
                }
            }
            AgentEvent::ToolCallFinished {
                call_id,
                result,
                is_error,
                ..
            } => {
                let call = {
                    let mut state = self.state();
                    let at = state.pending.iter().position(|c| c.id == *call_id);
                    at.map(|i| state.pending.remove(i))
                };
                if let Some(call) = call {
                    self.finished(&call, result, *is_error);
                }
            }
            AgentEvent::ResponseIncomplete {
                iteration,
                finish_reason,
                ..
            } => self.line(
                "incomplete",
                RED,
                RED,
                &[format!("reply {iteration} ended early: {finish_reason:?}")],
            ),
            _ => {}
        }
    }

    fn finished(&self, call: &PendingCall, result: &str, is_error: bool) {
        let p = self.paint;
        let arguments = clip(&call.arguments, TEXT.saturating_sub(call.name.len() + 1));
        println!(
            "  {}{} {arguments}",
            p.paint(DIM, &format!("{:<LABEL$}", "call")),
            p.paint(BOLD_BLUE, &call.name)
        );
        let (label, style) = if is_error {
            ("error", RED)
        } else {
            ("result", "")
        };
        let shown = if result.trim().is_empty() {
            vec!["(empty)".to_owned()]
        } else {
            wrap_clipped(result, TEXT, 2)
        };
        self.line(label, if is_error { RED } else { DIM }, style, &shown);
        if let Some((harness, recovery)) = &call.expanded {
            self.expanded(harness, *recovery, Some(&call.name));
            // Outside `hide`, a container's instructions travel in its result.
            for (harness, text) in container_instructions(result) {
                let lines = wrap(&format!("{harness}: {text} (in the result)"), TEXT);
                self.line("instructions", DIM, MAGENTA, &lines);
            }
        }
    }

    fn expanded(&self, harness: &str, recovery: bool, call: Option<&str>) {
        let text = match (recovery, call) {
            (true, Some(name)) if name != harness => {
                format!(
                    "{name} is hidden in {harness}: the runtime expanded it; the model calls again"
                )
            }
            (true, _) => format!("the runtime expanded {harness}"),
            (false, _) if self.layout == CollapsingLayout::Hide => {
                format!("{harness}: its functions are visible from the next request")
            }
            (false, _) => format!(
                "{harness}: its functions' schemas are in the result; the model calls them \
                 through {CALL_TOOL}, and the tool list stays as it is"
            ),
        };
        let (label, style) = if recovery {
            ("recovery", BOLD_YELLOW)
        } else {
            ("expanded", CYAN)
        };
        self.line(label, style, style, &wrap(&text, TEXT));
    }

    /// The turn's totals.
    fn summary(&self) {
        let (requests, sent) = {
            let state = self.state();
            (state.requests, state.sent_tokens)
        };
        let flat = requests * self.flat().1;
        let saved = 100.0 * (1.0 - sent as f64 / flat.max(1) as f64);
        let noun = if requests == 1 { "request" } else { "requests" };
        let text = format!(
            "{requests} {noun}; tools sent {sent} tokens vs {flat} flat: {saved:.1}% saved"
        );
        self.line("summary", BOLD, BOLD_GREEN, &[text]);
    }
}

/// The sections of the system text's `## Active container instructions`: harness and text.
fn container_instructions(system: &str) -> Vec<(String, String)> {
    let Some((_, sections)) = system.split_once("## Active container instructions") else {
        return Vec::new();
    };
    sections
        .split("\n### ")
        .filter_map(|section| {
            let section = section.trim().trim_start_matches("### ");
            let (harness, text) = section.split_once('\n')?;
            Some((harness.trim().to_owned(), text.trim().to_owned()))
        })
        .collect()
}

/// A chat client that prints each request before passing it on.
struct Traced {
    inner: Box<dyn ChatClient>,
    trace: Arc<Trace>,
}

#[async_trait]
impl ChatClient for Traced {
    async fn complete(
        &self,
        request: ChatRequest<'_>,
        text: TextSink<'_>,
    ) -> Result<ChatResponse, ChatError> {
        self.trace.request(&request);
        let response = self.inner.complete(request, text).await?;
        self.trace.reply(&response);
        Ok(response)
    }
}

/// Name, kind and functions of a macro harness, as its macro declared them.
fn described<T: ToolHarness>() -> (String, String, Vec<String>) {
    let info = HarnessInfo::of::<T>();
    let kind = if info.is_collapsed() {
        "collapsed"
    } else {
        "plain"
    };
    let functions = info.function_names().map(str::to_owned).collect();
    (info.name().to_owned(), kind.to_owned(), functions)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let paint = Paint::from_env();
    let (client, which) = chat_client()?;

    let items = parse_stock(STOCK_TABLE)?;
    let rows = items.len();
    let inventory = inventory_harness(items)?;

    let trace = Arc::new(Trace::new(paint));

    let handler = trace.clone();
    let agent = agent_builder(&inventory)
        .with_chat_client(Traced {
            inner: client,
            trace: trace.clone(),
        })
        .on_event(move |event| handler.event(event))
        .build()?;
    // What the model would see with collapsing off: every function.
    trace.set_flat(agent.flat_tool_session().visible_tools());

    let harnesses = [
        described::<WeatherTools>(),
        described::<MathTools>(),
        described::<FileTools>(),
        described::<Calendar>(),
        (
            inventory.name().to_owned(),
            "collapsed".to_owned(),
            inventory.tool_names(),
        ),
    ];
    let collapsed = harnesses.iter().filter(|h| h.1 != "plain").count();
    let functions: usize = harnesses.iter().map(|h| h.2.len()).sum();
    let title = format!(
        "hpd-agent demo: {} harnesses with {functions} functions, {collapsed} of them collapsed",
        harnesses.len()
    );
    println!("{}", paint.paint(BOLD, &title));
    println!("{}", paint.paint(DIM, &which));
    println!();
    for (i, (name, kind, functions)) in harnesses.iter().enumerate() {
        let label = if i == 0 { "harnesses" } else { "" };
        let mut lines = Vec::new();
        for (j, line) in wrap(&functions.join(", "), TEXT - 25)
            .into_iter()
            .enumerate()
        {
            lines.push(if j == 0 {
                format!("{name:<14}{kind:<11}{line}")
            } else {
                format!("{:25}{line}", "")
            });
        }
        if *name == inventory.name() {
            lines.push(format!(
                "{:14}dynamic: built at run time from a stock table of {rows} items",
                ""
            ));
        }
        trace.line(label, DIM, "", &lines);
    }
    // The trace's client forwards no form of deferred loading, so the default `native` runs
    // as `fixed` here, whatever the provider.
    let layout = format!(
        "fixed ({}, the default, on a client without deferred loading): one tool list for the \
         whole session, so the provider's prompt cache keeps every request; a container answers \
         with its functions' schemas",
        trace.layout
    );
    trace.line("layout", DIM, "", &wrap(&layout, TEXT));
    trace.line("user", BOLD, BOLD, &wrap(QUESTION, TEXT));

    let output = agent
        .session()
        .run_with(QUESTION, AgentRunConfig::new())
        .await?;

    println!("\n{}", paint.paint(BOLD_CYAN, &"─".repeat(WIDTH)));
    trace.summary();
    let usage = output.usage;
    if usage.input_tokens + usage.output_tokens > 0 {
        let text = format!(
            "{} input tokens ({} from the prompt cache), {} output tokens, finished: {}",
            usage.input_tokens,
            usage.cached_input_tokens,
            usage.output_tokens,
            output.finish_reason
        );
        trace.line("provider", DIM, DIM, &wrap(&text, TEXT));
    }
    Ok(())
}
