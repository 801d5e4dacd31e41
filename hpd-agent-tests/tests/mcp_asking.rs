//! Functions that ask their caller (sampling, elicitation, roots), through the project's own
//! MCP client against its own server on loopback, in both revision families: a collapsing
//! server speaks 2025-11-25 (the asks are requests to the client), a flat one 2026-07-28 (the
//! asks are `input_required` rounds with sealed request state). Also: the refusals (no
//! handler, a sampling policy, a client that did not declare the capability), a tampered
//! request state and answers that are not what was asked, over raw HTTP.

mod mcp_common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use hpd_agent::mcp::{McpHarness, McpHttpServer, McpServer, SamplingPolicy};
use hpd_agent::tool::{
    AskError, ElicitAction, Elicitation, ElicitationAnswer, ElicitationHandler, Root, RootsRequest,
    SamplingRequest,
};
use hpd_agent::{AgentBuilder, ChatResponse, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
use serde_json::{Value, json};

const TOKEN: &str = "asking-token-7f3e";

fn no_arguments() -> Value {
    json!({"type": "object", "properties": {}})
}

fn name_form(key: &str, message: &str, field: &str) -> Elicitation {
    Elicitation::form(
        message,
        json!({"type": "object", "properties": {field: {"type": "string"}}, "required": [field]}),
    )
    .with_key(key)
}

/// The served functions: each asks something and says what it got. `runs` counts the body's
/// runs (a 2026-07-28 call runs again for every round).
fn asking_tools(runs: &Arc<AtomicUsize>) -> Vec<Tool> {
    let counted = runs.clone();
    vec![
        Tool::new(
            "ask_model",
            "Asks the caller's model",
            no_arguments(),
            |_, ctx| async move {
                match ctx
                    .sample(
                        SamplingRequest::new("Name a capital", 20).with_system_prompt("One word."),
                    )
                    .await
                {
                    Ok(reply) => ToolResult::ok(format!("the model said {}", reply.text)),
                    Err(error) => ToolResult::error(format!("no sample: {error}")),
                }
            },
        ),
        Tool::new(
            "ask_user",
            "Asks the user twice",
            no_arguments(),
            move |_, ctx| {
                let counted = counted.clone();
                async move {
                    counted.fetch_add(1, Ordering::SeqCst);
                    let name = match ctx.elicit(name_form("name", "Your name?", "name")).await {
                        Ok(answer) if answer.action == ElicitAction::Accept => {
                            answer.field("name").cloned()
                        }
                        Ok(answer) => {
                            return ToolResult::ok(format!("the user chose {:?}", answer.action));
                        }
                        Err(error) => return ToolResult::error(format!("no name: {error}")),
                    };
                    let colour = match ctx
                        .elicit(name_form("colour", "Your colour?", "colour"))
                        .await
                    {
                        Ok(answer) => answer.field("colour").cloned(),
                        Err(error) => return ToolResult::error(format!("no colour: {error}")),
                    };
                    ToolResult::ok(format!(
                        "{} likes {}",
                        name.unwrap_or_default(),
                        colour.unwrap_or_default()
                    ))
                }
            },
        ),
        Tool::new(
            "ask_roots",
            "Asks for the roots",
            no_arguments(),
            |_, ctx| async move {
                match ctx
                    .roots(RootsRequest::new().with_key("client_roots"))
                    .await
                {
                    Ok(roots) => ToolResult::ok(
                        roots
                            .iter()
                            .map(|root| {
                                format!("{} ({})", root.uri, root.name.as_deref().unwrap_or("-"))
                            })
                            .collect::<Vec<_>>()
                            .join(", "),
                    ),
                    Err(error) => ToolResult::error(format!("no roots: {error}")),
                }
            },
        ),
        Tool::new(
            "ask_visit",
            "Sends the user to a URL",
            no_arguments(),
            |_, ctx| async move {
                let visit =
                    Elicitation::url("Sign in, please", "https://example.com/sign-in", "visit-1");
                match ctx.elicit(visit).await {
                    Ok(answer) => ToolResult::ok(format!("the user chose {:?}", answer.action)),
                    Err(error) => ToolResult::error(format!("no visit: {error}")),
                }
            },
        ),
        // Two asks at once: one round asks both.
        Tool::new(
            "ask_both",
            "Asks model and user at once",
            no_arguments(),
            |_, ctx| async move {
                let (sample, answer) = tokio::join!(
                    ctx.sample(SamplingRequest::new("Greet", 10).with_key("greeting")),
                    ctx.elicit(name_form("name", "Your name?", "name")),
                );
                match (sample, answer) {
                    (Ok(sample), Ok(answer)) => ToolResult::ok(format!(
                        "{} {}",
                        sample.text,
                        answer.field("name").and_then(Value::as_str).unwrap_or("?")
                    )),
                    (sample, answer) => ToolResult::error(format!("{sample:?} {answer:?}")),
                }
            },
        ),
    ]
}

/// `flat` serves 2026-07-28; otherwise the server collapses in the `hide` layout, whose
/// expansions live in the session, so it speaks the session revisions only.
async fn serve(flat: bool) -> (McpHttpServer, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .with_harness(
            HarnessBuilder::new("Asking")
                .with_tools(asking_tools(&runs))
                .build()
                .unwrap(),
        )
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    let mut server = McpServer::new(agent).with_bearer_token(TOKEN);
    if flat {
        server = server.without_collapse();
    }
    let server = server
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    (server, runs)
}

/// Answers forms from a table of field values, recording the messages.
#[derive(Clone, Default)]
struct Person {
    asked: Arc<Mutex<Vec<String>>>,
}

#[hpd_agent::async_trait]
impl ElicitationHandler for Person {
    async fn elicit(&self, request: &Elicitation) -> Result<ElicitationAnswer, AskError> {
        self.asked.lock().unwrap().push(request.message.clone());
        if let hpd_agent::tool::ElicitationKind::Url {
            url,
            elicitation_id,
        } = &request.kind
        {
            assert_eq!(
                (url.as_str(), elicitation_id.as_str()),
                ("https://example.com/sign-in", "visit-1")
            );
            return Ok(ElicitationAnswer::decline());
        }
        let content = match request.message.as_str() {
            "Your name?" => json!({"name": "Ada"}),
            "Your colour?" => json!({"colour": "green"}),
            other => return Err(AskError::Failed(format!("unexpected question {other}"))),
        };
        Ok(ElicitationAnswer::accept(
            content.as_object().unwrap().clone(),
        ))
    }
}

/// The using agent: its model answers sampling (`Paris`, `Hello`), `Person` answers forms.
async fn client_agent(
    server: &McpHttpServer,
    harness: impl FnOnce(McpHarness) -> McpHarness,
) -> (hpd_agent::Agent, ScriptedChatClient, Person) {
    let remote = harness(
        McpHarness::http("Remote", server.url())
            .with_header("Authorization", format!("Bearer {TOKEN}"))
            .without_collapse(),
    )
    .connect()
    .await
    .unwrap();
    let model = ScriptedChatClient::with_replies([
        ChatResponse::text("Paris"),
        ChatResponse::text("Hello"),
    ]);
    let person = Person::default();
    let agent = AgentBuilder::new()
        .with_harness(remote)
        .with_elicitation_handler(person.clone())
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    (agent, model, person)
}

async fn call(agent: &hpd_agent::Agent, tool: &str) -> (String, bool) {
    let outcome = agent
        .tool_session()
        .call_tool("c1", tool, "{}")
        .await
        .unwrap();
    (outcome.result.text, outcome.result.is_error)
}

async fn every_capability(flat: bool) {
    let (server, runs) = serve(flat).await;
    let (agent, model, person) = client_agent(&server, |h| {
        h.with_roots([Root::new("file:///srv/data").with_name("data")])
    })
    .await;

    assert_eq!(
        call(&agent, "ask_model").await,
        ("the model said Paris".to_owned(), false)
    );
    let request = &model.requests()[0];
    assert_eq!(request.instructions, "One word.");
    assert_eq!(request.options.max_output_tokens, Some(20));
    assert!(request.tool_names().is_empty());

    assert_eq!(
        call(&agent, "ask_user").await,
        (r#""Ada" likes "green""#.to_owned(), false)
    );
    assert_eq!(
        *person.asked.lock().unwrap(),
        ["Your name?", "Your colour?"]
    );
    // A session asks within one run; 2026-07-28 runs the body once per round.
    assert_eq!(runs.load(Ordering::SeqCst), if flat { 3 } else { 1 });

    assert_eq!(
        call(&agent, "ask_roots").await,
        ("file:///srv/data (data)".to_owned(), false)
    );
    assert_eq!(
        call(&agent, "ask_both").await,
        ("Hello Ada".to_owned(), false)
    );
    assert_eq!(
        call(&agent, "ask_visit").await,
        ("the user chose Decline".to_owned(), false)
    );
    assert_eq!(
        person.asked.lock().unwrap().last().map(String::as_str),
        Some("Sign in, please")
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_revision_asks_with_requests_to_the_client() {
    every_capability(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revision_2026_07_28_asks_with_input_required_rounds() {
    every_capability(true).await;
}

struct Refuse;

#[hpd_agent::async_trait]
impl SamplingPolicy for Refuse {
    async fn review(
        &self,
        server: &str,
        request: SamplingRequest,
    ) -> Result<SamplingRequest, AskError> {
        if request.max_tokens > 10 {
            return Err(AskError::Refused(format!(
                "{server} asked for too many tokens"
            )));
        }
        Ok(request)
    }
}

struct Rewrite;

#[hpd_agent::async_trait]
impl SamplingPolicy for Rewrite {
    async fn review(
        &self,
        _server: &str,
        mut request: SamplingRequest,
    ) -> Result<SamplingRequest, AskError> {
        request.system_prompt = Some("The application's prompt.".to_owned());
        request.max_tokens = 5;
        Ok(request)
    }
}

async fn refusals(flat: bool) {
    let (server, _) = serve(flat).await;
    // A policy refuses: the function gets an error naming the reason; the model is not asked.
    let (agent, model, _) = client_agent(&server, |h| h.with_sampling_policy(Refuse)).await;
    let (text, is_error) = call(&agent, "ask_model").await;
    assert!(
        is_error && text.contains("Remote asked for too many tokens"),
        "{text}"
    );
    assert!(model.requests().is_empty());

    // A policy rewrites: the model gets the rewritten request.
    let (agent, model, _) = client_agent(&server, |h| h.with_sampling_policy(Rewrite)).await;
    assert_eq!(
        call(&agent, "ask_model").await,
        ("the model said Paris".to_owned(), false)
    );
    assert_eq!(
        model.requests()[0].instructions,
        "The application's prompt."
    );
    assert_eq!(model.requests()[0].options.max_output_tokens, Some(5));

    // No roots given: the client does not declare roots, and the server does not ask. The
    // function fails without them: on 2026-07-28 the request then fails with
    // MissingRequiredClientCapabilityError, which carries the function's words.
    let (agent, _, _) = client_agent(&server, |h| h).await;
    let (text, is_error) = call(&agent, "ask_roots").await;
    assert!(is_error, "{text}");
    assert!(
        text.contains("no roots: the MCP client did not declare roots, so it cannot be asked"),
        "{text}"
    );
    if flat {
        assert!(text.contains("-32021"), "{text}");
    }

    // No elicitation handler on the agent: the server's question gets an error answer.
    let remote = McpHarness::http("Remote", server.url())
        .with_header("Authorization", format!("Bearer {TOKEN}"))
        .without_collapse()
        .connect()
        .await
        .unwrap();
    let agent = AgentBuilder::new()
        .with_harness(remote)
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    let (text, is_error) = call(&agent, "ask_user").await;
    assert!(is_error, "{text}");
    if flat {
        // The client could not answer the round: the text says so, not that the server failed.
        assert!(
            text.starts_with("Error: MCP server 'Remote' asked this client for elicitation during 'ask_user', and this agent has no elicitation handler"),
            "{text}"
        );
    } else {
        // The server's request got the client's error, and its function reports it.
        assert!(text.contains("nobody answers elicitation here"), "{text}");
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_in_a_session_revision() {
    refusals(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_in_revision_2026_07_28() {
    refusals(true).await;
}

/// One stateless 2026-07-28 `tools/call` over raw HTTP: the JSON-RPC response.
async fn raw_call(server: &McpHttpServer, params: Value) -> Value {
    let capabilities = json!({"elicitation": {}, "sampling": {}});
    mcp_common::stateless_request(&server.url(), TOKEN, "tools/call", params, capabilities).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_state_is_sealed_and_answers_are_checked() {
    let (server, _) = serve(true).await;
    let first = raw_call(&server, json!({"name": "ask_user", "arguments": {}})).await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    assert_eq!(
        result["inputRequests"]["name"]["method"],
        "elicitation/create"
    );
    let state = result["requestState"].as_str().unwrap().to_owned();

    // The name answered: the next round asks for the colour, with a new state.
    let accept = |content: Value| json!({"action": "accept", "content": content});
    let second = raw_call(
        &server,
        json!({"name": "ask_user", "arguments": {}, "requestState": state,
               "inputResponses": {"name": accept(json!({"name": "Ada"}))}}),
    )
    .await;
    let result = &second["result"];
    assert_eq!(result["resultType"], "input_required", "{second}");
    assert!(result["inputRequests"].get("name").is_none());
    assert_eq!(
        result["inputRequests"]["colour"]["method"],
        "elicitation/create"
    );
    let state = result["requestState"].as_str().unwrap().to_owned();

    // A changed state is refused.
    let mut tampered = state.clone().into_bytes();
    let last = tampered.len() - 1;
    tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
    let refused = raw_call(
        &server,
        json!({"name": "ask_user", "arguments": {}, "requestState": String::from_utf8(tampered).unwrap(),
               "inputResponses": {"colour": accept(json!({"colour": "red"}))}}),
    )
    .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");

    // The state of another call (other arguments) is refused too.
    let other = raw_call(
        &server,
        json!({"name": "ask_user", "arguments": {"x": 1}, "requestState": state,
               "inputResponses": {"colour": accept(json!({"colour": "red"}))}}),
    )
    .await;
    assert_eq!(other["error"]["code"], -32602, "{other}");

    // An answer that is no elicitation result is refused.
    let invalid = raw_call(
        &server,
        json!({"name": "ask_user", "arguments": {}, "inputResponses": {"name": 12345}}),
    )
    .await;
    assert_eq!(invalid["error"]["code"], -32602, "{invalid}");

    // An answer that does not fit the form: the function gets the error.
    let unfit = raw_call(
        &server,
        json!({"name": "ask_user", "arguments": {}, "inputResponses": {"name": accept(json!({"name": 7}))}}),
    )
    .await;
    assert_eq!(unfit["result"]["isError"], true, "{unfit}");
    assert!(
        unfit["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("does not fit the form"),
        "{unfit}"
    );

    // The last round: the state carries the name, the request the colour; extra keys are
    // ignored.
    let done = raw_call(
        &server,
        json!({"name": "ask_user", "arguments": {}, "requestState": state,
               "inputResponses": {"colour": accept(json!({"colour": "red"})), "extra": {"x": 1}}}),
    )
    .await;
    assert_eq!(
        done["result"]["content"][0]["text"], r#""Ada" likes "red""#,
        "{done}"
    );

    // Roots were not declared: no input is asked for, the function is told, and since it
    // fails without them, the request fails with MissingRequiredClientCapabilityError naming
    // roots, and the function's words.
    let roots = raw_call(&server, json!({"name": "ask_roots", "arguments": {}})).await;
    assert_eq!(roots["error"]["code"], -32021, "{roots}");
    assert_eq!(
        roots["error"]["data"]["requiredCapabilities"],
        json!({"roots": {}}),
        "{roots}"
    );
    assert!(
        roots["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no roots: the MCP client did not declare roots, so it cannot be asked"),
        "{roots}"
    );

    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_own_run_asks_its_handlers() {
    let runs = Arc::new(AtomicUsize::new(0));
    let harness = HarnessBuilder::new("Asking")
        .with_tools(asking_tools(&runs))
        .build()
        .unwrap();
    // Sampling goes to the agent's own model by default; elicitation and roots need handlers.
    let model = ScriptedChatClient::with_replies([ChatResponse::text("Oslo")]);
    let bare = AgentBuilder::new()
        .with_harness(harness.clone())
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    assert_eq!(
        call(&bare, "ask_model").await,
        ("the model said Oslo".to_owned(), false)
    );
    assert_eq!(model.requests()[0].instructions, "One word.");
    assert_eq!(
        call(&bare, "ask_user").await,
        (
            "no name: nobody answers elicitation here: no handler is set".to_owned(),
            true
        )
    );
    assert_eq!(
        call(&bare, "ask_roots").await,
        (
            "no roots: nobody answers roots here: no handler is set".to_owned(),
            true
        )
    );

    let person = Person::default();
    let equipped = AgentBuilder::new()
        .with_harness(harness)
        .with_elicitation_handler(person.clone())
        .with_roots([Root::new("file:///home/ada")])
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    assert_eq!(
        call(&equipped, "ask_user").await,
        (r#""Ada" likes "green""#.to_owned(), false)
    );
    assert_eq!(
        call(&equipped, "ask_roots").await,
        ("file:///home/ada (-)".to_owned(), false)
    );

    // The same in a run: the model calls the function, which asks the handler.
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![hpd_agent::ToolCall::new("c1", "ask_user", "{}")]),
        ChatResponse::text("done"),
    ]);
    let agent = AgentBuilder::new()
        .with_harness(
            HarnessBuilder::new("Asking")
                .with_tools(asking_tools(&runs))
                .build()
                .unwrap(),
        )
        .with_elicitation_handler(person)
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    agent.run("Ask me").await.unwrap();
    assert_eq!(
        model.requests()[1].tool_result("c1"),
        Some((r#""Ada" likes "green""#, false))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn roots_come_from_the_config_entry() {
    let (server, _) = serve(false).await;
    let config = hpd_agent::AgentConfig::from_json(&format!(
        r#"{{"mcp_servers": [{{"name": "Remote", "url": "{}", "collapse": false,
            "headers": {{"Authorization": "Bearer {TOKEN}"}},
            "roots": [{{"uri": "file:///srv/a", "name": "a"}}, {{"uri": "file:///srv/b"}}]}}]}}"#,
        server.url()
    ))
    .unwrap();
    let remote = McpHarness::from(&config.mcp_servers[0])
        .connect()
        .await
        .unwrap();
    let agent = AgentBuilder::new()
        .with_harness(remote)
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    assert_eq!(
        call(&agent, "ask_roots").await,
        ("file:///srv/a (a), file:///srv/b (-)".to_owned(), false)
    );
    server.shutdown().await;
}
