//! Histories within a budget: 200 scripted turns (every third one expands a collapsed harness
//! with its own instructions and calls a tool) with a context budget in tokens, in messages
//! with a summarizer, and with trimmed turns dropped. After every turn: each request the model
//! got was valid for every provider (it starts with a user message, every tool call has its
//! result right after it, no result without its call), fit the budget, and kept the system
//! text and the expanded container's instructions; the session's history is valid, complete
//! (unless trimmed turns are dropped) and stored with its trimmed mark.

use std::sync::Arc;

use hpd_agent::store::{MemorySessionStore, SessionStore};
use hpd_agent::{
    AgentBuilder, ChatMessage, ChatResponse, HarnessBuilder, ScriptedChatClient, Tool, ToolCall,
    ToolResult, agent::ApproxTokens, agent::Summarizer, agent::TokenEstimator, async_trait,
    config::ContextBudget, providers::scripted::RecordedRequest,
};
use serde_json::json;

const TURNS: usize = 200;
const SYSTEM: &str = "You keep notes for the user.";
const CONTAINER_PROMPT: &str = "Write notes in five words or fewer.";

/// The replies of turn `t`: every third turn expands `Notes` and calls `note` first.
fn replies(t: usize) -> Vec<ChatResponse> {
    let answer = ChatResponse::text(format!(
        "Answer {t}: here is a reply of a reasonable length that the budget has to account for."
    ));
    if t.is_multiple_of(3) {
        vec![
            ChatResponse::tool_calls(vec![ToolCall::new(format!("c{t}a"), "Notes", "{}")]),
            ChatResponse::tool_calls(vec![ToolCall::new(
                format!("c{t}b"),
                "note",
                json!({"text": format!("note {t}")}).to_string(),
            )]),
            answer,
        ]
    } else {
        vec![answer]
    }
}

/// Keeps the first words of every user message.
struct Gist;

#[async_trait]
impl Summarizer for Gist {
    async fn summarize(
        &self,
        previous: Option<&str>,
        turns: &[ChatMessage],
    ) -> Result<String, String> {
        let mut text = previous.unwrap_or_default().to_owned();
        let users = turns
            .iter()
            .filter(|m| matches!(m, ChatMessage::User { .. }))
            .count();
        text = format!("{text}[{users} turns]");
        // Bounded, as a real summary would be.
        if text.len() > 200 {
            text = text[text.len() - 200..].to_owned();
        }
        Ok(text)
    }
}

/// Checks what a provider needs of a request's messages.
fn assert_valid_messages(messages: &[ChatMessage], what: &str) {
    assert!(
        matches!(messages.first(), Some(ChatMessage::User { .. })),
        "{what}: does not start with a user message: {messages:#?}"
    );
    let mut open: Vec<&str> = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        match message {
            ChatMessage::Assistant { tool_calls, .. } => {
                assert!(open.is_empty(), "{what}: calls {open:?} unanswered at {i}");
                open = tool_calls.iter().map(|c| c.id.as_str()).collect();
            }
            ChatMessage::Tool { call_id, .. } => {
                let at = open.iter().position(|id| id == call_id);
                let at = at.unwrap_or_else(|| panic!("{what}: result {call_id} without its call"));
                open.remove(at);
            }
            ChatMessage::User { .. } => {
                assert!(open.is_empty(), "{what}: calls {open:?} unanswered at {i}");
            }
            other => panic!("{what}: a message kind this check does not know: {other:?}"),
        }
    }
    assert!(
        open.is_empty(),
        "{what}: calls {open:?} unanswered at the end"
    );
}

/// The estimate of a whole request, as the default estimator counts it.
fn request_tokens(request: &RecordedRequest) -> usize {
    ApproxTokens.text_tokens(&request.instructions)
        + request
            .tools
            .iter()
            .map(|t| ApproxTokens.tool_tokens(t))
            .sum::<usize>()
        + request
            .messages
            .iter()
            .map(|m| ApproxTokens.message_tokens(m))
            .sum::<usize>()
}

struct Outcome {
    history_len: usize,
    max_request_messages: usize,
    max_request_tokens: usize,
    summaries_seen: usize,
}

async fn two_hundred_turns(budget: ContextBudget, summarize: bool) -> Outcome {
    let script: Vec<ChatResponse> = (0..TURNS).flat_map(replies).collect();
    let model = ScriptedChatClient::with_replies(script);
    let note = Tool::new(
        "note",
        "Writes a note",
        json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        |args, _| async move { ToolResult::ok(format!("noted: {}", args["text"])) },
    );
    let notes = HarnessBuilder::new("Notes")
        .with_collapse("Note keeping")
        .with_system_prompt(CONTAINER_PROMPT)
        .with_tool(note)
        .build()
        .expect("harness");
    let mut builder = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_instructions(SYSTEM)
        .with_harness(notes)
        .with_context_budget(budget)
        .with_chat_client(model.clone());
    if summarize {
        builder = builder.with_summarizer(Gist);
    }
    let agent = builder.build().expect("agent builds");
    let store = Arc::new(MemorySessionStore::new());
    let mut session = agent
        .open_session(store.clone(), "long")
        .await
        .expect("open");

    let mut seen = 0;
    let mut outcome = Outcome {
        history_len: 0,
        max_request_messages: 0,
        max_request_tokens: 0,
        summaries_seen: 0,
    };
    for t in 0..TURNS {
        let message = format!("Message {t}: please keep this in mind for later.");
        session
            .run(message.clone())
            .await
            .unwrap_or_else(|e| panic!("turn {t}: {e}"));
        let requests = model.requests();
        for (i, request) in requests[seen..].iter().enumerate() {
            let what = format!("turn {t}, request {i}");
            assert_valid_messages(&request.messages, &what);
            assert!(
                request.instructions.starts_with(SYSTEM),
                "{what}: system text"
            );
            if t.is_multiple_of(3) && i > 0 {
                assert!(
                    request.instructions.contains(CONTAINER_PROMPT),
                    "{what}: the expanded container's instructions: {}",
                    request.instructions
                );
            }
            // The turn's own message is always there.
            assert!(
                request
                    .messages
                    .contains(&ChatMessage::user(message.clone())),
                "{what}: the current message"
            );
            let tokens = request_tokens(request);
            if let Some(max) = budget.max_tokens {
                assert!(tokens <= max, "{what}: {tokens} tokens > {max}");
            }
            if let Some(max) = budget.max_messages {
                let sent = request.messages.len();
                assert!(sent <= max, "{what}: {sent} messages > {max}");
            }
            if let Some(ChatMessage::User { content }) = request.messages.first()
                && content.starts_with("Summary of the earlier conversation:")
            {
                outcome.summaries_seen += 1;
                assert!(matches!(
                    &request.messages[1],
                    ChatMessage::Assistant { content: Some(text), tool_calls, .. }
                        if text == "Understood." && tool_calls.is_empty()
                ));
            }
            outcome.max_request_messages = outcome.max_request_messages.max(request.messages.len());
            outcome.max_request_tokens = outcome.max_request_tokens.max(tokens);
        }
        seen = requests.len();

        // The session: valid, its trimmed mark at a turn start, stored as it is.
        let state = session.state();
        assert_valid_messages(&state.history, &format!("history after turn {t}"));
        assert!(state.trimmed < state.history.len());
        assert!(matches!(
            state.history[state.trimmed],
            ChatMessage::User { .. }
        ));
        let stored = store.load("long").await.expect("load").expect("stored");
        assert_eq!(&stored.state, state, "turn {t}: stored as it is");
    }
    outcome.history_len = session.history().len();
    outcome
}

/// Messages of all 200 turns: one user message and one answer each, and four more for every
/// third turn (two calls, two results).
const ALL_MESSAGES: usize = TURNS * 2 + TURNS.div_ceil(3) * 4;

#[tokio::test]
async fn a_token_budget_keeps_every_request_within_it_and_the_history_whole() {
    let outcome = two_hundred_turns(ContextBudget::tokens(900), false).await;
    assert_eq!(outcome.history_len, ALL_MESSAGES, "trimmed turns are kept");
    assert!(outcome.max_request_tokens <= 900);
    assert!(
        outcome.max_request_tokens > 600,
        "the budget is used, not undercut: {}",
        outcome.max_request_tokens
    );
    assert_eq!(outcome.summaries_seen, 0);
}

#[tokio::test]
async fn a_message_budget_with_a_summarizer_sends_a_summary_turn() {
    let outcome = two_hundred_turns(ContextBudget::messages(12), true).await;
    assert_eq!(outcome.history_len, ALL_MESSAGES);
    assert!(outcome.max_request_messages <= 12);
    assert!(outcome.summaries_seen > 100, "{}", outcome.summaries_seen);
}

#[tokio::test]
async fn dropped_trimmed_turns_leave_the_stored_history_bounded() {
    let budget = ContextBudget::tokens(900)
        .with_max_messages(20)
        .with_drop_trimmed(true);
    let outcome = two_hundred_turns(budget, false).await;
    assert!(
        outcome.history_len <= 20 + 4,
        "the history holds about what one request sends: {}",
        outcome.history_len
    );
}
