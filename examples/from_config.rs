//! An agent described in JSON: `examples/agent.json` names its harnesses, which functions it
//! exposes and the config each harness is built from.
//!
//! `AgentConfig::from_json` reads the file (keys in any case: `tool_harnesses`,
//! `ToolHarnesses`, `toolHarnesses`) and `AgentBuilder::from_config` starts a builder from it;
//! code adds what JSON cannot hold, here the chat client. Harnesses are found by name in the
//! registry the macros fill at link time, and each harness's `config` is handed to its
//! `fn new(config)`. Mistakes are reported with the JSON path of the culprit.
//!
//! ```text
//! cargo run -p hpd-agent-examples --example from_config
//! cargo run -p hpd-agent-examples --example from_config -- path/to/your.json
//! ```

use hpd_agent::prelude::*;
use hpd_agent::{
    AgentBuilder, AgentConfig, AgentEvent, ChatResponse, ScriptedChatClient, ToolCall,
};
use serde::Deserialize;

/// Weather forecasts, a plain harness.
#[derive(Default)]
pub struct Weather;

#[tool_harness]
impl Weather {
    /// Forecasts the weather of a city.
    #[ai_function]
    fn forecast(&self, city: String) -> String {
        format!("{city}: sunny, 24 °C")
    }
}

/// The config of [`Currency`], read from the harness's `"config"` in the JSON.
#[derive(Deserialize)]
pub struct CurrencyConfig {
    /// The exchange fee in percent.
    fee_percent: f64,
}

/// Currency exchange, collapsed; built from its config.
pub struct Currency {
    fee_percent: f64,
}

#[collapse("Currency exchange")]
impl Currency {
    /// Builds the harness from the `config` of its JSON entry.
    pub fn new(config: CurrencyConfig) -> Self {
        Currency {
            fee_percent: config.fee_percent,
        }
    }

    /// Converts euros to Norwegian kroner, after the exchange fee.
    #[ai_function]
    fn convert(&self, euros: f64) -> String {
        let kroner = euros * 11.5 * (1.0 - self.fee_percent / 100.0);
        format!("{kroner:.2} NOK (after a {}% fee)", self.fee_percent)
    }

    /// Lists every rate; not exposed, since agent.json selects only `convert`.
    #[ai_function]
    fn all_rates(&self) -> String {
        "EUR/NOK 11.5, EUR/SEK 11.2".to_owned()
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/agent.json").to_owned());
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let config = AgentConfig::from_json(&text)?;

    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "forecast", r#"{"city": "Oslo"}"#)]),
        ChatResponse::tool_calls(vec![ToolCall::new("c2", "Currency", "{}")]),
        ChatResponse::tool_calls(vec![ToolCall::new("c3", "convert", r#"{"euros": 100}"#)]),
        ChatResponse::text("Sunny in Oslo; 100 € buys 1127 NOK."),
    ]);
    let agent = AgentBuilder::from_config(config)
        .with_chat_client(model)
        .on_event(|event| {
            if let AgentEvent::ToolCallFinished { name, result, .. } = event {
                println!("  {name} -> {result}");
            }
        })
        .build()?;
    println!("agent '{}' built from {path}", agent.name());
    println!("tools offered: {}", agent.initial_tool_names().join(", "));

    let output = agent
        .run("Weather in Oslo, and what do 100 € buy there?")
        .await?;
    println!("answer: {}", output.text);

    println!("\nMistakes in a config name the place they are at:");
    let typo = r#"{"tool_harnesses": [{"name": "Currency", "functons": ["convert"]}]}"#;
    if let Err(error) = AgentConfig::from_json(typo) {
        println!("  {error}");
        println!(
            "  (path '{}', for tools that point at the culprit)",
            error.path()
        );
    }
    let unknown = AgentConfig::from_json(r#"{"tool_harnesses": ["Wether"]}"#)?;
    let built = AgentBuilder::from_config(unknown)
        .with_chat_client(ScriptedChatClient::new())
        .build();
    if let Err(error) = built {
        println!("  build: {error}");
    }
    Ok(())
}
