//! A plain tool harness: the methods of one `impl` block become tools the model can call.
//!
//! `#[tool_harness]` on the impl block registers the harness; `#[ai_function]` marks the
//! methods the model may call (the doc comment is the description the model reads) and
//! `#[ai_description("...")]` describes a parameter. The parameter schema is derived from the
//! Rust types: `Option<T>` is optional, a `Result` error reaches the model as an error result.
//!
//! A scripted model plays the conversation, so the example runs offline:
//!
//! ```text
//! cargo run -p hpd-agent-examples --example plain_harness
//! ```

use hpd_agent::prelude::*;
use hpd_agent::{AgentBuilder, AgentEvent, ChatResponse, ScriptedChatClient, ToolCall};
use serde_json::Value;

/// Weather forecasts. A real harness would call a weather service here.
#[derive(Default)]
pub struct Weather;

#[tool_harness]
impl Weather {
    /// Forecasts the weather of a city for the coming days.
    #[ai_function]
    fn forecast(
        &self,
        #[ai_description("The city, e.g. \"Oslo\".")] city: String,
        #[ai_description("How many days ahead, 1 to 7; default 1.")] days: Option<u32>,
    ) -> Result<String, String> {
        let days = days.unwrap_or(1);
        if !(1..=7).contains(&days) {
            return Err(format!("days must be between 1 and 7, not {days}"));
        }
        Ok(format!("{city}: rain for the next {days} day(s), 9 °C"))
    }
}

/// The JSON type of a parameter schema, without the `null` that marks an `Option`.
fn json_type(schema: &Value) -> String {
    match &schema["type"] {
        Value::Array(types) => {
            let types: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
            types
                .into_iter()
                .filter(|t| *t != "null")
                .collect::<Vec<_>>()
                .join("|")
        }
        other => other.as_str().unwrap_or("any").to_owned(),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The model's side of the conversation: a bad call, a corrected one, then the answer.
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new(
            "call_1",
            "forecast",
            r#"{"city": "Oslo", "days": 30}"#,
        )]),
        ChatResponse::tool_calls(vec![ToolCall::new(
            "call_2",
            "forecast",
            r#"{"city": "Oslo", "days": 2}"#,
        )]),
        ChatResponse::text("Take an umbrella: rain in Oslo for the next two days."),
    ]);
    let agent = AgentBuilder::new()
        .with_instructions("You answer questions about the weather.")
        .with_tool_harness::<Weather>()
        .with_chat_client(model.clone())
        .on_event(|event| match event {
            AgentEvent::ToolCallStarted {
                name, arguments, ..
            } => println!("model calls {name}({arguments})"),
            AgentEvent::ToolCallFinished {
                result, is_error, ..
            } => {
                let kind = if *is_error { "error result" } else { "result" };
                println!("  {kind}: {result}");
            }
            _ => {}
        })
        .build()?;

    // What the model is told about the tool, all of it generated from the impl block.
    let tools = agent.tool_session().visible_tools();
    println!("The model sees {} tool, generated from Rust:", tools.len());
    for tool in &tools {
        println!("  {}: {}", tool.name, tool.description);
        let required = tool.parameters["required"].as_array().cloned();
        let required = required.unwrap_or_default();
        if let Some(properties) = tool.parameters["properties"].as_object() {
            for (name, schema) in properties {
                let needed = if required.iter().any(|r| r == name) {
                    "required"
                } else {
                    "optional"
                };
                let about = schema["description"].as_str().unwrap_or("");
                println!("    {name} ({}, {needed}): {about}", json_type(schema));
            }
        }
    }

    println!("\nuser: Do I need an umbrella in Oslo?");
    let output = agent.run("Do I need an umbrella in Oslo?").await?;
    println!("answer: {}", output.text);
    println!(
        "\nThe Rust method ran for each call; its Err went back to the model as an error \
         result, so the model could correct itself ({} model requests).",
        output.iterations
    );
    Ok(())
}
