//! Human approval of tool calls, surviving a restart.
//!
//! `pay_invoice` is declared with `#[ai_function(requires_approval)]`; a middleware makes
//! refunds over 100 wait for approval too, deciding per call from the arguments. When the model
//! calls them, the run stops before they run (the other calls of the same reply run), returns
//! them as `RunOutput::pending_approvals`, and the paused session is saved to a SQLite file.
//! A second agent, as another process would build it, opens the file, and a person approves one
//! payment, approves another with a smaller amount, and denies a refund with a reason; the turn
//! goes on and the model answers.
//!
//! The model is scripted (`ScriptedChatClient`), so the example runs offline.
//!
//! ```text
//! cargo run -p hpd-agent-examples --example approval
//! ```

use std::path::Path;
use std::sync::Arc;

use hpd_agent::approval::Approvals;
use hpd_agent::prelude::*;
use hpd_agent::store::{SessionStore, SqliteSessionStore};
use hpd_agent::{
    Agent, AgentBuilder, ChatMessage, ChatResponse, Middleware, ScriptedChatClient, ToolCall,
    middleware::FunctionCall, middleware::MiddlewareError,
};

/// The conversation's id in the store.
const SESSION: &str = "accounts-payable";

/// Accounts payable.
#[derive(Default)]
pub struct Billing;

#[tool_harness]
impl Billing {
    /// Lists the open invoices.
    #[ai_function]
    fn list_invoices(&self) -> String {
        "INV-1: 40 EUR (Acme), INV-2: 900 EUR (Globex)".into()
    }

    /// Pays an invoice.
    #[ai_function(requires_approval)]
    fn pay_invoice(&self, invoice: String, amount: u32) -> String {
        format!("paid {amount} EUR on {invoice}")
    }

    /// Refunds an order.
    #[ai_function]
    fn refund(&self, order: u32, amount: u32) -> String {
        format!("refunded {amount} EUR on order {order}")
    }
}

/// Refunds over 100 wait for a person; smaller ones run.
struct LargeRefunds;

#[async_trait]
impl Middleware for LargeRefunds {
    async fn approval_required(
        &self,
        call: &FunctionCall,
        required: bool,
    ) -> Result<bool, MiddlewareError> {
        if call.function_name() != "refund" {
            return Ok(required);
        }
        let amount = serde_json::from_str::<serde_json::Value>(call.arguments())
            .ok()
            .and_then(|args| args["amount"].as_u64());
        // Arguments that do not say how much wait too.
        Ok(required || amount.is_none_or(|amount| amount > 100))
    }
}

fn agent(model: ScriptedChatClient) -> Result<Agent, hpd_agent::BuildError> {
    AgentBuilder::new()
        .with_instructions("Pay the open invoices and handle the refunds.")
        .with_tool_harness::<Billing>()
        .with_middleware(LargeRefunds)
        .with_chat_client(model)
        .build()
}

/// The first process: the model's reply calls five tools; three wait.
async fn first_process(path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let store: Arc<dyn SessionStore> = Arc::new(SqliteSessionStore::open(path).await?);
    let model = ScriptedChatClient::with_replies([ChatResponse::tool_calls(vec![
        ToolCall::new("c1", "list_invoices", "{}"),
        ToolCall::new("c2", "pay_invoice", r#"{"invoice":"INV-1","amount":40}"#),
        ToolCall::new("c3", "pay_invoice", r#"{"invoice":"INV-2","amount":900}"#),
        ToolCall::new("c4", "refund", r#"{"order":7,"amount":20}"#),
        ToolCall::new("c5", "refund", r#"{"order":9,"amount":500}"#),
    ])]);
    let agent = agent(model)?;
    let mut session = agent.open_session(store, SESSION).await?;
    let output = session.run("Settle this week's accounts.").await?;
    println!("paused: {}", output.is_paused());
    for pending in &output.pending_approvals {
        println!(
            "  waiting: {} {}({})",
            pending.call_id, pending.function, pending.arguments
        );
    }
    println!(
        "saved at version {}; the process ends",
        session.stored_version().unwrap_or_default()
    );
    Ok(())
}

/// Another process: a person decides, the turn goes on.
async fn second_process(path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let store: Arc<dyn SessionStore> = Arc::new(SqliteSessionStore::open(path).await?);
    let model = ScriptedChatClient::with_replies([ChatResponse::text(
        "Paid INV-1 and 90 EUR of INV-2, refunded order 7; the refund of order 9 was refused.",
    )]);
    let agent = agent(model.clone())?;
    let mut session = agent.open_session(store.clone(), SESSION).await?;
    println!(
        "reopened '{SESSION}': {} calls wait",
        session.pending_approvals().len()
    );
    let decisions = Approvals::new()
        .approve("c2")
        .approve_edited("c3", serde_json::json!({"invoice": "INV-2", "amount": 90}))
        .deny("c5", "refunds over 100 EUR need the manager");
    let output = session.decide(decisions).await?;
    println!("agent: {}", output.text);

    println!("results the model saw:");
    for message in &model.requests()[0].messages {
        if let ChatMessage::Tool {
            call_id,
            content,
            is_error,
            ..
        } = message
        {
            let flag = if *is_error { " (error)" } else { "" };
            println!("  {call_id}{flag}: {}", content.replace("\n\n", " | "));
        }
    }
    let stored = store.load(SESSION).await?.ok_or("the session is stored")?;
    println!(
        "stored: version {}, {} messages, paused: {}",
        stored.version,
        stored.state.history.len(),
        stored.state.paused.is_some()
    );
    for record in &stored.state.approvals {
        let decision = match (record.arguments(), record.edited()) {
            (None, _) => "denied".to_owned(),
            (Some(arguments), true) => format!("approved, edited to {arguments}"),
            (Some(_), false) => "approved".to_owned(),
        };
        println!("  log: {} {}: {decision}", record.call_id, record.function);
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let folder = tempfile::tempdir()?; // deleted when the example ends
    let path = folder.path().join("sessions.db");
    first_process(&path).await?;
    println!("--- another process ---");
    second_process(&path).await?;
    Ok(())
}
