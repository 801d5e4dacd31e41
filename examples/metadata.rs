//! Metadata and conditional functions: one harness, tailored per agent.
//!
//! `#[tool_harness(metadata = SearchMetadata)]` gives the harness a metadata type whose value
//! each agent supplies when it registers the harness (in code with `.metadata(...)`, or as the
//! `"metadata"` of its JSON entry). Descriptions may quote it (`{metadata.engine}`), and
//! `#[ai_function(condition = metadata.images)]` registers a function only when the condition
//! holds. A function whose condition is false does not exist for that agent: the model never
//! sees it, and calling it anyway is refused.
//!
//! ```text
//! cargo run -p hpd-agent-examples --example metadata
//! ```

use hpd_agent::prelude::*;
use hpd_agent::{
    Agent, AgentBuilder, AgentConfig, AgentEvent, ChatResponse, ScriptedChatClient, ToolCall,
};
use serde::Deserialize;

/// What an agent tells the `Search` harness about its deployment.
#[derive(Deserialize)]
pub struct SearchMetadata {
    /// The search engine's name, quoted in descriptions.
    engine: String,
    /// Whether this deployment pays for image search.
    images: bool,
}

/// Web search whose tools depend on the deployment.
#[derive(Default)]
pub struct Search;

#[tool_harness(metadata = SearchMetadata)]
impl Search {
    /// Searches the web with {metadata.engine}.
    #[ai_function]
    fn search(&self, query: String) -> String {
        format!("3 pages about {query}")
    }

    /// Finds images with {metadata.engine}.
    #[ai_function(condition = metadata.images)]
    fn image_search(&self, query: String) -> String {
        format!("5 images of {query}")
    }
}

fn show(label: &str, agent: &Agent) {
    println!("{label}:");
    for tool in agent.tool_session().visible_tools() {
        println!("  {}: {}", tool.name, tool.description);
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // In code: the free tier, without image search.
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new(
            "c1",
            "image_search",
            r#"{"query": "owls"}"#,
        )]),
        ChatResponse::text("Image search is not available here."),
    ]);
    let free = AgentBuilder::new()
        .with_tool_harness_options::<Search>(|o| {
            o.with_metadata(SearchMetadata {
                engine: "DuckDuckGo".to_owned(),
                images: false,
            })
        })
        .with_chat_client(model)
        .on_event(|event| {
            if let AgentEvent::ToolCallFinished { name, result, .. } = event {
                println!("  model calls {name} -> {result}");
            }
        })
        .build()?;

    // From JSON: the paid tier, with image search and another engine.
    let config = AgentConfig::from_json(
        r#"{"tool_harnesses": [
            {"name": "Search", "metadata": {"engine": "Kagi", "images": true}}
        ]}"#,
    )?;
    let paid = AgentBuilder::from_config(config)
        .with_chat_client(ScriptedChatClient::new())
        .build()?;

    show(
        "free tier (metadata in code: DuckDuckGo, images false)",
        &free,
    );
    show("paid tier (metadata from JSON: Kagi, images true)", &paid);

    println!("\nOn the free tier the model tries image_search anyway:");
    let output = free.run("Find pictures of owls.").await?;
    println!("answer: {}", output.text);

    println!("\nMetadata that does not fit the type fails the build:");
    let bad = r#"{"tool_harnesses": [{"name": "Search", "metadata": {"engine": "Kagi"}}]}"#;
    let built = AgentBuilder::from_config(AgentConfig::from_json(bad)?)
        .with_chat_client(ScriptedChatClient::new())
        .build();
    if let Err(error) = built {
        println!("  {error}");
    }
    Ok(())
}
