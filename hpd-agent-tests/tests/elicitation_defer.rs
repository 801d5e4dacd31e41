//! Deferred questions: an elicitation handler whose user is not there answers
//! `AskError::Deferred`, the run pauses with the question saved in the session, and
//! `Session::decide` with `Approvals::answer` goes on with the same tool call, which gets
//! exactly one result. In an agent's own run, and through an `McpHarness` against the
//! project's own `McpServer`: on 2026-07-28 the `input_required` round is saved and answered
//! later; on a session revision the server's request cannot wait, so the run does not pause.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use hpd_agent::agent::SessionState;
use hpd_agent::approval::{ApprovalError, Approvals};
use hpd_agent::mcp::{McpHarness, McpHttpServer, McpServer};
use hpd_agent::tool::{
    AskError, ElicitAction, Elicitation, ElicitationAnswer, ElicitationHandler, SamplingRequest,
};
use hpd_agent::{
    AgentBuilder, AgentEvent, ChatMessage, ChatResponse, HarnessBuilder, RunError,
    ScriptedChatClient, Tool, ToolCall, ToolResult,
};
use serde_json::{Value, json};

const TOKEN: &str = "defer-token-51c9";

fn content(value: Value) -> serde_json::Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

fn people_form() -> Elicitation {
    Elicitation::form(
        "How many people?",
        json!({"type": "object", "properties": {"people": {"type": "integer", "minimum": 1}}, "required": ["people"]}),
    )
}

/// `book` asks how many people come, after asking the model for a greeting (an earlier ask
/// whose answer the call replays when it goes on); `runs` counts its body's runs.
fn book(runs: &Arc<AtomicUsize>) -> Tool {
    let runs = runs.clone();
    Tool::new(
        "book",
        "Books a table",
        json!({"type": "object", "properties": {}}),
        move |_, ctx| {
            let runs = runs.clone();
            async move {
                runs.fetch_add(1, Ordering::SeqCst);
                let greeting = match ctx.sample(SamplingRequest::new("Greet", 5)).await {
                    Ok(reply) => reply.text,
                    Err(error) => return ToolResult::error(format!("no greeting: {error}")),
                };
                match ctx.elicit(people_form()).await {
                    Ok(answer) if answer.action == ElicitAction::Accept => ToolResult::ok(format!(
                        "{greeting}: booked for {}",
                        answer.field("people").unwrap_or(&Value::Null)
                    )),
                    Ok(answer) => ToolResult::ok(format!("not booked: {:?}", answer.action)),
                    Err(error) => ToolResult::error(format!("no answer: {error}")),
                }
            }
        },
    )
}

/// `clock` answers at once.
fn clock() -> Tool {
    Tool::new(
        "clock",
        "The time",
        json!({"type": "object", "properties": {}}),
        |_, _| async { ToolResult::ok("12:00") },
    )
}

/// The user is not there: every question is deferred. Counts the questions.
#[derive(Clone, Default)]
struct Later {
    asked: Arc<Mutex<Vec<String>>>,
}

#[hpd_agent::async_trait]
impl ElicitationHandler for Later {
    async fn elicit(&self, request: &Elicitation) -> Result<ElicitationAnswer, AskError> {
        self.asked.lock().unwrap().push(request.message.clone());
        Err(AskError::Deferred)
    }
}

/// A model that calls `book` and `clock` in one response, greets for the sampling (`Hi`),
/// then answers `Done.`.
fn booking_model() -> ScriptedChatClient {
    ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![
            ToolCall::new("c1", "book", "{}"),
            ToolCall::new("c2", "clock", "{}"),
        ]),
        ChatResponse::text("Hi"),
        ChatResponse::text("Done."),
    ])
}

/// An agent with `book` and `clock` and `model`, deferring questions.
fn local_agent_with(
    runs: &Arc<AtomicUsize>,
    model: &ScriptedChatClient,
) -> (hpd_agent::Agent, Later) {
    let later = Later::default();
    let agent = AgentBuilder::new()
        .with_harness(
            HarnessBuilder::new("Restaurant")
                .with_tool(book(runs))
                .with_tool(clock())
                .build()
                .unwrap(),
        )
        .with_elicitation_handler(later.clone())
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    (agent, later)
}

/// [`local_agent_with`] the [`booking_model`].
fn local_agent(runs: &Arc<AtomicUsize>) -> (hpd_agent::Agent, ScriptedChatClient, Later) {
    let model = booking_model();
    let (agent, later) = local_agent_with(runs, &model);
    (agent, model, later)
}

/// The tool messages of `history`, as (call id, text).
fn tool_messages(history: &[ChatMessage]) -> Vec<(String, String)> {
    history
        .iter()
        .filter_map(|m| match m {
            ChatMessage::Tool {
                call_id, content, ..
            } => Some((call_id.clone(), content.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_deferred_question_pauses_the_run_and_its_answer_completes_the_same_call() {
    let runs = Arc::new(AtomicUsize::new(0));
    let (agent, model, later) = local_agent(&runs);
    let mut session = agent.session();
    let paused = session.run("Book a table").await.unwrap();

    assert!(paused.is_paused());
    assert!(paused.pending_approvals.is_empty());
    let question = &paused.pending_elicitations[0];
    assert_eq!(
        (
            question.call_id.as_str(),
            question.function.as_str(),
            question.harness.as_str()
        ),
        ("c1", "book", "Restaurant")
    );
    assert_eq!(question.request.message, "How many people?");
    assert_eq!(question.key(), "elicitation-2");
    assert_eq!(session.pending_elicitations(), paused.pending_elicitations);
    assert_eq!(*later.asked.lock().unwrap(), ["How many people?"]);
    // The history ends with the calls; no result yet (`clock`'s waits in the paused turn).
    assert!(matches!(
        session.state().history.last(),
        Some(ChatMessage::Assistant { .. })
    ));
    assert!(tool_messages(&session.state().history).is_empty());

    // A new message is refused while the question waits.
    let refused = session.run("Anything else?").await.unwrap_err();
    assert!(
        matches!(&refused, RunError::Approval(ApprovalError::Asking { calls }) if calls == "c1"),
        "{refused:?}"
    );

    // Saved and loaded as JSON, resumed by another agent (another process would do the same).
    let json = serde_json::to_string(session.state()).unwrap();
    assert!(json.contains(r#""elicitations":"#), "{json}");
    let state: SessionState = serde_json::from_str(&json).unwrap();
    let (agent, _) = local_agent_with(&runs, &model);
    let mut session = agent.resume(state);
    let output = session
        .decide(Approvals::new().answer(
            "c1",
            ElicitationAnswer::accept(content(json!({"people": 3}))),
        ))
        .await
        .unwrap();

    assert_eq!(output.text, "Done.");
    assert!(!output.is_paused());
    assert!(session.state().paused.is_none());
    // The call ran again from its start: the greeting was replayed, not asked of the model.
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    assert_eq!(model.requests().len(), 3);
    // One result per call, in call order, right after the calls.
    let history = &session.state().history;
    let calls_at = history
        .iter()
        .position(
            |m| matches!(m, ChatMessage::Assistant { tool_calls, .. } if !tool_calls.is_empty()),
        )
        .unwrap();
    assert_eq!(
        tool_messages(&history[calls_at..]),
        [
            ("c1".to_owned(), "Hi: booked for 3".to_owned()),
            ("c2".to_owned(), "12:00".to_owned())
        ]
    );
    assert!(matches!(&history[calls_at + 1], ChatMessage::Tool { call_id, .. } if call_id == "c1"));
    assert_eq!(history.len(), calls_at + 4);
}

/// Operators see the pause in the events: one `QuestionDeferred` per deferred question, naming
/// the call and carrying the question.
#[tokio::test]
async fn a_deferred_question_is_an_event() {
    let runs = Arc::new(AtomicUsize::new(0));
    let later = Later::default();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let agent = AgentBuilder::new()
        .with_harness(
            HarnessBuilder::new("Restaurant")
                .with_tool(book(&runs))
                .with_tool(clock())
                .build()
                .unwrap(),
        )
        .with_elicitation_handler(later)
        .with_chat_client(booking_model())
        .on_event({
            let seen = seen.clone();
            move |event| {
                if let AgentEvent::QuestionDeferred {
                    call_id,
                    name,
                    harness,
                    question,
                } = event
                {
                    seen.lock().unwrap().push((
                        call_id.clone(),
                        name.clone(),
                        harness.clone(),
                        question.message.clone(),
                        question.key.clone(),
                    ));
                }
            }
        })
        .build()
        .unwrap();
    let paused = agent.session().run("Book a table").await.unwrap();
    assert!(paused.is_paused());
    assert_eq!(
        *seen.lock().unwrap(),
        [(
            "c1".to_owned(),
            "book".to_owned(),
            "Restaurant".to_owned(),
            "How many people?".to_owned(),
            Some("elicitation-2".to_owned()),
        )]
    );
}

#[tokio::test]
async fn a_declined_question_gives_the_function_the_decline() {
    let runs = Arc::new(AtomicUsize::new(0));
    let (agent, model, _) = local_agent(&runs);
    let mut session = agent.session();
    assert!(session.run("Book a table").await.unwrap().is_paused());
    let output = session
        .decide(Approvals::new().answer("c1", ElicitationAnswer::decline()))
        .await
        .unwrap();
    assert_eq!(output.text, "Done.");
    assert_eq!(
        model.requests()[2].tool_result("c1"),
        Some(("not booked: Decline", false))
    );
    assert_eq!(
        model.requests()[2].tool_result("c2"),
        Some(("12:00", false))
    );
}

#[tokio::test]
async fn an_answer_that_does_not_fit_is_refused_and_nothing_is_lost() {
    let runs = Arc::new(AtomicUsize::new(0));
    let (agent, model, _) = local_agent(&runs);
    let mut session = agent.session();
    assert!(session.run("Book a table").await.unwrap().is_paused());
    let before = session.state().clone();

    let too_few = session
        .decide(Approvals::new().answer(
            "c1",
            ElicitationAnswer::accept(content(json!({"people": 0}))),
        ))
        .await
        .unwrap_err();
    assert!(
        matches!(&too_few, RunError::Approval(ApprovalError::InvalidAnswer { call_id, message })
            if call_id == "c1" && message.contains("does not fit the form")),
        "{too_few}"
    );
    assert!(
        too_few
            .to_string()
            .contains("the answer for call 'c1' does not fit its question")
    );
    // No answer, an answer for another call, two answers: refused the same way.
    let none = session.decide(Approvals::new()).await.unwrap_err();
    assert!(
        matches!(&none, RunError::Approval(ApprovalError::Unanswered { calls }) if calls == "c1"),
        "{none}"
    );
    let other = session
        .decide(Approvals::new().answer("c9", ElicitationAnswer::decline()))
        .await
        .unwrap_err();
    assert!(
        matches!(&other, RunError::Approval(ApprovalError::UnknownCall { call_id, .. }) if call_id == "c9"),
        "{other}"
    );
    let twice = session
        .decide(
            Approvals::new()
                .answer("c1", ElicitationAnswer::decline())
                .answer("c1", ElicitationAnswer::cancel()),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            &twice,
            RunError::Approval(ApprovalError::DuplicateDecision { .. })
        ),
        "{twice}"
    );

    // Nothing ran, nothing changed: the question still waits, and a good answer goes on.
    assert_eq!(session.state(), &before);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(model.requests().len(), 2);
    let output = session
        .decide(Approvals::new().answer(
            "c1",
            ElicitationAnswer::accept(content(json!({"people": 2}))),
        ))
        .await
        .unwrap();
    assert_eq!(output.text, "Done.");
    assert_eq!(
        model.requests()[2].tool_result("c1"),
        Some(("Hi: booked for 2", false))
    );
}

#[tokio::test]
async fn a_second_question_of_the_call_pauses_the_run_again() {
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = runs.clone();
    let two_questions = Tool::new(
        "profile",
        "Asks two questions",
        json!({"type": "object", "properties": {}}),
        move |_, ctx| {
            let counted = counted.clone();
            async move {
                counted.fetch_add(1, Ordering::SeqCst);
                let form = |message: &str, field: &str| {
                    Elicitation::form(
                        message,
                        json!({"type": "object", "properties": {field: {"type": "string"}}, "required": [field]}),
                    )
                };
                let name = ctx.elicit(form("Your name?", "name")).await;
                let colour = ctx.elicit(form("Your colour?", "colour")).await;
                match (name, colour) {
                    (Ok(name), Ok(colour)) => ToolResult::ok(format!(
                        "{} likes {}",
                        name.field("name").and_then(Value::as_str).unwrap_or("?"),
                        colour
                            .field("colour")
                            .and_then(Value::as_str)
                            .unwrap_or("?")
                    )),
                    other => ToolResult::error(format!("{other:?}")),
                }
            }
        },
    );
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "profile", "{}")]),
        ChatResponse::text("Noted."),
    ]);
    let later = Later::default();
    let agent = AgentBuilder::new()
        .with_harness(
            HarnessBuilder::new("People")
                .with_tool(two_questions)
                .build()
                .unwrap(),
        )
        .with_elicitation_handler(later.clone())
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    let mut session = agent.session();
    let first = session.run("Who am I?").await.unwrap();
    assert_eq!(first.pending_elicitations[0].request.message, "Your name?");

    let second = session
        .decide(Approvals::new().answer(
            "c1",
            ElicitationAnswer::accept(content(json!({"name": "Ada"}))),
        ))
        .await
        .unwrap();
    assert!(second.is_paused());
    assert_eq!(
        second.pending_elicitations[0].request.message,
        "Your colour?"
    );
    assert_eq!(second.pending_elicitations[0].key(), "elicitation-2");
    assert_eq!(model.requests().len(), 1);

    let done = session
        .decide(Approvals::new().answer(
            "c1",
            ElicitationAnswer::accept(content(json!({"colour": "green"}))),
        ))
        .await
        .unwrap();
    assert_eq!(done.text, "Noted.");
    assert_eq!(
        model.requests()[1].tool_result("c1"),
        Some(("Ada likes green", false))
    );
    // Each question was put to the handler once: the name was replayed on the third run.
    assert_eq!(*later.asked.lock().unwrap(), ["Your name?", "Your colour?"]);
    assert_eq!(runs.load(Ordering::SeqCst), 3);
    assert_eq!(tool_messages(&session.state().history).len(), 1);
}

// ---- through an McpHarness against the project's own McpServer ---------------------------

/// A server with `book`, which asks how many people come. `flat` serves 2026-07-28;
/// otherwise it collapses in the `hide` layout and speaks the session revisions.
async fn serve(flat: bool) -> (McpHttpServer, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = runs.clone();
    let book = Tool::new(
        "book",
        "Books a table",
        json!({"type": "object", "properties": {}}),
        move |_, ctx| {
            let counted = counted.clone();
            async move {
                counted.fetch_add(1, Ordering::SeqCst);
                match ctx.elicit(people_form()).await {
                    Ok(answer) if answer.action == ElicitAction::Accept => ToolResult::ok(format!(
                        "booked for {}",
                        answer.field("people").unwrap_or(&Value::Null)
                    )),
                    Ok(answer) => ToolResult::ok(format!("not booked: {:?}", answer.action)),
                    Err(error) => ToolResult::error(format!("no answer: {error}")),
                }
            }
        },
    );
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_harness(
            HarnessBuilder::new("Restaurant")
                .with_tool(book)
                .build()
                .unwrap(),
        )
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    let mut server = McpServer::new(agent).with_bearer_token(TOKEN);
    if flat {
        server = server.without_collapse();
    }
    let server = server
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    (server, runs)
}

/// The using agent: its model gives `replies`; questions are deferred.
async fn client_agent(
    server: &McpHttpServer,
    replies: Vec<ChatResponse>,
) -> (hpd_agent::Agent, ScriptedChatClient) {
    let remote = McpHarness::http("Remote", server.url())
        .with_header("Authorization", format!("Bearer {TOKEN}"))
        .without_collapse()
        .connect()
        .await
        .unwrap();
    let model = ScriptedChatClient::with_replies(replies);
    let agent = AgentBuilder::new()
        .with_harness(remote)
        .with_elicitation_handler(Later::default())
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    (agent, model)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revision_2026_07_28_a_deferred_round_is_answered_when_the_session_resumes() {
    let (server, runs) = serve(true).await;
    let call_book = vec![ChatResponse::tool_calls(vec![ToolCall::new(
        "c1", "book", "{}",
    )])];
    let (agent, _) = client_agent(&server, call_book).await;
    let mut session = agent.session();
    let paused = session.run("Book a table").await.unwrap();
    assert!(paused.is_paused(), "{paused:?}");
    let question = &paused.pending_elicitations[0];
    assert_eq!(
        (question.call_id.as_str(), question.harness.as_str()),
        ("c1", "Remote")
    );
    assert_eq!(question.request.message, "How many people?");
    // The server's key of the input.
    assert_eq!(question.key(), "elicitation-1");
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    // Resumed by another agent with a connection of its own, from the saved state.
    let state: SessionState =
        serde_json::from_str(&serde_json::to_string(session.state()).unwrap()).unwrap();
    let (agent, model) = client_agent(&server, vec![ChatResponse::text("Done.")]).await;
    let mut session = agent.resume(state);
    let output = session
        .decide(Approvals::new().answer(
            "c1",
            ElicitationAnswer::accept(content(json!({"people": 4}))),
        ))
        .await
        .unwrap();
    assert_eq!(output.text, "Done.");
    assert_eq!(
        model.requests()[0].tool_result("c1"),
        Some(("booked for 4", false))
    );
    // The saved round was answered with the server's request state: one more run of the
    // function, not a new call that asks again.
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    assert_eq!(tool_messages(&session.state().history).len(), 1);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_revision_cannot_wait_so_the_run_does_not_pause() {
    let (server, runs) = serve(false).await;
    let replies = vec![
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "book", "{}")]),
        ChatResponse::text("Done."),
    ];
    let (agent, model) = client_agent(&server, replies).await;
    let mut session = agent.session();
    let output = session.run("Book a table").await.unwrap();
    assert!(!output.is_paused());
    assert_eq!(output.text, "Done.");
    let requests = model.requests();
    let (text, is_error) = requests[1].tool_result("c1").unwrap();
    assert!(is_error, "{text}");
    assert!(
        text.contains("no answer: ")
            && text.contains("deferred the question")
            && text.contains("only a 2026-07-28 input_required round can wait"),
        "{text}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    server.shutdown().await;
}

#[tokio::test]
async fn a_tool_session_cannot_wait_so_the_function_gets_the_deferral() {
    let runs = Arc::new(AtomicUsize::new(0));
    let (agent, _, later) = local_agent(&runs);
    let outcome = agent
        .tool_session()
        .call_tool("c1", "book", "{}")
        .await
        .unwrap();
    assert!(outcome.result.is_error);
    assert_eq!(
        outcome.result.text,
        format!("no answer: {}", AskError::Deferred)
    );
    assert!(
        outcome
            .result
            .text
            .contains("this call cannot wait for the answer")
    );
    assert_eq!(*later.asked.lock().unwrap(), ["How many people?"]);
}

#[tokio::test]
async fn a_session_paused_for_approval_saves_as_before() {
    let send = Tool::new(
        "send",
        "Sends a mail",
        json!({"type": "object"}),
        |_, _| async { ToolResult::ok("sent") },
    )
    .with_approval_required();
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "send", "{}")]),
        ChatResponse::text("Sent."),
    ]);
    let agent = AgentBuilder::new()
        .with_harness(HarnessBuilder::new("Mail").with_tool(send).build().unwrap())
        .with_chat_client(model)
        .build()
        .unwrap();
    let mut session = agent.session();
    let paused = session.run("Mail it").await.unwrap();
    assert!(paused.is_paused() && paused.pending_elicitations.is_empty());
    // No questions: the saved form has no `elicitations` key, as sessions saved before had.
    let json = serde_json::to_string(session.state()).unwrap();
    assert!(
        json.contains(r#""paused":"#) && !json.contains("elicitations"),
        "{json}"
    );
    let mut session = agent.resume(serde_json::from_str(&json).unwrap());
    // An answer for a call that waits for approval is refused: it has no question.
    let wrong = session
        .decide(
            Approvals::new()
                .approve("c1")
                .answer("c1", ElicitationAnswer::decline()),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&wrong, RunError::Approval(ApprovalError::UnknownCall { call_id, .. }) if call_id == "c1"),
        "{wrong}"
    );
    let output = session
        .decide(Approvals::new().approve("c1"))
        .await
        .unwrap();
    assert_eq!(output.text, "Sent.");
}
