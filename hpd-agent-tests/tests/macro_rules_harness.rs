//! Harnesses written by a `macro_rules!` macro: the locals the attribute macros generate must
//! resolve whatever hygiene the user's tokens carry (config constructors, metadata conditions
//! and templates, context parameters, async bodies).

use hpd_agent::prelude::*;
use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient, ToolCall};
use serde::Deserialize;

/// Metadata of the generated harness.
#[derive(Deserialize)]
pub struct Flags {
    /// Whether `shout` is offered.
    pub loud: bool,
    /// A word for the description.
    pub word: String,
}

/// Config of the generated harness.
#[derive(Deserialize)]
pub struct Settings {
    /// A prefix for results.
    #[serde(default)]
    pub prefix: String,
}

macro_rules! make_harness {
    ($name:ident) => {
        /// A harness written by a macro.
        pub struct $name {
            prefix: String,
        }

        #[collapse("Generated tools", metadata = Flags)]
        impl $name {
            fn new(config: Settings) -> Self {
                $name {
                    prefix: config.prefix,
                }
            }

            /// Echoes with {metadata.word}.
            #[ai_function]
            async fn echo(&self, text: String, ctx: &FunctionContext) -> String {
                format!("{}{text} ({})", self.prefix, ctx.function_name())
            }

            /// Shouts.
            #[ai_function(condition = metadata.loud)]
            fn shout(&self, text: String) -> String {
                text.to_uppercase()
            }
        }
    };
}

make_harness!(MacroTools);

#[tokio::test]
async fn a_macro_generated_harness_works() {
    let client = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "MacroTools", "{}")]),
        ChatResponse::tool_calls(vec![ToolCall::new("c2", "echo", r#"{"text": "hi"}"#)]),
        ChatResponse::text("done"),
    ]);
    let agent = AgentBuilder::new()
        .with_tool_harness_reference(
            &hpd_agent::ToolHarnessReference::new("MacroTools")
                .with_config(serde_json::json!({"prefix": "> "}))
                .with_metadata(serde_json::json!({"loud": false, "word": "care"})),
        )
        .with_chat_client(client.clone())
        .build()
        .unwrap();
    agent.run("go").await.unwrap();
    let requests = client.requests();
    assert_eq!(
        requests[0].tools[0].description,
        "Generated tools (functions: echo)"
    );
    assert_eq!(requests[1].tool_names(), ["echo"]);
    assert_eq!(requests[1].tools[0].description, "Echoes with care.");
    assert_eq!(requests[2].tool_result("c2"), Some(("> hi (echo)", false)));
}
