//! A stored session: a conversation kept in a SQLite file, picked up again after a restart.
//!
//! `Agent::open_session(store, id)` loads the conversation `id` from a `SessionStore` (or
//! starts it empty) and saves it at the end of every turn, in one atomic write. Here the store
//! is `SqliteSessionStore` (the `sqlite` feature, on by default) on a file in a fresh
//! temporary folder. The first half talks, then drops the store and the agent as a process
//! exit would; the second half opens the file again with a new agent and the history is there.
//!
//! The model is offline: a small client that knows only what the request carries, so it can
//! tell the user's name in the second half only if the first turn was stored and loaded.
//!
//! ```text
//! cargo run -p hpd-agent-examples --example persistent_chat
//! ```

use std::path::Path;
use std::sync::Arc;

use hpd_agent::store::{SessionStore, SqliteSessionStore};
use hpd_agent::{
    Agent, AgentBuilder, ChatClient, ChatMessage, ChatResponse, async_trait, chat::ChatError,
    chat::ChatRequest, chat::TextSink,
};

/// The conversation's id in the store, e.g. a user or chat id.
const SESSION: &str = "user-ada";

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
        let name = said.iter().find_map(|m| m.strip_prefix("My name is "));
        let name = name.map(|rest| rest.trim_end_matches('.'));
        let reply = match (said.last(), name) {
            (Some(last), Some(name)) if last.starts_with("My name is") => {
                format!("Nice to meet you, {name}.")
            }
            (_, Some(name)) => format!("You are {name}; you told me earlier."),
            (_, None) => "I don't know your name.".to_owned(),
        };
        Ok(ChatResponse::text(reply))
    }
}

fn agent() -> Result<Agent, hpd_agent::BuildError> {
    AgentBuilder::new()
        .with_instructions("Remember what the user tells you.")
        .with_chat_client(Recall)
        .build()
}

/// Opens the file, runs one turn of the conversation, and drops everything, as a process would.
async fn one_process(path: &Path, message: &str) -> Result<(), Box<dyn std::error::Error>> {
    let store: Arc<dyn SessionStore> = Arc::new(SqliteSessionStore::open(path).await?);
    let agent = agent()?;
    let mut session = agent.open_session(store, SESSION).await?;
    println!(
        "opened '{SESSION}': {} stored messages",
        session.history().len()
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
    println!("user: {message}");
    let output = session.run(message).await?;
    println!("agent: {}", output.text);
    println!(
        "saved: {} messages, version {}",
        session.history().len(),
        session.stored_version().unwrap_or(0)
    );
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let folder = tempfile::tempdir()?; // deleted when the example ends
    let path = folder.path().join("chat.sqlite3");

    println!("-- first run, new file {}", path.display());
    one_process(&path, "My name is Ada.").await?;

    println!("\n-- after a restart: a new store and a new agent on the same file");
    one_process(&path, "What is my name?").await?;

    println!("\nThe second agent knew the name only from the history stored in the file.");
    Ok(())
}
