//! The MCP server under test of the official conformance suite
//! (npm `@modelcontextprotocol/conformance`, `conformance server --url ...`), run by
//! `.ci/mcp-conformance.sh`.
//!
//! It serves the suite's fixture tools through the project's own API: a [`HarnessBuilder`]
//! harness of [`Tool`]s, served by [`McpServer::serve_http`]; and the fixture resources,
//! resource template and prompts the `resources-*`, `prompts-*`, `completion-complete` and
//! `caching` scenarios read, registered with [`McpServer::with_resource`],
//! [`McpServer::with_resource_template`] and [`McpServer::with_prompt`]. Images and audio are
//! generated in code ([`hpd_agent_tests::png`], [`hpd_agent_tests::wav`]). Fixture tools the
//! project does not offer (sampling, elicitation; see `.ci/mcp-conformance/*.yaml`) are not
//! served.
//!
//! The server collapses, as `McpServer` does by default (the `fixed` layout): the fixtures are
//! plain tools (their harness has no container, so the suite calls them by name), and a
//! collapsed harness, `Arithmetic`, adds a container and the call tool `call_function` to the
//! listing, so the suite checks a collapsing server, over the stateless 2026-07-28 too. The
//! suite's diagnostic tool `test_trigger_tool_change` changes the tool list (a harness built at
//! run time, `Changing`, gains or loses `test_changed_tool`), which `subscriptions/listen`
//! streams announce.
//!
//! ```text
//! mcp_conformance_server [ADDR]    # default 127.0.0.1:0; prints the endpoint URL on stdout
//! ```

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use hpd_agent::harness::{DynamicHarness, ToolListUpdater};
use hpd_agent::mcp::{
    CacheHint, Completer, McpServer, PromptArgument, PromptMessage, ResourceBody, ServedPrompt,
    ServedResource, ServedResourceTemplate,
};
use hpd_agent::{
    AgentBuilder, BuildError, HarnessBuilder, ScriptedChatClient, Tool, ToolResult,
    chat::ContentPart, tool::LogLevel,
};
use serde_json::json;

fn no_arguments() -> serde_json::Value {
    json!({"type": "object", "properties": {}})
}

fn fixture_tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "test_simple_text",
            "Returns a simple text response",
            no_arguments(),
            |_, _| async { ToolResult::ok("This is a simple text response for testing.") },
        ),
        Tool::new(
            "test_error_handling",
            "Always fails with an error result",
            no_arguments(),
            |_, _| async {
                ToolResult::error("This tool intentionally returns an error for testing")
            },
        ),
        // Reports 0, 50 and 100 of 100, with pauses, through `FunctionContext::report_progress`.
        Tool::new(
            "test_tool_with_progress",
            "Reports progress while it runs",
            no_arguments(),
            |_, ctx| async move {
                for progress in [0.0, 50.0, 100.0] {
                    ctx.report_progress(progress, Some(100.0), Some("working"));
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                ToolResult::ok("Progress test completed")
            },
        ),
        Tool::new(
            "test_image_content",
            "Returns an image",
            no_arguments(),
            |_, _| async { ToolResult::image("image/png", red_pixel()) },
        ),
        Tool::new(
            "test_audio_content",
            "Returns audio",
            no_arguments(),
            |_, _| async {
                ToolResult::from_parts([ContentPart::audio(
                    "audio/wav",
                    hpd_agent_tests::wav(8000, &[0, 1000, 0, -1000]),
                )])
            },
        ),
        Tool::new(
            "test_embedded_resource",
            "Returns an embedded resource",
            no_arguments(),
            |_, _| async {
                ToolResult::from_parts([ContentPart::text_resource(
                    "test://embedded-resource",
                    Some("text/plain"),
                    "This is an embedded resource content.",
                )])
            },
        ),
        Tool::new(
            "test_multiple_content_types",
            "Returns text, an image and a resource",
            no_arguments(),
            |_, _| async {
                ToolResult::from_parts([
                    ContentPart::text("Multiple content types test:"),
                    ContentPart::image("image/png", red_pixel()),
                    ContentPart::text_resource(
                        "test://mixed-content-resource",
                        Some("application/json"),
                        r#"{"test":"data","value":123}"#,
                    ),
                ])
            },
        ),
        // Logs three messages, with pauses, through `FunctionContext::log`.
        Tool::new(
            "test_tool_with_logging",
            "Logs messages while it runs",
            no_arguments(),
            |_, ctx| async move {
                for message in [
                    "Tool execution started",
                    "Tool processing data",
                    "Tool execution completed",
                ] {
                    ctx.log(LogLevel::Info, message);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                ToolResult::ok("Logging test completed")
            },
        ),
    ]
}

/// The resources the `resources-*` scenarios read and subscribe to.
fn fixture_resources() -> Vec<ServedResource> {
    vec![
        ServedResource::text(
            "test://static-text",
            "static-text",
            "This is the content of the static text resource.",
        )
        .with_description("A static text resource"),
        ServedResource::blob(
            "test://static-binary",
            "static-binary",
            "image/png",
            red_pixel(),
        )
        .with_description("A static binary resource (a 1x1 PNG)"),
        ServedResource::text(
            "test://watched-resource",
            "watched-resource",
            "Watched content.",
        )
        .with_description("A resource clients may subscribe to"),
    ]
}

/// The template of `resources-templates-read`: the id substituted into JSON.
fn fixture_template() -> ServedResourceTemplate {
    ServedResourceTemplate::new("test://template/{id}/data", "template-data", |request| async move {
        let id = request.variable("id").unwrap_or_default();
        Ok(ResourceBody::text(
            serde_json::json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")})
                .to_string(),
        ))
    })
    .with_description("Data for an id")
    .with_mime_type("application/json")
    .with_completion("id", Completer::values(["123", "456", "789"]))
}

/// The prompts of the `prompts-*` scenarios, with completion for `arg1` (`completion-complete`).
fn fixture_prompts() -> Vec<ServedPrompt> {
    vec![
        ServedPrompt::new(
            "test_simple_prompt",
            "A simple prompt without arguments",
            |_| async {
                Ok(vec![PromptMessage::user(ContentPart::text(
                    "This is a simple prompt for testing.",
                ))])
            },
        ),
        ServedPrompt::new(
            "test_prompt_with_arguments",
            "A prompt with two arguments",
            |request| async move {
                let arg1 = request.argument("arg1").unwrap_or_default();
                let arg2 = request.argument("arg2").unwrap_or_default();
                Ok(vec![PromptMessage::user(ContentPart::text(format!(
                    "Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"
                )))])
            },
        )
        .with_argument(PromptArgument::required("arg1", "First test argument"))
        .with_argument(PromptArgument::required("arg2", "Second test argument"))
        .with_completion(
            "arg1",
            Completer::values(["paris", "park", "party", "test", "testing"]),
        ),
        ServedPrompt::new(
            "test_prompt_with_embedded_resource",
            "A prompt that embeds a resource",
            |request| async move {
                let uri = request.argument("resourceUri").unwrap_or_default();
                Ok(vec![
                    PromptMessage::user(ContentPart::text_resource(
                        uri,
                        Some("text/plain"),
                        "Embedded resource content for testing.",
                    )),
                    PromptMessage::user(ContentPart::text(
                        "Please process the embedded resource above.",
                    )),
                ])
            },
        )
        .with_argument(PromptArgument::required(
            "resourceUri",
            "URI of the resource to embed",
        )),
        ServedPrompt::new(
            "test_prompt_with_image",
            "A prompt with an image",
            |_| async {
                Ok(vec![
                    PromptMessage::user(ContentPart::image("image/png", red_pixel())),
                    PromptMessage::user(ContentPart::text("Please analyze the image above.")),
                ])
            },
        ),
    ]
}

/// The harness `Changing`, whose `test_trigger_tool_change` adds `test_changed_tool` to it, or
/// removes it when it is there.
fn changing_harness() -> Result<DynamicHarness, BuildError> {
    let updater: Arc<OnceLock<ToolListUpdater>> = Arc::default();
    let harness = HarnessBuilder::new("Changing")
        .with_tool(trigger(Arc::clone(&updater), false))
        .build()?;
    let _ = updater.set(harness.updater());
    Ok(harness)
}

/// `test_trigger_tool_change`, in the list with (`added`) or without `test_changed_tool`.
fn trigger(updater: Arc<OnceLock<ToolListUpdater>>, added: bool) -> Tool {
    Tool::new(
        "test_trigger_tool_change",
        "Changes the tool list: adds test_changed_tool, or removes it",
        no_arguments(),
        move |_, _| {
            let updater = Arc::clone(&updater);
            async move {
                let Some(lists) = updater.get() else {
                    return ToolResult::error("the tool list cannot be changed yet");
                };
                let mut tools = vec![trigger(Arc::clone(&updater), !added)];
                if !added {
                    tools.push(Tool::new(
                        "test_changed_tool",
                        "Exists after an odd number of tool list changes",
                        no_arguments(),
                        |_, _| async { ToolResult::ok("present") },
                    ));
                }
                match lists.replace(tools) {
                    Ok(_) => ToolResult::ok("The tool list changed."),
                    Err(error) => {
                        ToolResult::error(format!("The tool list did not change: {error}"))
                    }
                }
            }
        },
    )
}

/// A 1×1 red PNG.
fn red_pixel() -> Vec<u8> {
    hpd_agent_tests::png(1, 1, |_, _| [255, 0, 0])
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr: SocketAddr = match std::env::args().nth(1) {
        Some(addr) => addr.parse()?,
        None => "127.0.0.1:0".parse()?,
    };
    let harness = HarnessBuilder::new("Conformance")
        .with_tools(fixture_tools())
        .build()?;
    let add = Tool::new(
        "add",
        "Adds two integers",
        json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"]
        }),
        |args, _| async move {
            match (args["a"].as_i64(), args["b"].as_i64()) {
                (Some(a), Some(b)) => ToolResult::ok(a.saturating_add(b).to_string()),
                _ => ToolResult::error("a and b must be integers"),
            }
        },
    );
    let arithmetic = HarnessBuilder::new("Arithmetic")
        .with_collapse("Integer arithmetic")
        .with_tool(add)
        .build()?;
    let agent = AgentBuilder::new()
        .with_name("hpd-agent-conformance")
        .with_harness(harness)
        .with_harness(arithmetic)
        .with_harness(changing_harness()?)
        // The model is never asked: the server only runs the tools.
        .with_chat_client(ScriptedChatClient::new())
        .build()?;
    // The suite sends no credentials; the port is on loopback and lives for one run.
    // Collapsing, as McpServer is by default; the fixtures are plain tools.
    let mut server = McpServer::new(agent);
    for resource in fixture_resources() {
        server = server.with_resource(resource);
    }
    for prompt in fixture_prompts() {
        server = server.with_prompt(prompt);
    }
    // The fixtures do not change while the server runs (`caching`).
    let server = server
        .with_resource_template(fixture_template())
        .with_list_cache_hint(CacheHint::public(Duration::from_secs(60)))
        .with_unauthenticated_access()
        .serve_http(addr)
        .await?;
    println!("{}", server.url());
    server.wait().await;
    Ok(())
}
