//! Typed final answers (`run_typed`) on the wire, against loopback servers that check every
//! field of every request against the vendor's published request types and answer `400` with
//! the reason when one is off, the way the vendor APIs do:
//! - OpenAI Chat Completions: the request fields of the API reference, `response_format` as
//!   its `json_schema` variant (`type`, and `json_schema` with `name` of 1 to 64 of
//!   `a-zA-Z0-9_-`, `description`, `schema`, `strict`);
//! - OpenAI Responses: the request fields of the API reference, `text.format` as its
//!   `json_schema` variant (`type`, `name`, `description`, `schema`, `strict` at the format's
//!   level);
//! - Anthropic Messages: the request fields of the Messages API reference and
//!   `output_config.format` (`type: "json_schema"`, `schema`) of the structured outputs page.
//!
//! The schema rules of the vendors' strict modes are checked too, as the structured outputs
//! guides state them: an object root; `additionalProperties: false` on every object; with
//! OpenAI's `strict: true`, every property listed in `required`; `format` only on strings, with
//! a documented value; and for Anthropic none of the numeric, length and item-count keywords it
//! does not support. The vendor APIs cannot be reached from here; these servers stand in for
//! them.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use hpd_agent::{
    AgentBuilder, AgentConfig, AgentEvent, AgentRunConfig, ChatClient, RunError,
    providers::anthropic::AnthropicClient, providers::openai::OpenAiClient,
    providers::openai_responses::OpenAiResponsesClient,
};
use hpd_agent_tests::WeatherTools;
use serde::Deserialize;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// The answer the tests ask for: a nested object, an optional field, a list, an enum and an
/// unsigned number (whose schemars schema carries `format` and `minimum`).
#[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
struct Report {
    /// The city the report is for.
    city: String,
    sky: Sky,
    /// Degrees Celsius.
    temperature: Temperature,
    /// Extra remarks.
    note: Option<String>,
    days: Vec<u32>,
}

#[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Sky {
    Sunny,
    Cloudy,
}

#[derive(Debug, PartialEq, Deserialize, schemars::JsonSchema)]
struct Temperature {
    celsius: f64,
}

const GOOD: &str = r#"{"city": "Paris", "sky": "sunny", "temperature": {"celsius": 21.5}, "note": null, "days": [1, 2]}"#;
const BAD_SKY: &str = r#"{"city": "Paris", "sky": "foggy", "temperature": {"celsius": 21.5}, "note": null, "days": []}"#;
const BAD_DAYS: &str = r#"{"city": "Paris", "sky": "sunny", "temperature": {"celsius": 21.5}, "note": null, "days": [-1]}"#;

fn expected() -> Report {
    Report {
        city: "Paris".into(),
        sky: Sky::Sunny,
        temperature: Temperature { celsius: 21.5 },
        note: None,
        days: vec![1, 2],
    }
}

// ---------------------------------------------------------------------------------------------
// Checks shared by the three servers

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

/// String formats the structured outputs guides list.
const FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
    "uri",
];

/// Keywords Anthropic's structured outputs do not support.
const ANTHROPIC_UNSUPPORTED: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "maxItems",
    "uniqueItems",
];

#[derive(Clone, Copy, PartialEq)]
enum Vendor {
    OpenAiStrict,
    Anthropic,
}

/// Checks a schema the way the vendors' strict modes do.
fn check_schema(schema: &Value, at: &str, vendor: Vendor) -> Result<(), String> {
    let Some(map) = schema.as_object() else {
        return Err(format!("{at}: a schema must be an object"));
    };
    if map.contains_key("$schema") {
        return Err(format!("{at}.$schema: not accepted"));
    }
    let types: Vec<&str> = match map.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if let Some(format) = map.get("format") {
        if !types.contains(&"string") {
            return Err(format!("{at}.format: only strings take a format"));
        }
        if !format.as_str().is_some_and(|f| FORMATS.contains(&f)) {
            return Err(format!("{at}.format: {format} is not a supported format"));
        }
    }
    if vendor == Vendor::Anthropic {
        if let Some(keyword) = ANTHROPIC_UNSUPPORTED.iter().find(|k| map.contains_key(**k)) {
            return Err(format!("{at}.{keyword}: not supported"));
        }
        if map
            .get("minItems")
            .is_some_and(|m| m.as_u64().is_none_or(|m| m > 1))
        {
            return Err(format!("{at}.minItems: only 0 and 1 are supported"));
        }
    }
    if types.contains(&"object") || map.contains_key("properties") {
        if map.get("additionalProperties") != Some(&json!(false)) {
            return Err(format!(
                "{at}.additionalProperties: must be false for every object"
            ));
        }
        if vendor == Vendor::OpenAiStrict {
            let properties: Vec<&String> = map
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().collect())
                .unwrap_or_default();
            let required: Vec<&str> = map
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if let Some(missing) = properties.iter().find(|p| !required.contains(&p.as_str())) {
                return Err(format!(
                    "{at}.required: is required to include every key in properties; missing '{missing}'"
                ));
            }
        }
    }
    for (key, child) in map {
        match key.as_str() {
            "properties" | "$defs" | "definitions" => {
                for (name, sub) in child.as_object().into_iter().flatten() {
                    check_schema(sub, &format!("{at}.{key}.{name}"), vendor)?;
                }
            }
            "items" => check_schema(child, &format!("{at}.items"), vendor)?,
            "anyOf" | "allOf" => {
                for (i, sub) in child.as_array().into_iter().flatten().enumerate() {
                    check_schema(sub, &format!("{at}.{key}[{i}]"), vendor)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// An object root, as all three vendors require.
fn check_root(schema: &Value, at: &str, vendor: Vendor) -> Result<(), String> {
    if schema["type"] != "object" {
        return Err(format!("{at}.type: the root must be an object"));
    }
    check_schema(schema, at, vendor)
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
    fn bodies(&self) -> Vec<Value> {
        assert_eq!(*self.refusals.lock().unwrap(), Vec::<String>::new());
        self.bodies.lock().unwrap().clone()
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

/// The user message that asks again after a mismatch at `path`, as the model gets it.
fn retry_text(at: &str) -> String {
    format!("Your answer does not match the required JSON schema: at '{at}': ")
}

// ---------------------------------------------------------------------------------------------
// Chat Completions (and llama.cpp's server, which reads the same fields)

const CHAT_REQUEST: &[&str] = &[
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
    "response_format",
    "stream",
    "stream_options",
    "n",
    "user",
    "metadata",
    "store",
    "reasoning_effort",
];

fn check_chat(body: &Value) -> Result<(), String> {
    only(body, "request", CHAT_REQUEST)?;
    for (i, message) in body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = format!("messages[{i}]");
        match message["role"].as_str() {
            Some("system" | "user") => only(message, &at, &["role", "content", "name"])?,
            Some("assistant") => only(
                message,
                &at,
                &["role", "content", "tool_calls", "name", "refusal"],
            )?,
            Some("tool") => only(message, &at, &["role", "content", "tool_call_id"])?,
            other => return Err(format!("{at}.role: {other:?} is not a role")),
        }
    }
    if let Some(format) = body.get("response_format") {
        only(format, "response_format", &["type", "json_schema"])?;
        if format["type"] != "json_schema" {
            return Err("response_format.type: expected json_schema".into());
        }
        let schema = &format["json_schema"];
        only(
            schema,
            "response_format.json_schema",
            &["name", "description", "schema", "strict"],
        )?;
        check_name(&schema["name"], "response_format.json_schema.name")?;
        if schema["strict"] == json!(true) {
            check_root(
                &schema["schema"],
                "response_format.json_schema.schema",
                Vendor::OpenAiStrict,
            )?;
        }
    }
    Ok(())
}

fn check_name(name: &Value, at: &str) -> Result<(), String> {
    let ok = name.as_str().is_some_and(|n| {
        (1..=64).contains(&n.len())
            && n.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    });
    if ok {
        Ok(())
    } else {
        Err(format!("{at}: must be 1 to 64 of a-z, A-Z, 0-9, _ and -"))
    }
}

fn chat_text(text: &str) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-test",
           "choices": [{"index": 0, "finish_reason": "stop",
                        "message": {"role": "assistant", "content": text}}],
           "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}})
}

fn chat_call(id: &str, name: &str, arguments: &str) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-test",
           "choices": [{"index": 0, "finish_reason": "tool_calls",
                        "message": {"role": "assistant", "content": null,
                                    "tool_calls": [{"id": id, "type": "function",
                                                    "function": {"name": name, "arguments": arguments}}]}}],
           "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}})
}

fn chat_client(server: &MockServer) -> Arc<dyn ChatClient> {
    Arc::new(
        OpenAiClient::new("gpt-test", "sk-test")
            .and_then(|c| c.with_base_url(format!("{}/v1", server.uri())))
            .expect("client")
            .with_streaming(false),
    )
}

#[tokio::test]
async fn chat_completions_sends_a_strict_json_schema_runs_tools_and_retries_once() {
    let served = serve(
        "/v1/chat/completions",
        check_chat,
        vec![
            chat_call("call_1", "get_weather", r#"{"city": "Paris"}"#),
            chat_text(BAD_SKY),
            chat_text(GOOD),
        ],
    )
    .await;
    let agent = AgentBuilder::new()
        .with_tool_harness::<WeatherTools>()
        .with_chat_client(chat_client(&served.server))
        .build()
        .unwrap();
    let mut session = agent.session();
    let report: Report = session.run_typed("Weather in Paris?").await.unwrap();
    assert_eq!(report, expected());

    let bodies = served.bodies();
    assert_eq!(bodies.len(), 3);
    for body in &bodies {
        // Every request carries the format, the tool loop's too.
        let format = &body["response_format"];
        assert_eq!(format["json_schema"]["name"], "Report");
        assert_eq!(format["json_schema"]["strict"], true);
        let description = format["json_schema"]["description"].as_str().unwrap();
        assert!(
            description.starts_with("The answer the tests ask for"),
            "{description}"
        );
        assert_eq!(body["tools"].as_array().map(Vec::len), Some(2));
    }
    let schema = &bodies[0]["response_format"]["json_schema"]["schema"];
    // The optional field is required and nullable; the schema's subschemas stay in `$defs`.
    assert_eq!(
        schema["properties"]["note"]["type"],
        json!(["string", "null"])
    );
    assert!(schema["$defs"]["Temperature"].is_object());
    // The tool ran before the answer: its result is in the second request.
    let messages = bodies[1]["messages"].as_array().unwrap();
    assert_eq!(messages[2]["role"], "tool");
    assert_eq!(messages[2]["content"], "It is sunny in Paris.");
    // The rejected answer went back with the path of the mismatch.
    let messages = bodies[2]["messages"].as_array().unwrap();
    assert_eq!(messages[3]["content"], BAD_SKY);
    let retry = messages[4]["content"].as_str().unwrap();
    assert!(retry.starts_with(&retry_text("/sky")), "{retry}");
    assert!(
        retry.ends_with("Reply again with only the corrected JSON."),
        "{retry}"
    );
    // The history is valid for the next turn: user, call, result, answer, retry, answer.
    assert_eq!(session.history().len(), 6);
}

#[tokio::test]
async fn chat_completions_fails_with_the_raw_text_and_path_after_the_retries() {
    let served = serve(
        "/v1/chat/completions",
        check_chat,
        vec![chat_text("It is sunny."), chat_text(BAD_DAYS)],
    )
    .await;
    let agent = AgentBuilder::new()
        .with_chat_client(chat_client(&served.server))
        .build()
        .unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let run = AgentRunConfig::new().on_event(move |event| {
        if let AgentEvent::OutputRejected { path, retrying, .. } = event {
            seen.lock().unwrap().push((path.clone(), *retrying));
        }
    });
    let error = agent
        .session()
        .run_typed_with::<Report>("Weather in Paris?", run)
        .await
        .unwrap_err();
    let RunError::Output(error) = error else {
        panic!("{error:?}")
    };
    assert_eq!(error.text, BAD_DAYS);
    assert_eq!(error.path, "/days/0");
    assert_eq!(error.attempts, 2);
    assert_eq!(error.schema, "Report");
    assert_eq!(
        *events.lock().unwrap(),
        [(String::new(), true), ("/days/0".to_owned(), false)]
    );
    let bodies = served.bodies();
    assert_eq!(bodies.len(), 2);
    let retry = bodies[1]["messages"][2]["content"].as_str().unwrap();
    assert!(
        retry.starts_with(
            "Your answer does not match the required JSON schema: at the root: the answer is not JSON: "
        ),
        "{retry}"
    );
}

#[tokio::test]
async fn a_config_schema_reaches_the_wire_and_checks_the_answer() {
    let served = serve(
        "/v1/chat/completions",
        check_chat,
        vec![
            chat_text(r#"{"value": ["a", "b", "c"]}"#),
            chat_text(r#"{"value": ["a"]}"#),
        ],
    )
    .await;
    let config = AgentConfig::from_json(
        r#"{
            "instructions": "Tag the text.",
            "output_schema": {
                "name": "tags",
                "description": "At most two tags",
                "schema": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
                "retries": 1
            }
        }"#,
    )
    .unwrap();
    let agent = AgentBuilder::from_config(config)
        .with_chat_client(chat_client(&served.server))
        .build()
        .unwrap();
    let output = agent.run("Rust is fast").await.unwrap();
    assert_eq!(output.value, Some(json!(["a"])));
    let bodies = served.bodies();
    let format = &bodies[0]["response_format"]["json_schema"];
    assert_eq!(format["name"], "tags");
    assert_eq!(format["description"], "At most two tags");
    // The array root is wrapped in an object for the vendor.
    assert_eq!(
        format["schema"]["properties"]["value"],
        json!({"type": "array", "items": {"type": "string"}, "maxItems": 2})
    );
    let retry = bodies[1]["messages"][3]["content"].as_str().unwrap();
    assert!(
        retry.starts_with("Your answer does not match the required JSON schema: at the root: "),
        "{retry}"
    );
}

// ---------------------------------------------------------------------------------------------
// OpenAI Responses

const RESPONSES_REQUEST: &[&str] = &[
    "model",
    "instructions",
    "input",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "temperature",
    "top_p",
    "max_output_tokens",
    "store",
    "stream",
    "include",
    "reasoning",
    "text",
    "metadata",
    "prompt_cache_key",
    "previous_response_id",
];

fn check_responses(body: &Value) -> Result<(), String> {
    only(body, "request", RESPONSES_REQUEST)?;
    for (i, item) in body["input"].as_array().into_iter().flatten().enumerate() {
        let at = format!("input[{i}]");
        match item["type"].as_str() {
            Some("message") => only(item, &at, &["type", "role", "content", "id", "status"])?,
            Some("function_call") => only(
                item,
                &at,
                &["type", "id", "call_id", "name", "arguments", "status"],
            )?,
            Some("function_call_output") => {
                only(item, &at, &["type", "id", "call_id", "output", "status"])?;
            }
            other => return Err(format!("{at}.type: {other:?} is not an input item")),
        }
    }
    if let Some(text) = body.get("text") {
        only(text, "text", &["format", "verbosity"])?;
        let format = &text["format"];
        only(
            format,
            "text.format",
            &["type", "name", "description", "schema", "strict"],
        )?;
        if format["type"] != "json_schema" {
            return Err("text.format.type: expected json_schema".into());
        }
        check_name(&format["name"], "text.format.name")?;
        if format["strict"] == json!(true) {
            check_root(
                &format["schema"],
                "text.format.schema",
                Vendor::OpenAiStrict,
            )?;
        }
    }
    Ok(())
}

fn responses_reply(output: Value) -> Value {
    json!({"id": "resp_1", "object": "response", "status": "completed", "output": output,
           "usage": {"input_tokens": 10, "output_tokens": 2,
                     "input_tokens_details": {"cached_tokens": 0}}})
}

fn responses_text(text: &str) -> Value {
    responses_reply(
        json!([{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                            "content": [{"type": "output_text", "text": text, "annotations": []}]}]),
    )
}

fn responses_client(server: &MockServer) -> Arc<dyn ChatClient> {
    Arc::new(
        OpenAiResponsesClient::new("gpt-test", "sk-test")
            .and_then(|c| c.with_base_url(server.uri()))
            .expect("client")
            .with_streaming(false),
    )
}

#[tokio::test]
async fn responses_sends_text_format_runs_tools_and_retries_once() {
    let served = serve(
        "/responses",
        check_responses,
        vec![
            responses_reply(
                json!([{"type": "function_call", "id": "fc_1", "call_id": "call_1",
                                    "name": "get_weather", "arguments": "{\"city\": \"Paris\"}",
                                    "status": "completed"}]),
            ),
            responses_text(BAD_DAYS),
            responses_text(GOOD),
        ],
    )
    .await;
    let agent = AgentBuilder::new()
        .with_tool_harness::<WeatherTools>()
        .with_chat_client(responses_client(&served.server))
        .build()
        .unwrap();
    let report: Report = agent.run_typed("Weather in Paris?").await.unwrap();
    assert_eq!(report, expected());
    let bodies = served.bodies();
    assert_eq!(bodies.len(), 3);
    for body in &bodies {
        assert_eq!(body["text"]["format"]["type"], "json_schema");
        assert_eq!(body["text"]["format"]["name"], "Report");
        assert_eq!(body["text"]["format"]["strict"], true);
    }
    let input = bodies[1]["input"].as_array().unwrap();
    assert!(
        input
            .iter()
            .any(|i| i["type"] == "function_call_output" && i["output"] == "It is sunny in Paris.")
    );
    let input = bodies[2]["input"].as_array().unwrap();
    let retry = input.last().unwrap()["content"].to_string();
    assert!(retry.contains(&retry_text("/days/0")), "{retry}");
}

#[tokio::test]
async fn responses_fails_with_the_raw_text_and_path_without_retries() {
    let served = serve("/responses", check_responses, vec![responses_text(BAD_SKY)]).await;
    let agent = AgentBuilder::new()
        .with_output_retries(0)
        .with_chat_client(responses_client(&served.server))
        .build()
        .unwrap();
    let Err(RunError::Output(error)) = agent.run_typed::<Report>("Weather?").await else {
        panic!("a mismatch")
    };
    assert_eq!(
        (error.text.as_str(), error.path.as_str()),
        (BAD_SKY, "/sky")
    );
    assert_eq!(error.attempts, 1);
    assert_eq!(served.bodies().len(), 1);
}

// ---------------------------------------------------------------------------------------------
// Anthropic Messages

const ANTHROPIC_REQUEST: &[&str] = &[
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
    "service_tier",
    "output_config",
];

fn check_anthropic(body: &Value) -> Result<(), String> {
    only(body, "request", ANTHROPIC_REQUEST)?;
    for (i, tool) in body["tools"].as_array().into_iter().flatten().enumerate() {
        only(
            tool,
            &format!("tools[{i}]"),
            &[
                "name",
                "description",
                "input_schema",
                "cache_control",
                "strict",
            ],
        )?;
    }
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
                Some("text") => only(block, &at, &["type", "text", "cache_control"])?,
                Some("tool_use") => only(
                    block,
                    &at,
                    &["type", "id", "name", "input", "cache_control"],
                )?,
                Some("tool_result") => only(
                    block,
                    &at,
                    &[
                        "type",
                        "tool_use_id",
                        "content",
                        "is_error",
                        "cache_control",
                    ],
                )?,
                other => return Err(format!("{at}.type: {other:?} is not a content block")),
            }
        }
    }
    if let Some(config) = body.get("output_config") {
        only(config, "output_config", &["format", "effort"])?;
        let format = &config["format"];
        only(format, "output_config.format", &["type", "schema"])?;
        if format["type"] != "json_schema" {
            return Err("output_config.format.type: expected json_schema".into());
        }
        check_root(
            &format["schema"],
            "output_config.format.schema",
            Vendor::Anthropic,
        )?;
    }
    Ok(())
}

fn anthropic_reply(content: Value, stop: &str) -> Value {
    json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
           "content": content, "stop_reason": stop,
           "usage": {"input_tokens": 10, "output_tokens": 2}})
}

fn anthropic_text(text: &str) -> Value {
    anthropic_reply(json!([{"type": "text", "text": text}]), "end_turn")
}

fn anthropic_client(server: &MockServer) -> Arc<dyn ChatClient> {
    Arc::new(
        AnthropicClient::new("claude-test", "sk-ant-test")
            .and_then(|c| c.with_base_url(server.uri()))
            .expect("client")
            .with_streaming(false),
    )
}

#[tokio::test]
async fn anthropic_sends_output_config_runs_tools_and_retries_once() {
    let served = serve(
        "/v1/messages",
        check_anthropic,
        vec![
            anthropic_reply(
                json!([{"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                        "input": {"city": "Paris"}}]),
                "tool_use",
            ),
            anthropic_text(BAD_DAYS),
            anthropic_text(GOOD),
        ],
    )
    .await;
    let agent = AgentBuilder::new()
        .with_tool_harness::<WeatherTools>()
        .with_chat_client(anthropic_client(&served.server))
        .build()
        .unwrap();
    let report: Report = agent.run_typed("Weather in Paris?").await.unwrap();
    assert_eq!(report, expected());
    let bodies = served.bodies();
    assert_eq!(bodies.len(), 3);
    for body in &bodies {
        assert_eq!(body["output_config"]["format"]["type"], "json_schema");
        // Tools stay free to call: no forced tool choice.
        assert!(body.get("tool_choice").is_none());
    }
    let schema = &bodies[0]["output_config"]["format"]["schema"];
    // The optional field stays optional; the unsigned numbers' `minimum` went into the
    // description, where the model reads it (and the answer is still checked against it).
    assert!(
        !schema["required"]
            .as_array()
            .unwrap()
            .contains(&json!("note"))
    );
    assert_eq!(
        schema["properties"]["days"]["items"]["description"],
        "Constraints: minimum 0."
    );
    let blocks = bodies[1]["messages"][2]["content"].as_array().unwrap();
    assert_eq!(blocks[0]["type"], "tool_result");
    let retry = bodies[2]["messages"][4]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(retry.starts_with(&retry_text("/days/0")), "{retry}");
}

#[tokio::test]
async fn anthropic_fails_with_the_raw_text_and_path_after_two_retries() {
    let served = serve(
        "/v1/messages",
        check_anthropic,
        vec![
            anthropic_text(BAD_SKY),
            anthropic_text(BAD_DAYS),
            anthropic_text(BAD_SKY),
        ],
    )
    .await;
    let agent = AgentBuilder::new()
        .with_chat_client(anthropic_client(&served.server))
        .build()
        .unwrap();
    let run = AgentRunConfig::new().with_output_retries(2);
    let Err(RunError::Output(error)) = agent
        .session()
        .run_typed_with::<Report>("Weather?", run)
        .await
    else {
        panic!("a mismatch")
    };
    assert_eq!(
        (error.text.as_str(), error.path.as_str()),
        (BAD_SKY, "/sky")
    );
    assert_eq!(error.attempts, 3);
    assert!(error.to_string().starts_with(
        "the answer does not match the output schema 'Report' at '/sky' after 3 attempt(s): "
    ));
    assert_eq!(served.bodies().len(), 3);
}

#[tokio::test]
async fn anthropic_refusals_fail_at_once() {
    let served = serve(
        "/v1/messages",
        check_anthropic,
        vec![anthropic_reply(
            json!([{"type": "text", "text": "I can't help with that."}]),
            "refusal",
        )],
    )
    .await;
    let agent = AgentBuilder::new()
        .with_chat_client(anthropic_client(&served.server))
        .build()
        .unwrap();
    let Err(RunError::Output(error)) = agent.run_typed::<Report>("Weather?").await else {
        panic!("a refusal")
    };
    assert_eq!(error.message, "the model refused to answer");
    assert_eq!(error.text, "I can't help with that.");
    assert_eq!(served.bodies().len(), 1);
}

#[test]
fn the_checkers_refuse_the_schemas_the_vendors_refuse() {
    let raw = hpd_agent::output::OutputSchema::for_type::<Report>().unwrap();
    let raw = raw.schema().clone();
    // schemars' own schema: `$schema`-free, but open objects, optional fields and `uint32`.
    let error = check_root(&raw, "schema", Vendor::OpenAiStrict).unwrap_err();
    assert!(
        error.contains("additionalProperties: must be false"),
        "{error}"
    );
    let error = check_root(&raw, "schema", Vendor::Anthropic).unwrap_err();
    assert!(error.contains("must be false"), "{error}");
    let mut closed = raw.clone();
    closed["additionalProperties"] = json!(false);
    closed["$defs"]["Temperature"]["additionalProperties"] = json!(false);
    let error = check_root(&closed, "schema", Vendor::OpenAiStrict).unwrap_err();
    assert!(error.contains("missing 'note'"), "{error}");
    let error = check_root(&closed, "schema", Vendor::Anthropic).unwrap_err();
    assert!(
        error.contains("format: only strings take a format"),
        "{error}"
    );
    // What the clients send passes.
    let schema = hpd_agent::output::OutputSchema::for_type::<Report>().unwrap();
    check_root(schema.openai_schema(), "schema", Vendor::OpenAiStrict).unwrap();
    check_root(schema.anthropic_schema(), "schema", Vendor::Anthropic).unwrap();
    let list = hpd_agent::output::OutputSchema::for_type::<Vec<Report>>().unwrap();
    assert!(check_root(list.schema(), "schema", Vendor::OpenAiStrict).is_err());
    check_root(list.openai_schema(), "schema", Vendor::OpenAiStrict).unwrap();
}
