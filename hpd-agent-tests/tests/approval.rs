//! Approval of tool calls: every way of marking a function, middleware deciding per call and
//! seeing decisions, the paths through collapsing (executed recovery, the `fixed` layout's call
//! tool, the native layouts), decisions that do not fit, tool sessions and sub-agents. The
//! store round trip on every backend is the store suite's `approval_paused_and_resumed_elsewhere`.

use std::sync::{Arc, Mutex};

use hpd_agent::approval::{ApprovalDecision, ApprovalError, Approvals, Approver, PendingApproval};
use hpd_agent::middleware::{TurnInfo, TurnOutcome};
use hpd_agent::prelude::*;
use hpd_agent::{
    AgentBuilder, AgentConfig, AgentEvent, ChatMessage, ChatResponse, Middleware, RunError,
    ScriptedChatClient, ToolCall, chat::DeferredTools, config::CALL_TOOL, config::CollapsingLayout,
    config::ToolHarnessReference, middleware::FunctionCall, middleware::HookResult,
    middleware::MiddlewareError,
};
use serde_json::json;

/// What the vault's functions ran, process-wide: tests that read it hold [`SERIAL`].
static RAN: Mutex<Vec<String>> = Mutex::new(Vec::new());
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn ran() -> Vec<String> {
    std::mem::take(&mut *RAN.lock().unwrap())
}

/// A collapsed harness with one function that needs approval.
#[derive(Default)]
pub struct Vault;

#[collapse("Secrets vault", system_prompt = "Never print a secret.")]
impl Vault {
    /// Lists secret names.
    #[ai_function]
    fn list_secrets(&self) -> String {
        RAN.lock().unwrap().push("list_secrets".into());
        "db, api".into()
    }

    /// Deletes a secret.
    #[ai_function(requires_approval)]
    fn delete_secret(&self, name: String) -> String {
        RAN.lock().unwrap().push(format!("delete_secret({name})"));
        format!("deleted {name}")
    }

    /// Rotates a secret.
    #[ai_function]
    fn rotate_secret(&self, name: String) -> String {
        RAN.lock().unwrap().push(format!("rotate_secret({name})"));
        format!("rotated {name}")
    }
}

fn call(id: &str, name: &str, arguments: serde_json::Value) -> ToolCall {
    ToolCall::new(id, name, arguments.to_string())
}

fn waiting(pending: &[PendingApproval]) -> Vec<(&str, &str, &str)> {
    pending
        .iter()
        .map(|p| {
            (
                p.call_id.as_str(),
                p.function.as_str(),
                p.arguments.as_str(),
            )
        })
        .collect()
}

/// Every tool call is followed by its result before the next assistant or user message.
fn assert_valid(history: &[ChatMessage]) {
    let mut open: Vec<&str> = Vec::new();
    for message in history {
        match message {
            ChatMessage::Assistant { tool_calls, .. } => {
                assert!(open.is_empty(), "unanswered {open:?}: {history:#?}");
                open = tool_calls.iter().map(|c| c.id.as_str()).collect();
            }
            ChatMessage::Tool { call_id, .. } => {
                let at = open.iter().position(|id| id == call_id).expect("a call");
                open.remove(at);
            }
            ChatMessage::User { .. } => assert!(open.is_empty(), "unanswered {open:?}"),
            other => panic!("a message kind this check does not know: {other:?}"),
        }
    }
    assert!(open.is_empty(), "unanswered {open:?}");
}

#[tokio::test]
async fn an_executed_recovered_call_needs_approval_too() {
    let _serial = SERIAL.lock().await;
    ran();
    let model = ScriptedChatClient::with_replies([
        // Hidden members called by name: recovery expands the vault and runs them.
        ChatResponse::tool_calls(vec![
            call("c1", "list_secrets", json!({})),
            call("c2", "Vault.delete_secret", json!({"name": "db"})),
        ]),
        ChatResponse::text("Deleted db."),
    ]);
    // `hide`: the recovered call's result is the function's alone (in `fixed` it also carries
    // the container's instructions).
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_tool_harness::<Vault>()
        .configure_harness_collapsing(|c| c.execute_recovered_calls = true)
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    let mut session = agent.session();
    let paused = session.run("Delete the db secret").await.unwrap();
    assert_eq!(
        waiting(&paused.pending_approvals),
        [("c2", "delete_secret", r#"{"name":"db"}"#)]
    );
    assert_eq!(ran(), ["list_secrets"]);
    // The turn is not over: the vault stays expanded while it waits.
    assert_eq!(session.state().expanded, ["Vault"]);

    // Resumed from the stored form, as another process would.
    let state = serde_json::from_str(&serde_json::to_string(session.state()).unwrap()).unwrap();
    let mut resumed = agent.resume(state);
    let output = resumed
        .decide(Approvals::new().approve("c2"))
        .await
        .unwrap();
    assert_eq!(output.text, "Deleted db.");
    assert_eq!(output.iterations, 2);
    assert_eq!(ran(), ["delete_secret(db)"]);
    let request = &model.requests()[1];
    assert_valid(&request.messages);
    assert_eq!(request.tool_result("c1"), Some(("db, api", false)));
    assert_eq!(request.tool_result("c2"), Some(("deleted db", false)));
    // The turn ended: collapsed again.
    assert!(resumed.state().expanded.is_empty());
    assert_eq!(
        request.tool_names(),
        ["list_secrets", "delete_secret", "rotate_secret"]
    );
}

#[tokio::test]
async fn a_call_through_the_fixed_layouts_call_tool_needs_approval() {
    let _serial = SERIAL.lock().await;
    ran();
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![call("c1", "Vault", json!({}))]),
        ChatResponse::tool_calls(vec![
            call(
                "c2",
                CALL_TOOL,
                json!({"name": "rotate_secret", "arguments": {"name": "api"}}),
            ),
            call(
                "c3",
                CALL_TOOL,
                json!({"name": "delete_secret", "arguments": {"name": "db"}}),
            ),
        ]),
        ChatResponse::text("Rotated api, kept db."),
    ]);
    let agent = AgentBuilder::new()
        .with_tool_harness::<Vault>()
        .with_collapsing_layout(CollapsingLayout::Fixed)
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    let mut session = agent.session();
    let paused = session.run("Rotate api, delete db").await.unwrap();
    // The call tool stands for the call it names: that is what waits.
    assert_eq!(
        waiting(&paused.pending_approvals),
        [("c3", "delete_secret", r#"{"name":"db"}"#)]
    );
    assert_eq!(ran(), ["rotate_secret(api)"]);
    let output = session
        .decide(Approvals::new().deny("c3", "db is in use"))
        .await
        .unwrap();
    assert_eq!(output.text, "Rotated api, kept db.");
    assert!(ran().is_empty());
    let requests = model.requests();
    let last = &requests[2];
    assert_valid(&last.messages);
    assert_eq!(last.tool_result("c2"), Some(("rotated api", false)));
    assert_eq!(
        last.tool_result("c3"),
        Some((
            "Function 'delete_secret' was denied by the user: db is in use",
            true
        ))
    );
    // The fixed layout's tool list never changed, pause or not.
    assert_eq!(requests[1].tool_names(), requests[2].tool_names());
}

#[tokio::test]
async fn a_call_of_a_natively_loaded_tool_needs_approval() {
    let _serial = SERIAL.lock().await;
    ran();
    let model = ScriptedChatClient::new().with_deferred_tools(DeferredTools::ToolReferences);
    model.push(ChatResponse::tool_calls(vec![call(
        "c1",
        "Vault",
        json!({}),
    )]));
    model.push(ChatResponse::tool_calls(vec![call(
        "c2",
        "delete_secret",
        json!({"name": "api"}),
    )]));
    model.push(ChatResponse::text("Deleted."));
    let agent = AgentBuilder::new()
        .with_tool_harness::<Vault>()
        .with_collapsing_layout(CollapsingLayout::Native)
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    let mut session = agent.session();
    let paused = session.run("Delete api").await.unwrap();
    assert_eq!(
        waiting(&paused.pending_approvals),
        [("c2", "delete_secret", r#"{"name":"api"}"#)]
    );
    assert!(ran().is_empty());
    session
        .decide(Approvals::new().approve_edited("c2", json!({"name": "api-old"})))
        .await
        .unwrap();
    assert_eq!(ran(), ["delete_secret(api-old)"]);
    let last = &model.requests()[2];
    assert_valid(&last.messages);
    assert_eq!(
        last.tool_result("c2"),
        Some((
            "The user edited the arguments before approving; the call ran with {\"name\":\"api-old\"}\n\ndeleted api-old",
            false
        ))
    );
}

#[tokio::test]
async fn config_and_harness_options_mark_functions() {
    let _serial = SERIAL.lock().await;
    ran();
    let text = r#"{"tool_harnesses": [{"name": "Vault", "RequiresApproval": ["rotate_secret"]}]}"#;
    let config = AgentConfig::from_json(text).unwrap();
    assert_eq!(
        config.tool_harnesses[0],
        ToolHarnessReference::new("Vault").with_approval_required(["rotate_secret"])
    );
    // Written back in canonical form, and read again the same.
    let written = serde_json::to_string(&config).unwrap();
    assert_eq!(
        written,
        r#"{"tool_harnesses":[{"name":"Vault","requires_approval":["rotate_secret"]}]}"#
    );
    assert_eq!(AgentConfig::from_json(&written).unwrap(), config);

    let model = ScriptedChatClient::with_replies([ChatResponse::tool_calls(vec![
        call("c1", "rotate_secret", json!({"name": "db"})),
        call("c2", "delete_secret", json!({"name": "db"})),
        call("c3", "list_secrets", json!({})),
    ])]);
    let agent = AgentBuilder::from_config(config)
        .without_harness_collapsing()
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    let paused = agent.session().run("Clean up").await.unwrap();
    // The config's mark adds to the declared one.
    let names: Vec<&str> = paused
        .pending_approvals
        .iter()
        .map(|p| p.function.as_str())
        .collect();
    assert_eq!(names, ["rotate_secret", "delete_secret"]);
    assert_eq!(ran(), ["list_secrets"]);

    // The same in code.
    let agent = AgentBuilder::new()
        .with_tool_harness_options::<Vault>(|o| o.with_approval_required(["list_secrets"]))
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    let tools = agent.flat_tool_session();
    let refused = tools.call_tool("t1", "list_secrets", "{}").await.unwrap();
    assert_eq!(
        refused.result.text,
        "Function 'list_secrets' needs approval, and there is nobody to ask here"
    );
    assert!(refused.result.is_error);
    assert!(ran().is_empty());

    // A name the harness does not declare fails the build, listing the ones it does.
    let error = AgentBuilder::from_config(
        AgentConfig::from_json(
            r#"{"tool_harnesses": [{"name": "Vault", "requires_approval": ["drop_all"]}]}"#,
        )
        .unwrap(),
    )
    .with_chat_client(ScriptedChatClient::new())
    .build()
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "function 'drop_all' not found in harness 'Vault'; available: list_secrets, delete_secret, rotate_secret"
    );
    let error = AgentConfig::from_json(
        r#"{"tool_harnesses": [{"name": "Vault", "requires_approval": "all"}]}"#,
    )
    .unwrap_err();
    assert!(error.to_string().contains("requires_approval"), "{error}");
}

/// Requires approval for calls whose arguments mention `prod`, waives it for `dry_run`, and
/// records what it sees.
#[derive(Default)]
struct Policy {
    seen: Arc<Mutex<Vec<String>>>,
}

#[async_trait]
impl Middleware for Policy {
    async fn approval_required(
        &self,
        call: &FunctionCall,
        required: bool,
    ) -> Result<bool, MiddlewareError> {
        if call.arguments().contains("dry_run") {
            return Ok(false);
        }
        Ok(required || call.arguments().contains("prod"))
    }

    async fn on_approval(&self, call: &FunctionCall, decision: &ApprovalDecision) -> HookResult {
        self.seen.lock().unwrap().push(format!(
            "decided {} {} approved={}",
            call.call_id(),
            call.arguments(),
            decision.is_approved()
        ));
        Ok(())
    }

    async fn before_function(&self, call: &mut FunctionCall) -> HookResult {
        self.seen.lock().unwrap().push(format!(
            "run {} {} approval={:?}",
            call.call_id(),
            call.arguments(),
            call.approval().map(ApprovalDecision::is_approved)
        ));
        Ok(())
    }

    async fn after_message_turn(&self, _turn: &TurnInfo, outcome: TurnOutcome<'_>) -> HookResult {
        let line = match outcome {
            TurnOutcome::Paused { pending, .. } => format!("paused with {}", pending.len()),
            TurnOutcome::Finished { text, .. } => format!("finished: {text}"),
            TurnOutcome::Failed(error) => format!("failed: {error}"),
            other => format!("{other:?}"),
        };
        self.seen.lock().unwrap().push(line);
        Ok(())
    }
}

#[tokio::test]
async fn middleware_decides_per_call_and_sees_every_decision() {
    let _serial = SERIAL.lock().await;
    ran();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let events = Arc::new(Mutex::new(Vec::new()));
    let log = events.clone();
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![
            call("c1", "rotate_secret", json!({"name": "dev"})),
            call("c2", "rotate_secret", json!({"name": "prod"})),
            call(
                "c3",
                "delete_secret",
                json!({"name": "tmp", "dry_run": true}),
            ),
            call("c4", "delete_secret", json!({"name": "db"})),
        ]),
        ChatResponse::text("Done."),
    ]);
    let agent = AgentBuilder::new()
        .with_tool_harness::<Vault>()
        .without_harness_collapsing()
        .with_middleware(Policy { seen: seen.clone() })
        .with_chat_client(model.clone())
        .on_event(move |event| match event {
            AgentEvent::ApprovalRequested { call_id, name, .. } => {
                log.lock()
                    .unwrap()
                    .push(format!("requested {call_id} {name}"));
            }
            AgentEvent::ApprovalDecided { record } => log.lock().unwrap().push(format!(
                "decided {} edited={} ran_with={:?}",
                record.call_id,
                record.edited(),
                record.arguments()
            )),
            _ => {}
        })
        .build()
        .unwrap();
    let mut session = agent.session();
    let paused = session.run("Rotate and clean").await.unwrap();
    // `prod` needs approval by the policy, `dry_run` waives the declared need.
    let ids: Vec<&str> = paused
        .pending_approvals
        .iter()
        .map(|p| p.call_id.as_str())
        .collect();
    assert_eq!(ids, ["c2", "c4"]);
    assert_eq!(ran(), ["rotate_secret(dev)", "delete_secret(tmp)"]);
    assert_eq!(
        *events.lock().unwrap(),
        ["requested c2 rotate_secret", "requested c4 delete_secret"]
    );

    session
        .decide(
            Approvals::new()
                .approve_edited("c2", json!({"name": "prod-eu"}))
                .deny("c4", "no"),
        )
        .await
        .unwrap();
    assert_eq!(ran(), ["rotate_secret(prod-eu)"]);
    assert_eq!(
        *seen.lock().unwrap(),
        [
            r#"run c1 {"name":"dev"} approval=None"#,
            r#"run c3 {"dry_run":true,"name":"tmp"} approval=None"#,
            "paused with 2",
            r#"decided c2 {"name":"prod"} approved=true"#,
            r#"decided c4 {"name":"db"} approved=false"#,
            r#"run c2 {"name":"prod-eu"} approval=Some(true)"#,
            "finished: Done.",
        ]
    );
    assert_eq!(
        events.lock().unwrap()[2..],
        [
            r#"decided c2 edited=true ran_with=Some("{\"name\":\"prod-eu\"}")"#,
            "decided c4 edited=false ran_with=None",
        ]
    );
    assert_eq!(session.state().approvals.len(), 2);
    assert_valid(session.history());
}

#[tokio::test]
async fn decisions_that_do_not_fit_change_nothing() {
    let _serial = SERIAL.lock().await;
    ran();
    let model = ScriptedChatClient::with_replies([ChatResponse::tool_calls(vec![
        call("c1", "delete_secret", json!({"name": "a"})),
        call("c2", "delete_secret", json!({"name": "b"})),
    ])]);
    let agent = AgentBuilder::new()
        .with_tool_harness::<Vault>()
        .without_harness_collapsing()
        .with_chat_client(model)
        .build()
        .unwrap();
    let mut session = agent.session();
    assert!(matches!(
        session.decide(Approvals::new()).await,
        Err(RunError::Approval(ApprovalError::NotPaused))
    ));
    session.run("Delete a and b").await.unwrap();
    let before = session.state().clone();
    let cases = [
        (
            Approvals::new().approve("c1").approve("c2").approve("c9"),
            "no waiting call has the id 'c9'; the waiting calls are c1, c2",
        ),
        (
            Approvals::new()
                .approve("c1")
                .deny("c1", "no")
                .approve("c2"),
            "two decisions for call 'c1'; give one",
        ),
        (
            Approvals::new()
                .approve("c1")
                .approve_edited("c2", json!(["b"])),
            "the edited arguments of call 'c2' are not a JSON object: not a JSON object",
        ),
        (
            Approvals::new().deny("c2", "no"),
            "no decision for the waiting calls c1; every waiting call needs one",
        ),
    ];
    for (approvals, message) in cases {
        let error = session.decide(approvals).await.unwrap_err();
        assert!(matches!(error, RunError::Approval(_)), "{error:?}");
        assert_eq!(error.to_string(), message);
        assert_eq!(session.state(), &before);
    }
    let error = session.run("Something else").await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "the session is paused: calls c1, c2 wait for approval; decide them with Session::decide before sending another message"
    );
    // An agent without the function cannot resume it.
    let other = AgentBuilder::new()
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    let mut elsewhere = other.resume(before.clone());
    let error = elsewhere
        .decide(Approvals::new().approve("c1").approve("c2"))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "function 'delete_secret' of harness 'Vault' (call 'c1') is not registered for this agent; resume with the agent and run config that paused the session"
    );
    assert_eq!(elsewhere.state(), &before);
    assert!(ran().is_empty());
}

/// Approves with edited arguments.
struct Editor;

#[async_trait]
impl Approver for Editor {
    async fn decide(&self, call: &PendingApproval) -> Result<ApprovalDecision, String> {
        let mut arguments = call.arguments_json().map_err(|e| e.to_string())?;
        arguments["name"] = json!("safe");
        Ok(ApprovalDecision::edited(arguments))
    }
}

#[tokio::test]
async fn a_tool_session_asks_its_approver() {
    let _serial = SERIAL.lock().await;
    ran();
    let agent = AgentBuilder::new()
        .with_tool_harness::<Vault>()
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    let tools = agent.tool_session().with_approver(Editor);
    // Recovered and executed? Not in a tool session by default: open the container first.
    tools.call_tool("t1", "Vault", "{}").await.unwrap();
    let outcome = tools
        .call_tool("t2", "delete_secret", r#"{"name": "db"}"#)
        .await
        .unwrap();
    assert_eq!(
        outcome.result.text,
        "The user edited the arguments before approving; the call ran with {\"name\":\"safe\"}\n\ndeleted safe"
    );
    assert_eq!(ran(), ["delete_secret(safe)"]);
}

#[tokio::test]
async fn a_sub_agent_cannot_pause_its_parent() {
    let _serial = SERIAL.lock().await;
    ran();
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![call("p1", "cleaner", json!({"input": "delete db"}))]),
        // The child:
        ChatResponse::tool_calls(vec![call("k1", "delete_secret", json!({"name": "db"}))]),
        // The parent again:
        ChatResponse::text("The cleaner could not do it."),
    ]);
    let child = AgentConfig::from_json(
        r#"{"tool_harnesses": ["Vault"], "collapsing": {"enabled": false}}"#,
    )
    .unwrap();
    let agent = AgentBuilder::new()
        .with_sub_agent(hpd_agent::SubAgent::new("cleaner", "Cleans up", child))
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    let output = agent.run("Clean up").await.unwrap();
    assert!(!output.is_paused());
    let requests = model.requests();
    let (text, is_error) = requests[2].tool_result("p1").unwrap();
    assert!(is_error);
    assert_eq!(
        text,
        "Error: sub-agent 'cleaner' stopped: its calls of delete_secret need approval, which a sub-agent cannot ask for"
    );
    assert!(ran().is_empty());
}

#[tokio::test]
async fn a_paused_turn_that_lost_the_save_race_stays_paused_when_appended() {
    use hpd_agent::store::StoreError;
    use hpd_agent::store::{MemorySessionStore, SessionStore};

    let _serial = SERIAL.lock().await;
    ran();
    let store = Arc::new(MemorySessionStore::new());
    let model = ScriptedChatClient::with_replies([
        ChatResponse::text("Hello."),
        ChatResponse::tool_calls(vec![call("c1", "delete_secret", json!({"name": "db"}))]),
        ChatResponse::text("Deleted."),
    ]);
    let agent = AgentBuilder::new()
        .with_tool_harness::<Vault>()
        .without_harness_collapsing()
        .with_chat_client(model)
        .build()
        .unwrap();
    let mut one = agent.open_session(store.clone(), "race").await.unwrap();
    let mut two = agent.open_session(store.clone(), "race").await.unwrap();
    one.run("Hi").await.unwrap();
    let Err(RunError::Store(StoreError::Conflict {
        unsaved: Some(turn),
        ..
    })) = two.run("Delete db").await
    else {
        panic!("a conflict");
    };
    assert_eq!(turn.paused.as_ref().map(|p| p.pending().len()), Some(1));
    two.append_unsaved(&turn).await.unwrap();
    assert_eq!(two.pending_approvals()[0].call_id, "c1");
    let stored = store.load("race").await.unwrap().unwrap();
    assert!(stored.state.paused.is_some());
    two.decide(Approvals::new().approve("c1")).await.unwrap();
    assert_eq!(ran(), ["delete_secret(db)"]);
    let stored = store.load("race").await.unwrap().unwrap();
    assert_valid(&stored.state.history);
    // Hi, Hello., Delete db, the call, its result, Deleted.
    assert_eq!(stored.state.history.len(), 6);
    assert_eq!(stored.state.approvals.len(), 1);
}
