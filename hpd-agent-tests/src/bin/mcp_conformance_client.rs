//! The MCP client under test of the official conformance suite
//! (npm `@modelcontextprotocol/conformance`, `conformance client --command ...`), run by
//! `.ci/mcp-conformance.sh`.
//!
//! The suite starts a test server per scenario and runs this program with the server's URL as
//! its last argument and the scenario's name in `MCP_CONFORMANCE_SCENARIO`. The program does
//! what an agent would: it connects the server as an [`McpHarness`], lists its tools and calls
//! each one through a [`ToolSession`](hpd_agent::agent::ToolSession), with arguments made from the
//! tool's schema. It exits with status 1 when connecting fails.
//!
//! ```text
//! MCP_CONFORMANCE_SCENARIO=tools_call mcp_conformance_client http://localhost:PORT/mcp
//! ```

use async_trait::async_trait;
use hpd_agent::mcp::{AuthorizationHandler, McpHarness, McpOAuth};
use hpd_agent::tool::{
    AskError, Elicitation, ElicitationAnswer, ElicitationHandler, ElicitationKind,
};
use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient};
use serde_json::{Map, Value};

/// The user of the elicitation scenarios: accepts every form, filling in the required
/// properties that have no default (a text, 1, `true`, an enum's first value); the harness
/// fills in the defaults of the rest.
struct FillIn;

#[async_trait]
impl ElicitationHandler for FillIn {
    async fn elicit(&self, request: &Elicitation) -> Result<ElicitationAnswer, AskError> {
        let ElicitationKind::Form { schema } = &request.kind else {
            return Ok(ElicitationAnswer::accept(Map::new()));
        };
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut content = Map::new();
        if let Some(properties) = schema["properties"].as_object() {
            for (name, property) in properties {
                if !required.contains(&name.as_str()) || property.get("default").is_some() {
                    continue;
                }
                let value = match (property["enum"].get(0), property["type"].as_str()) {
                    (Some(first), _) => first.clone(),
                    (None, Some("integer" | "number")) => Value::from(1),
                    (None, Some("boolean")) => Value::Bool(true),
                    _ => Value::from("test"),
                };
                content.insert(name.clone(), value);
            }
        }
        Ok(ElicitationAnswer::accept(content))
    }
}

/// The URL of the client ID metadata document the suite's authorization servers know.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The browser step without a browser: the suite's authorization endpoints redirect at once,
/// so the callback is the `Location` of the authorization URL's answer.
struct FollowRedirect {
    http: reqwest::Client,
}

#[async_trait]
impl AuthorizationHandler for FollowRedirect {
    fn redirect_uri(&self) -> String {
        "http://localhost:3000/callback".to_owned()
    }

    async fn authorize(&self, authorization_url: &str) -> Result<String, String> {
        let response = self
            .http
            .get(authorization_url)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        response
            .headers()
            .get("location")
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned)
            .ok_or_else(|| format!("the authorization endpoint answered {}", response.status()))
    }
}

/// The sign-in: a client ID metadata document where the server supports them (dynamic
/// registration elsewhere), or the pre-registered client of `MCP_CONFORMANCE_CONTEXT`.
fn oauth() -> Result<McpOAuth, Box<dyn std::error::Error>> {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?;
    let mut oauth = McpOAuth::new(FollowRedirect { http })
        .with_client_name("hpd-agent conformance client")
        .with_client_metadata_url(CLIENT_METADATA_URL);
    if let Ok(context) = std::env::var("MCP_CONFORMANCE_CONTEXT") {
        let context: Value = serde_json::from_str(&context)?;
        if let Some(client_id) = context["client_id"].as_str() {
            oauth = oauth.with_client_id(client_id);
            if let Some(secret) = context["client_secret"].as_str() {
                oauth = oauth.with_client_secret(secret);
            }
        }
    }
    Ok(oauth)
}

/// Arguments for a tool: a value of the declared type for every required property, strings
/// being `text`. A required object property named `schema` gets the input schema the client
/// sees for another of the server's tools (the suite's schema-preservation echo).
fn arguments_for(schema: &Value, text: &str, others: &[&Value]) -> Value {
    let mut arguments = Map::new();
    let required = schema["required"].as_array().cloned().unwrap_or_default();
    for name in required.iter().filter_map(Value::as_str) {
        let property = &schema["properties"][name];
        let value = match property["type"].as_str() {
            Some("object") if name == "schema" => others
                .first()
                .map_or_else(|| Value::Object(Map::new()), |other| (*other).clone()),
            Some("number" | "integer") => Value::from(1),
            Some("boolean") => Value::Bool(true),
            Some("array") => Value::Array(Vec::new()),
            Some("object") => Value::Object(Map::new()),
            _ => Value::from(text),
        };
        arguments.insert(name.to_owned(), value);
    }
    Value::Object(arguments)
}

/// Whether a parameter of the tool is mirrored into an HTTP header (`x-mcp-header`).
fn has_header_parameters(schema: &Value) -> bool {
    schema["properties"]
        .as_object()
        .is_some_and(|properties| properties.values().any(|p| p.get("x-mcp-header").is_some()))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .next_back()
        .filter(|arg| arg.starts_with("http"))
        .ok_or("usage: mcp_conformance_client URL")?;
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    eprintln!("scenario {scenario:?} against {url}");
    let harness = McpHarness::http("Conformance", url)
        .with_oauth(oauth()?)
        .without_collapse()
        .connect()
        .await?;
    let agent = AgentBuilder::new()
        .with_harness(harness)
        // The model answers the servers' sampling requests only; this program makes the
        // calls itself.
        .with_chat_client(ScriptedChatClient::with_replies(
            (0..16).map(|_| ChatResponse::text("A reply of the agent's model")),
        ))
        .with_elicitation_handler(FillIn)
        .build()?;
    let tools = agent.flat_tool_session();
    let listed = tools.visible_tools();
    let mut calls = 0;
    for tool in &listed {
        let others: Vec<&Value> = listed
            .iter()
            .filter(|other| other.name != tool.name)
            .map(|other| other.parameters.as_ref())
            .collect();
        // A tool whose parameters become headers is also called with a text that a header
        // cannot carry as it is (it is sent base64-encoded).
        let texts: &[&str] = if has_header_parameters(&tool.parameters) {
            &["test", "t\u{e9}st \u{2713}"]
        } else {
            &["test"]
        };
        for text in texts {
            let arguments = arguments_for(&tool.parameters, text, &others).to_string();
            calls += 1;
            let outcome = tools
                .call_tool(&format!("c{calls}"), &tool.name, &arguments)
                .await?;
            eprintln!(
                "{}({arguments}) -> {}{}",
                tool.name,
                if outcome.result.is_error {
                    "error: "
                } else {
                    ""
                },
                outcome.result.text
            );
        }
    }
    Ok(())
}
