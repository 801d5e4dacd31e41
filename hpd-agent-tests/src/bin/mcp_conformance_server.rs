//! The MCP server under test of the official conformance suite
//! (npm `@modelcontextprotocol/conformance`, `conformance server --url ...`), run by
//! `.ci/mcp-conformance.sh`.
//!
//! It serves the suite's fixture tools through the project's own API: a [`HarnessBuilder`]
//! harness of [`Tool`]s, served by [`McpServer::serve_http`]; and the fixture resources,
//! resource template and prompts the `resources-*`, `prompts-*`, `completion-complete` and
//! `caching` scenarios read, registered with [`McpServer::with_resource`],
//! [`McpServer::with_resource_template`] and [`McpServer::with_prompt`]. Images and audio are
//! generated in code ([`hpd_agent_tests::png`], [`hpd_agent_tests::wav`]). The fixtures that ask
//! the client (sampling, elicitation, roots) ask through `FunctionContext`, and the prompt that
//! does through `PromptRequest`.
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
    CacheHint, Completer, McpServer, PromptArgument, PromptMessage, ProviderError, ResourceBody,
    ServedPrompt, ServedResource, ServedResourceTemplate, TaskSupport,
};
use hpd_agent::tool::{Elicitation, ElicitationAnswer, RootsRequest, SamplingRequest};
use hpd_agent::{
    AgentBuilder, BuildError, HarnessBuilder, ScriptedChatClient, Tool, ToolResult,
    chat::ContentPart, tool::LogLevel,
};
use serde_json::{Value, json};

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
        // `input-required-result-non-tool-request`: a prompt that asks the client's user.
        ServedPrompt::new(
            "test_input_required_result_prompt",
            "A prompt that asks the user for its context",
            |request| async move {
                let asked = form(
                    "user_context",
                    "What context should the prompt use?",
                    "context",
                    "string",
                );
                let answer = request
                    .elicit(asked)
                    .await
                    .map_err(|error| ProviderError::Failed(error.to_string()))?;
                Ok(vec![PromptMessage::user(ContentPart::text(format!(
                    "Use this context: {}",
                    text_of(&answer, "context")
                )))])
            },
        ),
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

/// A form of one required property, with the key the suite expects.
fn form(key: &str, message: &str, property: &str, kind: &str) -> Elicitation {
    Elicitation::form(
        message,
        json!({"type": "object", "properties": {property: {"type": kind}}, "required": [property]}),
    )
    .with_key(key)
}

fn text_of(answer: &ElicitationAnswer, field: &str) -> String {
    match answer.field(field) {
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// A fixture that asks the user to confirm (key `confirm`) and reports the answer.
fn confirming(name: &'static str, description: &'static str) -> Tool {
    Tool::new(name, description, no_arguments(), |_, ctx| async move {
        match ctx
            .elicit(form("confirm", "Please confirm", "ok", "boolean"))
            .await
        {
            Ok(answer) => ToolResult::ok(format!("Confirmed: {}", text_of(&answer, "ok"))),
            Err(error) => ToolResult::error(error.to_string()),
        }
    })
}

/// The fixtures whose functions ask the client (`FunctionContext::sample`, `elicit`,
/// `roots`): as requests on the session revisions, as `input_required` rounds on 2026-07-28.
fn asking_tools() -> Vec<Tool> {
    let answer_text = |answer: &ElicitationAnswer| {
        format!(
            "action={}, content={}",
            serde_json::to_value(answer.action)
                .unwrap_or_default()
                .as_str()
                .unwrap_or("?"),
            Value::Object(answer.content.clone().unwrap_or_default())
        )
    };
    vec![
        Tool::new(
            "test_sampling",
            "Asks the client's model",
            json!({"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]}),
            |args, ctx| async move {
                let prompt = args["prompt"].as_str().unwrap_or_default().to_owned();
                match ctx.sample(SamplingRequest::new(prompt, 100)).await {
                    Ok(reply) => ToolResult::ok(format!("LLM response: {}", reply.text)),
                    Err(error) => ToolResult::error(error.to_string()),
                }
            },
        ),
        Tool::new(
            "test_elicitation",
            "Asks the client's user",
            json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}),
            move |args, ctx| async move {
                let schema = json!({"type": "object", "properties": {
                    "username": {"type": "string", "description": "User's response"},
                    "email": {"type": "string", "description": "User's email address"},
                }, "required": ["username", "email"]});
                let message = args["message"].as_str().unwrap_or_default().to_owned();
                match ctx.elicit(Elicitation::form(message, schema)).await {
                    Ok(answer) => {
                        ToolResult::ok(format!("User response: {}", answer_text(&answer)))
                    }
                    Err(error) => ToolResult::error(error.to_string()),
                }
            },
        ),
        Tool::new(
            "test_elicitation_sep1034_defaults",
            "Asks with defaults",
            no_arguments(),
            move |_, ctx| async move {
                let schema = json!({"type": "object", "properties": {
                    "name": {"type": "string", "default": "John Doe"},
                    "age": {"type": "integer", "default": 30},
                    "score": {"type": "number", "default": 95.5},
                    "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
                    "verified": {"type": "boolean", "default": true},
                }});
                match ctx.elicit(Elicitation::form("Your details", schema)).await {
                    Ok(answer) => {
                        ToolResult::ok(format!("Elicitation completed: {}", answer_text(&answer)))
                    }
                    Err(error) => ToolResult::error(error.to_string()),
                }
            },
        ),
        Tool::new(
            "test_elicitation_sep1330_enums",
            "Asks with enums",
            no_arguments(),
            move |_, ctx| async move {
                let schema = json!({"type": "object", "properties": {
                    "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                    "titledSingle": {"type": "string", "oneOf": [
                        {"const": "value1", "title": "First Option"},
                        {"const": "value2", "title": "Second Option"},
                        {"const": "value3", "title": "Third Option"}]},
                    "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                        "enumNames": ["Option One", "Option Two", "Option Three"]},
                    "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                    "titledMulti": {"type": "array", "items": {"anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"}]}},
                }});
                match ctx.elicit(Elicitation::form("Pick", schema)).await {
                    Ok(answer) => {
                        ToolResult::ok(format!("Elicitation completed: {}", answer_text(&answer)))
                    }
                    Err(error) => ToolResult::error(error.to_string()),
                }
            },
        ),
        Tool::new(
            "test_input_required_result_elicitation",
            "Asks the user's name",
            no_arguments(),
            |_, ctx| async move {
                match ctx
                    .elicit(form("user_name", "What is your name?", "name", "string"))
                    .await
                {
                    Ok(answer) => ToolResult::ok(format!("Hello, {}!", text_of(&answer, "name"))),
                    Err(error) => ToolResult::error(error.to_string()),
                }
            },
        ),
        Tool::new(
            "test_input_required_result_sampling",
            "Asks the client's model",
            no_arguments(),
            |_, ctx| async move {
                let request = SamplingRequest::new("What is the capital of France?", 100)
                    .with_key("capital_question");
                match ctx.sample(request).await {
                    Ok(reply) => ToolResult::ok(format!("The model answered: {}", reply.text)),
                    Err(error) => ToolResult::error(error.to_string()),
                }
            },
        ),
        Tool::new(
            "test_input_required_result_list_roots",
            "Asks for the roots",
            no_arguments(),
            |_, ctx| async move {
                match ctx
                    .roots(RootsRequest::new().with_key("client_roots"))
                    .await
                {
                    Ok(roots) => ToolResult::ok(format!(
                        "Roots: {}",
                        roots
                            .iter()
                            .map(|root| root.uri.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                    Err(error) => ToolResult::error(error.to_string()),
                }
            },
        ),
        confirming(
            "test_input_required_result_request_state",
            "Asks for a confirmation",
        ),
        Tool::new(
            "test_input_required_result_multiple_inputs",
            "Asks the user, the model and for the roots at once",
            no_arguments(),
            |_, ctx| async move {
                let (name, greeting, roots) = tokio::join!(
                    ctx.elicit(form("user_name", "What is your name?", "name", "string")),
                    ctx.sample(
                        SamplingRequest::new("Generate a greeting", 50).with_key("greeting")
                    ),
                    ctx.roots(RootsRequest::new().with_key("client_roots")),
                );
                match (name, greeting, roots) {
                    (Ok(name), Ok(greeting), Ok(roots)) => ToolResult::ok(format!(
                        "{} {} ({} roots)",
                        greeting.text,
                        text_of(&name, "name"),
                        roots.len()
                    )),
                    (name, greeting, roots) => {
                        ToolResult::error(format!("{name:?} {greeting:?} {roots:?}"))
                    }
                }
            },
        ),
        Tool::new(
            "test_input_required_result_multi_round",
            "Asks twice, one after the other",
            no_arguments(),
            |_, ctx| async move {
                let name = match ctx
                    .elicit(form(
                        "step1",
                        "Step 1: What is your name?",
                        "name",
                        "string",
                    ))
                    .await
                {
                    Ok(answer) => text_of(&answer, "name"),
                    Err(error) => return ToolResult::error(error.to_string()),
                };
                match ctx
                    .elicit(form(
                        "step2",
                        "Step 2: What is your favorite color?",
                        "color",
                        "string",
                    ))
                    .await
                {
                    Ok(answer) => {
                        ToolResult::ok(format!("{name} likes {}", text_of(&answer, "color")))
                    }
                    Err(error) => ToolResult::error(error.to_string()),
                }
            },
        ),
        confirming(
            "test_input_required_result_tampered_state",
            "Asks with a sealed state",
        ),
        // Needs the client's model: without the sampling capability the function fails, and
        // on 2026-07-28 the request with it (MissingRequiredClientCapabilityError, -32021).
        Tool::new(
            "test_missing_capability",
            "Needs the client's model",
            no_arguments(),
            |_, ctx| async move {
                match ctx.sample(SamplingRequest::new("Say hello", 20)).await {
                    Ok(reply) => ToolResult::ok(reply.text),
                    Err(error) => ToolResult::error(error.to_string()),
                }
            },
        ),
        // Asks only what the client declared: an undeclared capability is an error the
        // function sees at once, without asking.
        Tool::new(
            "test_input_required_result_capabilities",
            "Asks what the client can answer",
            no_arguments(),
            |_, ctx| async move {
                let (greeting, name) = tokio::join!(
                    ctx.sample(
                        SamplingRequest::new("Generate a greeting", 50).with_key("greeting")
                    ),
                    ctx.elicit(form("user_name", "What is your name?", "name", "string")),
                );
                ToolResult::ok(format!(
                    "sampling: {}, elicitation: {}",
                    greeting.map_or_else(|e| e.to_string(), |reply| reply.text),
                    name.map_or_else(|e| e.to_string(), |answer| text_of(&answer, "name"))
                ))
            },
        ),
    ]
}

/// The fixtures of the `tasks-*` scenarios (the 2026-07-28 tasks extension): `greet` runs as
/// a plain call; the others may run as tasks (see `main` for their task support).
fn task_tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "greet",
            "Greets someone",
            json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
            |args, _| async move {
                ToolResult::ok(format!(
                    "Hello, {}!",
                    args["name"].as_str().unwrap_or("you")
                ))
            },
        ),
        // Sleeps `seconds`, reporting its progress each second; `tasks/cancel` cancels it (the
        // call is cancelled, as a cancelled run's is).
        Tool::new(
            "slow_compute",
            "Computes for some seconds",
            json!({"type": "object", "properties": {
                "seconds": {"type": "number"}, "label": {"type": "string"}},
                "required": ["seconds"]}),
            |args, ctx| async move {
                let seconds = args["seconds"].as_f64().unwrap_or(0.0).clamp(0.0, 600.0);
                let label = args["label"].as_str().unwrap_or("computation").to_owned();
                let mut done = 0.0;
                while done < seconds {
                    let step = (seconds - done).min(1.0);
                    tokio::time::sleep(Duration::from_secs_f64(step)).await;
                    done += step;
                    ctx.report_progress(done, Some(seconds), Some(&label));
                }
                ToolResult::ok(format!("{label}: computed in {seconds} s"))
            },
        ),
        Tool::new(
            "failing_job",
            "Fails after a second",
            no_arguments(),
            |_, _| async {
                tokio::time::sleep(Duration::from_secs(1)).await;
                ToolResult::error("The job failed, as it always does")
            },
        ),
        Tool::new(
            "confirm_delete",
            "Asks before it deletes a file",
            json!({"type": "object", "properties": {"filename": {"type": "string"}}, "required": ["filename"]}),
            |args, ctx| async move {
                let filename = args["filename"].as_str().unwrap_or_default().to_owned();
                let question = form(
                    "confirm",
                    &format!("Delete {filename}?"),
                    "confirm",
                    "boolean",
                );
                match ctx.elicit(question).await {
                    Ok(answer) if answer.field("confirm") == Some(&Value::Bool(true)) => {
                        ToolResult::ok(format!("Deleted {filename}"))
                    }
                    Ok(_) => ToolResult::ok(format!("Kept {filename}")),
                    Err(error) => ToolResult::error(error.to_string()),
                }
            },
        ),
        // Asks the user's name in an `input_required` round of the request, then goes on as
        // a task (`McpServer::with_task_after_input`).
        Tool::new(
            "test_tool_with_task",
            "Asks a name, then works on as a task",
            no_arguments(),
            |_, ctx| async move {
                let name = match ctx
                    .elicit(form("user_name", "What is your name?", "name", "string"))
                    .await
                {
                    Ok(answer) => text_of(&answer, "name"),
                    Err(error) => return ToolResult::error(error.to_string()),
                };
                ctx.continue_as_task();
                tokio::time::sleep(Duration::from_millis(500)).await;
                ToolResult::ok(format!("Hello, {name}! (from the task)"))
            },
        ),
        // Asks two questions at once, so two asks are outstanding together.
        Tool::new(
            "multi_input",
            "Asks two questions at once",
            no_arguments(),
            |_, ctx| async move {
                let (name, confirm) = tokio::join!(
                    ctx.elicit(form("name", "What is your name?", "name", "string")),
                    ctx.elicit(form("confirm", "Go on?", "confirm", "boolean")),
                );
                match (name, confirm) {
                    (Ok(name), Ok(confirm)) => ToolResult::ok(format!(
                        "{} answered; go on: {}",
                        text_of(&name, "name"),
                        text_of(&confirm, "confirm")
                    )),
                    (name, confirm) => ToolResult::error(format!("{name:?} {confirm:?}")),
                }
            },
        ),
    ]
}

/// Fails every call of its harness after the function ran: a failure of the server, not of
/// the function (a task of `protocol_error_job` is `failed`, not `completed`).
struct FailingAfterwards;

#[hpd_agent::async_trait]
impl hpd_agent::Middleware for FailingAfterwards {
    async fn after_function(
        &self,
        _call: &hpd_agent::middleware::FunctionCall,
        _result: &mut ToolResult,
    ) -> Result<(), hpd_agent::middleware::MiddlewareError> {
        Err("the server failed after the job ran".into())
    }
}

/// `protocol_error_job`: runs a second, then its harness's middleware fails.
fn faulty_harness() -> Result<DynamicHarness, BuildError> {
    HarnessBuilder::new("Faulty")
        .with_tool(Tool::new(
            "protocol_error_job",
            "Runs a second, then the server fails",
            no_arguments(),
            |_, _| async {
                tokio::time::sleep(Duration::from_secs(1)).await;
                ToolResult::ok("done")
            },
        ))
        .with_scoped_middleware(FailingAfterwards)
        .build()
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
        .with_tools(asking_tools())
        .with_tools(task_tools())
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
        .with_harness(faulty_harness()?)
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
    // The `tasks-*` fixtures (2026-07-28 tasks extension).
    let server = server
        .with_task_support("slow_compute", TaskSupport::Optional)
        .with_task_support("failing_job", TaskSupport::Required)
        .with_task_support("protocol_error_job", TaskSupport::Optional)
        .with_task_support("confirm_delete", TaskSupport::Optional)
        .with_task_support("multi_input", TaskSupport::Optional)
        .with_task_after_input("test_tool_with_task", TaskSupport::Required);
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
