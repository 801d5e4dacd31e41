//! A paused session resumed against a real server: llama.cpp's OpenAI-compatible server must
//! accept the history a resumed turn sends (the assistant message with three tool calls, then
//! the approved, the edited and the denied call's results, in call order).
//!
//! The first process is scripted (a 135M model does not reliably make three calls in one
//! reply), its paused session is saved to SQLite, and a second agent, standing in for another
//! process, opens it with a chat client on the server and decides the calls. Needs
//! `HPD_LLAMA_URL` (`.ci/run` starts the server); without it the test says it was skipped.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hpd_agent::approval::Approvals;
use hpd_agent::store::{SessionStore, SqliteSessionStore};
use hpd_agent::{
    AgentBuilder, ChatClient, ChatMessage, ChatResponse, HarnessBuilder, ScriptedChatClient, Tool,
    ToolCall, ToolResult, async_trait, chat::ChatError, chat::ChatRequest, chat::ModelOptions,
    chat::TextSink, chat::ToolChoice, providers::openai::OpenAiClient,
};
use serde_json::json;

/// Records the messages of every request it passes on.
struct Recording {
    inner: OpenAiClient,
    sent: Arc<Mutex<Vec<Vec<ChatMessage>>>>,
}

#[async_trait]
impl ChatClient for Recording {
    async fn complete(
        &self,
        request: ChatRequest<'_>,
        text: TextSink<'_>,
    ) -> Result<ChatResponse, ChatError> {
        self.sent
            .lock()
            .expect("sent")
            .push(request.messages.to_vec());
        self.inner.complete(request, text).await
    }
}

fn harness() -> hpd_agent::harness::DynamicHarness {
    let forecast = Tool::new(
        "forecast",
        "The weather forecast for a city",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        |args, _| async move {
            ToolResult::ok(format!(
                "Sunny in {}.",
                args["city"].as_str().unwrap_or("?")
            ))
        },
    );
    let book = Tool::new(
        "book_flight",
        "Books a flight to a city",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        |args, _| async move {
            ToolResult::ok(format!(
                "Booked a flight to {}.",
                args["city"].as_str().unwrap_or("?")
            ))
        },
    )
    .with_approval_required();
    HarnessBuilder::new("Travel")
        .with_tool(forecast)
        .with_tool(book)
        .build()
        .expect("harness")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_history_is_accepted_by_llama_cpp() {
    let url = match std::env::var("HPD_LLAMA_URL") {
        Ok(url) if !url.trim().is_empty() => url.trim().trim_end_matches('/').to_owned(),
        _ => {
            hpd_agent_tests::skip!(
                "a_resumed_history_is_accepted_by_llama_cpp: skipped: HPD_LLAMA_URL is not set \
                 (start a server with `.ci/llama-server.sh start` and export the URL it prints)"
            );
            return;
        }
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("sessions.db");

    // The first process: the model books three flights and asks for a forecast.
    {
        let store: Arc<dyn SessionStore> =
            Arc::new(SqliteSessionStore::open(&path).await.expect("open"));
        let model = ScriptedChatClient::with_replies([ChatResponse::tool_calls(vec![
            ToolCall::new("call_1", "forecast", r#"{"city":"Paris"}"#),
            ToolCall::new("call_2", "book_flight", r#"{"city":"Paris"}"#),
            ToolCall::new("call_3", "book_flight", r#"{"city":"Rome"}"#),
            ToolCall::new("call_4", "book_flight", r#"{"city":"Oslo"}"#),
        ])]);
        let agent = AgentBuilder::new()
            .with_instructions("You are a travel agent. Answer in one short sentence.")
            .with_harness(harness())
            .with_chat_client(model)
            .build()
            .expect("agent");
        let mut session = agent.open_session(store, "trip").await.expect("session");
        let paused = session
            .run("Check the weather in Paris and book flights to Paris, Rome and Oslo.")
            .await
            .expect("paused run");
        assert_eq!(paused.pending_approvals.len(), 3);
    }

    // Another process: the store reopened, an agent on the real server.
    let store: Arc<dyn SessionStore> =
        Arc::new(SqliteSessionStore::open(&path).await.expect("reopen"));
    let sent = Arc::new(Mutex::new(Vec::new()));
    let client = OpenAiClient::new("smollm2", "")
        .and_then(|c| c.with_base_url(format!("{url}/v1")))
        .expect("client")
        .with_timeout(Duration::from_secs(900))
        .with_streaming(false);
    let agent = AgentBuilder::new()
        .with_instructions("You are a travel agent. Answer in one short sentence.")
        .with_harness(harness())
        .with_max_iterations(2)
        .with_model_options(
            ModelOptions::new()
                .with_temperature(0.0)
                .with_max_output_tokens(48)
                .with_tool_choice(ToolChoice::None),
        )
        .with_chat_client(Recording {
            inner: client,
            sent: Arc::clone(&sent),
        })
        .build()
        .expect("agent");
    let mut session = agent
        .open_session(Arc::clone(&store), "trip")
        .await
        .expect("session");
    assert_eq!(session.pending_approvals().len(), 3);
    let output = session
        .decide(
            Approvals::new()
                .approve("call_2")
                .approve_edited("call_3", json!({"city": "Milan"}))
                .deny("call_4", "the traveller has no visa for Norway"),
        )
        .await
        .expect("the server accepts the resumed history");
    assert!(!output.is_paused());
    assert_eq!(output.iterations, 2);
    assert!(!output.text.trim().is_empty(), "an answer: {output:?}");

    let sent = sent.lock().expect("sent").clone();
    assert_eq!(sent.len(), 1);
    let results: Vec<(&str, bool)> = sent[0]
        .iter()
        .filter_map(|m| match m {
            ChatMessage::Tool {
                content, is_error, ..
            } => Some((content.as_str(), *is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        [
            ("Sunny in Paris.", false),
            ("Booked a flight to Paris.", false),
            (
                "The user edited the arguments before approving; the call ran with {\"city\":\"Milan\"}\n\nBooked a flight to Milan.",
                false
            ),
            (
                "Function 'book_flight' was denied by the user: the traveller has no visa for Norway",
                true
            ),
        ]
    );
    let stored = store.load("trip").await.expect("load").expect("stored");
    assert!(stored.state.paused.is_none());
    assert_eq!(stored.state.approvals.len(), 3);
    assert!(matches!(
        stored.state.history.last(),
        Some(ChatMessage::Assistant { content: Some(text), tool_calls, .. })
            if tool_calls.is_empty() && *text == output.text
    ));
    eprintln!("llama.cpp answered the resumed turn: {:?}", output.text);
}
