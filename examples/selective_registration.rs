//! Selective registration: give an agent only some functions of a harness.
//!
//! `with_tool_harness_options::<T>(|o| o.with_functions(["name"]))` registers some functions of
//! a harness type; `with_tool_harness_reference` with a `ToolHarnessReference` that lists
//! `functions` does the same by name only, through the registry (as a JSON config's
//! `"functions": [...]` does). Selections of one harness merge. A selected collapsed
//! harness stays collapsed, behind a container that lists only the selected functions.
//! Functions that were not registered are never run, whatever name the model uses, and a
//! reference to a function that does not exist fails the build.
//!
//! ```text
//! cargo run -p hpd-agent-examples --example selective_registration
//! ```

use hpd_agent::config::ToolHarnessReference;
use hpd_agent::prelude::*;
use hpd_agent::{AgentBuilder, AgentEvent, ChatResponse, ScriptedChatClient, ToolCall};

/// File operations; this agent may only read.
#[derive(Default)]
pub struct Files;

#[tool_harness]
impl Files {
    /// Lists the files of a folder.
    #[ai_function]
    fn list_files(&self, folder: String) -> Vec<String> {
        vec![format!("{folder}/notes.txt")]
    }

    /// Reads a file.
    #[ai_function]
    fn read_file(&self, path: String) -> String {
        format!("(contents of {path})")
    }

    /// Deletes a file.
    #[ai_function]
    fn delete_file(&self, path: String) -> String {
        format!("deleted {path}")
    }
}

/// Database operations, collapsed; this agent may only query.
#[derive(Default)]
pub struct Database;

#[collapse("Database operations")]
impl Database {
    /// Runs a read-only query.
    #[ai_function]
    fn query(&self, sql: String) -> String {
        format!("3 rows for {sql}")
    }

    /// Drops a table.
    #[ai_function]
    fn drop_table(&self, table: String) -> String {
        format!("dropped {table}")
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![
            ToolCall::new("c1", "read_file", r#"{"path": "docs/notes.txt"}"#),
            ToolCall::new("c2", "delete_file", r#"{"path": "docs/notes.txt"}"#),
            ToolCall::new("c3", "drop_table", r#"{"table": "users"}"#),
        ]),
        ChatResponse::text("I read the notes; deleting and dropping are not available to me."),
    ]);
    let agent = AgentBuilder::new()
        .with_tool_harness_options::<Files>(|o| o.with_functions(["read_file"])) // by type
        .with_tool_harness_reference(
            &ToolHarnessReference::new("Files").with_functions(["list_files"]),
        ) // by name, as from config
        .with_tool_harness_options::<Database>(|o| o.with_functions(["query"]))
        .with_chat_client(model.clone())
        .on_event(|event| {
            if let AgentEvent::ToolCallFinished {
                name,
                result,
                is_error,
                ..
            } = event
            {
                let kind = if *is_error { "refused" } else { "ran" };
                println!("  {kind:<7} {name} -> {result}");
            }
        })
        .build()?;

    println!("tools offered: {}", agent.initial_tool_names().join(", "));
    for tool in agent.tool_session().visible_tools() {
        if tool.name == "Database" {
            println!("container Database: \"{}\"", tool.description);
        }
    }

    println!("\nThe model tries a selected function and two that were left out:");
    let output = agent.run("Clean up the notes and the users table.").await?;
    println!("answer: {}", output.text);

    println!("\nA reference to a function that does not exist fails the build:");
    let error = AgentBuilder::new()
        .with_tool_harness_reference(
            &ToolHarnessReference::new("Files").with_functions(["remove_file"]),
        )
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .err()
        .ok_or("the build should have failed")?;
    println!("  {error}");
    Ok(())
}
