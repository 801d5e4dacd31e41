//! Scoped middleware: an audit log that sees the calls of one harness only.
//!
//! Middleware hooks run around turns, model requests and function calls. Added with
//! `AgentBuilder::with_middleware` a middleware sees every call; declared on a harness with
//! `#[collapse("...", middlewares = [Audit])]` it is *scoped*: a fresh `Audit` is created when
//! the container expands and it sees only that harness's calls. (In code, without the
//! attribute: `with_tool_harness_options::<Bank>(|o| o.with_scoped_middleware(audit))`.)
//!
//! Here `Audit` logs the `Bank` calls, while the `Weather` call of the same response goes
//! unaudited. A scripted model plays the conversation, so the example runs offline:
//!
//! ```text
//! cargo run -p hpd-agent-examples --example scoped_middleware
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use hpd_agent::prelude::*;
use hpd_agent::{
    AgentBuilder, AgentEvent, ChatResponse, Middleware, ScriptedChatClient, ToolCall, ToolResult,
    middleware::FunctionCall, middleware::HookResult,
};

/// How many calls the audit log saw, for the summary at the end.
static AUDITED: AtomicUsize = AtomicUsize::new(0);

/// An audit log. A real one would write to a file or a log service instead of stdout.
struct Audit;

impl Default for Audit {
    fn default() -> Self {
        println!("  [audit] log opened: the Bank container expanded");
        Audit
    }
}

#[async_trait]
impl Middleware for Audit {
    async fn before_function(&self, call: &mut FunctionCall) -> HookResult {
        AUDITED.fetch_add(1, Ordering::Relaxed);
        let (harness, function) = (call.harness_name(), call.function_name());
        println!("  [audit] {harness}.{function}({})", call.arguments());
        Ok(())
    }

    async fn after_function(&self, call: &FunctionCall, result: &mut ToolResult) -> HookResult {
        println!(
            "  [audit] {} returned {:?}",
            call.function_name(),
            result.text
        );
        Ok(())
    }
}

/// Banking, collapsed, audited.
#[derive(Default)]
pub struct Bank;

#[collapse("Bank accounts", middlewares = [Audit])]
impl Bank {
    /// The balance of an account.
    #[ai_function]
    fn balance(&self, account: String) -> String {
        format!("{account}: 1200 EUR")
    }

    /// Transfers money between accounts.
    #[ai_function]
    fn transfer(&self, from: String, to: String, euros: u32) -> String {
        format!("moved {euros} EUR from {from} to {to}")
    }
}

/// Weather, plain and not audited.
#[derive(Default)]
pub struct Weather;

#[tool_harness]
impl Weather {
    /// Forecasts the weather of a city.
    #[ai_function]
    fn forecast(&self, city: String) -> String {
        format!("{city}: sunny")
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "Bank", "{}")]),
        ChatResponse::tool_calls(vec![
            ToolCall::new("c2", "balance", r#"{"account": "savings"}"#),
            ToolCall::new("c3", "forecast", r#"{"city": "Rome"}"#),
        ]),
        ChatResponse::tool_calls(vec![ToolCall::new(
            "c4",
            "transfer",
            r#"{"from": "savings", "to": "travel", "euros": 300}"#,
        )]),
        ChatResponse::text("Moved 300 EUR to travel; Rome will be sunny."),
    ]);
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let agent = AgentBuilder::new()
        .with_tool_harness::<Bank>()
        .with_tool_harness::<Weather>()
        .with_chat_client(model)
        .on_event(move |event| {
            if let AgentEvent::ToolCallStarted {
                name, arguments, ..
            } = event
            {
                counted.fetch_add(1, Ordering::Relaxed);
                println!("model calls {name}({arguments})");
            }
        })
        .build()?;

    let output = agent
        .run("Put 300 EUR aside for Rome; how is the weather?")
        .await?;
    println!("answer: {}", output.text);
    println!(
        "\nThe audit log saw {} of {} calls: the Bank functions, not the container call \
         that created it nor the Weather call next to them.",
        AUDITED.load(Ordering::Relaxed),
        calls.load(Ordering::Relaxed)
    );
    Ok(())
}
