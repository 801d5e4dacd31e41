//! A harness from a library crate, found by name.
//!
//! `examples/harness-library` is an ordinary library crate whose `UnitConverter` is a
//! `#[tool_harness]`. The macro registers the harness at link time, so this binary never names
//! the type: it asks for the harness by name, from a builder (`with_tool_harness_reference`) or from JSON
//! config (`"tool_harnesses": ["UnitConverter"]`), and the registry finds it.
//!
//! One line matters: `use harness_library as _;`. The linker keeps a library's registrations
//! only when the binary uses the crate; naming a harness in a string does not count. Without
//! the line the registry does not know `UnitConverter`, and building an agent that names it
//! fails with `harness 'UnitConverter' not found`.
//!
//! ```text
//! cargo run -p hpd-agent-examples --example library_harness
//! ```

use harness_library as _; // keeps the library, and so its harnesses, in this binary

use hpd_agent::config::ToolHarnessReference;
use hpd_agent::harness::HarnessInfo;
use hpd_agent::{
    AgentBuilder, AgentConfig, AgentEvent, ChatResponse, ScriptedChatClient, ToolCall,
};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Fails with the names of the linked harnesses when `use harness_library as _;` is missing.
    let info = HarnessInfo::find("UnitConverter")?;
    println!(
        "the registry found '{}' ({})",
        info.name(),
        info.rust_type()
    );
    let functions: Vec<&str> = info.function_names().collect();
    println!("  functions: {}", functions.join(", "));

    // By name from a builder: one function of the library's harness.
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new(
            "c1",
            "celsius_to_fahrenheit",
            r#"{"celsius": 21.5}"#,
        )]),
        ChatResponse::text("21.5 °C is 70.7 °F."),
    ]);
    let agent = AgentBuilder::new()
        .with_tool_harness_reference(
            &ToolHarnessReference::new("UnitConverter").with_functions(["celsius_to_fahrenheit"]),
        )
        .with_chat_client(model)
        .on_event(|event| {
            if let AgentEvent::ToolCallFinished { name, result, .. } = event {
                println!("  {name} -> {result}");
            }
        })
        .build()?;
    println!(
        "\nbuilder with_tool_harness_reference: tools [{}]",
        agent.initial_tool_names().join(", ")
    );
    let output = agent.run("How warm is 21.5 °C in Fahrenheit?").await?;
    println!("answer: {}", output.text);

    // By name from JSON: the whole harness.
    let config = AgentConfig::from_json(r#"{"tool_harnesses": ["UnitConverter"]}"#)?;
    let agent = AgentBuilder::from_config(config)
        .with_chat_client(ScriptedChatClient::new())
        .build()?;
    println!(
        "\nJSON config \"tool_harnesses\": [\"UnitConverter\"]: tools [{}]",
        agent.initial_tool_names().join(", ")
    );
    Ok(())
}
