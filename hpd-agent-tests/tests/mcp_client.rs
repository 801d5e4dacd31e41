//! MCP servers as harnesses, against real third-party servers: the reference servers
//! `@modelcontextprotocol/server-everything` and `@modelcontextprotocol/server-filesystem`
//! (npm) and `mcp-server-time` (PyPI) over stdio, and a server built with the official Python
//! SDK over streamable HTTP. Each test reads where its server is from the variables that
//! `.ci/mcp-servers.sh` prints and is skipped, saying so, when they are unset.

mod mcp_common;

use std::time::Duration;

use hpd_agent::mcp::{McpError, McpHarness};
use hpd_agent::{
    AgentBuilder, ChatMessage, ChatResponse, ScriptedChatClient, ToolCall, chat::ContentPart,
};
use mcp_common::{command_from_env, fixture, free_port, python, temp_dir};

fn stdio(name: &str, command: &[String]) -> McpHarness {
    McpHarness::stdio(name, command[0].clone(), command[1..].iter().cloned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_server_resources_prompts_and_completion() {
    use hpd_agent::mcp::{CompletionRequest, CompletionTarget, PromptArgument, PromptMessage};
    let Some(command) = command_from_env("HPD_MCP_EVERYTHING") else {
        return;
    };
    let client = stdio("Everything", &command)
        .connect_client()
        .await
        .unwrap();
    let names = client.harness().tool_names();
    for expected in ["Everything_list_resources", "Everything_read_resource"] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} missing from {names:?}"
        );
    }

    let prompts = client.list_prompts().await.unwrap();
    let args = prompts.iter().find(|p| p.name == "args-prompt").unwrap();
    assert_eq!(args.arguments.len(), 2);
    assert_eq!(args.arguments[0].name, "city");
    assert!(args.arguments[0].required && !args.arguments[1].required);
    let weather = client
        .get_prompt("args-prompt", [("city", "Paris")])
        .await
        .unwrap();
    assert_eq!(
        weather.messages,
        [PromptMessage::user(ContentPart::text(
            "What's weather in Paris?"
        ))]
    );
    assert!(prompts.iter().any(|p| p.name == "simple-prompt"));
    let _: &PromptArgument = &args.arguments[1];

    let team = || CompletionTarget::Prompt("completable-prompt".into());
    let departments = client
        .complete(team(), CompletionRequest::new("department", "E"))
        .await
        .unwrap();
    assert_eq!(departments.values, ["Engineering"]);
    let people = client
        .complete(
            team(),
            CompletionRequest::new("name", "A").with_context("department", "Engineering"),
        )
        .await
        .unwrap();
    assert_eq!(people.values, ["Alice"]);

    let resources = client.list_resources().await.unwrap();
    assert!(!resources.is_empty());
    let first = client.read_resource(&resources[0].uri).await.unwrap();
    assert!(!first.is_empty(), "{} read as nothing", resources[0].uri);
    let templates = client.list_resource_templates().await.unwrap();
    let text = templates
        .iter()
        .find(|t| t.uri_template == "demo://resource/dynamic/text/{resourceId}")
        .unwrap_or_else(|| panic!("no text template in {templates:?}"));
    let read = client
        .read_resource("demo://resource/dynamic/text/1")
        .await
        .unwrap();
    match &read[..] {
        [ContentPart::Resource { uri, .. }] => assert_eq!(uri, "demo://resource/dynamic/text/1"),
        other => panic!("expected one text resource, got {other:?}"),
    }
    assert!(read[0].text_form().contains("Resource 1:"), "{:?}", read[0]);
    let ids = client
        .complete(
            CompletionTarget::ResourceTemplate(text.uri_template.clone()),
            CompletionRequest::new("resourceId", "3"),
        )
        .await
        .unwrap();
    assert_eq!(ids.values, ["3"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_server_is_a_collapsed_container_whose_echo_runs() {
    let Some(command) = command_from_env("HPD_MCP_EVERYTHING") else {
        return;
    };
    let harness = stdio("Everything", &command).connect().await.unwrap();
    assert!(harness.is_collapsed());
    let names = harness.tool_names();
    for expected in ["echo", "get-sum", "get-tiny-image"] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} missing from {names:?}"
        );
    }

    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "Everything", "{}")]),
        ChatResponse::tool_calls(vec![
            ToolCall::new("c2", "echo", r#"{"message": "hello from hpd-agent"}"#),
            ToolCall::new("c3", "get-sum", r#"{"a": 2, "b": 40}"#),
            ToolCall::new("c4", "get-tiny-image", "{}"),
            ToolCall::new("c5", "get-structured-content", r#"{"location": "Chicago"}"#),
        ]),
        ChatResponse::text("done"),
    ]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_harness(harness)
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    let output = agent.run("Echo something").await.unwrap();
    assert_eq!(output.text, "done");

    let requests = model.requests();
    assert_eq!(requests[0].tool_names(), ["Everything"]);
    assert!(requests[1].tool_names().contains(&"echo"));
    assert!(!requests[1].tool_names().contains(&"Everything"));
    assert_eq!(
        requests[2].tool_result("c2"),
        Some(("Echo: hello from hpd-agent", false))
    );
    let (sum, is_error) = requests[2].tool_result("c3").unwrap();
    assert!(!is_error);
    assert!(sum.contains("42"), "{sum}");
    // The image reaches the model as an image part (its text form describes it).
    let (image, _) = requests[2].tool_result("c4").unwrap();
    assert!(image.contains("[image: image/png"), "{image}");
    let parts = tool_parts(&requests[2], "c4");
    let png = parts
        .iter()
        .find_map(|part| match part {
            ContentPart::Image { mime_type, data } if mime_type == "image/png" => Some(data),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no image part in {parts:?}"));
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    // The structured content is kept: listed with its output schema, sent as its JSON.
    let structured = requests[1]
        .tools
        .iter()
        .find(|t| t.name == "get-structured-content")
        .unwrap();
    assert!(structured.output_schema.as_deref().unwrap()["properties"]["temperature"].is_object());
    let (weather, _) = requests[2].tool_result("c5").unwrap();
    let weather: serde_json::Value =
        serde_json::from_str(weather.trim()).unwrap_or_else(|e| panic!("{e}: {weather}"));
    assert_eq!(weather["temperature"], 36);
}

/// The content parts of the result of `call_id` in a recorded request.
fn tool_parts(
    request: &hpd_agent::providers::scripted::RecordedRequest,
    call_id: &str,
) -> Vec<ContentPart> {
    request
        .messages
        .iter()
        .find_map(|message| match message {
            ChatMessage::Tool {
                call_id: id, parts, ..
            } if id == call_id => Some(parts.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filesystem_server_reads_a_file_the_test_wrote() {
    let Some(mut command) = command_from_env("HPD_MCP_FILESYSTEM") else {
        return;
    };
    let dir = temp_dir("fs");
    let file = dir.join("note.txt");
    std::fs::write(&file, "The answer is 42.\nSecond line.").unwrap();
    command.push(dir.to_string_lossy().into_owned());

    let harness = stdio("Files", &command)
        .with_collapse("Read files of the test directory")
        .with_functions(["read_text_file", "list_directory"])
        .with_timeout(Duration::from_secs(30))
        .connect()
        .await
        .unwrap();
    assert_eq!(harness.tool_names(), ["read_text_file", "list_directory"]);

    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "Files", "{}")]),
        ChatResponse::tool_calls(vec![ToolCall::new(
            "c2",
            "read_text_file",
            serde_json::json!({"path": file.to_string_lossy()}).to_string(),
        )]),
        ChatResponse::tool_calls(vec![ToolCall::new(
            "c3",
            "read_text_file",
            serde_json::json!({"path": "/etc/passwd"}).to_string(),
        )]),
        ChatResponse::text("read"),
    ]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_harness(harness)
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    agent.run("Read the note").await.unwrap();
    let requests = model.requests();
    assert_eq!(requests[0].tool_names(), ["Files"]);
    assert_eq!(
        requests[1].tool_names(),
        ["read_text_file", "list_directory"]
    );
    // The server's annotations (`readOnlyHint: true` on both) are the tools' own.
    assert!(
        requests[1]
            .tools
            .iter()
            .all(|tool| tool.annotations.read_only == Some(true)),
        "{:?}",
        requests[1].tools
    );
    assert_eq!(
        requests[2].tool_result("c2"),
        Some(("The answer is 42.\nSecond line.", false))
    );
    // Outside the allowed directory: the server's isError result is an error result.
    let (denied, is_error) = requests[3].tool_result("c3").unwrap();
    assert!(is_error, "{denied}");
    assert!(denied.to_lowercase().contains("denied"), "{denied}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowlisted_function_the_server_lacks_fails_connect() {
    let Some(mut command) = command_from_env("HPD_MCP_FILESYSTEM") else {
        return;
    };
    let dir = temp_dir("fs-allow");
    command.push(dir.to_string_lossy().into_owned());
    let error = stdio("Files", &command)
        .with_functions(["read_text_file", "delete_everything"])
        .connect()
        .await
        .unwrap_err();
    assert!(matches!(error, McpError::Invalid { .. }), "{error}");
    let message = error.to_string();
    assert!(
        message.starts_with("MCP server 'Files': it has no tool 'delete_everything'; its tools: read_file, read_text_file"),
        "{message}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_server_as_a_plain_harness_tells_the_time() {
    let Some(command) = command_from_env("HPD_MCP_TIME") else {
        return;
    };
    let harness = stdio("Time", &command)
        .without_collapse()
        .connect()
        .await
        .unwrap();
    assert!(!harness.is_collapsed());

    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new(
            "c1",
            "get_current_time",
            r#"{"timezone": "Europe/Oslo"}"#,
        )]),
        ChatResponse::text("It is late."),
    ]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_harness(harness)
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    agent.run("What time is it in Oslo?").await.unwrap();
    let requests = model.requests();
    assert_eq!(
        requests[0].tool_names(),
        ["get_current_time", "convert_time"]
    );
    let (text, is_error) = requests[1].tool_result("c1").unwrap();
    assert!(!is_error, "{text}");
    let time: serde_json::Value = serde_json::from_str(text).unwrap();
    assert_eq!(time["timezone"], "Europe/Oslo");
    assert!(
        time["datetime"]
            .as_str()
            .is_some_and(|d| d.starts_with("20")),
        "{time}"
    );
}

/// Runs the Python SDK's HTTP fixture server on a free loopback port until dropped.
struct PythonHttpServer {
    child: std::process::Child,
    url: String,
}

impl Drop for PythonHttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_python_http_server(python: &str) -> PythonHttpServer {
    use std::io::BufRead as _;
    let port = free_port();
    let mut child = std::process::Command::new(python)
        .arg(fixture("http_server.py"))
        .arg(port.to_string())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start the Python HTTP server");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut first = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut first)
        .unwrap();
    assert_eq!(first.trim(), "ready", "the Python server did not start");
    PythonHttpServer {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamable_http_server_of_the_python_sdk() {
    let Some(python) = python(true) else { return };
    let server = start_python_http_server(&python);
    let harness = McpHarness::http("Calculator", server.url.clone())
        .with_header("X-Test", "hpd-agent")
        .connect()
        .await
        .unwrap();
    assert_eq!(harness.tool_names(), ["add", "greet"]);

    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c1", "Calculator", "{}")]),
        ChatResponse::tool_calls(vec![
            ToolCall::new("c2", "add", r#"{"a": 2, "b": 3}"#),
            ToolCall::new("c3", "greet", r#"{"name": "Ada"}"#),
            ToolCall::new("c4", "add", r#"{"a": "two"}"#),
        ]),
        ChatResponse::text("5"),
    ]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_harness(harness)
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    agent.run("2 + 3?").await.unwrap();
    let requests = model.requests();
    // The container describes the server with its instructions.
    assert_eq!(requests[0].tool_names(), ["Calculator"]);
    assert_eq!(requests[2].tool_result("c2"), Some(("5", false)));
    assert_eq!(requests[2].tool_result("c3"), Some(("Hello, Ada!", false)));
    // Arguments the server rejects come back as an error result.
    let (invalid, is_error) = requests[2].tool_result("c4").unwrap();
    assert!(is_error, "{invalid}");
}

#[tokio::test]
async fn an_unreachable_http_server_fails_connect_with_a_clear_error() {
    let port = free_port();
    let error = McpHarness::http("Gone", format!("http://127.0.0.1:{port}/mcp"))
        .with_timeout(Duration::from_secs(5))
        .connect()
        .await
        .unwrap_err();
    let message = error.to_string();
    assert!(message.starts_with("MCP server 'Gone'"), "{message}");
}
