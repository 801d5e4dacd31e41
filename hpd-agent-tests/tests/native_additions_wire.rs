//! The `native` collapsing layout in the two forms that add the loaded tools mid-conversation,
//! on the wire, against loopback servers that check every header and field of every request
//! against the vendor's request types and answer `400` with the reason when one is off:
//! - Anthropic Messages with tool additions: the `anthropic-beta:
//!   mid-conversation-tool-changes-2026-07-01` header on every request that declares a deferred
//!   tool; `{"role": "system"}` messages whose blocks are `tool_addition`s naming a
//!   `tool_reference` (`BetaMessageParam`, `BetaRequestToolAdditionBlockParam` and
//!   `BetaToolChangeToolReferenceParam` of anthropic-sdk-python), each naming a tool the request
//!   declares with `defer_loading: true` and following the user message of the results it
//!   answers; no `tool_reference` inside a result; a deferred tool called only after it was
//!   added; `strict` tools whose every object allows no other property and requires all of
//!   its properties;
//! - OpenAI Responses with additional tools: no `namespace` and no `tool_search` tool;
//!   `additional_tools` input items of role `developer` whose tools are function tools with
//!   `name`, `parameters` and `strict` (the `AdditionalTools` item and `FunctionToolParam` of
//!   openai-python), following the outputs of the response whose result loaded them; a
//!   function called only when the tool list or an earlier item offers it, without a
//!   `namespace`.
//!
//! The servers then answer with a member called by its own name, which the agent runs.

use std::collections::{BTreeSet, VecDeque};
use std::sync::{Arc, Mutex};

use hpd_agent::{
    AgentBuilder, ChatClient, ChatMessage, ToolCall, chat::ChatRequest, chat::DeferredGroup,
    chat::DeferredTools, chat::ToolDefinition, config::CollapsingLayout,
    providers::anthropic::AnthropicClient, providers::openai_responses::OpenAiResponsesClient,
};
use hpd_agent_tests::{MathTools, WeatherTools, executions, reset_logs};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// The execution log is process-wide: the tests that read it run one at a time.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const TOOL_CHANGES_BETA: &str = "mid-conversation-tool-changes-2026-07-01";

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

/// A `strict` schema: every object node allows no other property and requires all of its
/// properties (what strict mode demands of the schema it is given).
fn check_strict_schema(schema: &Value, at: &str) -> Result<(), String> {
    let Some(map) = schema.as_object() else {
        return Err(format!("{at}: a strict schema must be an object"));
    };
    if map.contains_key("properties") || map.get("type") == Some(&json!("object")) {
        if map.get("additionalProperties") != Some(&json!(false)) {
            return Err(format!(
                "{at}: strict objects need additionalProperties: false"
            ));
        }
        let required: BTreeSet<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        for (name, property) in map
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            if !required.contains(name.as_str()) {
                return Err(format!("{at}.required: strict objects require '{name}'"));
            }
            check_strict_schema(property, &format!("{at}.properties.{name}"))?;
        }
    }
    if let Some(format) = map.get("format")
        && map.get("type") != Some(&json!("string"))
    {
        return Err(format!(
            "{at}.format: {format} is not a format strict mode takes"
        ));
    }
    Ok(())
}

/// A loopback server answering scripted bodies to requests that pass `check`, and `400` with
/// the reason to those that do not; it keeps every request body and every refusal.
struct Strict {
    check: fn(&Request, &Value) -> Result<(), String>,
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
        if let Err(reason) = (self.check)(request, &body) {
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

async fn serve(
    route: &str,
    check: fn(&Request, &Value) -> Result<(), String>,
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

/// The math group as a request defers it, without an agent.
fn math_group() -> (Vec<Arc<ToolDefinition>>, [DeferredGroup; 1]) {
    let schema = json!({"type": "object", "properties": {"a": {"type": "integer"},
        "b": {"type": "integer"}}, "required": ["a", "b"]});
    let add = Arc::new(ToolDefinition::new("add", "Adds", schema));
    let container = Arc::new(ToolDefinition::new(
        "MathTools",
        "Math",
        json!({"type": "object", "properties": {}}),
    ));
    (
        vec![container],
        [DeferredGroup::new("MathTools", "Math", vec![add])],
    )
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
    "cache_control",
];
const ANTHROPIC_TOOL: &[&str] = &[
    "name",
    "description",
    "input_schema",
    "type",
    "cache_control",
    "defer_loading",
    "strict",
];

/// Checks a Messages request with tool additions (see the module docs).
fn check_anthropic(request: &Request, body: &Value) -> Result<(), String> {
    let header = |name: &str| {
        request
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    if header("anthropic-version").as_deref() != Some("2023-06-01") {
        return Err("anthropic-version: header required".into());
    }
    only(body, "request", ANTHROPIC_REQUEST)?;
    let mut declared = BTreeSet::new();
    let mut deferred = BTreeSet::new();
    for (i, tool) in body["tools"].as_array().into_iter().flatten().enumerate() {
        let at = format!("tools[{i}]");
        only(tool, &at, ANTHROPIC_TOOL)?;
        let name = text_field(tool, &at, "name")?;
        if !tool["input_schema"].is_object() {
            return Err(format!("{at}.input_schema: required"));
        }
        match tool.get("strict") {
            None => {}
            Some(Value::Bool(true)) => {
                check_strict_schema(&tool["input_schema"], &format!("{at}.input_schema"))?;
            }
            Some(other) => return Err(format!("{at}.strict: {other} is not a boolean true")),
        }
        if tool["defer_loading"] == json!(true) {
            if tool.get("cache_control").is_some() {
                return Err(format!("{at}: a deferred tool cannot carry cache_control"));
            }
            deferred.insert(name.to_owned());
        }
        declared.insert(name.to_owned());
    }
    if !deferred.is_empty() {
        if deferred.len() == declared.len() {
            return Err("At least one tool must have defer_loading=false.".into());
        }
        let betas = header("anthropic-beta").unwrap_or_default();
        if !betas.split(',').any(|b| b.trim() == TOOL_CHANGES_BETA) {
            return Err(format!(
                "anthropic-beta: deferred tools added mid-conversation need {TOOL_CHANGES_BETA}, got '{betas}'"
            ));
        }
    }
    let mut added = BTreeSet::new();
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    for (m, message) in messages.iter().enumerate() {
        let at = format!("messages[{m}]");
        only(message, &at, &["role", "content"])?;
        let role = text_field(message, &at, "role")?;
        let Some(blocks) = message["content"].as_array() else {
            continue;
        };
        if role == "system" {
            let answers_results = m > 0
                && messages[m - 1]["role"] == "user"
                && messages[m - 1]["content"]
                    .as_array()
                    .is_some_and(|b| b.iter().any(|b| b["type"] == "tool_result"));
            if !answers_results {
                return Err(format!(
                    "{at}: this client adds tools only right after the results that load them"
                ));
            }
            for (b, block) in blocks.iter().enumerate() {
                let at = format!("{at}.content[{b}]");
                if block["type"] != "tool_addition" {
                    return Err(format!("{at}.type: {} is not a tool change", block["type"]));
                }
                only(block, &at, &["type", "tool", "cache_control"])?;
                let tool = &block["tool"];
                only(tool, &format!("{at}.tool"), &["type", "name"])?;
                if tool["type"] != "tool_reference" {
                    return Err(format!("{at}.tool.type: expected tool_reference"));
                }
                let name = text_field(tool, &format!("{at}.tool"), "name")?;
                if !deferred.contains(name) {
                    return Err(format!(
                        "{at}: tool '{name}' must be declared with defer_loading: true to be added"
                    ));
                }
                added.insert(name.to_owned());
            }
            continue;
        }
        if role != "user" && role != "assistant" {
            return Err(format!("{at}.role: '{role}' is not a role"));
        }
        for (b, block) in blocks.iter().enumerate() {
            let at = format!("{at}.content[{b}]");
            match block["type"].as_str() {
                Some("text") => only(block, &at, &["type", "text", "cache_control"])?,
                Some("tool_use") => {
                    only(
                        block,
                        &at,
                        &["type", "id", "name", "input", "cache_control"],
                    )?;
                    let name = text_field(block, &at, "name")?;
                    if deferred.contains(name) && !added.contains(name) {
                        return Err(format!(
                            "{at}: tool '{name}' is deferred and was not added before this call"
                        ));
                    }
                }
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
                    for (p, part) in block["content"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .enumerate()
                    {
                        if part["type"] != "text" {
                            return Err(format!(
                                "{at}.content[{p}].type: {} where this form adds tools by system messages",
                                part["type"]
                            ));
                        }
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

fn anthropic_call(id: &str, name: &str, input: Value) -> Value {
    anthropic_reply(
        json!([{"type": "tool_use", "id": id, "name": name, "input": input}]),
        "tool_use",
    )
}

/// A client of a gateway (not `api.anthropic.com`) that turns the tool additions on.
fn anthropic_client(server: &MockServer) -> AnthropicClient {
    AnthropicClient::new("claude-test", "sk-ant-test")
        .and_then(|c| c.with_base_url(server.uri()))
        .expect("client")
        .with_streaming(false)
        .with_deferred_tools(DeferredTools::ToolAdditions)
}

#[tokio::test]
async fn anthropic_adds_the_members_after_the_container_result_and_runs_them_by_name() {
    let served = serve(
        "/v1/messages",
        check_anthropic,
        vec![
            anthropic_call("toolu_1", "MathTools", json!({})),
            anthropic_call("toolu_2", "add", json!({"a": 2, "b": 3})),
            anthropic_reply(json!([{"type": "text", "text": "5"}]), "end_turn"),
            anthropic_call("toolu_3", "multiply", json!({"a": 2, "b": 3})),
            anthropic_reply(json!([{"type": "text", "text": "6"}]), "end_turn"),
        ],
    )
    .await;
    let _serial = SERIAL.lock().await;
    reset_logs();
    let agent = AgentBuilder::new()
        .with_instructions("Base.")
        .with_tool_harness::<WeatherTools>()
        .with_tool_harness::<MathTools>()
        .with_collapsing_layout(CollapsingLayout::Native)
        .with_chat_client(anthropic_client(&served.server))
        .build()
        .unwrap();
    let mut session = agent.session();
    let first = session.run("add 2 and 3").await;
    assert_eq!(*served.refusals.lock().unwrap(), Vec::<String>::new());
    assert_eq!(first.unwrap().text, "5");
    assert_eq!(executions(), ["MathTools.add"]);
    // A later turn: the members were added in the history and stay callable by name.
    let second = session.run("now multiply").await;
    assert_eq!(*served.refusals.lock().unwrap(), Vec::<String>::new());
    assert_eq!(second.unwrap().text, "6");
    // What is loaded stays loaded: the member added in the first turn runs directly.
    assert_eq!(executions(), ["MathTools.add", "MathTools.multiply"]);

    let bodies = served.bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 5);
    // The members are declared deferred from the first request on, `strict` where their
    // schema qualifies (two required integers: it does).
    let add = bodies[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "add")
        .unwrap();
    assert_eq!(add["defer_loading"], json!(true));
    assert_eq!(add["strict"], json!(true));
    assert_eq!(add["input_schema"]["additionalProperties"], json!(false));
    for body in &bodies {
        assert_eq!(body["tools"], bodies[0]["tools"]);
    }
    // The second request: the container's result is plain, and the system message after it
    // adds the three members by name.
    let messages = bodies[1]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[2]["content"][0]["tool_use_id"], "toolu_1");
    let result = messages[2]["content"][0]["content"].as_str().unwrap();
    assert!(
        result.starts_with("MathTools expanded. Its functions are loaded."),
        "{result}"
    );
    let mut addition = messages[3].clone();
    if let Some(last) = addition["content"]
        .as_array_mut()
        .and_then(|b| b.last_mut())
    {
        last.as_object_mut().map(|b| b.remove("cache_control"));
    }
    assert_eq!(
        addition,
        json!({"role": "system", "content": [
            {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "add"}},
            {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "multiply"}},
            {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "divide"}},
        ]})
    );
    // The member's call by its own name follows the addition, and its result follows the call.
    assert_eq!(
        messages.len() + 2,
        bodies[2]["messages"].as_array().unwrap().len()
    );
    assert_eq!(bodies[2]["messages"][4]["content"][0]["name"], "add");
    // The second turn's call of `multiply`: the history shows the members added already, so
    // nothing is added again (the whole session holds one addition).
    let additions = bodies[4]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "system")
        .count();
    assert_eq!(additions, 1);
    assert_eq!(bodies[4]["messages"][8]["content"][0]["name"], "multiply");
}

#[tokio::test]
async fn the_anthropic_additions_checker_refuses_a_call_before_the_addition_and_a_missing_beta() {
    // A history whose deferred tool is called without having been added.
    let served = serve("/v1/messages", check_anthropic, vec![]).await;
    let client = anthropic_client(&served.server);
    let (tools, groups) = math_group();
    let history = [
        ChatMessage::user("add"),
        ChatMessage::Assistant {
            content: None,
            tool_calls: vec![ToolCall::new("toolu_1", "add", "{}")],
            reasoning: vec![],
        },
        ChatMessage::tool("toolu_1", "1", false),
    ];
    let request = ChatRequest::new("", &history, &tools).with_deferred(&groups);
    let error = client.complete(request, &|_| {}).await.unwrap_err();
    assert!(
        error
            .to_string()
            .contains("tool 'add' is deferred and was not added before this call"),
        "{error}"
    );
    // The references form sends no beta header: the additions checker refuses it.
    let references = client.with_deferred_tools(DeferredTools::ToolReferences);
    let history = [ChatMessage::user("add")];
    let request = ChatRequest::new("", &history, &tools).with_deferred(&groups);
    let error = references.complete(request, &|_| {}).await.unwrap_err();
    assert!(error.to_string().contains("anthropic-beta"), "{error}");
}

#[tokio::test]
async fn a_stored_additions_history_renders_on_the_references_form_and_back() {
    // The same history (a container result that loaded `add`) as each Anthropic form writes
    // it: the record in the history is the provider's neither.
    let (tools, groups) = math_group();
    let mut result = ChatMessage::tool("toolu_1", "MathTools expanded.", false);
    if let ChatMessage::Tool { references, .. } = &mut result {
        references.push("add".to_owned());
    }
    let history = vec![
        ChatMessage::user("add"),
        ChatMessage::Assistant {
            content: None,
            tool_calls: vec![ToolCall::new("toolu_1", "MathTools", "{}")],
            reasoning: vec![],
        },
        result,
    ];
    let stored = serde_json::to_string(&history).unwrap();
    let resumed: Vec<ChatMessage> = serde_json::from_str(&stored).unwrap();
    assert_eq!(resumed, history);
    let served = serve(
        "/v1/messages",
        |_, _| Ok(()),
        vec![
            anthropic_reply(json!([{"type": "text", "text": "ok"}]), "end_turn"),
            anthropic_reply(json!([{"type": "text", "text": "ok"}]), "end_turn"),
        ],
    )
    .await;
    let additions = anthropic_client(&served.server);
    let references = additions
        .clone()
        .with_deferred_tools(DeferredTools::ToolReferences);
    for client in [&additions, &references] {
        let request = ChatRequest::new("", &resumed, &tools).with_deferred(&groups);
        client.complete(request, &|_| {}).await.unwrap();
    }
    let bodies = served.bodies.lock().unwrap().clone();
    let last = |body: &Value| body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last(&bodies[0])["role"], "system");
    assert_eq!(last(&bodies[0])["content"][0]["tool"]["name"], "add");
    assert_eq!(last(&bodies[1])["role"], "user");
    let result = &last(&bodies[1])["content"][0]["content"];
    assert_eq!(result[1]["type"], "tool_reference");
    assert_eq!(result[1]["tool_name"], "add");
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
];
const FUNCTION_TOOL: &[&str] = &[
    "type",
    "name",
    "description",
    "parameters",
    "strict",
    "defer_loading",
];

/// A function tool; returns its name.
fn check_function(tool: &Value, at: &str, loaded: bool) -> Result<String, String> {
    only(tool, at, FUNCTION_TOOL)?;
    if tool["type"] != "function" {
        return Err(format!(
            "{at}.type: {} is not a tool this form sends",
            tool["type"]
        ));
    }
    if !tool["parameters"].is_object() {
        return Err(format!("{at}.parameters: required"));
    }
    if loaded {
        match tool.get("strict") {
            Some(Value::Bool(true)) => {
                check_strict_schema(&tool["parameters"], &format!("{at}.parameters"))?;
            }
            Some(Value::Bool(false)) => {}
            _ => return Err(format!("{at}.strict: required (a boolean)")),
        }
        if tool.get("defer_loading").is_some() {
            return Err(format!("{at}.defer_loading: an added tool is not deferred"));
        }
    }
    Ok(text_field(tool, at, "name")?.to_owned())
}

/// Checks a Responses request with additional tools (see the module docs).
fn check_responses(_: &Request, body: &Value) -> Result<(), String> {
    only(body, "request", RESPONSES_REQUEST)?;
    let mut callable = BTreeSet::new();
    for (i, tool) in body["tools"].as_array().into_iter().flatten().enumerate() {
        callable.insert(check_function(tool, &format!("tools[{i}]"), false)?);
    }
    let mut calls = BTreeSet::new();
    let mut last_kind = String::new();
    for (i, item) in body["input"].as_array().into_iter().flatten().enumerate() {
        let at = format!("input[{i}]");
        let kind = text_field(item, &at, "type")?.to_owned();
        match kind.as_str() {
            "message" => only(item, &at, &["type", "role", "content"])?,
            "function_call" => {
                only(item, &at, &["type", "call_id", "name", "arguments"])?;
                let name = text_field(item, &at, "name")?;
                if !callable.contains(name) {
                    return Err(format!("{at}: function '{name}' is not available here"));
                }
                calls.insert(text_field(item, &at, "call_id")?.to_owned());
            }
            "function_call_output" => {
                only(item, &at, &["type", "call_id", "output"])?;
                if !calls.contains(text_field(item, &at, "call_id")?) {
                    return Err(format!("{at}: no function call with this call_id"));
                }
            }
            "additional_tools" => {
                only(item, &at, &["type", "role", "tools", "id"])?;
                if item["role"] != "developer" {
                    return Err(format!("{at}.role: only 'developer' is supported"));
                }
                if last_kind != "function_call_output" {
                    return Err(format!(
                        "{at}: this client adds tools only right after the outputs that load them"
                    ));
                }
                let tools = item["tools"]
                    .as_array()
                    .filter(|t| !t.is_empty())
                    .ok_or_else(|| format!("{at}.tools: a non-empty list required"))?;
                for (t, tool) in tools.iter().enumerate() {
                    callable.insert(check_function(tool, &format!("{at}.tools[{t}]"), true)?);
                }
            }
            other => return Err(format!("{at}.type: '{other}' is not an item of this form")),
        }
        last_kind = kind;
    }
    Ok(())
}

fn responses_reply(output: Value) -> Value {
    json!({"id": "resp_1", "object": "response", "status": "completed", "output": output,
           "usage": {"input_tokens": 10, "output_tokens": 2,
                     "input_tokens_details": {"cached_tokens": 0}}})
}

fn responses_call(id: &str, name: &str, arguments: &str) -> Value {
    responses_reply(
        json!([{"type": "function_call", "call_id": id, "name": name,
                            "arguments": arguments}]),
    )
}

/// A client of a gateway (not `api.openai.com`) that turns the additional tools on.
fn responses_client(server: &MockServer) -> OpenAiResponsesClient {
    OpenAiResponsesClient::new("gpt-test", "sk-test")
        .and_then(|c| c.with_base_url(server.uri()))
        .expect("client")
        .with_streaming(false)
        .with_deferred_tools(DeferredTools::AdditionalTools)
}

#[tokio::test]
async fn responses_adds_the_members_after_the_container_output_and_runs_them_by_name() {
    let served = serve(
        "/responses",
        check_responses,
        vec![
            responses_call("call_1", "MathTools", "{}"),
            responses_call("call_2", "add", r#"{"a": 2, "b": 3}"#),
            responses_reply(json!([{"type": "message", "role": "assistant",
                                    "content": [{"type": "output_text", "text": "5"}]}])),
        ],
    )
    .await;
    let _serial = SERIAL.lock().await;
    reset_logs();
    let agent = AgentBuilder::new()
        .with_instructions("Base.")
        .with_tool_harness::<WeatherTools>()
        .with_tool_harness::<MathTools>()
        .with_collapsing_layout(CollapsingLayout::Native)
        .with_chat_client(responses_client(&served.server))
        .build()
        .unwrap();
    let output = agent.run("add 2 and 3").await;
    assert_eq!(*served.refusals.lock().unwrap(), Vec::<String>::new());
    assert_eq!(output.unwrap().text, "5");
    assert_eq!(executions(), ["MathTools.add"]);

    let bodies = served.bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 3);
    let names: Vec<&str> = bodies[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["get_weather", "get_forecast", "MathTools"]);
    for body in &bodies {
        assert_eq!(body["tools"], bodies[0]["tools"]);
    }
    let input = bodies[1]["input"].as_array().unwrap();
    assert_eq!(input.len(), 4);
    assert_eq!(input[2]["type"], "function_call_output");
    let added = &input[3];
    assert_eq!(
        (&added["type"], &added["role"]),
        (&json!("additional_tools"), &json!("developer"))
    );
    let tools = added["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["add", "multiply", "divide"]);
    assert_eq!(tools[0]["strict"], json!(true));
    assert_eq!(tools[0]["parameters"]["additionalProperties"], json!(false));
    assert_eq!(tools[0]["description"], "Adds two integers.");
    // The member's call by its own name, without a namespace.
    assert_eq!(
        bodies[2]["input"][4],
        json!({"type": "function_call", "call_id": "call_2", "name": "add",
               "arguments": r#"{"a": 2, "b": 3}"#})
    );
}

#[tokio::test]
async fn the_responses_additions_checker_refuses_a_function_before_it_was_added() {
    let served = serve("/responses", check_responses, vec![]).await;
    let client = responses_client(&served.server);
    let (tools, groups) = math_group();
    let history = [
        ChatMessage::user("add"),
        ChatMessage::Assistant {
            content: None,
            tool_calls: vec![ToolCall::new("call_1", "add", "{}")],
            reasoning: vec![],
        },
        ChatMessage::tool("call_1", "1", false),
    ];
    let request = ChatRequest::new("", &history, &tools).with_deferred(&groups);
    let error = client.complete(request, &|_| {}).await.unwrap_err();
    assert!(
        error
            .to_string()
            .contains("function 'add' is not available here"),
        "{error}"
    );
}

#[test]
fn clients_name_their_default_forms_by_host_and_model() {
    let claude = |model: &str| AnthropicClient::new(model, "sk-ant-test").unwrap();
    assert_eq!(
        claude("claude-sonnet-4-5").deferred_tools(),
        DeferredTools::ToolReferences
    );
    assert_eq!(
        claude("claude-opus-4-8").deferred_tools(),
        DeferredTools::ToolAdditions
    );
    assert_eq!(
        claude("claude-sonnet-5").deferred_tools(),
        DeferredTools::ToolReferences
    );
    // A proxy host decides nothing by itself; the setting turns a form on there.
    let proxy = claude("claude-opus-4-8")
        .with_base_url("https://llm-proxy.internal")
        .unwrap();
    assert_eq!(proxy.deferred_tools(), DeferredTools::Unsupported);
    assert_eq!(
        proxy
            .with_deferred_tools(DeferredTools::ToolAdditions)
            .deferred_tools(),
        DeferredTools::ToolAdditions
    );
    // An explicit setting wins on the vendor's host too, and another API's form is off.
    assert_eq!(
        claude("claude-opus-4-8")
            .with_deferred_tools(DeferredTools::ToolReferences)
            .deferred_tools(),
        DeferredTools::ToolReferences
    );
    assert_eq!(
        claude("claude-opus-4-8")
            .with_deferred_tools(DeferredTools::AdditionalTools)
            .deferred_tools(),
        DeferredTools::Unsupported
    );
    let gpt = |model: &str| OpenAiResponsesClient::new(model, "sk-test").unwrap();
    assert_eq!(gpt("gpt-5.4").deferred_tools(), DeferredTools::ToolSearch);
    assert_eq!(
        gpt("gpt-5.5-mini").deferred_tools(),
        DeferredTools::ToolSearch
    );
    assert_eq!(gpt("gpt-5").deferred_tools(), DeferredTools::Unsupported);
    assert_eq!(
        gpt("gpt-4o")
            .with_deferred_tools(DeferredTools::AdditionalTools)
            .deferred_tools(),
        DeferredTools::AdditionalTools
    );
}

#[tokio::test]
async fn an_addition_follows_all_the_results_of_its_response_in_both_forms() {
    // One response called the container and another tool; only the container's result loads.
    let (tools, groups) = math_group();
    let mut loads = ChatMessage::tool("c1", "MathTools expanded.", false);
    if let ChatMessage::Tool { references, .. } = &mut loads {
        references.extend(["add".to_owned(), "add".to_owned(), "gone".to_owned()]);
    }
    let history = [
        ChatMessage::user("add, and the weather"),
        ChatMessage::Assistant {
            content: None,
            tool_calls: vec![
                ToolCall::new("c1", "MathTools", "{}"),
                ToolCall::new("c2", "MathTools", "{}"),
            ],
            reasoning: vec![],
        },
        loads,
        ChatMessage::tool("c2", "Already expanded.", false),
        ChatMessage::user("thanks"),
    ];
    let anthropic = serve(
        "/v1/messages",
        check_anthropic,
        vec![anthropic_reply(
            json!([{"type": "text", "text": "ok"}]),
            "end_turn",
        )],
    )
    .await;
    let request = ChatRequest::new("", &history, &tools).with_deferred(&groups);
    anthropic_client(&anthropic.server)
        .complete(request, &|_| {})
        .await
        .unwrap();
    let body = anthropic.bodies.lock().unwrap()[0].clone();
    let roles: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user", "system", "user"]);
    // Both results in one user message, then one addition of `add` alone: a name loaded twice
    // is added once, and one the request does not defer is left out.
    assert_eq!(body["messages"][2]["content"].as_array().unwrap().len(), 2);
    assert_eq!(
        body["messages"][3]["content"],
        json!([{"type": "tool_addition", "tool": {"type": "tool_reference", "name": "add"}}])
    );

    let responses = serve(
        "/responses",
        check_responses,
        vec![responses_reply(
            json!([{"type": "message", "role": "assistant",
                    "content": [{"type": "output_text", "text": "ok"}]}]),
        )],
    )
    .await;
    responses_client(&responses.server)
        .complete(request, &|_| {})
        .await
        .unwrap();
    let body = responses.bodies.lock().unwrap()[0].clone();
    let kinds: Vec<&str> = body["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "message",
            "function_call",
            "function_call",
            "function_call_output",
            "function_call_output",
            "additional_tools",
            "message"
        ]
    );
    let added: Vec<&str> = body["input"][5]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(added, ["add"]);
}
