//! Load: many concurrent sessions on one [`Agent`], each running ten turns against a scripted
//! model, with global and scoped middleware, collapsing on, a dynamic harness and a macro
//! harness. Every session's history must be complete and its own, no expansion state may leak
//! between sessions (each turn starts collapsed, each scoped pipeline serves one session), and
//! no per-session state may outlive its session. Prints throughput and peak memory.
//!
//! The normal suite runs 200 sessions; `HPD_LOAD_FULL=1` runs 1,000 (the figures in
//! `BENCHMARKS.md`, section "Load", come from
//! `HPD_LOAD_FULL=1 cargo test --release -p hpd-agent-tests --test load -- --nocapture`).

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use hpd_agent::prelude::*;
use hpd_agent::{
    Agent, AgentBuilder, ChatClient, ChatMessage, ChatResponse, HarnessBuilder, Middleware, Tool,
    ToolCall, ToolResult, async_trait, chat::ChatError, chat::ChatRequest, chat::TextSink,
    middleware::FunctionCall, middleware::HookResult,
};
use serde_json::{Value, json};

const TURNS: usize = 10;

/// Everything that went wrong, as text (empty when all is well).
static VIOLATIONS: Mutex<Vec<String>> = Mutex::new(Vec::new());
/// Global middleware: function calls seen.
static GLOBAL_CALLS: AtomicUsize = AtomicUsize::new(0);
/// Shared scoped middleware of the macro harness: calls seen.
static SCOPED_CALLS: AtomicUsize = AtomicUsize::new(0);
/// Fresh scoped middleware of the dynamic harness: instances created and dropped.
static OWNERS_CREATED: AtomicUsize = AtomicUsize::new(0);
static OWNERS_DROPPED: AtomicUsize = AtomicUsize::new(0);

fn violation(text: String) {
    VIOLATIONS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(text);
}

/// The collapsed macro harness.
#[derive(Debug, Default)]
pub struct LoadMath;

#[collapse("Arithmetic for the load test")]
impl LoadMath {
    /// Adds `a` and `b` for `session`.
    #[ai_function]
    fn load_add(&self, session: u64, a: u64, b: u64) -> String {
        format!("{session}:{}", a + b)
    }
}

/// The collapsed dynamic harness, with a scoped middleware created at each expansion.
fn notes() -> hpd_agent::harness::DynamicHarness {
    let note = Tool::new(
        "load_note",
        "Notes a text for a session",
        json!({"type": "object", "properties": {"session": {"type": "integer"},
               "text": {"type": "string"}}, "required": ["session", "text"]}),
        |arguments: Value, _| async move {
            ToolResult::ok(format!(
                "{}:noted {}",
                arguments["session"],
                arguments["text"].as_str().unwrap_or_default()
            ))
        },
    );
    HarnessBuilder::new("LoadNotes")
        .with_collapse("Notes for the load test")
        .with_tool(note)
        .with_scoped_middleware_factory(Owner::new)
        .build()
        .unwrap()
}

/// Scoped middleware created at each expansion: every call it sees must be of one session.
struct Owner {
    session: Mutex<Option<u64>>,
}

impl Owner {
    fn new() -> Self {
        OWNERS_CREATED.fetch_add(1, Ordering::SeqCst);
        Owner {
            session: Mutex::new(None),
        }
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        OWNERS_DROPPED.fetch_add(1, Ordering::SeqCst);
    }
}

#[async_trait]
impl Middleware for Owner {
    async fn before_function(&self, call: &mut FunctionCall) -> HookResult {
        let session = session_of(call.arguments());
        let mut owner = self.session.lock().unwrap();
        match *owner {
            None => *owner = session,
            Some(first) if Some(first) != session => violation(format!(
                "a scoped pipeline of session {first} saw a call of {session:?}"
            )),
            Some(_) => {}
        }
        Ok(())
    }
}

fn session_of(arguments: &str) -> Option<u64> {
    serde_json::from_str::<Value>(arguments)
        .ok()
        .and_then(|v| v["session"].as_u64())
}

struct Counter(&'static AtomicUsize);

#[async_trait]
impl Middleware for Counter {
    async fn before_function(&self, _call: &mut FunctionCall) -> HookResult {
        self.0.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

/// The scripted model: three requests per turn, decided by the conversation since the last
/// user message `s={session} t={turn}`. It checks what each request shows.
struct LoadModel {
    requests: AtomicUsize,
}

impl LoadModel {
    fn reply(request: &ChatRequest<'_>) -> Result<ChatResponse, String> {
        let start = request
            .messages
            .iter()
            .rposition(|m| matches!(m, ChatMessage::User { .. }))
            .ok_or("no user message")?;
        let ChatMessage::User { content } = &request.messages[start] else {
            unreachable!("found above");
        };
        let (s, t) = content
            .strip_prefix("s=")
            .and_then(|rest| rest.split_once(" t="))
            .and_then(|(s, t)| Some((s.parse::<u64>().ok()?, t.parse::<u64>().ok()?)))
            .ok_or_else(|| format!("unexpected user message {content:?}"))?;
        let tools: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
        let since = &request.messages[start + 1..];
        let replies = since
            .iter()
            .filter(|m| matches!(m, ChatMessage::Assistant { .. }))
            .count();
        let id = |n: u32| format!("s{s}t{t}c{n}");
        match replies {
            0 => {
                if tools != ["LoadMath", "LoadNotes"] {
                    return Err(format!("session {s} turn {t} started with {tools:?}"));
                }
                Ok(ChatResponse::tool_calls(vec![
                    ToolCall::new(id(1), "LoadMath", "{}"),
                    ToolCall::new(id(2), "LoadNotes", "{}"),
                ]))
            }
            1 => {
                if tools != ["load_add", "load_note"] {
                    return Err(format!("session {s} turn {t} expanded to {tools:?}"));
                }
                Ok(ChatResponse::tool_calls(vec![
                    ToolCall::new(
                        id(3),
                        "load_add",
                        json!({"session": s, "a": s, "b": t}).to_string(),
                    ),
                    ToolCall::new(
                        id(4),
                        "load_note",
                        json!({"session": s, "text": format!("turn {t}")}).to_string(),
                    ),
                ]))
            }
            2 => {
                let results: Vec<&str> = since
                    .iter()
                    .filter_map(|m| match m {
                        ChatMessage::Tool { content, .. } => Some(content.as_str()),
                        _ => None,
                    })
                    .collect();
                let expected = [format!("{s}:{}", s + t), format!("{s}:noted turn {t}")];
                if results[2..] != expected {
                    return Err(format!("session {s} turn {t} got {results:?}"));
                }
                Ok(ChatResponse::text(format!("s{s} t{t} sum {}", s + t)))
            }
            n => Err(format!("session {s} turn {t}: request after {n} replies")),
        }
    }
}

#[async_trait]
impl ChatClient for LoadModel {
    async fn complete(
        &self,
        request: ChatRequest<'_>,
        _text: TextSink<'_>,
    ) -> Result<ChatResponse, ChatError> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        Self::reply(&request).map_err(|message| {
            violation(message.clone());
            ChatError::Malformed(message)
        })
    }
}

fn agent(model: std::sync::Arc<LoadModel>) -> Agent {
    AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_tool_harness_options::<LoadMath>(|o| o.with_scoped_middleware(Counter(&SCOPED_CALLS)))
        .with_harness(notes())
        .with_middleware(Counter(&GLOBAL_CALLS))
        .with_shared_chat_client(model)
        .build()
        .unwrap()
}

/// Peak and current resident memory of this process in KiB (`/proc/self/status`), when known.
fn memory_kib() -> (Option<u64>, Option<u64>) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    };
    (field("VmHWM:"), field("VmRSS:"))
}

/// Checks one session's finished history: every turn complete, in order, and its own.
fn check_history(s: u64, history: &[ChatMessage]) {
    // Per turn: user, container calls, 2 results, function calls, 2 results, answer.
    if history.len() != TURNS * 8 {
        violation(format!("session {s} has {} messages", history.len()));
        return;
    }
    for (t, turn) in history.chunks(8).enumerate() {
        let t = t as u64;
        let own = |text: &str| text.contains(&format!("s{s}t{t}c"));
        let ok = matches!(&turn[0], ChatMessage::User { content } if *content == format!("s={s} t={t}"))
            && matches!(&turn[1], ChatMessage::Assistant { tool_calls, .. } if tool_calls.len() == 2 && tool_calls.iter().all(|c| own(&c.id)))
            && matches!(&turn[4], ChatMessage::Assistant { tool_calls, .. } if tool_calls.len() == 2 && tool_calls.iter().all(|c| own(&c.id)))
            && [2, 3, 5, 6].iter().all(|&i| matches!(&turn[i], ChatMessage::Tool { call_id, is_error: false, .. } if own(call_id)))
            && matches!(&turn[7], ChatMessage::Assistant { content: Some(text), tool_calls, .. }
                if tool_calls.is_empty() && *text == format!("s{s} t{t} sum {}", s + t));
        if !ok {
            violation(format!(
                "session {s} turn {t} is not its own or incomplete: {turn:?}"
            ));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_sessions_keep_their_own_history_and_expansions() {
    let full = std::env::var("HPD_LOAD_FULL").is_ok_and(|v| v == "1");
    let sessions: u64 = if full { 1000 } else { 200 };
    let model = std::sync::Arc::new(LoadModel {
        requests: AtomicUsize::new(0),
    });
    let agent = agent(std::sync::Arc::clone(&model));
    let (_, rss_before) = memory_kib();
    let started = Instant::now();
    let tasks: Vec<_> = (0..sessions)
        .map(|s| {
            let agent = agent.clone();
            tokio::spawn(async move {
                let mut session = agent.session();
                for t in 0..TURNS {
                    match session.run(format!("s={s} t={t}")).await {
                        Ok(output) if output.text == format!("s{s} t{t} sum {}", s + t as u64) => {}
                        Ok(output) => violation(format!("session {s} turn {t}: {}", output.text)),
                        Err(e) => violation(format!("session {s} turn {t} failed: {e}")),
                    }
                    if !session.state().expanded.is_empty() {
                        violation(format!("session {s} kept expansions after turn {t}"));
                    }
                }
                check_history(s, session.history());
                session.history().len()
            })
        })
        .collect();
    let mut messages = 0;
    for task in tasks {
        messages += task.await.unwrap();
    }
    let elapsed = started.elapsed();
    let (peak, rss_after) = memory_kib();

    let violations = VIOLATIONS.lock().unwrap().clone();
    assert!(
        violations.is_empty(),
        "{} violations, first: {:?}",
        violations.len(),
        violations.first()
    );
    let turns = sessions as usize * TURNS;
    assert_eq!(messages, turns * 8);
    assert_eq!(model.requests.load(Ordering::SeqCst), turns * 3);
    assert_eq!(GLOBAL_CALLS.load(Ordering::SeqCst), turns * 2);
    assert_eq!(SCOPED_CALLS.load(Ordering::SeqCst), turns);
    // One fresh scoped pipeline per turn (expansions end with the turn), none kept after it.
    assert_eq!(OWNERS_CREATED.load(Ordering::SeqCst), turns);
    assert_eq!(OWNERS_DROPPED.load(Ordering::SeqCst), turns);

    let seconds = elapsed.as_secs_f64();
    let kib = |v: Option<u64>| {
        v.map_or("unknown".to_owned(), |v| {
            format!("{:.1} MiB", v as f64 / 1024.0)
        })
    };
    println!(
        "load: {sessions} sessions x {TURNS} turns = {turns} turns, {} model requests, {} tool calls in {seconds:.2} s",
        turns * 3,
        turns * 4
    );
    println!(
        "load: {:.0} turns/s, {:.0} model requests/s",
        turns as f64 / seconds,
        (turns * 3) as f64 / seconds
    );
    println!(
        "load: resident memory before {}, after {}, peak {}",
        kib(rss_before),
        kib(rss_after),
        kib(peak)
    );
}
