//! The `native` collapsing layout on the wire, against loopback servers that check every field
//! of every request against the vendor's published request types and answer `400` with the
//! reason when one is off, the way the vendor APIs do:
//! - Anthropic Messages: the `tools`, `messages` and `tool_result` fields of the Messages API
//!   reference (the request parameter types of Anthropic's SDK, which are generated from it),
//!   `defer_loading` and `tool_reference` as the tool search page defines them: at least one tool
//!   not deferred, no `cache_control` on a deferred tool, every reference naming a tool of the
//!   request, and a deferred tool called only after a result referenced it;
//! - OpenAI Responses: the `namespace`, `tool_search` (client execution) and function tool
//!   types, and the `tool_search_call` / `tool_search_output` / `function_call` input items of
//!   the tool search guide: deferred functions only with a `tool_search` tool, every output
//!   answering an earlier search call, and a deferred function called only after an output
//!   loaded it, with its `namespace`.
//!
//! The vendor APIs cannot be reached from here; these servers stand in for them.

use std::collections::{BTreeSet, VecDeque};
use std::sync::{Arc, Mutex};

use hpd_agent::{
    AgentBuilder, AgentEvent, ChatClient, ChatMessage, ToolCall, chat::ChatRequest,
    chat::DeferredTools, config::CollapsingLayout, providers::anthropic::AnthropicClient,
    providers::openai_responses::OpenAiResponsesClient,
};
use hpd_agent_tests::{MathTools, WeatherTools, executions, reset_logs};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// The execution log is process-wide: the tests that read it run one at a time.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

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
    "container",
    "mcp_servers",
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
    "input_examples",
    "allowed_callers",
    "eager_input_streaming",
];
const TOOL_RESULT: &[&str] = &[
    "type",
    "tool_use_id",
    "content",
    "is_error",
    "cache_control",
];

/// Checks a Messages request (see the module docs).
fn check_anthropic(body: &Value) -> Result<(), String> {
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
        if tool["defer_loading"] == json!(true) {
            if tool.get("cache_control").is_some() {
                return Err(format!("{at}: a deferred tool cannot carry cache_control"));
            }
            deferred.insert(name.to_owned());
        }
        declared.insert(name.to_owned());
    }
    if !deferred.is_empty() && deferred.len() == declared.len() {
        return Err(
            "At least one tool must have defer_loading=false. All tools cannot be deferred.".into(),
        );
    }
    let mut loaded = BTreeSet::new();
    for (m, message) in body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = format!("messages[{m}]");
        only(message, &at, &["role", "content"])?;
        let Some(blocks) = message["content"].as_array() else {
            continue;
        };
        for (b, block) in blocks.iter().enumerate() {
            let at = format!("{at}.content[{b}]");
            match block["type"].as_str() {
                Some("text") => only(block, &at, &["type", "text", "cache_control", "citations"])?,
                Some("tool_use") => {
                    only(
                        block,
                        &at,
                        &["type", "id", "name", "input", "cache_control"],
                    )?;
                    let name = text_field(block, &at, "name")?;
                    if deferred.contains(name) && !loaded.contains(name) {
                        return Err(format!(
                            "{at}: tool '{name}' is deferred and was not referenced before this call"
                        ));
                    }
                }
                Some("tool_result") => {
                    only(block, &at, TOOL_RESULT)?;
                    for (p, part) in block["content"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .enumerate()
                    {
                        let at = format!("{at}.content[{p}]");
                        match part["type"].as_str() {
                            Some("text") => only(part, &at, &["type", "text", "cache_control"])?,
                            Some("tool_reference") => {
                                only(part, &at, &["type", "tool_name", "cache_control"])?;
                                let name = text_field(part, &at, "tool_name")?;
                                if !declared.contains(name) {
                                    return Err(format!(
                                        "Tool reference '{name}' not found in available tools"
                                    ));
                                }
                                loaded.insert(name.to_owned());
                            }
                            other => {
                                return Err(format!("{at}.type: {other:?} is not allowed here"));
                            }
                        }
                    }
                }
                Some("thinking" | "redacted_thinking") => {}
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

fn anthropic_client(server: &MockServer) -> AnthropicClient {
    AnthropicClient::new("claude-test", "sk-ant-test")
        .and_then(|c| c.with_base_url(server.uri()))
        .expect("client")
        .with_streaming(false)
        .with_deferred_tools(DeferredTools::ToolReferences)
}

#[tokio::test]
async fn anthropic_defers_members_and_a_container_result_references_them() {
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
    // The next turn starts collapsed; the model still has the definitions loaded from the
    // history and calls a member, which runs at once: what is loaded stays loaded.
    let second = session.run("now multiply").await.unwrap();
    assert_eq!(second.text, "6");
    assert_eq!(executions(), ["MathTools.add", "MathTools.multiply"]);

    let bodies = served.bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 5);
    let names = |body: &Value| -> Vec<(String, bool)> {
        body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["name"].as_str().unwrap().to_owned(),
                    t["defer_loading"] == json!(true),
                )
            })
            .collect()
    };
    let expected: Vec<(String, bool)> = [
        ("get_weather", false),
        ("get_forecast", false),
        ("MathTools", false),
        ("add", true),
        ("multiply", true),
        ("divide", true),
    ]
    .iter()
    .map(|(n, d)| ((*n).to_owned(), *d))
    .collect();
    for body in &bodies {
        // The tools and the system text of every request of the session are the same.
        assert_eq!(names(body), expected);
        assert_eq!(body["system"], bodies[0]["system"]);
        assert_eq!(body["system"][0]["text"], "Base.");
    }
    // The cache breakpoint is on the last tool that is not deferred.
    assert!(bodies[0]["tools"][2]["cache_control"].is_object());
    // The container's result: its text (with the system prompt it carries), then the references.
    let result = &bodies[1]["messages"][2]["content"][0];
    assert_eq!(result["tool_use_id"], "toolu_1");
    let content = result["content"].as_array().unwrap();
    assert!(
        content[0]["text"]
            .as_str()
            .unwrap()
            // The references name every member: no list of them beside.
            .starts_with("MathTools expanded. Its functions are loaded.\n\nMath tools are active.\n\n## Active container instructions\n\n### MathTools\n")
    );
    let references: Vec<&Value> = content[1..].iter().collect();
    assert_eq!(
        references,
        [
            &json!({"type": "tool_reference", "tool_name": "add"}),
            &json!({"type": "tool_reference", "tool_name": "multiply"}),
            &json!({"type": "tool_reference", "tool_name": "divide"}),
        ]
    );
    // Each request of the session continues the previous one.
    for pair in bodies.windows(2) {
        let before = pair[0]["messages"].as_array().unwrap();
        let after = pair[1]["messages"].as_array().unwrap();
        let strip = |m: &Value| {
            let mut m = m.clone();
            if let Some(blocks) = m["content"].as_array_mut() {
                for block in blocks {
                    block.as_object_mut().map(|b| b.remove("cache_control"));
                }
            }
            m
        };
        assert!(after.len() > before.len());
        for (a, b) in before.iter().zip(after) {
            assert_eq!(strip(a), strip(b));
        }
    }
    // The second turn's call ran: its result is the member's own, and it references nothing
    // (the definitions are loaded from the first turn's result).
    let ran = &bodies[4]["messages"][8]["content"][0];
    assert_eq!(ran["tool_use_id"], "toolu_3");
    assert_eq!(ran["content"], "6");
}

#[tokio::test]
async fn the_anthropic_checker_refuses_a_deferred_tool_called_before_its_reference() {
    let served = serve("/v1/messages", check_anthropic, vec![]).await;
    let client = anthropic_client(&served.server);
    let add = Arc::new(hpd_agent::chat::ToolDefinition::new(
        "add",
        "Adds",
        json!({"type": "object"}),
    ));
    let container = Arc::new(hpd_agent::chat::ToolDefinition::new(
        "MathTools",
        "Math",
        json!({"type": "object", "properties": {}}),
    ));
    let groups = [hpd_agent::chat::DeferredGroup::new(
        "MathTools",
        "Math",
        vec![add],
    )];
    let history = [
        ChatMessage::user("add"),
        ChatMessage::Assistant {
            content: None,
            tool_calls: vec![ToolCall::new("toolu_1", "add", "{}")],
            reasoning: vec![],
        },
        ChatMessage::tool("toolu_1", "1", false),
    ];
    let tools = [container];
    let request = ChatRequest::new("", &history, &tools).with_deferred(&groups);
    let error = client.complete(request, &|_| {}).await.unwrap_err();
    assert!(
        error
            .to_string()
            .contains("tool 'add' is deferred and was not referenced before this call"),
        "{error}"
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
    "prompt_cache_retention",
    "previous_response_id",
];
const FUNCTION_TOOL: &[&str] = &[
    "type",
    "name",
    "description",
    "parameters",
    "strict",
    "defer_loading",
];

/// The functions of a namespace tool, checked; returns their names.
fn namespace_functions(tool: &Value, at: &str) -> Result<Vec<String>, String> {
    only(tool, at, &["type", "name", "description", "tools"])?;
    text_field(tool, at, "name")?;
    text_field(tool, at, "description")?;
    let mut names = Vec::new();
    for (f, function) in tool["tools"]
        .as_array()
        .ok_or_else(|| format!("{at}.tools: required"))?
        .iter()
        .enumerate()
    {
        let at = format!("{at}.tools[{f}]");
        only(function, &at, FUNCTION_TOOL)?;
        if function["type"] != "function" {
            return Err(format!("{at}.type: expected function"));
        }
        names.push(text_field(function, &at, "name")?.to_owned());
    }
    Ok(names)
}

/// Checks a Responses request (see the module docs).
fn check_responses(body: &Value) -> Result<(), String> {
    only(body, "request", RESPONSES_REQUEST)?;
    let mut deferred: Vec<(String, String)> = Vec::new();
    let mut has_search = false;
    for (i, tool) in body["tools"].as_array().into_iter().flatten().enumerate() {
        let at = format!("tools[{i}]");
        match tool["type"].as_str() {
            Some("function") => {
                only(tool, &at, FUNCTION_TOOL)?;
            }
            Some("namespace") => {
                let namespace = text_field(tool, &at, "name")?.to_owned();
                for name in namespace_functions(tool, &at)? {
                    deferred.push((namespace.clone(), name));
                }
            }
            Some("tool_search") => {
                only(
                    tool,
                    &at,
                    &["type", "execution", "description", "parameters"],
                )?;
                if tool["execution"] != "client" {
                    return Err(format!("{at}.execution: this client executes its searches"));
                }
                has_search = true;
            }
            other => return Err(format!("{at}.type: {other:?} is not a tool type")),
        }
    }
    if !deferred.is_empty() && !has_search {
        return Err(
            "Invalid Value: tools.defer_loading. Deferred tools require tools.tool_search.".into(),
        );
    }
    let mut searches = BTreeSet::new();
    let mut loaded: BTreeSet<(String, String)> = BTreeSet::new();
    for (i, item) in body["input"].as_array().into_iter().flatten().enumerate() {
        let at = format!("input[{i}]");
        match item["type"].as_str() {
            Some("message") => only(item, &at, &["type", "role", "content", "id", "status"])?,
            Some("reasoning") => {
                only(
                    item,
                    &at,
                    &["type", "id", "summary", "encrypted_content", "content"],
                )?;
            }
            Some("tool_search_call") => {
                only(
                    item,
                    &at,
                    &["type", "id", "call_id", "arguments", "execution", "status"],
                )?;
                if !item["arguments"].is_object() {
                    return Err(format!("{at}.arguments: expected an object"));
                }
                searches.insert(text_field(item, &at, "call_id")?.to_owned());
            }
            Some("tool_search_output") => {
                only(
                    item,
                    &at,
                    &["type", "id", "call_id", "tools", "execution", "status"],
                )?;
                let call_id = text_field(item, &at, "call_id")?;
                if !searches.contains(call_id) {
                    return Err(format!(
                        "{at}.call_id: no tool_search_call '{call_id}' before it"
                    ));
                }
                for (t, tool) in item["tools"].as_array().into_iter().flatten().enumerate() {
                    let at = format!("{at}.tools[{t}]");
                    let namespace = text_field(tool, &at, "name")?.to_owned();
                    for name in namespace_functions(tool, &at)? {
                        let key = (namespace.clone(), name);
                        if !deferred.contains(&key) {
                            return Err(format!(
                                "{at}: loads {key:?}, which no namespace declares"
                            ));
                        }
                        loaded.insert(key);
                    }
                }
            }
            Some("function_call") => {
                only(
                    item,
                    &at,
                    &[
                        "type",
                        "id",
                        "call_id",
                        "name",
                        "arguments",
                        "namespace",
                        "status",
                    ],
                )?;
                let name = text_field(item, &at, "name")?.to_owned();
                if let Some(namespace) = item["namespace"].as_str() {
                    let key = (namespace.to_owned(), name.clone());
                    if !loaded.contains(&key) {
                        return Err(format!(
                            "{at}: {key:?} was called before a tool_search_output loaded it"
                        ));
                    }
                } else if deferred.iter().any(|(_, n)| *n == name) {
                    return Err(format!(
                        "{at}: the deferred function '{name}' needs its namespace"
                    ));
                }
            }
            Some("function_call_output") => {
                only(item, &at, &["type", "id", "call_id", "output", "status"])?;
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

fn responses_client(server: &MockServer) -> OpenAiResponsesClient {
    OpenAiResponsesClient::new("gpt-test", "sk-test")
        .and_then(|c| c.with_base_url(server.uri()))
        .expect("client")
        .with_streaming(false)
        .with_deferred_tools(DeferredTools::ToolSearch)
}

#[tokio::test]
async fn responses_sends_namespaces_and_answers_a_client_tool_search() {
    let served = serve(
        "/responses",
        check_responses,
        vec![
            responses_reply(
                json!([{"type": "tool_search_call", "id": "ts_1", "call_id": "call_s1",
                                     "execution": "client", "status": "completed",
                                     "arguments": {"namespace": "MathTools"}}]),
            ),
            responses_reply(
                json!([{"type": "function_call", "id": "fc_1", "call_id": "call_a1",
                                     "namespace": "MathTools", "name": "add",
                                     "arguments": "{\"a\": 2, \"b\": 3}"}]),
            ),
            responses_reply(json!([{"type": "message", "role": "assistant",
                                     "content": [{"type": "output_text", "text": "5"}]}])),
        ],
    )
    .await;
    let _serial = SERIAL.lock().await;
    reset_logs();
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let agent = AgentBuilder::new()
        .with_instructions("Base.")
        .with_tool_harness::<WeatherTools>()
        .with_tool_harness::<MathTools>()
        .with_collapsing_layout(CollapsingLayout::Native)
        .on_event(move |e: &AgentEvent| {
            if let AgentEvent::ContainerExpanded { harness, .. } = e {
                seen.lock().unwrap().push(harness.clone());
            }
        })
        .with_chat_client(responses_client(&served.server))
        .build()
        .unwrap();
    let output = agent.run("add 2 and 3").await;
    assert_eq!(*served.refusals.lock().unwrap(), Vec::<String>::new());
    assert_eq!(output.unwrap().text, "5");
    assert_eq!(executions(), ["MathTools.add"]);
    assert_eq!(*events.lock().unwrap(), ["MathTools"]);

    let bodies = served.bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 3);
    for body in &bodies {
        assert_eq!(body["tools"], bodies[0]["tools"]);
        assert_eq!(body["instructions"], "Base.");
    }
    let tools = bodies[0]["tools"].as_array().unwrap();
    let kinds: Vec<&str> = tools.iter().map(|t| t["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["function", "function", "namespace", "tool_search"]);
    assert_eq!(tools[2]["name"], "MathTools");
    assert_eq!(
        tools[2]["description"],
        "Math operations (functions: add, multiply, divide)"
    );
    assert!(
        tools[2]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["defer_loading"] == json!(true))
    );
    assert_eq!(
        tools[3]["parameters"]["properties"]["namespace"]["enum"],
        json!(["MathTools"])
    );
    // The search and its output, then the call with its namespace.
    let input = bodies[2]["input"].as_array().unwrap();
    assert_eq!(input[1]["type"], "tool_search_call");
    assert_eq!(input[1]["arguments"], json!({"namespace": "MathTools"}));
    assert_eq!(input[2]["type"], "tool_search_output");
    assert_eq!(input[2]["call_id"], "call_s1");
    let namespace = &input[2]["tools"][0];
    assert!(
        namespace["description"]
            .as_str()
            .unwrap()
            .contains("## Active container instructions\n\n### MathTools\nUse exact arithmetic")
    );
    assert_eq!(namespace["tools"].as_array().unwrap().len(), 3);
    assert_eq!(input[3]["type"], "function_call");
    assert_eq!(input[3]["namespace"], "MathTools");
    assert_eq!(
        input[4],
        json!({"type": "function_call_output", "call_id": "call_a1", "output": "5"})
    );
}

#[tokio::test]
async fn the_responses_checker_refuses_a_deferred_function_called_before_it_was_loaded() {
    let served = serve("/responses", check_responses, vec![]).await;
    let client = responses_client(&served.server);
    let add = Arc::new(hpd_agent::chat::ToolDefinition::new(
        "add",
        "Adds",
        json!({"type": "object"}),
    ));
    let groups = [hpd_agent::chat::DeferredGroup::new(
        "MathTools",
        "Math",
        vec![add],
    )];
    let history = [
        ChatMessage::user("add"),
        ChatMessage::Assistant {
            content: None,
            tool_calls: vec![ToolCall::new("call_1", "add", "{}")],
            reasoning: vec![],
        },
        ChatMessage::tool("call_1", "1", false),
    ];
    let request = ChatRequest::new("", &history, &[]).with_deferred(&groups);
    let error = client.complete(request, &|_| {}).await.unwrap_err();
    assert!(
        error
            .to_string()
            .contains("was called before a tool_search_output loaded it"),
        "{error}"
    );
}

#[tokio::test]
async fn clients_say_which_deferred_form_they_have() {
    let served = serve("/v1/messages", check_anthropic, vec![]).await;
    let local = AnthropicClient::new("m", "")
        .and_then(|c| c.with_base_url(served.server.uri()))
        .unwrap();
    assert_eq!(local.deferred_tools(), DeferredTools::Unsupported);
    assert_eq!(
        local
            .with_deferred_tools(DeferredTools::ToolReferences)
            .deferred_tools(),
        DeferredTools::ToolReferences
    );
}
