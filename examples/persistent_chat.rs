//! A conversation that outlives the process: the session lives in a SQLite file, so each run of
//! the example continues where the last one stopped.
//!
//! ```text
//! cargo run -p hpd-agent-examples --example persistent_chat            # "My name is Ada."
//! cargo run -p hpd-agent-examples --example persistent_chat            # "What is my name?"
//! cargo run -p hpd-agent-examples --example persistent_chat -- --reset # start over
//! ```
//!
//! The file is `hpd-agent-persistent-chat.sqlite3` in the system's temporary folder, or the
//! path given as argument. The model is offline: a small client that answers from the
//! messages it is sent, so the second run can only know the name if the first run's turn was
//! stored and loaded again.

use std::path::PathBuf;
use std::sync::Arc;

use hpd_agent::store::{SessionStore, SqliteSessionStore};
use hpd_agent::{
    AgentBuilder, ChatClient, ChatError, ChatMessage, ChatRequest, ChatResponse, TextSink,
    async_trait,
};

/// The session id in the file.
const SESSION: &str = "demo-user";

/// An offline model that remembers only what the request carries: the stored conversation.
struct Recall;

#[async_trait]
impl ChatClient for Recall {
    async fn complete(
        &self,
        request: ChatRequest<'_>,
        _text: TextSink<'_>,
    ) -> Result<ChatResponse, ChatError> {
        let said: Vec<&str> = request
            .messages
            .iter()
            .filter_map(|m| match m {
                ChatMessage::User { content } => Some(content.as_str()),
                _ => None,
            })
            .collect();
        let name = said
            .iter()
            .find_map(|m| m.strip_prefix("My name is "))
            .map(|rest| rest.trim_end_matches('.'));
        let reply = match (said.last(), name) {
            (Some(last), Some(name)) if last.starts_with("My name is") => {
                format!("Nice to meet you, {name}.")
            }
            (_, Some(name)) => format!(
                "Your name is {name}: you told me {} messages ago.",
                request.messages.len() - 1
            ),
            (_, None) => "I don't know your name yet.".to_owned(),
        };
        Ok(ChatResponse::text(reply))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut reset = false;
    let mut path = std::env::temp_dir().join("hpd-agent-persistent-chat.sqlite3");
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--reset" => reset = true,
            other if other.starts_with('-') => {
                return Err(
                    format!("unknown option '{other}'; expected --reset or a file path").into(),
                );
            }
            other => path = PathBuf::from(other),
        }
    }

    let store: Arc<dyn SessionStore> = Arc::new(SqliteSessionStore::open(&path).await?);
    if reset {
        let deleted = store.delete(SESSION).await?;
        println!(
            "{} session '{SESSION}' in {}",
            if deleted { "deleted" } else { "no" },
            path.display()
        );
        return Ok(());
    }

    let agent = AgentBuilder::new()
        .with_name("persistent-chat")
        .with_instructions("Remember what the user tells you.")
        .with_chat_client(Recall)
        .build()?;
    let mut session = agent.open_session(store, SESSION).await?;
    println!(
        "session '{SESSION}' in {}: {} stored messages (version {})",
        path.display(),
        session.history().len(),
        session.stored_version().unwrap_or(0)
    );
    for message in session.history() {
        match message {
            ChatMessage::User { content } => println!("  earlier, user: {content}"),
            ChatMessage::Assistant {
                content: Some(text),
                ..
            } => println!("  earlier, agent: {text}"),
            _ => {}
        }
    }

    let first_run = session.history().is_empty();
    let message = if first_run {
        "My name is Ada."
    } else {
        "What is my name?"
    };
    println!("user: {message}");
    let output = session.run(message).await?;
    println!("agent: {}", output.text);
    println!(
        "saved: {} messages at version {}",
        session.history().len(),
        session.stored_version().unwrap_or(0)
    );
    if first_run {
        println!("Run the example again: the conversation continues from the file.");
    }
    Ok(())
}
