//! The session-store suite: one set of async cases every backend must pass. A backend provides
//! the store under test and raw access to its records (to corrupt one and to read it back as it
//! is stored); `session_stores.rs` runs every case against every backend.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use hpd_agent::async_trait;
use hpd_agent::store::{SessionStore, StoreError};
use hpd_agent::{
    Agent, AgentBuilder, AgentRunConfig, ChatMessage, ChatResponse, HarnessBuilder, RunError,
    ScriptedChatClient, Tool, ToolCall, ToolResult, agent::SessionState,
};
use hpd_agent_tests::{MathTools, WeatherTools};

/// What the raw record of a session is replaced with by [`RawAccess::corrupt`].
pub const GARBAGE: &str = r#"{"format":1,"state":{"history":[{"role":"alien"}]}}"#;

/// Access to a backend's records that bypasses the store.
#[async_trait]
pub trait RawAccess: Send + Sync {
    /// Replaces the stored record text of `id` with [`GARBAGE`], keeping its version.
    async fn corrupt(&self, id: &str);
    /// The stored record text of `id`.
    async fn read(&self, id: &str) -> Option<String>;
}

/// A backend under test.
pub struct Backend {
    pub name: &'static str,
    pub store: Arc<dyn SessionStore>,
    pub raw: Box<dyn RawAccess>,
    prefix: String,
}

impl Backend {
    pub fn new(name: &'static str, store: Arc<dyn SessionStore>, raw: Box<dyn RawAccess>) -> Self {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        Backend {
            name,
            store,
            raw,
            prefix: format!("suite-{name}-{}-{nanos}/", std::process::id()),
        }
    }

    /// A session id unique to this backend instance.
    pub fn id(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// Deletes every session this instance created (servers are shared between runs).
    pub async fn cleanup(&self) {
        for id in self.store.list(&self.prefix).await.unwrap_or_default() {
            let _ = self.store.delete(&id).await;
        }
    }
}

fn text_agent(replies: &[&str]) -> (Agent, ScriptedChatClient) {
    let model = ScriptedChatClient::with_replies(replies.iter().map(|r| ChatResponse::text(*r)));
    let agent = AgentBuilder::new()
        .with_instructions("Be brief.")
        .with_chat_client(model.clone())
        .build()
        .expect("agent builds");
    (agent, model)
}

/// An agent in the `hide` layout, whose stored expansions show in the reopened session's tool
/// list and system text.
fn math_agent(model: &ScriptedChatClient) -> Agent {
    AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_tool_harness::<MathTools>()
        .configure_harness_collapsing(|c| c.keep_expansions_across_turns = true)
        .with_chat_client(model.clone())
        .build()
        .expect("agent builds")
}

fn user_texts(history: &[ChatMessage]) -> Vec<&str> {
    history
        .iter()
        .filter_map(|m| match m {
            ChatMessage::User { content } => Some(content.as_str()),
            _ => None,
        })
        .collect()
}

fn answers(history: &[ChatMessage]) -> Vec<&str> {
    history
        .iter()
        .filter_map(|m| match m {
            ChatMessage::Assistant {
                content: Some(text),
                tool_calls,
                ..
            } if tool_calls.is_empty() => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// A turn with tool calls is saved whole, and another worker resumes it with the same history.
pub async fn round_trip_with_tool_calls(b: &Backend) {
    let id = b.id("round-trip");
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![
            ToolCall::new("c1", "get_weather", r#"{"city":"Paris"}"#),
            ToolCall::new("c2", "get_forecast", r#"{"city":"Paris","days":"x"}"#),
        ]),
        ChatResponse::text("Sunny in Paris."),
    ]);
    let agent = AgentBuilder::new()
        .with_tool_harness::<WeatherTools>()
        .with_chat_client(model)
        .build()
        .expect("agent builds");
    let mut session = agent
        .open_session(b.store.clone(), id.clone())
        .await
        .expect("open");
    assert_eq!(session.stored_version(), Some(0));
    assert_eq!(session.id(), Some(id.as_str()));
    session.run("Weather in Paris?").await.expect("turn");
    assert_eq!(session.stored_version(), Some(1));
    assert!(session.is_saved());
    assert_eq!(session.history().len(), 5, "{:#?}", session.history());
    assert!(matches!(
        &session.history()[3],
        ChatMessage::Tool { call_id, is_error: true, .. } if call_id == "c2"
    ));

    let stored = b.store.load(&id).await.expect("load").expect("stored");
    assert_eq!(stored.version, 1);
    assert_eq!(&stored.state, session.state());

    // Another worker (another agent, another model) continues the conversation.
    let (other, other_model) = text_agent(&["Tomorrow too."]);
    let mut resumed = other
        .open_session(b.store.clone(), id.clone())
        .await
        .expect("reopen");
    assert_eq!(resumed.history(), session.history());
    resumed.run("And tomorrow?").await.expect("turn");
    let sent = &other_model.requests()[0].messages;
    assert_eq!(&sent[..5], session.history());
    let stored = b.store.load(&id).await.expect("load").expect("stored");
    assert_eq!(stored.version, 2);
    assert_eq!(stored.state.history.len(), 7);
    assert_eq!(
        answers(&stored.state.history),
        ["Sunny in Paris.", "Tomorrow too."]
    );
}

/// With `keep_expansions_across_turns`, an expanded container is stored and a worker that
/// reopens the session sees its functions and its instructions from the first request.
pub async fn containers_persist(b: &Backend) {
    let id = b.id("containers");
    let first = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "MathTools", "{}")]),
        ChatResponse::text("Math is ready."),
    ]);
    let mut session = math_agent(&first)
        .open_session(b.store.clone(), id.clone())
        .await
        .expect("open");
    session.run("Get ready for math").await.expect("turn");
    let stored = b.store.load(&id).await.expect("load").expect("stored");
    assert_eq!(stored.state.expanded, ["MathTools"]);

    let second = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c2", "add", r#"{"a":2,"b":3}"#)]),
        ChatResponse::text("5"),
    ]);
    let mut resumed = math_agent(&second)
        .open_session(b.store.clone(), id.clone())
        .await
        .expect("reopen");
    resumed.run("2 + 3?").await.expect("turn");
    let requests = second.requests();
    assert_eq!(requests[0].tool_names(), ["add", "multiply", "divide"]);
    assert!(
        requests[0]
            .instructions
            .contains("## Active container instructions\n\n### MathTools\nUse exact arithmetic"),
        "{}",
        requests[0].instructions
    );
    assert_eq!(requests[1].tool_result("c2"), Some(("5", false)));
    let stored = b.store.load(&id).await.expect("load").expect("stored");
    assert_eq!(stored.state.expanded, ["MathTools"]);
    assert_eq!(stored.version, 2);
}

/// Two workers take turns on one conversation, each reopening it for its turn; the stored
/// history ends complete and in order.
pub async fn workers_take_turns(b: &Backend) {
    let id = b.id("workers");
    let (worker_a, _) = text_agent(&["a0", "a2", "a4"]);
    let (worker_b, _) = text_agent(&["b1", "b3", "b5"]);
    for turn in 0..6 {
        let worker = if turn % 2 == 0 { &worker_a } else { &worker_b };
        let mut session = worker
            .open_session(b.store.clone(), id.clone())
            .await
            .expect("open");
        assert_eq!(session.history().len(), turn * 2);
        session.run(format!("message {turn}")).await.expect("turn");
    }
    let stored = b.store.load(&id).await.expect("load").expect("stored");
    assert_eq!(stored.version, 6);
    let history = &stored.state.history;
    assert_eq!(
        user_texts(history),
        (0..6).map(|t| format!("message {t}")).collect::<Vec<_>>()
    );
    assert_eq!(answers(history), ["a0", "b1", "a2", "b3", "a4", "b5"]);
}

/// Two writers answer the same conversation at once: one save wins, the other gets `Conflict`
/// and keeps its turn in memory; the store holds the winner's history, whole.
pub async fn two_writers_at_once(b: &Backend) {
    let id = b.id("two-writers");
    let (first, _) = text_agent(&["hello"]);
    first
        .open_session(b.store.clone(), id.clone())
        .await
        .expect("open")
        .run("hi")
        .await
        .expect("turn");

    let (worker_a, _) = text_agent(&["from a"]);
    let (worker_b, _) = text_agent(&["from b"]);
    let mut session_a = worker_a
        .open_session(b.store.clone(), id.clone())
        .await
        .expect("open a");
    let mut session_b = worker_b
        .open_session(b.store.clone(), id.clone())
        .await
        .expect("open b");
    let (result_a, result_b) = tokio::join!(session_a.run("to a"), session_b.run("to b"));
    let (winner, loser, loser_result) = match (&result_a, &result_b) {
        (Ok(_), Err(_)) => (&session_a, &mut session_b, result_b),
        (Err(_), Ok(_)) => (&session_b, &mut session_a, result_a),
        other => panic!("exactly one writer must win, got {other:?}"),
    };
    assert!(
        matches!(
            loser_result,
            Err(RunError::Store(StoreError::Conflict { ref session, expected: 1, .. })) if *session == id
        ),
        "{loser_result:?}"
    );
    assert_eq!(
        loser.history().len(),
        4,
        "the loser keeps its turn in memory"
    );
    assert!(!loser.is_saved());
    assert!(matches!(
        loser.save().await,
        Err(StoreError::Conflict { .. })
    ));

    let stored = b.store.load(&id).await.expect("load").expect("stored");
    assert_eq!(stored.version, 2);
    assert_eq!(stored.state.history, winner.history());
    assert_eq!(stored.state.history.len(), 4);

    // Two first saves of a new session: one creates it, the other conflicts.
    let fresh = b.id("two-creators");
    let one = SessionState::from_history(vec![ChatMessage::user("one")]);
    let two = SessionState::from_history(vec![ChatMessage::user("two")]);
    let (r1, r2) = tokio::join!(b.store.save(&fresh, &one, 0), b.store.save(&fresh, &two, 0));
    let winner = match (&r1, &r2) {
        (Ok(1), Err(StoreError::Conflict { .. })) => &one,
        (Err(StoreError::Conflict { .. }), Ok(1)) => &two,
        other => panic!("exactly one creator must win, got {other:?}"),
    };
    let stored = b.store.load(&fresh).await.expect("load").expect("stored");
    assert_eq!(&stored.state, winner);
}

/// A record that does not decode is reported as `Corrupt` naming the session, and is left as
/// it is.
pub async fn corrupt_row(b: &Backend) {
    let id = b.id("corrupt");
    let healthy = b.id("healthy");
    let state = SessionState::from_history(vec![ChatMessage::user("hello")]);
    b.store.save(&id, &state, 0).await.expect("save");
    b.store.save(&healthy, &state, 0).await.expect("save");
    b.raw.corrupt(&id).await;

    let err = b.store.load(&id).await.expect_err("corrupt");
    assert!(
        matches!(&err, StoreError::Corrupt { session, .. } if *session == id),
        "{err:?}"
    );
    assert!(err.to_string().contains(&id), "{err}");
    assert!(err.to_string().contains("history[0]"), "{err}");

    let (agent, _) = text_agent(&["unused"]);
    let err = agent
        .open_session(b.store.clone(), id.clone())
        .await
        .expect_err("corrupt");
    assert!(
        matches!(&err, StoreError::Corrupt { session, .. } if *session == id),
        "{err:?}"
    );
    assert_eq!(b.raw.read(&id).await.as_deref(), Some(GARBAGE));
    // Nothing else is affected.
    assert_eq!(
        b.store
            .load(&healthy)
            .await
            .expect("load")
            .expect("stored")
            .state,
        state
    );
    let listed = b.store.list(&b.id("")).await.expect("list");
    assert!(
        listed.contains(&id) && listed.contains(&healthy),
        "{listed:?}"
    );
}

/// `list` returns the ids with a prefix, sorted, taking the prefix literally.
pub async fn list_by_prefix(b: &Backend) {
    let names = [
        "users/1",
        "users/2",
        "users/10",
        "userspace",
        "teams/1",
        "us%er_*?[x]\\y",
        "ünï/1",
    ];
    let state = SessionState::default();
    for name in names {
        b.store.save(&b.id(name), &state, 0).await.expect("save");
    }
    let list = |prefix: String| async move { b.store.list(&prefix).await.expect("list") };
    let ids = |names: &[&str]| names.iter().map(|n| b.id(n)).collect::<Vec<_>>();
    assert_eq!(
        list(b.id("users/")).await,
        ids(&["users/1", "users/10", "users/2"])
    );
    assert_eq!(
        list(b.id("users")).await,
        ids(&["users/1", "users/10", "users/2", "userspace"])
    );
    assert_eq!(list(b.id("us%")).await, ids(&["us%er_*?[x]\\y"]));
    assert_eq!(list(b.id("us%er_*?[")).await, ids(&["us%er_*?[x]\\y"]));
    assert_eq!(list(b.id("us_")).await, Vec::<String>::new());
    assert_eq!(list(b.id("u*")).await, Vec::<String>::new());
    assert_eq!(list(b.id("ünï")).await, ids(&["ünï/1"]));
    assert_eq!(list(b.id("nothing")).await, Vec::<String>::new());
    let mut all = ids(&names);
    all.sort();
    assert_eq!(list(b.id("")).await, all);
}

/// `delete` removes a session; a worker still holding it cannot save over the deletion.
pub async fn delete(b: &Backend) {
    let id = b.id("delete");
    let (agent, _) = text_agent(&["one", "two"]);
    let mut session = agent
        .open_session(b.store.clone(), id.clone())
        .await
        .expect("open");
    session.run("first").await.expect("turn");
    assert!(b.store.delete(&id).await.expect("delete"));
    assert!(b.store.load(&id).await.expect("load").is_none());
    assert!(!b.store.delete(&id).await.expect("delete again"));
    assert!(!b.store.list(&id).await.expect("list").contains(&id));

    let err = session.run("second").await.expect_err("deleted under it");
    assert!(
        matches!(err, RunError::Store(StoreError::Conflict { .. })),
        "{err:?}"
    );
    let reopened = agent
        .open_session(b.store.clone(), id.clone())
        .await
        .expect("reopen");
    assert!(reopened.history().is_empty());
    assert_eq!(reopened.stored_version(), Some(0));
}

/// Ids no backend can store are refused up front with the reason.
pub async fn invalid_ids(b: &Backend) {
    let (agent, _) = text_agent(&[]);
    for (id, reason) in [
        (String::new(), "empty"),
        ("a\nb".to_owned(), "control character"),
        ("x".repeat(513), "longer than 512 bytes"),
    ] {
        let err = agent
            .open_session(b.store.clone(), id.clone())
            .await
            .expect_err("invalid id");
        assert!(err.to_string().contains(reason), "{err}");
        let err = b
            .store
            .save(&id, &SessionState::default(), 0)
            .await
            .expect_err("invalid id");
        assert!(matches!(err, StoreError::InvalidId { .. }), "{err:?}");
    }
}

/// Every tool call has exactly one result, after it and before the next assistant message, and
/// every assistant message follows a user message or a tool result.
pub fn assert_valid_history(history: &[ChatMessage]) {
    let mut open: Vec<&str> = Vec::new();
    for (i, message) in history.iter().enumerate() {
        match message {
            ChatMessage::Assistant { tool_calls, .. } => {
                assert!(
                    open.is_empty(),
                    "calls {open:?} unanswered at {i}: {history:#?}"
                );
                assert!(i > 0, "the history starts with an answer: {history:#?}");
                open = tool_calls.iter().map(|c| c.id.as_str()).collect();
            }
            ChatMessage::Tool { call_id, .. } => {
                let at = open.iter().position(|id| id == call_id);
                let at = at.unwrap_or_else(|| panic!("result {call_id} without its call at {i}"));
                open.remove(at);
            }
            ChatMessage::User { .. } => {
                assert!(
                    open.is_empty(),
                    "calls {open:?} unanswered at {i}: {history:#?}"
                );
            }
            other => panic!("a message kind this check does not know at {i}: {other:?}"),
        }
    }
    assert!(open.is_empty(), "calls {open:?} unanswered at the end");
}

/// What the `book` tool saw of each call: (call id, turn id, idempotency key).
type Seen = Arc<std::sync::Mutex<Vec<(String, Option<String>, String)>>>;

/// A side-effecting `book` tool recording what it saw of each call.
fn booking_agent(model: &ScriptedChatClient, seen: &Seen) -> Agent {
    let seen = Arc::clone(seen);
    let book = Tool::new(
        "book",
        "Books a table",
        serde_json::json!({"type": "object", "properties": {"at": {"type": "string"}}}),
        move |args, ctx| {
            let seen = Arc::clone(&seen);
            async move {
                seen.lock().unwrap().push((
                    ctx.call_id().to_owned(),
                    ctx.turn_id().map(str::to_owned),
                    ctx.idempotency_key(),
                ));
                ToolResult::ok(format!("booked at {}", args["at"].as_str().unwrap_or("?")))
            }
        },
    );
    AgentBuilder::new()
        .with_harness(
            HarnessBuilder::new("Tables")
                .with_tool(book)
                .build()
                .expect("harness"),
        )
        .with_chat_client(model.clone())
        .build()
        .expect("agent builds")
}

/// A turn that loses the save race (after its tool ran) is handed back whole in the conflict;
/// `append_unsaved` stores it after the winner's turn, and nothing is lost or run twice. The
/// other way on, reload and run again with the same turn id, gives the tool the same
/// idempotency key.
pub async fn conflict_hands_back_the_unsaved_turn(b: &Backend) {
    let id = b.id("conflict-turn");
    let (first, _) = text_agent(&["hello"]);
    first
        .open_session(b.store.clone(), id.clone())
        .await
        .expect("open")
        .run("hi")
        .await
        .expect("turn");

    let (winner_agent, _) = text_agent(&["the winner's answer"]);
    let seen: Seen = Arc::default();
    let loser_model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("call-1", "book", r#"{"at": "8pm"}"#)]),
        ChatResponse::text("Booked for 8pm."),
    ]);
    let loser_agent = booking_agent(&loser_model, &seen);
    let mut winner = winner_agent
        .open_session(b.store.clone(), id.clone())
        .await
        .expect("open winner");
    let mut loser = loser_agent
        .open_session(b.store.clone(), id.clone())
        .await
        .expect("open loser");
    winner
        .run("the winner's message")
        .await
        .expect("winner saves");
    let error = loser
        .run_with(
            "Book a table at 8pm",
            AgentRunConfig::new().with_turn_id("msg-42"),
        )
        .await
        .expect_err("the loser's save conflicts");
    let RunError::Store(conflict) = &error else {
        panic!("expected a store error, got {error:?}")
    };
    assert!(
        conflict
            .to_string()
            .contains("the error holds the 4 unsaved messages of turn msg-42"),
        "{conflict}"
    );
    let turn = conflict.unsaved_turn().expect("the unsaved turn").clone();
    assert_eq!(turn.turn_id, "msg-42");
    assert_eq!(turn.user_message.as_deref(), Some("Book a table at 8pm"));
    assert_eq!(turn.messages.len(), 4, "{:#?}", turn.messages);
    assert_eq!(turn.messages, loser.history()[2..], "the turn, whole");
    assert!(matches!(&turn.messages[2], ChatMessage::Tool { call_id, .. } if call_id == "call-1"));
    assert_eq!(seen.lock().unwrap().len(), 1, "the tool ran once");

    // The documented way on: the turn goes after the winner's, and is saved.
    loser.append_unsaved(&turn).await.expect("append and save");
    assert!(loser.is_saved());
    let stored = b.store.load(&id).await.expect("load").expect("stored");
    assert_eq!(stored.version, 3);
    let history = &stored.state.history;
    assert_valid_history(history);
    assert_eq!(
        user_texts(history),
        ["hi", "the winner's message", "Book a table at 8pm"]
    );
    assert_eq!(
        answers(history),
        ["hello", "the winner's answer", "Booked for 8pm."]
    );
    assert_eq!(&history[4..], &turn.messages[..]);
    assert_eq!(seen.lock().unwrap().len(), 1, "no tool ran again");

    // The other way on: reload and run the message again under the same turn id. The model
    // gives the call another id; the idempotency key is the same.
    let (winner_agent, _) = text_agent(&["another winner"]);
    let mut winner = winner_agent
        .open_session(b.store.clone(), id.clone())
        .await
        .expect("open");
    let rerun_model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("call-1", "book", r#"{"at": "9pm"}"#)]),
        ChatResponse::text("Booked for 9pm."),
        ChatResponse::tool_calls(vec![ToolCall::new("call-7", "book", r#"{ "at":"9pm" }"#)]),
        ChatResponse::text("Booked for 9pm, once."),
    ]);
    seen.lock().unwrap().clear();
    let rerun_agent = booking_agent(&rerun_model, &seen);
    let mut late = rerun_agent
        .open_session(b.store.clone(), id.clone())
        .await
        .expect("open");
    winner.run("meanwhile").await.expect("winner saves");
    let error = late.run("Book at 9pm").await.expect_err("conflict");
    let RunError::Store(conflict) = error else {
        panic!("a store error")
    };
    let turn = conflict.unsaved_turn().expect("unsaved").clone();
    assert!(
        turn.turn_id.starts_with("turn-"),
        "a generated id: {}",
        turn.turn_id
    );
    late.reload().await.expect("reload");
    assert_eq!(
        late.history(),
        &b.store.load(&id).await.unwrap().unwrap().state.history[..]
    );
    late.run_with(
        turn.user_message.clone().expect("message"),
        AgentRunConfig::new().with_turn_id(turn.turn_id.clone()),
    )
    .await
    .expect("the run again saves");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    assert_eq!(
        (seen[0].0.as_str(), seen[1].0.as_str()),
        ("call-1", "call-7")
    );
    assert_eq!(seen[0].1.as_deref(), Some(turn.turn_id.as_str()));
    assert_eq!(
        seen[0].2, seen[1].2,
        "the same idempotency key for the same action"
    );
    let stored = b.store.load(&id).await.expect("load").expect("stored");
    assert_valid_history(&stored.state.history);
    assert_eq!(
        user_texts(&stored.state.history)[3..],
        ["meanwhile", "Book at 9pm"]
    );
}

/// What the `Ops` tools ran: `name(arguments)`.
type Ran = Arc<std::sync::Mutex<Vec<String>>>;

/// An agent with `read_config` (no approval), `delete_file` and `wire` (approval needed), as
/// a worker process would build it: its own tools, its own log of what ran.
fn ops_agent(model: &ScriptedChatClient, ran: &Ran) -> Agent {
    let tool = |name: &'static str, approval: bool| {
        let ran = Arc::clone(ran);
        let tool = Tool::new(
            name,
            "An operation",
            serde_json::json!({"type": "object"}),
            move |args, _| {
                let ran = Arc::clone(&ran);
                async move {
                    ran.lock().unwrap().push(format!("{name}({args})"));
                    ToolResult::ok(match name {
                        "read_config" => "retention: 30 days".to_owned(),
                        "delete_file" => {
                            format!("deleted {}", args["path"].as_str().unwrap_or("?"))
                        }
                        _ => format!("wired {}", args["amount"]),
                    })
                }
            },
        );
        if approval {
            tool.with_approval_required()
        } else {
            tool
        }
    };
    let harness = HarnessBuilder::new("Ops")
        .with_tool(tool("read_config", false))
        .with_tool(tool("delete_file", true))
        .with_tool(tool("wire", true))
        .build()
        .expect("harness builds");
    AgentBuilder::new()
        .with_harness(harness)
        .with_chat_client(model.clone())
        .build()
        .expect("agent builds")
}

/// A run pauses before the calls that need approval, the paused session is stored, and
/// another worker (a new agent, as another process would build it) approves one call, edits
/// and approves another and denies a third; the model gets every result in call order and the
/// stored history is valid with the decisions logged.
pub async fn approval_paused_and_resumed_elsewhere(b: &Backend) {
    use hpd_agent::approval::{ApprovalDecision, ApprovalError, Approvals};

    let id = b.id("approval");
    let first_model = ScriptedChatClient::with_replies([ChatResponse::tool_calls(vec![
        ToolCall::new("c1", "read_config", "{}"),
        ToolCall::new("c2", "delete_file", r#"{"path":"old.log"}"#),
        ToolCall::new("c3", "delete_file", r#"{"path":"/"}"#),
        ToolCall::new("c4", "wire", r#"{"amount":5000}"#),
    ])]);
    let first_ran = Ran::default();
    let first = ops_agent(&first_model, &first_ran);
    let mut session = first
        .open_session(b.store.clone(), id.clone())
        .await
        .expect("open");
    let paused = session
        .run("Clean up and pay the bill")
        .await
        .expect("turn");
    assert!(paused.is_paused());
    let waiting: Vec<(&str, &str, &str)> = paused
        .pending_approvals
        .iter()
        .map(|p| {
            (
                p.call_id.as_str(),
                p.function.as_str(),
                p.arguments.as_str(),
            )
        })
        .collect();
    assert_eq!(
        waiting,
        [
            ("c2", "delete_file", r#"{"path":"old.log"}"#),
            ("c3", "delete_file", r#"{"path":"/"}"#),
            ("c4", "wire", r#"{"amount":5000}"#),
        ]
    );
    assert!(paused.pending_approvals.iter().all(|p| p.harness == "Ops"));
    // The call that needs no approval ran; the others did not.
    assert_eq!(*first_ran.lock().unwrap(), ["read_config({})"]);
    assert_eq!(session.stored_version(), Some(1));
    assert!(session.is_saved());
    // The history ends with the calls: no result is in it yet.
    assert!(matches!(
        session.history().last(),
        Some(ChatMessage::Assistant { tool_calls, .. }) if tool_calls.len() == 4
    ));
    let raw = b.raw.read(&id).await.expect("stored record");
    assert!(raw.contains(r#""paused":"#), "{raw}");
    drop(session);

    // Another process: a new agent with a new model, opening the stored session.
    let second_model = ScriptedChatClient::with_replies([ChatResponse::text("Cleaned up.")]);
    let second_ran = Ran::default();
    let second = ops_agent(&second_model, &second_ran);
    let mut resumed = second
        .open_session(b.store.clone(), id.clone())
        .await
        .expect("reopen");
    assert_eq!(
        resumed.pending_approvals(),
        paused.pending_approvals.as_slice()
    );
    // A paused session runs no new message, and that changes nothing.
    let refused = resumed.run("Hello?").await.unwrap_err();
    assert!(
        matches!(&refused, RunError::Approval(ApprovalError::Pending { calls }) if calls == "c2, c3, c4"),
        "{refused}"
    );
    // Decisions that do not fit the waiting calls change nothing either.
    let missing = resumed
        .decide(Approvals::new().approve("c2"))
        .await
        .unwrap_err();
    assert!(
        matches!(&missing, RunError::Approval(ApprovalError::Undecided { calls }) if calls == "c3, c4"),
        "{missing}"
    );
    assert_eq!(resumed.pending_approvals().len(), 3);
    assert_eq!(resumed.stored_version(), Some(1));

    let output = resumed
        .decide(
            Approvals::new()
                .approve("c2")
                .approve_edited("c3", serde_json::json!({"path": "/tmp/cache"}))
                .deny("c4", "payments need a second signature"),
        )
        .await
        .expect("resumed");
    assert_eq!(output.text, "Cleaned up.");
    assert!(!output.is_paused());
    assert_eq!(
        *second_ran.lock().unwrap(),
        [
            r#"delete_file({"path":"old.log"})"#,
            r#"delete_file({"path":"/tmp/cache"})"#,
        ]
    );

    // What the model saw: every call answered, in call order, in one valid history.
    let requests = second_model.requests();
    assert_eq!(requests.len(), 1);
    let sent = &requests[0].messages;
    assert_valid_history(sent);
    let results: Vec<(&str, &str, bool)> = sent
        .iter()
        .filter_map(|m| match m {
            ChatMessage::Tool {
                call_id,
                content,
                is_error,
                ..
            } => Some((call_id.as_str(), content.as_str(), *is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        [
            ("c1", "retention: 30 days", false),
            ("c2", "deleted old.log", false),
            (
                "c3",
                "The user edited the arguments before approving; the call ran with {\"path\":\"/tmp/cache\"}\n\ndeleted /tmp/cache",
                false
            ),
            (
                "c4",
                "Function 'wire' was denied by the user: payments need a second signature",
                true
            ),
        ]
    );
    // The model's own call stays as it made it.
    assert!(sent.iter().any(|m| matches!(
        m,
        ChatMessage::Assistant { tool_calls, .. }
            if tool_calls.iter().any(|c| c.id == "c3" && c.arguments == r#"{"path":"/"}"#)
    )));

    // What is stored: the whole turn, valid, not paused, with the decisions logged.
    let stored = b.store.load(&id).await.expect("load").expect("stored");
    assert_eq!(stored.version, 2);
    assert_eq!(&stored.state, resumed.state());
    assert!(stored.state.paused.is_none());
    assert_valid_history(&stored.state.history);
    assert_eq!(stored.state.history.len(), 7, "{:#?}", stored.state.history);
    assert_eq!(answers(&stored.state.history), ["Cleaned up."]);
    let log: Vec<(&str, Option<&str>, bool)> = stored
        .state
        .approvals
        .iter()
        .map(|r| (r.call_id.as_str(), r.arguments(), r.edited()))
        .collect();
    assert_eq!(
        log,
        [
            ("c2", Some(r#"{"path":"old.log"}"#), false),
            ("c3", Some(r#"{"path":"/tmp/cache"}"#), true),
            ("c4", None, false),
        ]
    );
    assert_eq!(
        stored.state.approvals[2].requested_arguments,
        r#"{"amount":5000}"#
    );
    assert_eq!(
        stored.state.approvals[2].decision,
        ApprovalDecision::deny("payments need a second signature")
    );
}
