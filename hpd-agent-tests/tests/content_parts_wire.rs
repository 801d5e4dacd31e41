//! Tool results with content parts (text, a generated PNG, audio, a structured value) on the
//! wire of every provider, against loopback servers that check every field of every request
//! against the vendor's published request types and answer `400` with the reason when one is
//! off, the way the vendor APIs do:
//! - Anthropic Messages: `tool_result` blocks whose `content` is a string or a list of `text` and
//!   `image` blocks, an image's `source` being `{"type": "base64", "media_type", "data"}` with a
//!   media type the API lists (`image/jpeg`, `image/png`, `image/gif`, `image/webp`), as the
//!   Messages API reference defines `ToolResultBlockParam` and `ImageBlockParam`;
//! - OpenAI Responses: a `function_call_output` whose `output` is a string or a list of
//!   `input_text` (`text`) and `input_image` (`image_url` or `file_id`, `detail` one of `low`,
//!   `high`, `auto`) parts, as the API reference defines the function call output item;
//! - OpenAI Chat Completions: tool messages with text content only (a string, or `text` parts),
//!   answering every call of the assistant message before any other message, and user messages
//!   whose content parts are `text` and `image_url` (`{"url", "detail"}`), as the API reference
//!   defines the message types.
//!
//! The vendor APIs cannot be reached from here; these servers stand in for them. Each test also
//! checks that the image that reaches the server is the PNG the tool made, byte for byte.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use hpd_agent::{
    AgentBuilder, ChatClient, HarnessBuilder, Tool, ToolResult, chat::ContentPart,
    chat::ToolImages, providers::anthropic::AnthropicClient, providers::openai::OpenAiClient,
    providers::openai_responses::OpenAiResponsesClient,
};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// The fields an object may have; anything else is an error naming the field and the path.
fn only(value: &Value, at: &str, allowed: &[&str]) -> Result<(), String> {
    let object = value
        .as_object()
        .ok_or_else(|| format!("{at}: expected an object"))?;
    match object.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(key) => Err(format!("{at}.{key}: unknown field")),
        None => Ok(()),
    }
}

fn text_field<'a>(value: &'a Value, at: &str, field: &str) -> Result<&'a str, String> {
    value[field]
        .as_str()
        .ok_or_else(|| format!("{at}.{field}: expected a string"))
}

/// A loopback server answering scripted bodies to requests that pass `check`, and `400` with
/// the reason to those that do not; it keeps every request body and every refusal.
struct Strict {
    check: fn(&Value) -> Result<(), String>,
    replies: Mutex<VecDeque<Value>>,
    bodies: Arc<Mutex<Vec<Value>>>,
    refusals: Arc<Mutex<Vec<String>>>,
}

impl Respond for Strict {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = match serde_json::from_slice(&request.body) {
            Ok(body) => body,
            Err(e) => return ResponseTemplate::new(400).set_body_string(format!("not JSON: {e}")),
        };
        self.bodies.lock().unwrap().push(body.clone());
        if let Err(reason) = (self.check)(&body) {
            self.refusals.lock().unwrap().push(reason.clone());
            return ResponseTemplate::new(400).set_body_json(json!({
                "type": "error",
                "error": {"type": "invalid_request_error", "message": reason}
            }));
        }
        match self.replies.lock().unwrap().pop_front() {
            Some(reply) => ResponseTemplate::new(200).set_body_json(reply),
            None => ResponseTemplate::new(500).set_body_string("no reply left"),
        }
    }
}

struct Served {
    server: MockServer,
    bodies: Arc<Mutex<Vec<Value>>>,
    refusals: Arc<Mutex<Vec<String>>>,
}

impl Served {
    fn last_body(&self) -> Value {
        assert!(
            self.refusals.lock().unwrap().is_empty(),
            "refused: {:?}",
            self.refusals.lock().unwrap()
        );
        self.bodies
            .lock()
            .unwrap()
            .last()
            .cloned()
            .expect("a request")
    }
}

async fn serve(
    route: &str,
    check: fn(&Value) -> Result<(), String>,
    replies: Vec<Value>,
) -> Served {
    let server = MockServer::start().await;
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let refusals = Arc::new(Mutex::new(Vec::new()));
    Mock::given(method("POST"))
        .and(path(route))
        .respond_with(Strict {
            check,
            replies: Mutex::new(replies.into()),
            bodies: Arc::clone(&bodies),
            refusals: Arc::clone(&refusals),
        })
        .mount(&server)
        .await;
    Served {
        server,
        bodies,
        refusals,
    }
}

/// The chart the tool draws: a 4×2 PNG, made in code.
fn chart_png() -> Vec<u8> {
    hpd_agent_tests::png(4, 2, |x, y| {
        [
            u8::try_from(x * 60).unwrap(),
            0,
            u8::try_from(y * 200).unwrap(),
        ]
    })
}

fn b64(data: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(data)
}

/// A harness with `chart` (text, a PNG, audio and a structured value) and `photo` (a PNG).
fn chart_agent(client: impl ChatClient + 'static) -> hpd_agent::Agent {
    let chart = Tool::new(
        "chart",
        "Draws a chart",
        json!({"type": "object"}),
        |_, _| async {
            ToolResult::from_parts([
                ContentPart::text("Sales by region:"),
                ContentPart::image("image/png", chart_png()),
                ContentPart::audio("audio/wav", hpd_agent_tests::wav(8000, &[0, 1, 2])),
            ])
            .with_structured(json!({"max": 3}))
        },
    );
    let photo = Tool::new(
        "photo",
        "Takes a photo",
        json!({"type": "object"}),
        |_, _| async { ToolResult::image("image/png", chart_png()) },
    );
    AgentBuilder::new()
        .with_harness(
            HarnessBuilder::new("Charts")
                .with_tool(chart)
                .with_tool(photo)
                .build()
                .unwrap(),
        )
        .without_harness_collapsing()
        .with_chat_client(client)
        .build()
        .unwrap()
}

/// The text form of `chart`'s result.
fn chart_text() -> String {
    format!(
        "Sales by region:\n[image: image/png, {} bytes]\n[audio: audio/wav, 50 bytes]\n{{\"max\":3}}",
        chart_png().len()
    )
}

// ---------------------------------------------------------------------------------------------
// Anthropic Messages

const ANTHROPIC_MEDIA_TYPES: &[&str] = &["image/jpeg", "image/png", "image/gif", "image/webp"];

fn check_image_block(block: &Value, at: &str) -> Result<(), String> {
    only(block, at, &["type", "source", "cache_control"])?;
    let source = &block["source"];
    let at = format!("{at}.source");
    match source["type"].as_str() {
        Some("base64") => {
            only(source, &at, &["type", "media_type", "data"])?;
            let media = text_field(source, &at, "media_type")?;
            if !ANTHROPIC_MEDIA_TYPES.contains(&media) {
                return Err(format!("{at}.media_type: {media} is not supported"));
            }
            let data = text_field(source, &at, "data")?;
            base64::engine::general_purpose::STANDARD
                .decode(data)
                .map_err(|e| format!("{at}.data: not base64: {e}"))?;
            Ok(())
        }
        Some("url") => only(source, &at, &["type", "url"]),
        other => Err(format!("{at}.type: {other:?} is not an image source")),
    }
}

fn check_anthropic(body: &Value) -> Result<(), String> {
    only(
        body,
        "request",
        &[
            "model",
            "max_tokens",
            "system",
            "messages",
            "tools",
            "tool_choice",
            "temperature",
            "top_p",
            "top_k",
            "stop_sequences",
            "stream",
            "thinking",
            "metadata",
        ],
    )?;
    for (m, message) in body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = format!("messages[{m}]");
        only(message, &at, &["role", "content"])?;
        for (b, block) in message["content"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let at = format!("{at}.content[{b}]");
            match block["type"].as_str() {
                Some("text") => only(block, &at, &["type", "text", "cache_control", "citations"])?,
                Some("image") => check_image_block(block, &at)?,
                Some("tool_use") => only(
                    block,
                    &at,
                    &["type", "id", "name", "input", "cache_control"],
                )?,
                Some("tool_result") => {
                    only(
                        block,
                        &at,
                        &[
                            "type",
                            "tool_use_id",
                            "content",
                            "is_error",
                            "cache_control",
                        ],
                    )?;
                    match &block["content"] {
                        Value::String(_) | Value::Null => {}
                        Value::Array(parts) => {
                            for (p, part) in parts.iter().enumerate() {
                                let at = format!("{at}.content[{p}]");
                                match part["type"].as_str() {
                                    Some("text") => {
                                        only(
                                            part,
                                            &at,
                                            &["type", "text", "cache_control", "citations"],
                                        )?;
                                        if text_field(part, &at, "text")?.is_empty() {
                                            return Err(format!(
                                                "{at}.text: text content blocks must be non-empty"
                                            ));
                                        }
                                    }
                                    Some("image") => check_image_block(part, &at)?,
                                    other => {
                                        return Err(format!(
                                            "{at}.type: {other:?} is not allowed here"
                                        ));
                                    }
                                }
                            }
                        }
                        _ => return Err(format!("{at}.content: expected a string or a list")),
                    }
                }
                other => return Err(format!("{at}.type: {other:?} is not a content block")),
            }
        }
    }
    Ok(())
}

fn anthropic_reply(content: Value, stop: &str) -> Value {
    json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
           "content": content, "stop_reason": stop,
           "usage": {"input_tokens": 10, "output_tokens": 2}})
}

fn anthropic_client(server: &MockServer) -> AnthropicClient {
    AnthropicClient::new("claude-test", "sk-ant-test")
        .and_then(|c| c.with_base_url(server.uri()))
        .expect("client")
        .with_streaming(false)
}

fn anthropic_replies() -> Vec<Value> {
    vec![
        anthropic_reply(
            json!([{"type": "tool_use", "id": "toolu_1", "name": "chart", "input": {}}]),
            "tool_use",
        ),
        anthropic_reply(json!([{"type": "text", "text": "Done."}]), "end_turn"),
    ]
}

#[tokio::test]
async fn anthropic_tool_results_carry_text_and_image_blocks() {
    let served = serve("/v1/messages", check_anthropic, anthropic_replies()).await;
    let agent = chart_agent(anthropic_client(&served.server));
    assert_eq!(agent.run("Chart it").await.unwrap().text, "Done.");
    let body = served.last_body();
    let result = &body["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(
        result["content"],
        json!([
            {"type": "text", "text": "Sales by region:"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": b64(&chart_png())}},
            {"type": "text", "text": "[audio: audio/wav, 50 bytes]"},
            {"type": "text", "text": "{\"max\":3}"}
        ])
    );
}

#[tokio::test]
async fn anthropic_describes_images_when_told_to() {
    let served = serve("/v1/messages", check_anthropic, anthropic_replies()).await;
    let client = anthropic_client(&served.server).with_tool_images(ToolImages::Describe);
    chart_agent(client).run("Chart it").await.unwrap();
    let body = served.last_body();
    assert_eq!(
        body["messages"][2]["content"][0]["content"],
        json!(chart_text())
    );
}

#[tokio::test]
async fn the_anthropic_checker_refuses_undocumented_image_fields() {
    assert!(check_image_block(
        &json!({"type": "image", "source": {"type": "base64", "media_type": "image/bmp", "data": "AA=="}}),
        "x"
    )
    .is_err());
    assert!(check_image_block(
        &json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA==", "name": "a"}}),
        "x"
    )
    .is_err());
}

// ---------------------------------------------------------------------------------------------
// OpenAI Responses

fn check_output_part(part: &Value, at: &str) -> Result<(), String> {
    match part["type"].as_str() {
        Some("input_text") => {
            only(part, at, &["type", "text"])?;
            text_field(part, at, "text").map(|_| ())
        }
        Some("input_image") => {
            only(part, at, &["type", "image_url", "file_id", "detail"])?;
            if part.get("image_url").is_none() && part.get("file_id").is_none() {
                return Err(format!("{at}: image_url or file_id is required"));
            }
            match part.get("detail").and_then(Value::as_str) {
                None | Some("low" | "high" | "auto") => Ok(()),
                Some(other) => Err(format!("{at}.detail: {other} is not a detail level")),
            }
        }
        Some("input_file") => only(
            part,
            at,
            &["type", "file_data", "file_id", "file_url", "filename"],
        ),
        other => Err(format!("{at}.type: {other:?} is not an output part")),
    }
}

fn check_responses(body: &Value) -> Result<(), String> {
    only(
        body,
        "request",
        &[
            "model",
            "input",
            "instructions",
            "tools",
            "tool_choice",
            "parallel_tool_calls",
            "temperature",
            "top_p",
            "max_output_tokens",
            "stream",
            "store",
            "include",
            "reasoning",
            "text",
            "truncation",
            "previous_response_id",
            "metadata",
        ],
    )?;
    for (i, item) in body["input"].as_array().into_iter().flatten().enumerate() {
        let at = format!("input[{i}]");
        match item["type"].as_str() {
            Some("message") => only(item, &at, &["type", "role", "content", "id", "status"])?,
            Some("function_call") => {
                only(
                    item,
                    &at,
                    &[
                        "type",
                        "call_id",
                        "name",
                        "arguments",
                        "id",
                        "status",
                        "namespace",
                    ],
                )?;
            }
            Some("function_call_output") => {
                only(item, &at, &["type", "call_id", "output", "id", "status"])?;
                match &item["output"] {
                    Value::String(_) => {}
                    Value::Array(parts) => {
                        for (p, part) in parts.iter().enumerate() {
                            check_output_part(part, &format!("{at}.output[{p}]"))?;
                        }
                    }
                    _ => return Err(format!("{at}.output: expected a string or a list")),
                }
            }
            other => return Err(format!("{at}.type: {other:?} is not an input item")),
        }
    }
    Ok(())
}

fn responses_reply(output: Value) -> Value {
    json!({"id": "resp_1", "object": "response", "status": "completed", "output": output,
           "usage": {"input_tokens": 10, "output_tokens": 2,
                     "input_tokens_details": {"cached_tokens": 0}}})
}

fn responses_replies() -> Vec<Value> {
    vec![
        responses_reply(
            json!([{"type": "function_call", "id": "fc_1", "call_id": "call_1",
                                "name": "chart", "arguments": "{}"}]),
        ),
        responses_reply(json!([{"type": "message", "role": "assistant",
                                "content": [{"type": "output_text", "text": "Done."}]}])),
    ]
}

fn responses_client(server: &MockServer) -> OpenAiResponsesClient {
    OpenAiResponsesClient::new("gpt-test", "sk-test")
        .and_then(|c| c.with_base_url(server.uri()))
        .expect("client")
        .with_streaming(false)
}

#[tokio::test]
async fn responses_function_call_outputs_carry_input_images() {
    let served = serve("/responses", check_responses, responses_replies()).await;
    let agent = chart_agent(responses_client(&served.server));
    assert_eq!(agent.run("Chart it").await.unwrap().text, "Done.");
    let body = served.last_body();
    let output = body["input"]
        .as_array()
        .unwrap()
        .iter()
        .find(|item| item["type"] == "function_call_output")
        .expect("an output");
    assert_eq!(
        output["output"],
        json!([
            {"type": "input_text", "text": "Sales by region:"},
            {"type": "input_image", "detail": "auto",
             "image_url": format!("data:image/png;base64,{}", b64(&chart_png()))},
            {"type": "input_text", "text": "[audio: audio/wav, 50 bytes]"},
            {"type": "input_text", "text": "{\"max\":3}"}
        ])
    );
}

#[tokio::test]
async fn responses_describe_images_when_told_to() {
    let served = serve("/responses", check_responses, responses_replies()).await;
    let client = responses_client(&served.server).with_tool_images(ToolImages::Describe);
    chart_agent(client).run("Chart it").await.unwrap();
    let body = served.last_body();
    let output = body["input"]
        .as_array()
        .unwrap()
        .iter()
        .find(|item| item["type"] == "function_call_output")
        .expect("an output");
    assert_eq!(output["output"], json!(chart_text()));
}

// ---------------------------------------------------------------------------------------------
// OpenAI Chat Completions

fn check_user_part(part: &Value, at: &str) -> Result<(), String> {
    match part["type"].as_str() {
        Some("text") => {
            only(part, at, &["type", "text"])?;
            text_field(part, at, "text").map(|_| ())
        }
        Some("image_url") => {
            only(part, at, &["type", "image_url"])?;
            let image = &part["image_url"];
            only(image, &format!("{at}.image_url"), &["url", "detail"])?;
            text_field(image, &format!("{at}.image_url"), "url").map(|_| ())
        }
        Some("input_audio") => only(part, at, &["type", "input_audio"]),
        Some("file") => only(part, at, &["type", "file"]),
        other => Err(format!("{at}.type: {other:?} is not a user content part")),
    }
}

fn check_chat(body: &Value) -> Result<(), String> {
    only(
        body,
        "request",
        &[
            "model",
            "messages",
            "tools",
            "tool_choice",
            "parallel_tool_calls",
            "temperature",
            "top_p",
            "max_completion_tokens",
            "stop",
            "seed",
            "stream",
            "stream_options",
        ],
    )?;
    // Call ids of the last assistant message still to be answered by tool messages.
    let mut open: Vec<String> = Vec::new();
    for (m, message) in body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = format!("messages[{m}]");
        let role = text_field(message, &at, "role")?;
        if role != "tool" && !open.is_empty() {
            return Err(format!(
                "{at}: an assistant message with 'tool_calls' must be followed by tool messages \
                 responding to each 'tool_call_id' ({open:?} unanswered)"
            ));
        }
        match role {
            "system" => only(message, &at, &["role", "content", "name"])?,
            "user" => {
                only(message, &at, &["role", "content", "name"])?;
                match &message["content"] {
                    Value::String(_) => {}
                    Value::Array(parts) => {
                        for (p, part) in parts.iter().enumerate() {
                            check_user_part(part, &format!("{at}.content[{p}]"))?;
                        }
                    }
                    _ => return Err(format!("{at}.content: expected a string or a list")),
                }
            }
            "assistant" => {
                only(
                    message,
                    &at,
                    &["role", "content", "tool_calls", "name", "reasoning_content"],
                )?;
                for call in message["tool_calls"].as_array().into_iter().flatten() {
                    open.push(text_field(call, &at, "id")?.to_owned());
                }
            }
            "tool" => {
                only(message, &at, &["role", "content", "tool_call_id"])?;
                let id = text_field(message, &at, "tool_call_id")?;
                open.retain(|open| open != id);
                match &message["content"] {
                    Value::String(_) => {}
                    Value::Array(parts) => {
                        for (p, part) in parts.iter().enumerate() {
                            let at = format!("{at}.content[{p}]");
                            if part["type"] != "text" {
                                return Err(format!(
                                    "{at}.type: tool messages take text parts only"
                                ));
                            }
                            only(part, &at, &["type", "text"])?;
                        }
                    }
                    _ => return Err(format!("{at}.content: expected a string or a list")),
                }
            }
            other => return Err(format!("{at}.role: {other} is not a role")),
        }
    }
    Ok(())
}

fn chat_reply(message: Value, finish: &str) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-test",
           "choices": [{"index": 0, "message": message, "finish_reason": finish}],
           "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}})
}

fn chat_replies() -> Vec<Value> {
    vec![
        chat_reply(
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "chart", "arguments": "{}"}},
                {"id": "call_2", "type": "function", "function": {"name": "photo", "arguments": "{}"}}
            ]}),
            "tool_calls",
        ),
        chat_reply(json!({"role": "assistant", "content": "Done."}), "stop"),
    ]
}

fn chat_client(server: &MockServer) -> OpenAiClient {
    OpenAiClient::new("gpt-test", "sk-test")
        .and_then(|c| c.with_base_url(server.uri()))
        .expect("client")
        .with_streaming(false)
}

#[tokio::test]
async fn chat_completions_send_the_images_of_tool_results_in_a_user_message() {
    let served = serve("/chat/completions", check_chat, chat_replies()).await;
    let agent = chart_agent(chat_client(&served.server));
    assert_eq!(agent.run("Chart it").await.unwrap().text, "Done.");
    let body = served.last_body();
    let messages = body["messages"].as_array().unwrap();
    // user, assistant (two calls), two tool messages, then one user message with both images.
    assert_eq!(messages.len(), 5, "{messages:#?}");
    assert_eq!(messages[2]["content"], json!(chart_text()));
    assert_eq!(
        messages[3]["content"],
        json!(format!("[image: image/png, {} bytes]", chart_png().len()))
    );
    let url = format!("data:image/png;base64,{}", b64(&chart_png()));
    assert_eq!(
        messages[4],
        json!({"role": "user", "content": [
            {"type": "text", "text": "The image of the tool call call_1:"},
            {"type": "image_url", "image_url": {"url": url}},
            {"type": "text", "text": "The image of the tool call call_2:"},
            {"type": "image_url", "image_url": {"url": url}}
        ]})
    );
}

#[tokio::test]
async fn chat_completions_describe_images_when_told_to() {
    let served = serve("/chat/completions", check_chat, chat_replies()).await;
    let client = chat_client(&served.server).with_tool_images(ToolImages::Describe);
    chart_agent(client).run("Chart it").await.unwrap();
    let body = served.last_body();
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4, "{messages:#?}");
    assert_eq!(messages[2]["content"], json!(chart_text()));
    assert!(
        messages
            .iter()
            .all(|m| m["content"].is_string() || m["content"].is_null())
    );
}

#[tokio::test]
async fn the_chat_checker_refuses_a_user_message_between_tool_messages() {
    let body = json!({"model": "m", "messages": [
        {"role": "assistant", "content": null, "tool_calls": [{"id": "a"}, {"id": "b"}]},
        {"role": "tool", "tool_call_id": "a", "content": "x"},
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:"}}]},
        {"role": "tool", "tool_call_id": "b", "content": "y"}
    ]});
    let refusal = check_chat(&body).unwrap_err();
    assert!(
        refusal.contains("must be followed by tool messages"),
        "{refusal}"
    );
    let image_in_tool = json!({"model": "m", "messages": [
        {"role": "tool", "tool_call_id": "a", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}
    ]});
    assert!(
        check_chat(&image_in_tool)
            .unwrap_err()
            .contains("text parts only")
    );
}

// ---------------------------------------------------------------------------------------------
// MCP: the project's server, through its client, into a provider request

/// A structured reading: its schema is the output schema `McpServer` advertises.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct Reading {
    celsius: f64,
}

/// Functions with an image, audio and a structured return value, served over MCP.
#[derive(Default)]
pub struct Sensors;

#[hpd_agent::tool_harness]
impl Sensors {
    /// A photo and a sound of the room.
    #[hpd_agent::ai_function]
    fn capture(&self) -> Vec<ContentPart> {
        vec![
            ContentPart::text("The room:"),
            ContentPart::image("image/png", chart_png()),
            ContentPart::audio("audio/wav", hpd_agent_tests::wav(8000, &[0, 1, 2])),
        ]
    }

    /// The temperature.
    #[hpd_agent::ai_function]
    fn temperature(&self) -> Reading {
        Reading { celsius: 21.5 }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn image_audio_and_structured_content_go_from_the_mcp_server_through_the_client_to_the_model()
{
    use hpd_agent::mcp::{McpHarness, McpServer};
    let served = AgentBuilder::new()
        .with_tool_harness::<Sensors>()
        .with_chat_client(hpd_agent::ScriptedChatClient::new())
        .build()
        .unwrap();
    let server = McpServer::new(served)
        .without_collapse()
        .with_unauthenticated_access()
        .serve_http(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let harness = McpHarness::http("Room", server.url())
        .without_collapse()
        .connect()
        .await
        .unwrap();

    let loopback = serve(
        "/v1/messages",
        check_anthropic,
        vec![
            anthropic_reply(
                json!([{"type": "tool_use", "id": "toolu_1", "name": "capture", "input": {}},
                       {"type": "tool_use", "id": "toolu_2", "name": "temperature", "input": {}}]),
                "tool_use",
            ),
            anthropic_reply(json!([{"type": "text", "text": "Warm."}]), "end_turn"),
        ],
    )
    .await;
    let agent = AgentBuilder::new()
        .with_harness(harness)
        .with_chat_client(anthropic_client(&loopback.server))
        .build()
        .unwrap();
    // The client kept the server's output schema.
    let tools = agent.tool_session().visible_tools();
    let temperature = tools.iter().find(|t| t.name == "temperature").unwrap();
    assert_eq!(
        temperature.output_schema.as_deref().unwrap()["properties"]["celsius"]["type"],
        "number"
    );
    assert!(
        tools
            .iter()
            .find(|t| t.name == "capture")
            .unwrap()
            .output_schema
            .is_none()
    );

    assert_eq!(agent.run("How is the room?").await.unwrap().text, "Warm.");
    let body = loopback.last_body();
    let results = body["messages"][2]["content"].as_array().unwrap();
    assert_eq!(
        results[0]["content"],
        json!([
            {"type": "text", "text": "The room:"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": b64(&chart_png())}},
            {"type": "text", "text": "[audio: audio/wav, 50 bytes]"}
        ])
    );
    // The structured value arrives as its JSON text.
    assert_eq!(results[1]["content"], json!(r#"{"celsius":21.5}"#));
    server.shutdown().await;
}
