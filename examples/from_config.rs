//! An agent built from JSON config, with a harness that lives in a library crate and is named
//! only in the JSON. The `use harness_library as _;` line is what makes the linker keep the
//! library, and so its harness, in this binary.
//!
//! ```text
//! cargo run -p hpd-agent-examples --example from_config
//! ```

use harness_library as _;
use hpd_agent::{AgentBuilder, AgentConfig, ChatResponse, ScriptedChatClient, ToolCall};

const CONFIG: &str = r#"{
    "Name": "converter",
    "Instructions": "Convert units exactly.",
    "ToolHarnesses": [
        { "Name": "UnitConverter", "Functions": ["celsius_to_fahrenheit"] }
    ]
}"#;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let config = AgentConfig::from_json(CONFIG)?;
    println!("canonical config:\n{}\n", config.to_json());

    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new(
            "call_1",
            "celsius_to_fahrenheit",
            r#"{"celsius": 21.5}"#,
        )]),
        ChatResponse::text("21.5 °C is 70.7 °F."),
    ]);
    let agent = AgentBuilder::from_config(config)
        .with_chat_client(model.clone())
        .build()?;
    println!("tools: {}", agent.initial_tool_names().join(", "));
    let output = agent.run("How warm is 21.5 °C in Fahrenheit?").await?;
    for request in model.requests().iter().skip(1) {
        if let Some((text, _)) = request.tool_result("call_1") {
            println!("celsius_to_fahrenheit -> {text}");
        }
    }
    println!("answer: {}", output.text);
    Ok(())
}
