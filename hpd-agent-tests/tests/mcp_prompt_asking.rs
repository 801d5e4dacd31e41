//! Served prompts that ask the client (elicitation, roots, sampling) through `PromptRequest`,
//! and the project's own client answering them from `McpClient::get_prompt`, on loopback in
//! both revision families: a `hide` server speaks the session revisions (the asks are requests
//! to the client while `prompts/get` waits), a `fixed` one 2026-07-28 (the asks are
//! `input_required` rounds with sealed request state). Over raw HTTP: the rounds, a state
//! bound to its prompt, its arguments and its method, answers that are not what was asked, and
//! a capability the client did not declare.

mod mcp_common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use hpd_agent::chat::ContentPart;
use hpd_agent::config::CollapsingLayout;
use hpd_agent::mcp::{
    McpError, McpHarness, McpHttpServer, McpServer, PromptArgument, PromptMessage, PromptRequest,
    ProviderError, ServedPrompt,
};
use hpd_agent::tool::{
    AskError, ElicitAction, Elicitation, ElicitationAnswer, ElicitationHandler, Root, RootsRequest,
    SamplingRequest,
};
use hpd_agent::{AgentBuilder, ScriptedChatClient};
use serde_json::{Value, json};

const TOKEN: &str = "prompt-asking-token-51c2";

fn form(key: &str, message: &str, field: &str) -> Elicitation {
    Elicitation::form(
        message,
        json!({"type": "object", "properties": {field: {"type": "string"}}, "required": [field]}),
    )
    .with_key(key)
}

/// `briefing` asks the user for a topic, then the client for its roots; `runs` counts its
/// runs (a 2026-07-28 request runs it again for every round). `summary` asks the client's
/// model. `focused` asks with the default key, and goes on without an answer.
fn prompts(runs: &Arc<AtomicUsize>) -> Vec<ServedPrompt> {
    let counted = runs.clone();
    vec![
        ServedPrompt::new(
            "briefing",
            "A briefing on the user's topic",
            move |request: PromptRequest| {
                let counted = counted.clone();
                async move {
                    counted.fetch_add(1, Ordering::SeqCst);
                    let failed = |error: AskError| ProviderError::Failed(error.to_string());
                    let answer = request
                        .elicit(form("topic", "Which topic?", "topic"))
                        .await
                        .map_err(failed)?;
                    if answer.action != ElicitAction::Accept {
                        return Err(ProviderError::Failed(format!(
                            "no topic: the user chose {:?}",
                            answer.action
                        )));
                    }
                    let topic = answer.field("topic").cloned().unwrap_or_default();
                    let roots = request
                        .roots(RootsRequest::new().with_key("where"))
                        .await
                        .map_err(failed)?;
                    let audience = request.argument("audience").unwrap_or("everyone");
                    Ok(vec![PromptMessage::user(ContentPart::text(format!(
                        "Brief {audience} on {topic} using {}",
                        roots
                            .iter()
                            .map(|root| root.uri.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )))])
                }
            },
        )
        .with_argument(PromptArgument::optional("audience", "Who reads it")),
        ServedPrompt::new(
            "summary",
            "A summary drafted by the client's model",
            |request: PromptRequest| async move {
                let reply = request
                    .sample(SamplingRequest::new("Draft a summary", 30).with_key("draft"))
                    .await
                    .map_err(|error| ProviderError::Failed(error.to_string()))?;
                Ok(vec![PromptMessage::assistant(ContentPart::text(
                    reply.text,
                ))])
            },
        ),
        ServedPrompt::new(
            "focused",
            "Asks for a focus, and has a default",
            |request: PromptRequest| async move {
                let focus = match request.elicit(form_default()).await {
                    Ok(answer) if answer.action == ElicitAction::Accept => answer
                        .field("focus")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    Ok(_) => "anything".to_owned(),
                    Err(error) => format!("anything ({error})"),
                };
                Ok(vec![PromptMessage::user(ContentPart::text(format!(
                    "Focus on {focus}."
                )))])
            },
        ),
    ]
}

/// A form without a key: the prompt's first ask, `elicitation-1`.
fn form_default() -> Elicitation {
    Elicitation::form(
        "Which focus?",
        json!({"type": "object", "properties": {"focus": {"type": "string"}}, "required": ["focus"]}),
    )
}

/// `stateless` serves 2026-07-28 (the `fixed` layout keeps no per-session state); otherwise
/// the `hide` layout, whose expansions live in the session, so only the session revisions.
async fn serve(stateless: bool) -> (McpHttpServer, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let layout = if stateless {
        CollapsingLayout::Fixed
    } else {
        CollapsingLayout::Hide
    };
    let agent = AgentBuilder::new()
        .with_collapsing_layout(layout)
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    let mut server = McpServer::new(agent).with_bearer_token(TOKEN);
    for prompt in prompts(&runs) {
        server = server.with_prompt(prompt);
    }
    let server = server
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    (server, runs)
}

/// Answers `Which topic?` with `caching` and `Which focus?` with `latency`, recording the
/// questions.
#[derive(Clone, Default)]
struct Person {
    asked: Arc<Mutex<Vec<String>>>,
}

#[hpd_agent::async_trait]
impl ElicitationHandler for Person {
    async fn elicit(&self, request: &Elicitation) -> Result<ElicitationAnswer, AskError> {
        self.asked.lock().unwrap().push(request.message.clone());
        let content = match request.message.as_str() {
            "Which topic?" => json!({"topic": "caching"}),
            "Which focus?" => json!({"focus": "latency"}),
            other => return Err(AskError::Failed(format!("unexpected question {other}"))),
        };
        Ok(ElicitationAnswer::accept(
            content.as_object().unwrap().clone(),
        ))
    }
}

fn text(messages: &[PromptMessage]) -> String {
    match &messages[0].content {
        ContentPart::Text { text } => text.clone(),
        other => panic!("not text: {other:?}"),
    }
}

async fn the_client_answers(stateless: bool) {
    let (server, runs) = serve(stateless).await;
    let person = Person::default();
    let client = McpHarness::http("Prompts", server.url())
        .with_header("Authorization", format!("Bearer {TOKEN}"))
        .with_elicitation_handler(person.clone())
        .with_roots([Root::new("file:///srv/notes").with_name("notes")])
        .connect_client()
        .await
        .unwrap();

    let prompt = client
        .get_prompt("briefing", [("audience", "ops")])
        .await
        .unwrap();
    assert_eq!(
        text(&prompt.messages),
        r#"Brief ops on "caching" using file:///srv/notes"#
    );
    assert_eq!(*person.asked.lock().unwrap(), ["Which topic?"]);
    // A session asks within one run; 2026-07-28 runs the prompt once per round (the topic,
    // the roots, the messages).
    assert_eq!(runs.load(Ordering::SeqCst), if stateless { 3 } else { 1 });

    // An ask without a key gets the prompt's default one, and its answer comes back to it.
    let focused = client
        .get_prompt("focused", [] as [(&str, &str); 0])
        .await
        .unwrap();
    assert_eq!(text(&focused.messages), "Focus on latency.");

    // Sampling from the application's own call: no agent's call is in flight, so nobody
    // answers, and the request fails naming what was asked and why.
    let error = client
        .get_prompt("summary", [] as [(&str, &str); 0])
        .await
        .unwrap_err();
    let McpError::Request {
        method, message, ..
    } = &error
    else {
        panic!("{error:?}");
    };
    assert_eq!(method, "prompts/get");
    assert!(
        message.contains("sampling") && message.contains("no handler is set"),
        "{message}"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_revision_asks_with_requests_to_the_client() {
    the_client_answers(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revision_2026_07_28_asks_with_input_required_rounds() {
    the_client_answers(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_a_handler_fails_naming_the_ask() {
    let (server, _) = serve(true).await;
    let client = McpHarness::http("Prompts", server.url())
        .with_header("Authorization", format!("Bearer {TOKEN}"))
        .connect_client()
        .await
        .unwrap();
    let error = client
        .get_prompt("focused", [] as [(&str, &str); 0])
        .await
        .unwrap_err();
    let McpError::Request { message, .. } = &error else {
        panic!("{error:?}");
    };
    assert_eq!(
        message,
        "the server asked for elicitation, and this client could not answer: nobody answers elicitation here: no handler is set"
    );
    server.shutdown().await;
}

#[test]
fn outside_a_server_nobody_answers() {
    let request = PromptRequest::new("briefing");
    let answered = futures::executor::block_on(request.elicit(form_default()));
    assert_eq!(
        answered,
        Err(AskError::NoHandler {
            what: "elicitation"
        })
    );
    // Requests compare by prompt and arguments.
    assert_eq!(
        request.clone().with_argument("a", "1"),
        PromptRequest::new("briefing").with_argument("a", "1")
    );
}

/// One stateless 2026-07-28 request over raw HTTP: the JSON-RPC response.
async fn raw(server: &McpHttpServer, method: &str, params: Value, capabilities: Value) -> Value {
    mcp_common::stateless_request(&server.url(), TOKEN, method, params, capabilities).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_rounds_are_sealed_and_checked() {
    let (server, _) = serve(true).await;
    let all = json!({"elicitation": {}, "roots": {}, "sampling": {}});
    let get = |params: Value| raw(&server, "prompts/get", params, all.clone());

    let first = get(json!({"name": "briefing", "arguments": {"audience": "ops"}})).await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    assert_eq!(
        result["inputRequests"]["topic"]["method"],
        "elicitation/create"
    );
    assert_eq!(
        result["inputRequests"]["topic"]["params"]["message"],
        "Which topic?"
    );
    assert!(result.get("requestState").is_some(), "{first}");

    // The topic answered: the next round asks for the roots, with the topic sealed.
    let accept = |content: Value| json!({"action": "accept", "content": content});
    let second = get(json!({"name": "briefing", "arguments": {"audience": "ops"},
        "inputResponses": {"topic": accept(json!({"topic": "caching"}))}}))
    .await;
    let result = &second["result"];
    assert_eq!(result["resultType"], "input_required", "{second}");
    assert_eq!(result["inputRequests"]["where"]["method"], "roots/list");
    assert!(result["inputRequests"].get("topic").is_none(), "{second}");
    let state = result["requestState"].as_str().unwrap().to_owned();

    // The state is bound to the prompt, its arguments and the method.
    let roots = json!({"where": {"roots": [{"uri": "file:///srv/notes"}]}});
    for (method, params) in [
        (
            "prompts/get",
            json!({"name": "briefing", "arguments": {"audience": "dev"}}),
        ),
        ("prompts/get", json!({"name": "focused"})),
        (
            "tools/call",
            json!({"name": "briefing", "arguments": {"audience": "ops"}}),
        ),
    ] {
        let mut params = params;
        params["requestState"] = json!(state);
        params["inputResponses"] = roots.clone();
        let refused = raw(&server, method, params, all.clone()).await;
        assert_eq!(refused["error"]["code"], -32602, "{method}: {refused}");
    }

    // The last round: the roots with the state: the messages.
    let done = get(json!({"name": "briefing", "arguments": {"audience": "ops"},
        "requestState": state, "inputResponses": roots}))
    .await;
    assert_eq!(
        done["result"]["messages"][0]["content"]["text"],
        r#"Brief ops on "caching" using file:///srv/notes"#,
        "{done}"
    );
    assert!(
        done["result"]
            .get("resultType")
            .is_none_or(|t| t == "complete"),
        "{done}"
    );

    // An answer that is no elicitation result: invalid params.
    let invalid = get(json!({"name": "briefing", "inputResponses": {"topic": 7}})).await;
    assert_eq!(invalid["error"]["code"], -32602, "{invalid}");

    // A client without elicitation: nothing is asked of it, and the prompt that can go on
    // without the answer does.
    let undeclared = raw(
        &server,
        "prompts/get",
        json!({"name": "focused"}),
        json!({"roots": {}}),
    )
    .await;
    assert_eq!(
        undeclared["result"]["messages"][0]["content"]["text"],
        "Focus on anything (the MCP client did not declare elicitation (form), so it cannot be asked).",
        "{undeclared}"
    );

    // A client without roots: nothing is asked of it, the prompt fails without them, so the
    // request fails with MissingRequiredClientCapabilityError naming roots.
    let no_roots = raw(
        &server,
        "prompts/get",
        json!({"name": "briefing", "inputResponses": {"topic": accept(json!({"topic": "x"}))}}),
        json!({"elicitation": {}}),
    )
    .await;
    assert_eq!(no_roots["error"]["code"], -32021, "{no_roots}");
    assert_eq!(
        no_roots["error"]["data"]["requiredCapabilities"],
        json!({"roots": {}}),
        "{no_roots}"
    );
    server.shutdown().await;
}
