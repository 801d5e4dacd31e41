//! Served functions that ask the client, answered by the official Python SDK's client
//! (`hpd-agent/tests/mcp_fixtures/python_asking_client.py`): sampling, two elicitations one
//! after the other, roots, and a prompt that asks the user; on a server collapsing in the
//! `hide` layout (2025-11-25, requests to the client) and a flat one (2026-07-28,
//! `input_required` rounds).
//!
//! Needs `HPD_MCP_PYTHON` (a Python with the `mcp` SDK, printed by `.ci/mcp-servers.sh`);
//! skipped, saying why, without it.

mod mcp_common;

use hpd_agent::chat::ContentPart;
use hpd_agent::mcp::{McpServer, PromptMessage, ProviderError, ServedPrompt};
use hpd_agent::tool::{RootsRequest, SamplingRequest};
use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
use serde_json::{Value, json};

const TOKEN: &str = "python-asking-token";

fn form(message: &str, field: &str) -> hpd_agent::tool::Elicitation {
    hpd_agent::tool::Elicitation::form(
        message,
        json!({"type": "object", "properties": {field: {"type": "string"}}, "required": [field]}),
    )
    .with_key(field)
}

fn tools() -> Vec<Tool> {
    let none = json!({"type": "object", "properties": {}});
    vec![
        Tool::new(
            "ask_model",
            "Asks the client's model",
            none.clone(),
            |_, ctx| async move {
                let request =
                    SamplingRequest::new("Name a capital", 20).with_system_prompt("One word.");
                match ctx.sample(request).await {
                    Ok(reply) => {
                        ToolResult::ok(format!("the model said {} ({})", reply.text, reply.model))
                    }
                    Err(error) => ToolResult::error(error.to_string()),
                }
            },
        ),
        Tool::new(
            "ask_user",
            "Asks the user twice",
            none.clone(),
            |_, ctx| async move {
                let name = match ctx.elicit(form("Your name?", "name")).await {
                    Ok(answer) => answer.field("name").cloned().unwrap_or(Value::Null),
                    Err(error) => return ToolResult::error(error.to_string()),
                };
                match ctx.elicit(form("Your colour?", "colour")).await {
                    Ok(answer) => ToolResult::ok(format!(
                        "{name} likes {}",
                        answer.field("colour").cloned().unwrap_or(Value::Null)
                    )),
                    Err(error) => ToolResult::error(error.to_string()),
                }
            },
        ),
        Tool::new(
            "ask_roots",
            "Asks for the roots",
            none,
            |_, ctx| async move {
                match ctx.roots(RootsRequest::new()).await {
                    Ok(roots) => ToolResult::ok(
                        roots
                            .iter()
                            .map(|root| {
                                format!("{} ({})", root.uri, root.name.as_deref().unwrap_or("-"))
                            })
                            .collect::<Vec<_>>()
                            .join(", "),
                    ),
                    Err(error) => ToolResult::error(error.to_string()),
                }
            },
        ),
    ]
}

/// `greeting` asks the user's name (key `name`) and greets them.
fn greeting() -> ServedPrompt {
    ServedPrompt::new("greeting", "Greets the user", |request| async move {
        let answer = request
            .elicit(form("Your name?", "name"))
            .await
            .map_err(|error| ProviderError::Failed(error.to_string()))?;
        let name = answer.field("name").cloned().unwrap_or(Value::Null);
        Ok(vec![PromptMessage::user(ContentPart::text(format!(
            "Greet {name}."
        )))])
    })
}

async fn answered_by_python(flat: bool, protocol: &str) {
    let Some(python) = mcp_common::python(true) else {
        return;
    };
    // `hide` keeps its expansions in the session, so the server speaks the session
    // revisions only (a `fixed` one would speak 2026-07-28 too).
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_harness(
            HarnessBuilder::new("Asking")
                .with_tools(tools())
                .build()
                .unwrap(),
        )
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    let mut server = McpServer::new(agent)
        .with_bearer_token(TOKEN)
        .with_prompt(greeting());
    if flat {
        server = server.without_collapse();
    }
    let server = server
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let output = tokio::process::Command::new(python)
        .arg(mcp_common::fixture("python_asking_client.py"))
        .args([server.url().as_str(), TOKEN, protocol])
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.trim_end().ends_with("ok"),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(
        stdout.contains("asked elicitation: Your colour?"),
        "{stdout}"
    );
    assert!(
        stdout.contains(r#"greeting -> 'Greet "Grace".'"#),
        "{stdout}"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_client_answers_a_session_revision() {
    answered_by_python(false, "2025-11-25").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_client_answers_input_required_rounds() {
    answered_by_python(true, "2026-07-28").await;
}
