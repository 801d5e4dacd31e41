//! Session cost: what whole sessions of 1, 5, 20 and 50 turns send, per collapsing layout, and
//! what a provider's prompt cache makes of it.
//!
//! ```sh
//! eval "$(bash .ci/mcp-servers.sh)"       # the MCP catalog; without it only the synthetic ones
//! cargo bench -p hpd-agent-tests --bench session_cost
//! # a part of the offline run (each variable takes a comma-separated list; unset: all):
//! HPD_SESSION_COST_CATALOGS=synthetic20,mcp HPD_SESSION_COST_WORKLOADS=few \
//!   HPD_SESSION_COST_SCRIPTS=aware HPD_SESSION_COST_TURNS=1,5 \
//!   cargo bench -p hpd-agent-tests --bench session_cost
//! # the live part, against a llama.cpp server (its own cached-token counts):
//! HPD_LLAMA_URL=$(bash .ci/llama-server.sh start) cargo bench -p hpd-agent-tests --bench session_cost
//! # the live part alone, for some lengths (default 1,5; the server's context holds no more):
//! HPD_LLAMA_URL=... HPD_SESSION_COST_LIVE_ONLY=1 HPD_SESSION_COST_LIVE_TURNS=1 \
//!   cargo bench -p hpd-agent-tests --bench session_cost
//! ```
//!
//! The variables of the offline run:
//! - `HPD_SESSION_COST_CATALOGS`: `synthetic20` (the synthetic catalog, 20 harnesses x 8
//!   functions), `synthetic4` (its first 4 harnesses, the catalog of the live run), `mcp` (the MCP
//!   reference servers; skipped with a note when their variables are unset);
//! - `HPD_SESSION_COST_WORKLOADS`: `cycling`, `few` (see the workloads below);
//! - `HPD_SESSION_COST_SCRIPTS`: `every-turn`, `aware` (see the scripts below);
//! - `HPD_SESSION_COST_LAYOUTS`: `flat`, `hide`, `append`, `fixed`, `native-Anthropic`,
//!   `native-Responses`, `fixed+open`, `native-Anthropic+open`, `fixed+notes`,
//!   `fixed+notes+open` (include `flat`: it is the baseline of every "vs flat";
//!   `native-Responses` also gives its `(at end)` row). Every layout names its settings of
//!   opening ahead and container notes (both on by default): the plain ones have neither, and
//!   `fixed+notes+open` and `native-Anthropic+open` are what the default runs as on a client
//!   without deferred loading and with tool references;
//! - `HPD_SESSION_COST_MESSAGES`: `names`, `describes` (see the user messages below);
//! - `HPD_SESSION_COST_OPEN_AHEAD`: the score from which the `+open` layouts open a container
//!   ahead of the model (default [`DEFAULT_OPEN_AHEAD`]);
//! - `HPD_SESSION_COST_TURNS`: the session lengths (default `1,5,20,50`);
//! - `HPD_SESSION_COST_DUMP`: a folder to write each session's last request into, as the text
//!   whose tokens are counted (`<catalog>-<workload>-<script>-<message>-<layout>-<turns>.txt`),
//!   to see where a layout's tokens go.
//!
//! The `+notes` layouts are `fixed` with `container_notes` on: a response of container calls
//! only leaves a note in the user's turn (the containers' answers, a hint, the request again)
//! instead of the calls and their results; the script reads the turn from the `Turn {t}:` its
//! messages start with, so a note (which repeats the request) is not a turn of its own, and
//! finds the members' schema lines in the note as it finds them in an opening ahead.
//!
//! The `+open` layouts are `fixed` and native-Anthropic built with
//! `configure_harness_collapsing(|c| c.open_ahead = Some(threshold))`: before a turn's first
//! request the agent opens the containers that rank high enough against the user's message
//! (`fixed` adds their answers to the user's message; native-Anthropic adds the container calls
//! and results the model would have made). The model sees them as its base layout does: with the
//! opening in the request it knows the members' definitions and calls the member directly; a
//! container opened for another harness than the turn's costs tokens and nothing else (the
//! model opens the right one itself). After each table, one `opening ahead` line per `+open`
//! row counts the containers opened ahead, those of a harness the turn does not use, and the
//! container calls the model made itself.
//!
//! The user message of turn `t` (`HPD_SESSION_COST_MESSAGES`):
//! - `names`: `Turn {t}: please take care of the next item on my list; it needs {harness}.`,
//!   which names the harness (ranking it is trivial);
//! - `describes`: `Turn {t}: {description}`, the description of the member the turn calls
//!   first, which names no harness.
//!
//! Every turn of a session is one user message, the member calls of one harness (one call, two
//! on odd turns) and a text answer. The workloads choose the harness of each turn:
//! - `cycling`: harness `t mod H` at turn `t`, a different one each turn, so sessions longer
//!   than the catalog repeat harnesses (the worst case for the layouts that carry member
//!   definitions in the history);
//! - `few` (few of many): a session uses 3 harnesses of the catalog, drawn without replacement
//!   by a Zipf law over the catalog's order (weight `1/rank`), and each turn one of those 3, by
//!   the same law over the order they were drawn in. The draws come from a seeded generator, so
//!   every layout of a length gets the same calls, and a shorter session is the start of a
//!   longer one.
//!
//! The model is scripted and the agent is real: a relay around the model records every request
//! the agent sends, and the model answers each request from what that request holds. Before a
//! member call it needs the member's definition; the scripts differ in where they look for it:
//! - `every-turn`: opens the turn's container at the start of every turn, whatever the history
//!   holds;
//! - `aware` (has read the history): opens a container only when the request does not show the
//!   member's definition: in `fixed` its schema line (`{"name":"<member>",...`) in an earlier
//!   tool result, in native-Anthropic a `tool_reference` of an earlier result, in
//!   native-Responses an earlier `tool_search_output` that loaded it, in `hide` and `append` the
//!   member in the request's tool list.
//!
//! Both then call the member: in `fixed` through [`hpd_agent::config::CALL_TOOL`], in the native
//! layouts and in `hide` and `append` by its name (in native-Responses the container call is
//! the client-executed `tool_search` naming the namespace). A member call the runtime answers
//! with its recovery result (`<Harness> expanded. ... Call <member> again to run it.`) is made
//! again, and the table counts those calls. The flat layout makes the member calls only, with
//! either script. The native layouts are driven by the relay reporting the provider's form of
//! deferred loading (`ChatClient::deferred_tools`), since the real clients need the vendors'
//! hosts.
//!
//! Offline, a request is the `o200k_base` tokens of a canonical rendering of what enters the
//! model's context, in order: the tool list (OpenAI Chat `tools` JSON), the system text, each
//! message as its fields in JSON followed by its text as written (a call's arguments as the JSON
//! they are, not a JSON string: templates put both into the context unescaped). The cached part
//! is the longest common token prefix with the previous request of the session, as a cache with
//! one slot keeps it. The native layouts render as the vendors
//! document them:
//! - native-Anthropic: deferred tools are neither in the context nor in the prefix; each
//!   `tool_reference` of a tool result is replaced, where it sits, by the definition it names;
//! - native-Responses: the tool list holds each namespace's name and description and the
//!   `tool_search` tool; the definitions a `tool_search_output` loaded are injected after that
//!   output item, where the context ended when they loaded, and stay there, so the requests
//!   after it cache them like a tool result (the tool search guide: loaded tools are injected at
//!   the end of the context, a placement chosen to keep the cache). The table also prices the
//!   pessimistic reading from the same requests, as the row `native-Responses (at end)`: the
//!   loaded definitions at the end of every later request, where no request can cache them.
//!
//! Billed input cost is in units of the uncached input price: Anthropic's rule bills uncached
//! tokens as cache writes (1.25x) and cached reads at 0.1x; OpenAI's bills uncached at 1x and
//! cached at 0.1x. After each table the bench prints one `goals` line per row of `fixed` and the
//! native layouts.
//!
//! Live, every request of the cycling sessions of the `every-turn` script goes to the llama.cpp
//! server through `OpenAiClient` (the reply is discarded and the script's used, so each layout
//! sends the conversation it sends offline), and the figures are the server's own
//! `prompt_tokens` and `cached_tokens`. Each live session starts cold without restarting the
//! server (which other users may share): its system text begins with a number of its own, and
//! the chat template puts the system text first, so no earlier session's cached prompt matches
//! beyond the template's first tokens (`<|im_start|>system\n`).

mod catalog;

use std::sync::{Arc, Mutex};

use hpd_agent::chat::{ChatMessage, DeferredGroup, ToolDefinition, Usage};
use hpd_agent::providers::openai::OpenAiClient;
use hpd_agent::{
    AgentBuilder, ChatClient, ChatResponse, ToolCall, async_trait, chat::ChatError,
    chat::ChatRequest, chat::DeferredTools, chat::ModelOptions, chat::TextSink, config::CALL_TOOL,
    config::CollapsingLayout, config::DEFAULT_OPEN_AHEAD, harness::DynamicHarness,
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
    /// `fixed` with opening ahead ([`open_ahead_threshold`]).
    FixedOpen,
    /// native-Anthropic with opening ahead ([`open_ahead_threshold`]).
    NativeAnthropicOpen,
    /// `fixed` with container answers as notes.
    FixedNotes,
    /// `fixed` with container answers as notes and opening ahead ([`open_ahead_threshold`]):
    /// what the default (`native`) runs as on a client without deferred loading.
    FixedNotesOpen,
}

const LAYOUTS: [Layout; 10] = [
    Layout::Flat,
    Layout::Hide,
    Layout::Append,
    Layout::Fixed,
    Layout::NativeAnthropic,
    Layout::NativeResponses,
    Layout::FixedOpen,
    Layout::NativeAnthropicOpen,
    Layout::FixedNotes,
    Layout::FixedNotesOpen,
];

/// The score from which the `+open` layouts open a container ahead of the model:
/// `HPD_SESSION_COST_OPEN_AHEAD`, [`DEFAULT_OPEN_AHEAD`] when it is unset.
fn open_ahead_threshold() -> f64 {
    std::env::var("HPD_SESSION_COST_OPEN_AHEAD")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(DEFAULT_OPEN_AHEAD)
}

impl Layout {
    fn name(self) -> &'static str {
        match self {
            Layout::Flat => "flat",
            Layout::Hide => "hide",
            Layout::Append => "append",
            Layout::Fixed => "fixed",
            Layout::NativeAnthropic => "native-Anthropic",
            Layout::NativeResponses => "native-Responses",
            Layout::FixedOpen => "fixed+open",
            Layout::NativeAnthropicOpen => "native-Anthropic+open",
            Layout::FixedNotes => "fixed+notes",
            Layout::FixedNotesOpen => "fixed+notes+open",
        }
    }

    /// The layout the model sees: an `+open` or `+notes` layout is its layout with openings
    /// or notes in the history.
    fn base(self) -> Layout {
        match self {
            Layout::FixedOpen | Layout::FixedNotes | Layout::FixedNotesOpen => Layout::Fixed,
            Layout::NativeAnthropicOpen => Layout::NativeAnthropic,
            other => other,
        }
    }

    /// Whether the agent opens containers ahead of the model.
    fn opens_ahead(self) -> bool {
        matches!(
            self,
            Layout::FixedOpen | Layout::NativeAnthropicOpen | Layout::FixedNotesOpen
        )
    }

    /// Whether the layout's answers to a response of container calls go into a note.
    fn notes(self) -> bool {
        matches!(self, Layout::FixedNotes | Layout::FixedNotesOpen)
    }

    fn form(self) -> DeferredTools {
        match self {
            Layout::NativeAnthropic | Layout::NativeAnthropicOpen => DeferredTools::ToolReferences,
            Layout::NativeResponses => DeferredTools::ToolSearch,
            _ => DeferredTools::Unsupported,
        }
    }

    /// The agent of this layout: every setting of opening ahead and notes is named, so that
    /// no row depends on the defaults.
    fn configure(self, builder: AgentBuilder) -> AgentBuilder {
        let layout = match self.base() {
            Layout::Flat => return builder.without_harness_collapsing(),
            Layout::Hide => CollapsingLayout::Hide,
            Layout::Append => CollapsingLayout::Append,
            Layout::Fixed => CollapsingLayout::Fixed,
            _ => CollapsingLayout::Native,
        };
        let open_ahead = self.opens_ahead().then(open_ahead_threshold);
        let notes = self.notes();
        builder
            .with_collapsing_layout(layout)
            .configure_harness_collapsing(|c| {
                c.open_ahead = open_ahead;
                c.container_notes = notes;
            })
    }
}

/// How the scripted model decides to open a container (see the file's docs).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Script {
    /// Opens the turn's container at the start of every turn.
    EveryTurn,
    /// Opens a container only when the request does not show the member's definition.
    HistoryAware,
}

const SCRIPTS: [Script; 2] = [Script::EveryTurn, Script::HistoryAware];

impl Script {
    fn name(self) -> &'static str {
        match self {
            Script::EveryTurn => "every-turn",
            Script::HistoryAware => "aware",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Script::EveryTurn => "model opens the container every turn",
            Script::HistoryAware => "model has read the history",
        }
    }
}

/// What the user's message of a turn says (see the file's docs).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Message {
    /// Names the turn's harness.
    Names,
    /// The description of the member the turn calls first; no harness name.
    Describes,
}

const MESSAGES: [Message; 2] = [Message::Names, Message::Describes];

impl Message {
    fn name(self) -> &'static str {
        match self {
            Message::Names => "names",
            Message::Describes => "describes",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Message::Names => "user message names the harness",
            Message::Describes => {
                "user message is the called member's description (names no harness)"
            }
        }
    }

    fn text(self, t: usize, turn: &Turn) -> String {
        match self {
            Message::Names => format!(
                "Turn {t}: please take care of the next item on my list; it needs {}.",
                turn.harness
            ),
            Message::Describes => format!("Turn {t}: {}", turn.description),
        }
    }
}

/// Which harness each turn of a session uses (see the file's docs).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Workload {
    Cycling,
    FewOfMany,
}

const WORKLOADS: [Workload; 2] = [Workload::Cycling, Workload::FewOfMany];

impl Workload {
    fn name(self) -> &'static str {
        match self {
            Workload::Cycling => "cycling",
            Workload::FewOfMany => "few",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Workload::Cycling => "cycling workload (a different harness each turn)",
            Workload::FewOfMany => "few-of-many workload (3 harnesses drawn by a Zipf law)",
        }
    }

    fn plan(self, catalog: &Catalog, turns: usize) -> Vec<Turn> {
        match self {
            Workload::Cycling => cycling(catalog, turns),
            Workload::FewOfMany => few_of_many(catalog, turns),
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

/// What a session sent: every request, and how many member calls the model made again after
/// a recovery result.
struct Recorded {
    seen: Vec<Seen>,
    repeated: usize,
    openings: Openings,
}

/// The container calls of a session: those the agent made ahead of the model, and those the
/// model made itself.
#[derive(Clone, Copy, Default, Debug)]
struct Openings {
    /// Containers opened ahead of the model.
    ahead: usize,
    /// Of those, containers of a harness the turn does not use.
    wrong: usize,
    /// Turns where a container was opened ahead.
    turns_ahead: usize,
    /// Container calls the model made itself.
    by_model: usize,
}

/// Counts the container calls of a session's history: a call of a container whose id is not
/// one the scripted model makes (`t<turn>...`) was made ahead of the model, and so was every
/// container a user message names as opened (`fixed` opens ahead there).
fn openings(history: &[ChatMessage], harness_of: &[String], containers: &[String]) -> Openings {
    let mut counts = Openings::default();
    let mut turn: Option<usize> = None;
    for message in history {
        match message {
            ChatMessage::User { content } => {
                let t = turn_of(message).unwrap_or_else(|| turn.map_or(0, |t| t + 1));
                let opened = opened_in_note(content);
                if turn == Some(t) {
                    // A later user message of the turn: the note of the model's container
                    // calls (`container_notes`).
                    counts.by_model += opened.len();
                    continue;
                }
                turn = Some(t);
                counts.ahead += opened.len();
                counts.wrong += opened
                    .iter()
                    .filter(|name| harness_of.get(t).map(String::as_str) != Some(**name))
                    .count();
                if !opened.is_empty() {
                    counts.turns_ahead += 1;
                }
            }
            ChatMessage::Assistant { tool_calls, .. } => {
                let Some(t) = turn else { continue };
                let mut ahead_here = false;
                for made in tool_calls {
                    let is_container =
                        containers.contains(&made.name) || made.name == "tool_search";
                    if !is_container {
                        continue;
                    }
                    if made.id.starts_with(&format!("t{t}")) {
                        counts.by_model += 1;
                    } else {
                        counts.ahead += 1;
                        ahead_here = true;
                        if harness_of.get(t) != Some(&made.name) {
                            counts.wrong += 1;
                        }
                    }
                }
                if ahead_here {
                    counts.turns_ahead += 1;
                }
            }
            _ => {}
        }
    }
    counts
}

/// The turn a user message belongs to: the number after the last `Turn ` of its text (a note
/// of container answers repeats the turn's message at its end).
fn turn_of(message: &ChatMessage) -> Option<usize> {
    let ChatMessage::User { content } = message else {
        return None;
    };
    let (_, rest) = content.rsplit_once("Turn ")?;
    rest.split_once(':')?.0.parse().ok()
}

/// The containers `fixed` opened ahead in a user message: the names after the agent's note.
fn opened_in_note(content: &str) -> Vec<&str> {
    const NOTE: &str = "Opened for this message, so there is no need to call them: ";
    content
        .split_once(NOTE)
        .and_then(|(_, rest)| rest.split_once(".\n\n"))
        .map(|(names, _)| names.split(", ").collect())
        .unwrap_or_default()
}

/// Answers each request from the model and records it; reports `form` as its deferred
/// loading; with `live`, sends each request to the real server first.
struct Relay {
    model: Model,
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
        let mut reply = self.model.reply(&request)?;
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
    /// Each member's description, by member name.
    descriptions: std::collections::HashMap<String, String>,
}

impl Catalog {
    /// A turn of `harness` making `calls`.
    fn turn(&self, harness: &str, calls: Vec<(String, Value)>) -> Turn {
        let description = calls
            .first()
            .and_then(|(member, _)| self.descriptions.get(member))
            .cloned()
            .unwrap_or_default();
        Turn {
            harness: harness.to_owned(),
            calls,
            description,
        }
    }
}

/// One turn's plan: the harness, the member calls, the description of the first member called.
struct Turn {
    harness: String,
    calls: Vec<(String, Value)>,
    description: String,
}

/// The cycling workload: harness `t mod H` at turn `t`, one member call (two on odd turns),
/// each round through the catalog calling the next members of each harness.
fn cycling(catalog: &Catalog, turns: usize) -> Vec<Turn> {
    (0..turns)
        .map(|t| {
            let harness = &catalog.harnesses[t % catalog.harnesses.len()];
            let count = 1 + t % 2;
            let round = t / catalog.harnesses.len();
            let calls = (0..count)
                .map(|k| harness.calls[(round * 2 + k) % harness.calls.len()].clone())
                .collect();
            catalog.turn(&harness.name, calls)
        })
        .collect()
}

/// How many harnesses of the catalog a few-of-many session uses.
const FEW: usize = 3;

/// The seed of the few-of-many draws.
const FEW_OF_MANY_SEED: u64 = 31;

/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014).
/// Written here because hpd-agent-tests has no random-number crate among its dependencies, and
/// a plan needs a few seeded draws, not a statistical-quality generator.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `[0, 1)`, from the generator's top 53 bits.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// One of `ranks` (0-based ranks, each at most once in the slice), drawn by a Zipf law:
    /// rank `r` with a weight of `1 / (r + 1)`. Returns the position in `ranks`.
    fn zipf(&mut self, ranks: &[usize]) -> usize {
        let weights: Vec<f64> = ranks.iter().map(|&r| 1.0 / (r + 1) as f64).collect();
        let mut left = self.unit() * weights.iter().sum::<f64>();
        for (at, weight) in weights.iter().enumerate() {
            if left < *weight {
                return at;
            }
            left -= weight;
        }
        weights.len() - 1
    }
}

/// The few-of-many workload: [`FEW`] harnesses drawn without replacement by a Zipf law over the
/// catalog's order, then for each turn one of them by a Zipf law over the order they were drawn
/// in, with one member call (two on odd turns), each harness calling its members in turn.
fn few_of_many(catalog: &Catalog, turns: usize) -> Vec<Turn> {
    let mut rng = SplitMix64(FEW_OF_MANY_SEED);
    let mut pool: Vec<usize> = (0..catalog.harnesses.len()).collect();
    let mut used = Vec::new();
    while used.len() < FEW && !pool.is_empty() {
        let at = rng.zipf(&pool);
        used.push(pool.remove(at));
    }
    let order: Vec<usize> = (0..used.len()).collect();
    let mut next_call = vec![0; catalog.harnesses.len()];
    (0..turns)
        .map(|t| {
            let h = used[rng.zipf(&order)];
            let harness = &catalog.harnesses[h];
            let calls = (0..1 + t % 2)
                .map(|_| {
                    let call = harness.calls[next_call[h] % harness.calls.len()].clone();
                    next_call[h] += 1;
                    call
                })
                .collect();
            catalog.turn(&harness.name, calls)
        })
        .collect()
}

fn call(id: String, name: &str, arguments: &Value) -> ChatResponse {
    ChatResponse::tool_calls(vec![ToolCall::new(id, name, arguments.to_string())])
}

/// The scripted model: it answers a request from the turn's plan and what the request holds.
struct Model {
    /// The layout the model sees (an `+open` layout's [`Layout::base`]).
    layout: Layout,
    script: Script,
    turns: Vec<Turn>,
    /// The containers of the catalog: one the agent opened ahead for another harness than the
    /// turn's is skipped (it only costs tokens).
    containers: Vec<String>,
    /// Member calls made again after a recovery result.
    repeated: Arc<std::sync::atomic::AtomicUsize>,
}

impl Model {
    /// The reply to a request: the turn is the number of user messages, and what the turn did
    /// so far is what follows the last one. The next member call that has not run goes out when
    /// the model knows the member's definition; otherwise the container call; once every call
    /// ran, the text answer.
    fn reply(&self, request: &ChatRequest<'_>) -> Result<ChatResponse, ChatError> {
        let messages = request.messages;
        // The turn is the number its user message gives; a note of container answers, a user
        // message of its own, repeats the turn's message at its end.
        let t = messages
            .iter()
            .rev()
            .find_map(turn_of)
            .ok_or_else(|| ChatError::Config("a request without a user message".into()))?;
        let start = messages
            .iter()
            .position(|m| turn_of(m) == Some(t))
            .ok_or_else(|| ChatError::Config(format!("no user message of turn {t}")))?;
        let turn = self
            .turns
            .get(t)
            .ok_or_else(|| ChatError::Config(format!("the plan has no turn {t}")))?;
        let this_turn = &messages[start + 1..];
        // Each member call of the turn, in order, has run unless its result is the recovery
        // answer, which starts as a container's result does.
        let recovery = format!("{} expanded.", turn.harness);
        let result_of = |id: &str| {
            this_turn.iter().find_map(|m| match m {
                ChatMessage::Tool {
                    call_id, content, ..
                } if call_id == id => Some(content.as_str()),
                _ => None,
            })
        };
        // `fixed` opens ahead in the turn's user message, and with notes answers a container
        // call in a user message after it.
        let mut opened = messages[start..].iter().any(|m| {
            matches!(m, ChatMessage::User { content }
                if opened_in_note(content).iter().any(|name| *name == turn.harness))
        });
        let (mut ran, mut retries) = (0, 0);
        for message in this_turn {
            let ChatMessage::Assistant { tool_calls, .. } = message else {
                continue;
            };
            for made in tool_calls {
                if self.is_container_call(made, &turn.harness) {
                    opened = true;
                } else if self.containers.contains(&made.name) {
                    // Another harness's container, opened ahead of the model: not a member call.
                } else if result_of(&made.id).is_some_and(|r| r.starts_with(&recovery)) {
                    retries += 1;
                } else {
                    ran += 1;
                    retries = 0;
                }
            }
        }
        let Some((member, arguments)) = turn.calls.get(ran) else {
            return Ok(ChatResponse::text(format!(
                "Done: the {} step of turn {t} went through; the result is above.",
                turn.harness
            )));
        };
        let known = match self.script {
            Script::EveryTurn => opened || self.layout == Layout::Flat,
            Script::HistoryAware => self.knows(request, member),
        };
        if !known {
            if opened {
                return Err(ChatError::Config(format!(
                    "turn {t}: {} was opened and {member} is still not loaded",
                    turn.harness
                )));
            }
            return Ok(match self.layout {
                Layout::NativeResponses => call(
                    format!("t{t}s"),
                    "tool_search",
                    &json!({"namespace": turn.harness}),
                ),
                _ => call(format!("t{t}c"), &turn.harness, &json!({})),
            });
        }
        let id = match retries {
            0 => format!("t{t}m{ran}"),
            1 => {
                self.repeated
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                format!("t{t}m{ran}r")
            }
            _ => {
                return Err(ChatError::Config(format!(
                    "turn {t}: {member} got a recovery result twice"
                )));
            }
        };
        Ok(match self.layout {
            Layout::Fixed => call(
                id,
                CALL_TOOL,
                &json!({"name": member, "arguments": arguments}),
            ),
            _ => call(id, member, arguments),
        })
    }

    /// Whether `made` is the call that opens the container of `harness`.
    fn is_container_call(&self, made: &ToolCall, harness: &str) -> bool {
        match self.layout {
            Layout::NativeResponses => made.name == "tool_search",
            _ => made.name == harness,
        }
    }

    /// Whether the request shows the definition of `member` (the history-aware script).
    fn knows(&self, request: &ChatRequest<'_>, member: &str) -> bool {
        let no_references: &[String] = &[];
        // A user message holds the schemas `fixed` opened ahead.
        let results = || {
            request.messages.iter().filter_map(move |m| match m {
                ChatMessage::Tool {
                    content,
                    references,
                    ..
                } => Some((content, references.as_slice())),
                ChatMessage::User { content } => Some((content, no_references)),
                _ => None,
            })
        };
        match self.layout.base() {
            Layout::Flat | Layout::Hide | Layout::Append => {
                request.tools.iter().any(|t| t.name == member)
            }
            Layout::Fixed | Layout::FixedOpen | Layout::FixedNotes | Layout::FixedNotesOpen => {
                let line = format!("{{\"name\":{},", Value::String(member.to_owned()));
                results().any(|(content, _)| content.lines().any(|l| l.starts_with(&line)))
            }
            Layout::NativeAnthropic | Layout::NativeAnthropicOpen | Layout::NativeResponses => {
                results().any(|(_, references)| references.iter().any(|r| r == member))
            }
        }
    }
}

/// A number no other live session of any run used: the time in microseconds.
fn session_number() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros())
}

/// What one session runs: the layout, the workload, the script and the number of turns.
#[derive(Clone, Copy)]
struct Setup {
    layout: Layout,
    workload: Workload,
    script: Script,
    message: Message,
    turns: usize,
}

/// Runs one session and returns every request it sent.
fn session(
    catalog: &Catalog,
    setup: Setup,
    live: Option<OpenAiClient>,
    runtime: &tokio::runtime::Runtime,
) -> Result<Recorded, String> {
    let turns = setup.workload.plan(catalog, setup.turns);
    let messages: Vec<String> = turns
        .iter()
        .enumerate()
        .map(|(t, turn)| setup.message.text(t, turn))
        .collect();
    let harness_of: Vec<String> = turns.iter().map(|t| t.harness.clone()).collect();
    let containers: Vec<String> = catalog.harnesses.iter().map(|h| h.name.clone()).collect();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let repeated = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen_live = live.is_some();
    let relay = Relay {
        model: Model {
            layout: setup.layout.base(),
            script: setup.script,
            turns,
            containers: containers.clone(),
            repeated: Arc::clone(&repeated),
        },
        seen: Arc::clone(&seen),
        form: setup.layout.form(),
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
    let agent = setup
        .layout
        .configure(builder)
        .build()
        .map_err(|e| e.to_string())?;
    let mut session = agent.session();
    runtime.block_on(async {
        for (t, message) in messages.into_iter().enumerate() {
            session
                .run(message)
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
    Ok(Recorded {
        seen: std::mem::take(&mut *seen.lock().expect("record")),
        repeated: repeated.load(std::sync::atomic::Ordering::Relaxed),
        openings: openings(session.history(), &harness_of, &containers),
    })
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

/// Where native-Responses puts the definitions a `tool_search_output` loaded.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Injection {
    /// Right after the output item, where the context ended when they loaded; later requests
    /// keep them there, so they enter the cached prefix like a tool result (the reading the
    /// tool search guide gives: the placement is chosen to keep the cache).
    InPlace,
    /// At the end of every later request, after the newest message, so no request caches them
    /// (the pessimistic reading).
    AtEnd,
}

/// The namespaces of a Responses context with the tools loaded into them: each is its name,
/// its description with the note of the output that loaded it, and the functions.
fn namespaces_json(loaded: &[(&DeferredGroup, String, Vec<&ToolDefinition>)]) -> String {
    let namespaces: Vec<Value> = loaded
        .iter()
        .map(|(group, note, tools)| {
            json!({"type": "namespace", "name": group.name,
                   "description": format!("{}\n\n{note}", group.description),
                   "tools": tools.iter().map(|t| function_json(t)).collect::<Vec<_>>()})
        })
        .collect();
    Value::Array(namespaces).to_string()
}

/// Adds the definitions `references` name to `loaded`, by namespace in load order, each once.
fn load<'a>(
    loaded: &mut Vec<(&'a DeferredGroup, String, Vec<&'a ToolDefinition>)>,
    seen: &'a Seen,
    references: &[String],
    note: &str,
) {
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
            None => loaded.push((group, note.to_owned(), vec![tool])),
        }
    }
}

/// The whole context of a request as text, in the order providers cache it; `injection` says
/// where native-Responses puts loaded definitions (the other layouts ignore it).
fn context_text(layout: Layout, injection: Injection, seen: &Seen) -> String {
    let mut text = tools_text(layout, seen);
    text.push('\n');
    text.push_str(&seen.instructions);
    // native-Responses injected at the end: the namespaces loaded so far, in load order.
    let mut at_end: Vec<(&DeferredGroup, String, Vec<&ToolDefinition>)> = Vec::new();
    for message in &seen.messages {
        text.push('\n');
        match message {
            ChatMessage::Tool {
                call_id,
                content,
                references,
                ..
            } if !references.is_empty() && layout.base() == Layout::NativeAnthropic => {
                // Each reference is expanded into its definition where it sits.
                let definitions: Vec<Value> = references
                    .iter()
                    .filter_map(|r| referenced(seen, r))
                    .map(|(_, t)| function_json(t))
                    .collect();
                text.push_str(
                    &json!({"role": "tool", "call_id": call_id, "tools": definitions}).to_string(),
                );
                text.push('\n');
                text.push_str(content);
            }
            ChatMessage::Tool {
                call_id,
                content,
                references,
                ..
            } if !references.is_empty() && layout == Layout::NativeResponses => {
                // In place, the output item; its definitions after it or at the end.
                text.push_str(
                    &json!({"type": "tool_search_output", "call_id": call_id}).to_string(),
                );
                match injection {
                    Injection::InPlace => {
                        let mut here = Vec::new();
                        load(&mut here, seen, references, content);
                        text.push('\n');
                        text.push_str(&namespaces_json(&here));
                    }
                    Injection::AtEnd => load(&mut at_end, seen, references, content),
                }
            }
            other => text.push_str(&message_text(other)),
        }
    }
    if !at_end.is_empty() {
        text.push('\n');
        text.push_str(&namespaces_json(&at_end));
    }
    text
}

/// A message as it enters the context: its fields as JSON (a call's arguments as the JSON they
/// are), then its text as written. The vendors' templates put a message's text and a call's
/// arguments into the context as they are; inside a JSON string every quote, backslash and line
/// break would count an escape, which weighs most on results that hold JSON (a `fixed`
/// container's schema lines, an MCP server's JSON results) and on `fixed`'s nested calls.
fn message_text(message: &ChatMessage) -> String {
    let mut value = serde_json::to_value(message).expect("message JSON");
    let mut content = None;
    if let Some(fields) = value.as_object_mut() {
        if let Some(Value::String(text)) = fields.remove("content") {
            content = Some(text);
        }
        if let Some(Value::Array(calls)) = fields.get_mut("tool_calls") {
            for call in calls {
                if let Some(arguments) = call.get_mut("arguments")
                    && let Some(parsed) = arguments
                        .as_str()
                        .and_then(|raw| serde_json::from_str::<Value>(raw).ok())
                {
                    *arguments = parsed;
                }
            }
        }
    }
    let mut text = value.to_string();
    if let Some(content) = content {
        text.push('\n');
        text.push_str(&content);
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
    /// Member calls made again after a recovery result.
    repeated: usize,
    /// Per request: tokens, cached tokens.
    sizes: Vec<u64>,
    cached: Vec<u64>,
    /// Tool tokens of the first request (offline only).
    first_tools: Option<usize>,
    /// The session's container calls.
    openings: Openings,
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

fn offline_figures(layout: Layout, injection: Injection, recorded: &Recorded) -> Figures {
    let seen = &recorded.seen;
    let tokens: Vec<Vec<u32>> = seen
        .iter()
        .map(|s| catalog::tokens(&context_text(layout, injection, s)))
        .collect();
    let mut cached = vec![0];
    cached.extend(
        tokens
            .windows(2)
            .map(|w| common_prefix(&w[0], &w[1]) as u64),
    );
    Figures {
        requests: seen.len(),
        repeated: recorded.repeated,
        sizes: tokens.iter().map(|t| t.len() as u64).collect(),
        cached,
        first_tools: seen
            .first()
            .map(|s| catalog::tokens(&tools_text(layout, s)).len()),
        openings: recorded.openings,
    }
}

fn live_figures(recorded: &Recorded) -> Figures {
    let usage: Vec<Usage> = recorded.seen.iter().filter_map(|s| s.usage).collect();
    Figures {
        requests: recorded.seen.len(),
        repeated: recorded.repeated,
        sizes: usage.iter().map(|u| u.input_tokens).collect(),
        cached: usage.iter().map(|u| u.cached_input_tokens).collect(),
        first_tools: None,
        openings: recorded.openings,
    }
}

fn verdict(ok: bool) -> &'static str {
    if ok { "met" } else { "NOT met" }
}

/// One row of a table: a layout (with the pessimistic rendering of native-Responses as a row
/// of its own), a length, and the session's figures or why it failed.
struct Row {
    label: &'static str,
    layout: Layout,
    turns: usize,
    figures: Result<Figures, String>,
}

/// The label of the pessimistic native-Responses row (see [`Injection::AtEnd`]).
const AT_END: &str = "native-Responses (at end)";

/// The bound on billed input against flat that a table's goal sets at a length, if any: the
/// history-aware model on the cycling workload at most 1.05x flat from 20 turns on, and on the
/// few-of-many workload at most 0.5x flat at every length.
fn cost_bound(workload: Workload, script: Script, turns: usize) -> Option<f64> {
    match (workload, script) {
        (Workload::Cycling, Script::HistoryAware) if turns >= 20 => Some(1.05),
        (Workload::FewOfMany, Script::HistoryAware) => Some(0.5),
        _ => None,
    }
}

/// Prints the table of one catalog, workload and script and, offline, the goal lines of
/// `fixed` and the native layouts.
fn report(label: &str, catalog: &str, rows: &[Row], goals: Option<(Workload, Script, Message)>) {
    println!("\n{label}");
    println!(
        "| layout | turns | requests | vs flat | made again | input tokens | last request | cached | cached share | lowest kept (request) | Anthropic rule | vs flat | OpenAI rule | vs flat |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let flat = |turns: usize| {
        rows.iter()
            .find(|r| r.layout == Layout::Flat && r.turns == turns)
            .and_then(|r| r.figures.as_ref().ok())
    };
    for row in rows {
        let (label, turns) = (row.label, row.turns);
        let figures = match &row.figures {
            Ok(figures) => figures,
            Err(why) => {
                println!("| {label} | {turns} | failed: {why} |");
                continue;
            }
        };
        let base = flat(turns);
        let ratio = |value: f64, of: &dyn Fn(&Figures) -> f64| match base {
            Some(base) => format!("{:.3}", value / of(base)),
            None => "-".to_owned(),
        };
        let lowest = match figures.lowest_kept() {
            Some((share, at)) => format!("{:.1}% ({at})", share * 100.0),
            None => "-".to_owned(),
        };
        println!(
            "| {label} | {turns} | {} | {} | {} | {} | {} | {} | {:.1}% | {lowest} | {:.0} | {} | {:.0} | {} |",
            figures.requests,
            ratio(figures.requests as f64, &|f| f.requests as f64),
            figures.repeated,
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
    let Some((workload, script, message)) = goals else {
        return;
    };
    for row in rows {
        if let (true, Ok(figures)) = (row.layout.opens_ahead(), &row.figures) {
            let o = figures.openings;
            println!(
                "opening ahead {} {} {} {} {} {} turns: {} containers opened ahead in {} turns, {} of a harness the turn does not use; {} container calls by the model",
                workload.name(),
                script.name(),
                message.name(),
                catalog,
                row.label,
                row.turns,
                o.ahead,
                o.turns_ahead,
                o.wrong,
                o.by_model,
            );
        }
    }
    for row in rows {
        if row.layout.base() == Layout::Flat || matches!(row.layout, Layout::Hide | Layout::Append)
        {
            continue;
        }
        let (Ok(figures), Some(base)) = (&row.figures, flat(row.turns)) else {
            continue;
        };
        let kept = figures.lowest_kept();
        let a = figures.anthropic() / base.anthropic();
        let o = figures.openai() / base.openai();
        let tools = figures.first_tools.unwrap_or(0) as f64;
        let flat_tools = base.first_tools.unwrap_or(1) as f64;
        let fewer = 1.0 - tools / flat_tools;
        let cost = match cost_bound(workload, script, row.turns) {
            Some(bound) => format!(
                "<= {bound}x flat: {} (Anthropic {a:.3}, OpenAI {o:.3})",
                verdict(a <= bound && o <= bound)
            ),
            None => format!("no bound (Anthropic {a:.3}, OpenAI {o:.3})"),
        };
        println!(
            "goals {} {} {} {} {} {} turns: >= 99% kept: {}{}; cost {cost}; >= 92% fewer first-request tool tokens: {} ({:.1}% fewer, {tools} vs {flat_tools})",
            workload.name(),
            script.name(),
            message.name(),
            catalog,
            row.label,
            row.turns,
            match kept {
                Some((share, _)) => verdict(share >= 0.99),
                None => "met (one request)",
            },
            match kept {
                Some((share, at)) => format!(" (lowest {:.2}% at request {at})", share * 100.0),
                None => String::new(),
            },
            verdict(fewer >= 0.92),
            fewer * 100.0,
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
        // One turn without member calls: the model answers with text.
        model: Model {
            layout: Layout::NativeAnthropic,
            script: Script::EveryTurn,
            turns: vec![Turn {
                harness: "probe".to_owned(),
                calls: Vec::new(),
                description: String::new(),
            }],
            containers: Vec::new(),
            repeated: Arc::default(),
        },
        seen: Arc::clone(&seen),
        form: DeferredTools::ToolReferences,
        live: None,
    };
    let agent = register(AgentBuilder::new())
        .with_collapsing_layout(CollapsingLayout::Native)
        .configure_harness_collapsing(|c| c.open_ahead = None)
        .with_chat_client(relay)
        .build()
        .expect("agent builds");
    runtime
        .block_on(agent.run("Turn 0: list"))
        .expect("probe runs");
    let seen = seen.lock().expect("record");
    seen[0].deferred.clone()
}

fn synthetic(count: usize, runtime: &tokio::runtime::Runtime) -> Catalog {
    let register = move |b: AgentBuilder| {
        catalog::synthetic::REGISTER[..count]
            .iter()
            .fold(b, |b, register| register(b))
    };
    let groups = groups(&register, runtime);
    let descriptions = descriptions(&groups);
    let harnesses = groups
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
        descriptions,
    }
}

/// Each member's description, by member name.
fn descriptions(groups: &[DeferredGroup]) -> std::collections::HashMap<String, String> {
    groups
        .iter()
        .flat_map(|g| g.tools.iter())
        .map(|t| (t.name.clone(), t.description.clone()))
        .collect()
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

fn mcp(
    harnesses: Vec<DynamicHarness>,
    scratch: &std::path::Path,
    runtime: &tokio::runtime::Runtime,
) -> Catalog {
    let names: Vec<String> = harnesses.iter().map(|h| h.name().to_owned()).collect();
    let repo = scratch.join("repo");
    let register = move |b: AgentBuilder| catalog::register_mcp(b, &harnesses);
    let descriptions = descriptions(&groups(&register, runtime));
    Catalog {
        register: Box::new(register),
        descriptions,
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
    setup: Setup,
    live: Option<OpenAiClient>,
    runtime: &tokio::runtime::Runtime,
) -> Result<Recorded, String> {
    let catalog = make()?;
    let recorded = session(&catalog, setup, live, runtime);
    runtime.block_on(async move { drop(catalog) });
    recorded
}

/// A catalog of the offline run: its table label, its short name in the goal lines and in
/// `HPD_SESSION_COST_CATALOGS`.
struct Offline<'a> {
    label: &'a str,
    name: &'a str,
    make: Make<'a>,
}

/// The offline table of one catalog, workload and script: every layout at every length.
fn offline(
    catalog: &Offline<'_>,
    (workload, script, message): (Workload, Script, Message),
    layouts: &[Layout],
    lengths: &[usize],
    runtime: &tokio::runtime::Runtime,
) {
    let mut rows = Vec::new();
    for &turns in lengths {
        for &layout in layouts {
            eprintln!(
                "session_cost: {} {} {} {} {} {turns} turns",
                catalog.name,
                workload.name(),
                script.name(),
                message.name(),
                layout.name()
            );
            let setup = Setup {
                layout,
                workload,
                script,
                message,
                turns,
            };
            let recorded = fresh_session(catalog.make, setup, None, runtime);
            if layout == Layout::NativeResponses {
                // The pessimistic reading, priced from the same requests.
                let at_end = match &recorded {
                    Ok(r) => Ok(offline_figures(layout, Injection::AtEnd, r)),
                    Err(why) => Err(why.clone()),
                };
                rows.push(Row {
                    label: layout.name(),
                    layout,
                    turns,
                    figures: recorded.map(|r| offline_figures(layout, Injection::InPlace, &r)),
                });
                rows.push(Row {
                    label: AT_END,
                    layout,
                    turns,
                    figures: at_end,
                });
                continue;
            }
            if let (Ok(dir), Ok(recorded)) = (std::env::var("HPD_SESSION_COST_DUMP"), &recorded)
                && let Some(last) = recorded.seen.last()
            {
                let path = format!(
                    "{dir}/{}-{}-{}-{}-{}-{turns}.txt",
                    catalog.name,
                    workload.name(),
                    script.name(),
                    message.name(),
                    layout.name()
                );
                if let Err(why) =
                    std::fs::write(&path, context_text(layout, Injection::InPlace, last))
                {
                    eprintln!("session_cost: {path} not written: {why}");
                }
            }
            rows.push(Row {
                label: layout.name(),
                layout,
                turns,
                figures: recorded.map(|r| offline_figures(layout, Injection::InPlace, &r)),
            });
        }
    }
    let threshold = if layouts.iter().any(|l| l.opens_ahead()) {
        format!(
            ", +open: open ahead from a score of {}",
            open_ahead_threshold()
        )
    } else {
        String::new()
    };
    report(
        &format!(
            "offline, {}, {}, {}, {}{threshold}, o200k_base tokens",
            catalog.label,
            workload.describe(),
            script.describe(),
            message.describe(),
        ),
        catalog.name,
        &rows,
        Some((workload, script, message)),
    );
    if workload == Workload::FewOfMany
        && let Some(&longest) = lengths.iter().max()
    {
        match (catalog.make)() {
            Ok(made) => {
                println!(
                    "harnesses of the {longest}-turn session (a shorter one is its start): {}",
                    harness_turns(&workload.plan(&made, longest))
                );
                runtime.block_on(async move { drop(made) });
            }
            Err(why) => println!("harnesses of the sessions not listed: {why}"),
        }
    }
}

/// The harnesses a plan uses, in order of first use, each with its number of turns.
fn harness_turns(turns: &[Turn]) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for turn in turns {
        match counts.iter_mut().find(|(name, _)| *name == turn.harness) {
            Some((_, count)) => *count += 1,
            None => counts.push((&turn.harness, 1)),
        }
    }
    counts
        .iter()
        .map(|(name, count)| match count {
            1 => format!("{name} (1 turn)"),
            _ => format!("{name} ({count} turns)"),
        })
        .collect::<Vec<_>>()
        .join(", ")
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
            let setup = Setup {
                layout,
                workload: Workload::Cycling,
                script: Script::EveryTurn,
                message: Message::Names,
                turns,
            };
            let figures =
                fresh_session(make, setup, Some(client), runtime).map(|r| live_figures(&r));
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
            rows.push(Row {
                label: layout.name(),
                layout,
                turns,
                figures,
            });
        }
    }
    report(
        &format!(
            "live, llama.cpp at {url}, {label}; the server's prompt tokens and cached prompt tokens"
        ),
        "synthetic4",
        &rows,
        None,
    );
}

/// The comma-separated values of an environment variable, or `None` when it is unset or
/// names nothing.
fn listed(variable: &str) -> Option<Vec<String>> {
    let value = std::env::var(variable).ok()?;
    let values: Vec<String> = value
        .split(',')
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
        .collect();
    (!values.is_empty()).then_some(values)
}

/// The items whose name `variable` lists, all of them when it is unset.
fn selected<T: Copy>(variable: &str, all: &[T], name: impl Fn(T) -> &'static str) -> Vec<T> {
    match listed(variable) {
        Some(names) => all
            .iter()
            .copied()
            .filter(|&item| names.iter().any(|n| n == name(item)))
            .collect(),
        None => all.to_vec(),
    }
}

/// Session lengths from `variable` (comma-separated numbers), `default` when it is unset.
fn lengths(variable: &str, default: &[usize]) -> Vec<usize> {
    listed(variable)
        .map(|values| values.iter().filter_map(|n| n.parse().ok()).collect())
        .filter(|l: &Vec<usize>| !l.is_empty())
        .unwrap_or_else(|| default.to_vec())
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
        let catalogs = listed("HPD_SESSION_COST_CATALOGS");
        let wanted = |name: &str| {
            catalogs
                .as_ref()
                .is_none_or(|c| c.iter().any(|n| n == name))
        };
        let workloads = selected("HPD_SESSION_COST_WORKLOADS", &WORKLOADS, Workload::name);
        let scripts = selected("HPD_SESSION_COST_SCRIPTS", &SCRIPTS, Script::name);
        let layouts = selected("HPD_SESSION_COST_LAYOUTS", &LAYOUTS, Layout::name);
        let messages = selected("HPD_SESSION_COST_MESSAGES", &MESSAGES, Message::name);
        let turns = lengths("HPD_SESSION_COST_TURNS", &LENGTHS);
        let run = |catalog: &Offline<'_>| {
            for &workload in &workloads {
                for &script in &scripts {
                    for &message in &messages {
                        offline(
                            catalog,
                            (workload, script, message),
                            &layouts,
                            &turns,
                            &runtime,
                        );
                    }
                }
            }
        };
        let synthetic20 = synthetic_of(20);
        if wanted("synthetic20") {
            run(&Offline {
                label: "synthetic catalog, 20 harnesses x 8 functions",
                name: "synthetic20",
                make: &synthetic20,
            });
        }
        let synthetic4 = synthetic_of(4);
        if wanted("synthetic4") {
            run(&Offline {
                label: "synthetic catalog, first 4 harnesses x 8 functions",
                name: "synthetic4",
                make: &synthetic4,
            });
        }
        if wanted("mcp") {
            let scratch = scratch();
            let make_mcp = || {
                let harnesses = runtime.block_on(catalog::mcp_catalog(scratch.path()))?;
                Ok(mcp(harnesses, scratch.path(), &runtime))
            };
            match make_mcp() {
                Ok(probe) => {
                    runtime.block_on(async move { drop(probe) });
                    run(&Offline {
                        label: "MCP reference servers, 6 harnesses, 51 functions",
                        name: "mcp",
                        make: &make_mcp,
                    });
                }
                Err(why) => println!("\nMCP catalog skipped: {why}"),
            }
        }
    }
    match std::env::var("HPD_LLAMA_URL") {
        Ok(url) => {
            let url = url.trim().trim_end_matches('/').to_owned();
            // The server's context is 8192 tokens of its own tokenizer: the flat list of the
            // first 4 harnesses fits, with sessions of up to 5 turns.
            // HPD_SESSION_COST_LIVE_TURNS: the lengths to run live, e.g. `1` (default `1,5`).
            let lengths = lengths("HPD_SESSION_COST_LIVE_TURNS", &[1, 5]);
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
