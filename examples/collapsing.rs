//! Collapsing and recovery: a collapsed harness costs the model one tool until it needs it.
//!
//! `#[collapse("Math operations", system_prompt = "...")]` shows the harness to the model as
//! one *container* tool, `MathTools`, described with the list of its functions. In the default
//! layout (`native`, which is `fixed` on this offline client: it has no deferred loading) the
//! tool list never changes: calling the container answers with its functions' schemas and its
//! `system_prompt`, and the model calls the functions through the call tool `call_function`, so
//! the provider's prompt cache keeps every request. A model that calls a function of a
//! collapsed container is not refused: the call expands the container (*recovery*), whose
//! answer carries the schemas and tells the model to call again. At the end of every turn the
//! containers collapse again, yet what was loaded stays loaded: in the next turn the model
//! calls another function whose schema it was shown, and the call runs at once.
//!
//! The last turn runs the same script in the seed's `hide` layout, where an expanded
//! container is replaced in the tool list by its functions and its `system_prompt` joins the
//! system text. A scripted model plays every turn, so the example runs offline:
//!
//! ```text
//! cargo run -p hpd-agent-examples --example collapsing
//! ```

use hpd_agent::prelude::*;
use hpd_agent::{
    AgentBuilder, AgentEvent, ChatClient, ChatResponse, ScriptedChatClient, ToolCall,
    chat::ChatError, chat::ChatRequest, chat::TextSink, config::CALL_TOOL,
    config::CollapsingLayout,
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

/// A call of `function` through the call tool.
fn through(id: &str, function: &str, arguments: &str) -> ChatResponse {
    let arguments = format!(r#"{{"name": "{function}", "arguments": {arguments}}}"#);
    call(id, CALL_TOOL, &arguments)
}

/// The agent, printing each call's result (its first line and how many follow) and each
/// expansion.
fn math_agent(layout: CollapsingLayout, script: ScriptedChatClient) -> hpd_agent::Agent {
    AgentBuilder::new()
        .with_collapsing_layout(layout)
        .with_instructions("You are a careful assistant.")
        .with_tool_harness::<Clock>()
        .with_tool_harness::<MathTools>()
        .with_chat_client(ShowRequests(script))
        .on_event(|event| match event {
            AgentEvent::ToolCallFinished { name, result, .. } => {
                let mut lines = result.lines();
                let first = lines.next().unwrap_or_default();
                let more = lines.filter(|l| !l.trim().is_empty()).count();
                if more == 0 {
                    println!("  model calls {name} -> {first}");
                } else {
                    let noun = if more == 1 { "line" } else { "lines" };
                    println!("  model calls {name} -> {first} (+{more} {noun})");
                    for line in result.lines().skip(1).filter(|l| !l.trim().is_empty()) {
                        println!("      {line}");
                    }
                }
            }
            AgentEvent::ContainerExpanded { harness, recovery } => {
                let how = if *recovery {
                    "recovery: a hidden function was called"
                } else {
                    "the container was called, or a function it showed earlier"
                };
                println!("  {harness} expanded ({how})");
            }
            _ => {}
        })
        .build()
        .expect("the example's agent builds")
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let script = ScriptedChatClient::with_replies([
        // Turn 1: call a function before opening its container (recovery answers with the
        // schemas), then call it again.
        through("c1", "multiply", r#"{"a": 6, "b": 7}"#),
        through("c2", "multiply", r#"{"a": 6, "b": 7}"#),
        ChatResponse::text("6 × 7 = 42."),
        // Turn 2: the container is collapsed again, but `add`'s schema is in the conversation:
        // the call runs at once.
        through("c3", "add", r#"{"a": 40, "b": 2}"#),
        ChatResponse::text("40 + 2 = 42."),
    ]);
    let agent = math_agent(CollapsingLayout::default(), script);

    let tools = agent.tool_session().visible_tools();
    let container = tools.iter().find(|t| t.name == "MathTools");
    if let Some(container) = container {
        println!("container MathTools: \"{}\"", container.description);
    }
    println!(
        "layout: {} (the default; fixed on this client, which has no deferred loading)",
        CollapsingLayout::default()
    );

    let mut session = agent.session();
    println!("\nturn 1, user: What is 6 × 7?");
    let first = session.run("What is 6 × 7?").await?;
    println!("answer: {}", first.text);

    println!("\nturn 2, user: And 40 + 2? (collapsed again; what was loaded stays loaded)");
    let second = session.run("And 40 + 2?").await?;
    println!("answer: {}", second.text);

    println!("\nthe same first turn in the hide layout (the tool list changes):");
    let hide = math_agent(
        CollapsingLayout::Hide,
        ScriptedChatClient::with_replies([
            call("c1", "MathTools", "{}"),
            call("c2", "multiply", r#"{"a": 6, "b": 7}"#),
            ChatResponse::text("6 × 7 = 42."),
        ]),
    );
    let answer = hide.run("What is 6 × 7?").await?;
    println!("answer: {}", answer.text);

    println!(
        "\nUntil it was needed, MathTools cost one tool definition instead of two; \
         a call of a hidden function still found its way."
    );
    Ok(())
}
