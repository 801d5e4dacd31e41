//! Collapsing and recovery: a collapsed harness costs the model one tool until it needs it.
//!
//! `#[collapse("Math operations", system_prompt = "...")]` shows the harness to the model as
//! one *container* tool, `MathTools`, described with the list of its functions. Calling the
//! container expands it: from the next request on the model sees `add` and `multiply`, and the
//! container's `system_prompt` is added to the system text. A model that calls a hidden
//! function directly is not refused: the call expands the container (*recovery*) and tells the
//! model to call again. At the end of every turn the containers collapse again.
//!
//! A scripted model plays two turns, so the example runs offline:
//!
//! ```text
//! cargo run -p hpd-agent-examples --example collapsing
//! ```

use hpd_agent::prelude::*;
use hpd_agent::{
    AgentBuilder, AgentEvent, ChatClient, ChatError, ChatRequest, ChatResponse, ScriptedChatClient,
    TextSink, ToolCall,
};

/// Arithmetic, hidden behind one `MathTools` container until the model opens it.
#[derive(Default)]
pub struct MathTools;

#[collapse(
    "Math operations",
    system_prompt = "Use exact integer arithmetic; never estimate."
)]
impl MathTools {
    /// Adds two integers.
    #[ai_function]
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }

    /// Multiplies two integers.
    #[ai_function]
    fn multiply(&self, a: i64, b: i64) -> i64 {
        a * b
    }
}

/// A plain harness next to it: its function is always visible.
#[derive(Default)]
pub struct Clock;

#[tool_harness]
impl Clock {
    /// The current time, in seconds since 1970-01-01 UTC.
    #[ai_function]
    fn now(&self) -> Result<u64, std::time::SystemTimeError> {
        let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?;
        Ok(since.as_secs())
    }
}

/// The scripted model, printing what each request offers it before it answers.
struct ShowRequests(ScriptedChatClient);

#[async_trait]
impl ChatClient for ShowRequests {
    async fn complete(
        &self,
        request: ChatRequest<'_>,
        text: TextSink<'_>,
    ) -> Result<ChatResponse, ChatError> {
        let names: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
        println!("  request: tools [{}]", names.join(", "));
        if let Some((_, active)) = request
            .instructions
            .split_once("## Active container instructions")
        {
            let active = active
                .trim()
                .trim_start_matches("### ")
                .replacen('\n', ": ", 1);
            println!("    active container instructions: {active}");
        }
        self.0.complete(request, text).await
    }
}

fn call(id: &str, name: &str, arguments: &str) -> ChatResponse {
    ChatResponse::tool_calls(vec![ToolCall::new(id, name, arguments)])
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let script = ScriptedChatClient::with_replies([
        // Turn 1: open the container, then use a member.
        call("c1", "MathTools", "{}"),
        call("c2", "multiply", r#"{"a": 6, "b": 7}"#),
        ChatResponse::text("6 × 7 = 42."),
        // Turn 2: the container is collapsed again; the model calls `add` anyway.
        call("c3", "add", r#"{"a": 40, "b": 2}"#),
        call("c4", "add", r#"{"a": 40, "b": 2}"#),
        ChatResponse::text("40 + 2 = 42."),
    ]);
    let agent = AgentBuilder::new()
        .with_instructions("You are a careful assistant.")
        .with_tool_harness::<Clock>()
        .with_tool_harness::<MathTools>()
        .with_chat_client(ShowRequests(script))
        .on_event(|event| match event {
            AgentEvent::ToolCallFinished { name, result, .. } => {
                println!("  model calls {name} -> {result}");
            }
            AgentEvent::ContainerExpanded { harness, recovery } => {
                let how = if *recovery {
                    "recovery: a hidden function was called"
                } else {
                    "the container was called"
                };
                println!("  {harness} expanded ({how})");
            }
            _ => {}
        })
        .build()?;

    let tools = agent.tool_session().visible_tools();
    let container = tools.iter().find(|t| t.name == "MathTools");
    if let Some(container) = container {
        println!("container MathTools: \"{}\"", container.description);
    }

    let mut session = agent.session();
    println!("\nturn 1, user: What is 6 × 7?");
    let first = session.run("What is 6 × 7?").await?;
    println!("answer: {}", first.text);

    println!("\nturn 2, user: And 40 + 2? (the turn starts collapsed again)");
    let second = session.run("And 40 + 2?").await?;
    println!("answer: {}", second.text);

    println!(
        "\nUntil it was needed, MathTools cost one tool definition instead of two; \
         a call of a hidden function still found its way."
    );
    Ok(())
}
