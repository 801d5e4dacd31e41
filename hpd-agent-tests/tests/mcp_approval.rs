//! A served function that needs approval asks the MCP client through elicitation: approved,
//! refused in the form, declined, and refused with a clear error for a client that did not
//! declare elicitation. The clients are rmcp clients over streamable HTTP on loopback, and the
//! project's own `McpHarness`, which hands the question to the calling agent's handler.

use std::sync::{Arc, Mutex};

use hpd_agent::mcp::{McpHarness, McpServer};
use hpd_agent::tool::{AskError, Elicitation, ElicitationAnswer, ElicitationHandler};
use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationCapability, ErrorData, FormElicitationCapability, Implementation,
    ProtocolVersion,
};
use rmcp::service::RequestContext;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt as _};
use serde_json::json;

const TOKEN: &str = "approval-token-41c2";

/// A client whose user answers every elicitation with `answer`, recording the requests.
#[derive(Clone)]
struct Person {
    answer: ElicitResult,
    asked: Arc<Mutex<Vec<(String, serde_json::Value)>>>,
    elicitation: bool,
}

impl ClientHandler for Person {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = request
        {
            self.asked
                .lock()
                .unwrap()
                .push((message, serde_json::to_value(&requested_schema).unwrap()));
        }
        Ok(self.answer.clone())
    }

    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.elicitation {
            capabilities.elicitation =
                Some(ElicitationCapability::new().with_form(FormElicitationCapability::default()));
        }
        ClientConfig::new(capabilities, Implementation::new("person", "1"))
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}

/// Serves `wipe` (needs approval) and `look` (does not); returns the server and what ran.
async fn serve() -> (hpd_agent::mcp::McpHttpServer, Arc<Mutex<Vec<String>>>) {
    serve_as(false).await
}

/// [`serve`], flat when `flat` (which also offers 2026-07-28).
async fn serve_as(flat: bool) -> (hpd_agent::mcp::McpHttpServer, Arc<Mutex<Vec<String>>>) {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let log = ran.clone();
    let wipe = Tool::new(
        "wipe",
        "Wipes a disk",
        json!({"type": "object", "properties": {"disk": {"type": "string"}}}),
        move |args, _| {
            let log = log.clone();
            async move {
                log.lock().unwrap().push(format!("wipe {}", args["disk"]));
                ToolResult::ok("wiped")
            }
        },
    )
    .with_approval_required();
    let look = Tool::new("look", "Looks", json!({"type": "object"}), |_, _| async {
        ToolResult::ok("all fine")
    });
    let agent = AgentBuilder::new()
        .with_harness(
            HarnessBuilder::new("Disks")
                .with_tool(wipe)
                .with_tool(look)
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
    (server, ran)
}

/// Calls `wipe` as a client that answers with `answer` (or declares no elicitation).
async fn wipe_as(
    server: &hpd_agent::mcp::McpHttpServer,
    answer: ElicitResult,
    elicitation: bool,
) -> (String, bool, Vec<(String, serde_json::Value)>) {
    let person = Person {
        answer,
        asked: Arc::default(),
        elicitation,
    };
    let mut headers = std::collections::HashMap::new();
    headers.insert(
        http::HeaderName::from_static("authorization"),
        format!("Bearer {TOKEN}").parse().unwrap(),
    );
    let config =
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            server.url(),
        )
        .custom_headers(headers);
    let client = person
        .clone()
        .serve(StreamableHttpClientTransport::from_config(config))
        .await
        .unwrap();
    let arguments = json!({"disk": "sdb"}).as_object().cloned().unwrap();
    let result = client
        .call_tool(CallToolRequestParams::new("wipe").with_arguments(arguments))
        .await
        .unwrap();
    let text = result.content[0].as_text().unwrap().text.clone();
    let is_error = result.is_error.unwrap_or(false);
    // Calls that need no approval never ask.
    let look = client
        .call_tool(CallToolRequestParams::new("look"))
        .await
        .unwrap();
    assert_eq!(look.content[0].as_text().unwrap().text, "all fine");
    client.cancel().await.unwrap();
    let asked = person.asked.lock().unwrap().clone();
    (text, is_error, asked)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accepted_elicitation_approves_the_call() {
    let (server, ran) = serve().await;
    let answer =
        ElicitResult::new(ElicitationAction::Accept).with_content(json!({"approve": true}));
    let (text, is_error, asked) = wipe_as(&server, answer, true).await;
    assert_eq!((text.as_str(), is_error), ("wiped", false));
    assert_eq!(*ran.lock().unwrap(), [r#"wipe "sdb""#]);
    assert_eq!(asked.len(), 1);
    let (message, schema) = &asked[0];
    assert_eq!(
        message,
        r#"The assistant wants to call wipe of Disks with {"disk":"sdb"}. Approve?"#
    );
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["approve"]["type"], "boolean");
    assert_eq!(schema["properties"]["approve"]["default"], true);
    assert_eq!(schema["properties"]["reason"]["type"], "string");
    assert_eq!(schema["required"], json!(["approve"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_in_the_form_or_a_declined_elicitation_denies_the_call() {
    let (server, ran) = serve().await;
    let refused = ElicitResult::new(ElicitationAction::Accept)
        .with_content(json!({"approve": false, "reason": "that disk holds the backups"}));
    let (text, is_error, _) = wipe_as(&server, refused, true).await;
    assert_eq!(
        (text.as_str(), is_error),
        (
            "Function 'wipe' was denied by the user: that disk holds the backups",
            true
        )
    );
    let (text, is_error, _) =
        wipe_as(&server, ElicitResult::new(ElicitationAction::Decline), true).await;
    assert_eq!(
        (text.as_str(), is_error),
        (
            "Function 'wipe' was denied by the user: declined in the MCP client",
            true
        )
    );
    let (text, _, _) = wipe_as(&server, ElicitResult::new(ElicitationAction::Cancel), true).await;
    assert_eq!(
        text,
        "Function 'wipe' was denied by the user: the approval request was dismissed in the MCP client"
    );
    assert!(ran.lock().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_elicitation_is_refused_with_a_clear_error() {
    let (server, ran) = serve().await;
    let (text, is_error, asked) =
        wipe_as(&server, ElicitResult::new(ElicitationAction::Accept), false).await;
    assert_eq!(
        (text.as_str(), is_error),
        (
            "Function 'wipe' needs approval, and this MCP client cannot be asked: it does not support elicitation",
            true
        )
    );
    assert!(asked.is_empty());
    assert!(ran.lock().unwrap().is_empty());

    // This crate's own MCP client declares elicitation and hands it to the calling agent's
    // handler: without one, the call ends with an error that puts the fault on the client and
    // names what to register. (The server collapses in the `fixed` layout, so the client
    // speaks 2026-07-28 with it: the approval comes as an `input_required` round, and the
    // client's failure to answer ends the call.)
    let harness = McpHarness::http("Remote", server.url())
        .with_header("Authorization", format!("Bearer {TOKEN}"))
        .connect()
        .await
        .unwrap();
    let agent = AgentBuilder::new()
        .with_harness(harness)
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    let outcome = agent
        .flat_tool_session()
        .call_tool("c1", "wipe", r#"{"disk": "sdc"}"#)
        .await
        .unwrap();
    assert!(outcome.result.is_error);
    assert_eq!(
        outcome.result.text,
        "Error: MCP server 'Remote' asked this client for elicitation during 'wipe', and this agent has no elicitation handler to ask its user; register one with AgentBuilder::with_elicitation_handler or McpHarness::with_elicitation_handler"
    );
    assert!(ran.lock().unwrap().is_empty());
}

/// Answers every elicitation by accepting `content`.
struct Accepting(serde_json::Value);

#[hpd_agent::async_trait]
impl ElicitationHandler for Accepting {
    async fn elicit(&self, request: &Elicitation) -> Result<ElicitationAnswer, AskError> {
        assert!(request.message.contains("wipe"), "{}", request.message);
        Ok(ElicitationAnswer::accept(
            self.0.as_object().cloned().unwrap_or_default(),
        ))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_projects_own_client_asks_the_agents_elicitation_handler() {
    let (server, ran) = serve().await;
    let harness = McpHarness::http("Remote", server.url())
        .with_header("Authorization", format!("Bearer {TOKEN}"))
        .connect()
        .await
        .unwrap();
    let agent = AgentBuilder::new()
        .with_harness(harness)
        .with_elicitation_handler(Accepting(json!({"approve": true})))
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    let outcome = agent
        .flat_tool_session()
        .call_tool("c1", "wipe", r#"{"disk": "sdc"}"#)
        .await
        .unwrap();
    assert_eq!(
        (outcome.result.text.as_str(), outcome.result.is_error),
        ("wiped", false)
    );
    assert_eq!(*ran.lock().unwrap(), ["wipe \"sdc\""]);

    // An answer that does not fit the form (`approve` must be a boolean) is refused by the
    // client before the server sees it.
    let harness = McpHarness::http("Remote", server.url())
        .with_header("Authorization", format!("Bearer {TOKEN}"))
        .connect()
        .await
        .unwrap();
    let agent = AgentBuilder::new()
        .with_harness(harness)
        .with_elicitation_handler(Accepting(json!({"approve": "yes please"})))
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    let outcome = agent
        .flat_tool_session()
        .call_tool("c2", "wipe", r#"{"disk": "sdd"}"#)
        .await
        .unwrap();
    assert!(outcome.result.is_error);
    assert!(
        outcome.result.text.contains("does not fit the form"),
        "{}",
        outcome.result.text
    );
    assert_eq!(ran.lock().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_on_2026_07_28_is_an_input_required_round() {
    // A flat server speaks 2026-07-28 with this crate's client: the approval is asked as an
    // `input_required` round (key `approval`), and the call runs once it is answered.
    let (server, ran) = serve_as(true).await;
    let harness = McpHarness::http("Remote", server.url())
        .with_header("Authorization", format!("Bearer {TOKEN}"))
        .without_collapse()
        .connect()
        .await
        .unwrap();
    let agent = AgentBuilder::new()
        .with_harness(harness)
        .with_elicitation_handler(Accepting(
            json!({"approve": false, "reason": "not that disk"}),
        ))
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    let outcome = agent
        .tool_session()
        .call_tool("c1", "wipe", r#"{"disk": "sdc"}"#)
        .await
        .unwrap();
    assert_eq!(
        (outcome.result.text.as_str(), outcome.result.is_error),
        (
            "Function 'wipe' was denied by the user: not that disk",
            true
        )
    );
    assert!(ran.lock().unwrap().is_empty());

    let harness = McpHarness::http("Remote", server.url())
        .with_header("Authorization", format!("Bearer {TOKEN}"))
        .without_collapse()
        .connect()
        .await
        .unwrap();
    let agent = AgentBuilder::new()
        .with_harness(harness)
        .with_elicitation_handler(Accepting(json!({"approve": true})))
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    let outcome = agent
        .tool_session()
        .call_tool("c2", "wipe", r#"{"disk": "sdd"}"#)
        .await
        .unwrap();
    assert_eq!(
        (outcome.result.text.as_str(), outcome.result.is_error),
        ("wiped", false)
    );
    assert_eq!(*ran.lock().unwrap(), ["wipe \"sdd\""]);
}
