//! The agent loop without the model, and the memory of idle sessions.
//!
//! - A 5-iteration turn (4 iterations that call `add`, one that answers) against a model that
//!   answers from the request at almost no cost (it reads how many tool results follow the last
//!   user message; it records nothing); the figure per iteration is the turn's time / 5.
//! - 10,000 idle sessions of one agent: the resident memory they add (from `/proc/self/statm`,
//!   Linux only), per session, next to `size_of::<Session>()`; then 10,000 sessions after one
//!   turn each (user message, a call of `add`, its result, the answer), with the bytes the
//!   history's own values hold (message slots, string and list capacities) subtracted.
//!
//! ```sh
//! cargo bench -p hpd-agent-tests --bench loop_memory
//! ```

use std::hint::black_box;
use std::time::{Duration, Instant};

use hpd_agent::{
    Agent, AgentBuilder, ChatClient, ChatMessage, ChatResponse, Session, ToolCall, async_trait,
    chat::ChatError, chat::ChatRequest, chat::Reasoning, chat::TextSink,
};

/// `add` alone.
#[derive(Debug, Default)]
pub struct Adder;

#[hpd_agent::tool_harness]
impl Adder {
    /// Adds two integers.
    #[hpd_agent::ai_function]
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

/// Calls `add` until `.0` results follow the last user message, then answers.
struct Replay(usize);

#[async_trait]
impl ChatClient for Replay {
    async fn complete(
        &self,
        request: ChatRequest<'_>,
        _text: TextSink<'_>,
    ) -> Result<ChatResponse, ChatError> {
        let results = request
            .messages
            .iter()
            .rev()
            .take_while(|m| !matches!(m, ChatMessage::User { .. }))
            .filter(|m| matches!(m, ChatMessage::Tool { .. }))
            .count();
        Ok(if results < self.0 {
            ChatResponse::tool_calls(vec![ToolCall::new(
                format!("c{results}"),
                "add",
                r#"{"a": 2, "b": 3}"#,
            )])
        } else {
            ChatResponse::text("5")
        })
    }
}

/// An agent whose model calls `add` `calls` times per turn, then answers.
fn adder_agent(calls: usize) -> Agent {
    AgentBuilder::new()
        .with_instructions("Base.")
        .with_tool_harness::<Adder>()
        .with_chat_client(Replay(calls))
        .build()
        .expect("agent")
}

/// The heap bytes a history's own values hold: the message slots (`len` of them; spare
/// capacity of the history's buffer is not counted, so it shows as overhead) and the capacity
/// of every string and tool-call list in them. Allocator bookkeeping is not counted either.
fn history_bytes(history: &[ChatMessage]) -> usize {
    let calls = |calls: &[ToolCall]| {
        calls
            .iter()
            .map(|c| c.id.capacity() + c.name.capacity() + c.arguments.capacity())
            .sum::<usize>()
    };
    std::mem::size_of_val(history)
        + history
            .iter()
            .map(|m| match m {
                ChatMessage::User { content } => content.capacity(),
                ChatMessage::Assistant {
                    content,
                    tool_calls,
                    reasoning,
                } => {
                    content.as_ref().map_or(0, String::capacity)
                        + tool_calls.capacity() * std::mem::size_of::<ToolCall>()
                        + calls(tool_calls)
                        + reasoning.capacity() * std::mem::size_of::<Reasoning>()
                        + reasoning
                            .iter()
                            .map(|r| {
                                r.text.capacity()
                                    + r.signature.as_ref().map_or(0, String::capacity)
                                    + r.redacted.as_ref().map_or(0, String::capacity)
                                    + r.id.as_ref().map_or(0, String::capacity)
                            })
                            .sum::<usize>()
                }
                ChatMessage::Tool {
                    call_id, content, ..
                } => call_id.capacity() + content.capacity(),
                // A message kind this estimate does not know yet counts its own size only.
                _ => 0,
            })
            .sum::<usize>()
}

fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let agent = adder_agent(4);
    let out = runtime.block_on(agent.run("go")).expect("turn");
    assert_eq!((out.iterations, out.text.as_str()), (5, "5"));

    // A fresh session per turn, so every turn has the same history length.
    let measure = |turns: u32| {
        let started = Instant::now();
        for _ in 0..turns {
            let mut session = agent.session();
            black_box(runtime.block_on(session.run("go")).expect("turn"));
        }
        started.elapsed()
    };
    measure(2_000);
    let mut per_iteration = Vec::new();
    for _ in 0..5 {
        let turns = 20_000;
        let elapsed = measure(turns);
        per_iteration.push(elapsed.as_nanos() as f64 / f64::from(turns) / 5.0);
    }
    per_iteration.sort_by(f64::total_cmp);
    println!(
        "5-iteration turn, scripted model: per iteration {:.0} ns (median of 5 runs of 20,000 turns; min {:.0}, max {:.0})",
        per_iteration[2], per_iteration[0], per_iteration[4]
    );

    const SESSIONS: usize = 10_000;
    std::thread::sleep(Duration::from_millis(50));
    let before = resident_bytes();
    let sessions: Vec<Session> = (0..SESSIONS).map(|_| agent.session()).collect();
    let after = resident_bytes();
    let per_session = (after.saturating_sub(before)) as f64 / SESSIONS as f64;
    println!(
        "{SESSIONS} idle sessions (empty history): {per_session:.0} bytes per session resident (size_of::<Session>() = {} bytes)",
        std::mem::size_of::<Session>()
    );
    let verdict = if per_session < 1024.0 {
        "met"
    } else {
        "NOT met"
    };
    println!(
        "goal: under 1 KiB per idle session plus the history: {verdict} ({per_session:.0} bytes, {:.2} of 1 KiB)",
        per_session / 1024.0
    );
    drop(black_box(sessions));

    // The same, each session after one turn: the user's message, the model's call of `add`,
    // its result, the model's answer.
    let agent = adder_agent(1);
    std::thread::sleep(Duration::from_millis(50));
    let before = resident_bytes();
    let sessions: Vec<Session> = (0..SESSIONS)
        .map(|_| {
            let mut session = agent.session();
            black_box(runtime.block_on(session.run("go")).expect("turn"));
            session
        })
        .collect();
    let after = resident_bytes();
    let messages = sessions[0].history().len();
    let history = sessions
        .iter()
        .map(|s| history_bytes(s.history()))
        .sum::<usize>() as f64
        / SESSIONS as f64;
    let per_session = (after.saturating_sub(before)) as f64 / SESSIONS as f64;
    let beyond = per_session - history;
    println!(
        "{SESSIONS} idle sessions after one turn ({messages} messages): {per_session:.0} bytes per session resident, of which the history's own values {history:.0} bytes; beyond the history {beyond:.0} bytes"
    );
    let verdict = if beyond < 1024.0 { "met" } else { "NOT met" };
    println!(
        "goal: under 1 KiB per idle session plus the history, with a history: {verdict} ({beyond:.0} bytes beyond the history, {:.2} of 1 KiB)",
        beyond / 1024.0
    );
    black_box(sessions);
}
