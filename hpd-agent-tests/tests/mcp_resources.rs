//! Resources, prompts and completion served by `McpServer` and used through the project's own
//! client (`McpHarness::connect_client`, the harness's `list_resources`/`read_resource`), over
//! streamable HTTP on loopback; subscriptions and caching hints checked with rmcp's client.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hpd_agent::chat::ContentPart;
use hpd_agent::mcp::{
    CacheHint, Completer, CompletionRequest, CompletionTarget, McpClient, McpError, McpHarness,
    McpHttpServer, McpServer, PromptArgument, PromptMessage, PromptRole, ProviderError,
    ResourceBody, ServedPrompt, ServedResource, ServedResourceTemplate,
};
use hpd_agent::{
    AgentBuilder, ChatResponse, HarnessBuilder, ScriptedChatClient, Tool, ToolCall, ToolResult,
};
use rmcp::model::{
    CacheScope as McpCacheScope, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
    ReadResourceRequestParams, ResourceUpdatedNotificationParam, ServerNotification,
    SubscribeRequestParams, SubscriptionFilter,
};
use rmcp::service::ClientServiceExt as _;
use rmcp::service::{ClientLifecycleMode, NotificationContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient};
use serde_json::json;

const TOKEN: &str = "resources-token-9c1e";

fn png() -> Vec<u8> {
    hpd_agent_tests::png(1, 1, |_, _| [0, 0, 255])
}

fn resources() -> Vec<ServedResource> {
    vec![
        ServedResource::text("docs://readme", "readme", "Run `make`.")
            .with_description("How to build"),
        ServedResource::blob("assets://logo.png", "logo", "image/png", png()),
        ServedResource::blob(
            "data://raw",
            "raw",
            "application/octet-stream",
            vec![1, 2, 3],
        ),
        ServedResource::new("app://missing", "missing", |_| async {
            Err(ProviderError::NotFound)
        }),
        ServedResource::new("app://broken", "broken", |_| async {
            Err(ProviderError::failed("the disk is on fire"))
        }),
        // The reader names the MIME type itself.
        ServedResource::new("app://config", "config", |request| async move {
            Ok(ResourceBody::text(json!({"uri": request.uri}).to_string())
                .with_mime_type("application/json"))
        }),
    ]
}

fn template() -> ServedResourceTemplate {
    ServedResourceTemplate::new(
        "users://{id}/files/{+path}",
        "user-file",
        |request| async move {
            let id = request.variable("id").unwrap_or_default().to_owned();
            if id == "0" {
                return Err(ProviderError::InvalidArgument("user ids start at 1".into()));
            }
            let path = request.variable("path").unwrap_or_default().to_owned();
            Ok(ResourceBody::text(format!("file {path} of user {id}")))
        },
    )
    .with_description("A file of a user")
    .with_mime_type("text/plain")
    .with_completion(
        "id",
        Completer::new(|request| async move {
            Ok((0..150).map(|n| format!("{}{n}", request.value)).collect())
        }),
    )
}

fn prompts() -> Vec<ServedPrompt> {
    vec![
        ServedPrompt::new("plan_trip", "Plans a trip", |request| async move {
            let city = request.argument("city").unwrap_or_default().to_owned();
            let days = request.argument("days").unwrap_or("3").to_owned();
            Ok(vec![
                PromptMessage::user(ContentPart::text(format!("Plan {days} days in {city}."))),
                PromptMessage::assistant(ContentPart::text("Which season?")),
            ])
        })
        .with_title("Trip planner")
        .with_argument(PromptArgument::required("country", "The country"))
        .with_argument(PromptArgument::required("city", "The city"))
        .with_argument(PromptArgument::optional("days", "How many days"))
        .with_completion(
            "country",
            Completer::values(["France", "Finland", "Germany"]),
        )
        .with_completion(
            "city",
            Completer::new(|request| async move {
                let cities: &[&str] = match request.context.get("country").map(String::as_str) {
                    Some("France") => &["Paris", "Porto-Vecchio", "Lyon"],
                    Some("Germany") => &["Berlin", "Potsdam"],
                    _ => &[],
                };
                Ok(cities
                    .iter()
                    .filter(|city| city.starts_with(&request.value))
                    .map(|city| (*city).to_owned())
                    .collect())
            }),
        ),
        ServedPrompt::new("look", "Looks at a picture and a note", |_| async {
            Ok(vec![
                PromptMessage::user(ContentPart::image("image/png", png())),
                PromptMessage::user(ContentPart::text_resource(
                    "docs://note",
                    Some("text/markdown"),
                    "# Note",
                )),
            ])
        }),
        ServedPrompt::new("broken", "Always fails", |_| async {
            Err(ProviderError::failed("no model today"))
        }),
    ]
}

fn agent(layout: hpd_agent::config::CollapsingLayout) -> hpd_agent::Agent {
    let hello = Tool::new(
        "hello",
        "Says hello",
        json!({"type": "object"}),
        |_, _| async { ToolResult::ok("hello") },
    );
    AgentBuilder::new()
        .with_harness(
            HarnessBuilder::new("Greeter")
                .with_tool(hello)
                .build()
                .unwrap(),
        )
        .with_collapsing_layout(layout)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap()
}

/// The full server; `flat` offers 2026-07-28, otherwise it collapses in the `hide` layout,
/// whose expansions live in the session, and stops at 2025-11-25.
fn server(flat: bool) -> McpServer {
    let layout = if flat {
        hpd_agent::config::CollapsingLayout::Fixed
    } else {
        hpd_agent::config::CollapsingLayout::Hide
    };
    let mut server = McpServer::new(agent(layout)).with_bearer_token(TOKEN);
    if flat {
        server = server.without_collapse();
    }
    for resource in resources() {
        server = server.with_resource(resource);
    }
    for prompt in prompts() {
        server = server.with_prompt(prompt);
    }
    server
        .with_resource_template(template())
        .with_list_cache_hint(CacheHint::public(Duration::from_secs(600)))
}

async fn serve(server: McpServer) -> McpHttpServer {
    server
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap()
}

async fn client(server: &McpHttpServer) -> McpClient {
    McpHarness::http("Served", server.url())
        .with_header("Authorization", format!("Bearer {TOKEN}"))
        .connect_client()
        .await
        .unwrap()
}

/// The JSON-RPC code of a failed request.
fn code(error: &McpError) -> Option<i32> {
    match error {
        McpError::Request { code, .. } => *code,
        other => panic!("not a request error: {other}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_are_listed_and_read_by_the_projects_own_client() {
    for flat in [true, false] {
        let served = serve(server(flat)).await;
        let client = client(&served).await;

        let listed = client.list_resources().await.unwrap();
        let uris: Vec<&str> = listed.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "docs://readme",
                "assets://logo.png",
                "data://raw",
                "app://missing",
                "app://broken",
                "app://config"
            ]
        );
        assert_eq!(listed[0].description.as_deref(), Some("How to build"));
        assert_eq!(listed[0].mime_type.as_deref(), Some("text/plain"));
        assert_eq!(listed[0].size, Some(11));
        let templates = client.list_resource_templates().await.unwrap();
        assert_eq!(templates.len(), 1);
        assert_eq!(templates[0].uri_template, "users://{id}/files/{+path}");
        assert_eq!(
            templates[0].description.as_deref(),
            Some("A file of a user")
        );

        assert_eq!(
            client.read_resource("docs://readme").await.unwrap(),
            [ContentPart::text_resource(
                "docs://readme",
                Some("text/plain"),
                "Run `make`."
            )]
        );
        assert_eq!(
            client.read_resource("assets://logo.png").await.unwrap(),
            [ContentPart::image("image/png", png())]
        );
        assert_eq!(
            client.read_resource("data://raw").await.unwrap(),
            [ContentPart::blob_resource(
                "data://raw",
                Some("application/octet-stream"),
                vec![1, 2, 3]
            )]
        );
        assert_eq!(
            client.read_resource("app://config").await.unwrap(),
            [ContentPart::text_resource(
                "app://config",
                Some("application/json"),
                r#"{"uri":"app://config"}"#
            )]
        );
        // A template: variables read out of the URI, `{+path}` with its slashes, decoded.
        assert_eq!(
            client
                .read_resource("users://7/files/notes/a%20b.txt")
                .await
                .unwrap(),
            [ContentPart::text_resource(
                "users://7/files/notes/a%20b.txt",
                Some("text/plain"),
                "file notes/a b.txt of user 7"
            )]
        );
        served.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_errors_carry_the_codes_the_revision_names() {
    // 2026-07-28 (flat) answers a missing resource with -32602, 2025-11-25 with -32002.
    for (flat, not_found) in [(true, -32602), (false, -32002)] {
        let served = serve(server(flat)).await;
        let client = client(&served).await;
        for uri in ["app://nowhere", "app://missing", "users://7"] {
            let error = client.read_resource(uri).await.unwrap_err();
            assert_eq!(code(&error), Some(not_found), "{uri}: {error}");
            assert!(error.to_string().contains(uri), "{error}");
        }
        let invalid = client.read_resource("users://0/files/a").await.unwrap_err();
        assert_eq!(code(&invalid), Some(-32602));
        assert!(
            invalid.to_string().contains("user ids start at 1"),
            "{invalid}"
        );
        let broken = client.read_resource("app://broken").await.unwrap_err();
        assert_eq!(code(&broken), Some(-32603));
        assert!(
            broken.to_string().contains("the disk is on fire"),
            "{broken}"
        );
        served.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_are_listed_and_got_with_their_arguments() {
    let served = serve(server(true)).await;
    let client = client(&served).await;

    let prompts = client.list_prompts().await.unwrap();
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["plan_trip", "look", "broken"]);
    assert_eq!(prompts[0].title.as_deref(), Some("Trip planner"));
    assert_eq!(prompts[0].description.as_deref(), Some("Plans a trip"));
    assert_eq!(
        prompts[0].arguments,
        [
            PromptArgument::required("country", "The country"),
            PromptArgument::required("city", "The city"),
            PromptArgument::optional("days", "How many days"),
        ]
    );
    assert!(prompts[1].arguments.is_empty());

    let trip = client
        .get_prompt("plan_trip", [("country", "France"), ("city", "Paris")])
        .await
        .unwrap();
    assert_eq!(trip.description.as_deref(), Some("Plans a trip"));
    assert_eq!(
        trip.messages,
        [
            PromptMessage::user(ContentPart::text("Plan 3 days in Paris.")),
            PromptMessage::assistant(ContentPart::text("Which season?")),
        ]
    );
    assert_eq!(trip.messages[1].role, PromptRole::Assistant);
    let look = client
        .get_prompt("look", [] as [(&str, &str); 0])
        .await
        .unwrap();
    assert_eq!(
        look.messages,
        [
            PromptMessage::user(ContentPart::image("image/png", png())),
            PromptMessage::user(ContentPart::text_resource(
                "docs://note",
                Some("text/markdown"),
                "# Note"
            )),
        ]
    );

    let missing = client
        .get_prompt("plan_trip", [("country", "France")])
        .await
        .unwrap_err();
    assert_eq!(code(&missing), Some(-32602));
    assert!(
        missing.to_string().contains("needs the argument(s) city"),
        "{missing}"
    );
    let unknown_argument = client
        .get_prompt(
            "plan_trip",
            [
                ("country", "France"),
                ("city", "Paris"),
                ("weather", "sunny"),
            ],
        )
        .await
        .unwrap_err();
    assert!(
        unknown_argument
            .to_string()
            .contains("has no argument 'weather'"),
        "{unknown_argument}"
    );
    let unknown = client
        .get_prompt("plan_holiday", [] as [(&str, &str); 0])
        .await
        .unwrap_err();
    assert_eq!(code(&unknown), Some(-32602));
    assert!(
        unknown
            .to_string()
            .contains("prompts: plan_trip, look, broken"),
        "{unknown}"
    );
    let broken = client
        .get_prompt("broken", [] as [(&str, &str); 0])
        .await
        .unwrap_err();
    assert_eq!(code(&broken), Some(-32603));
    assert!(broken.to_string().contains("no model today"), "{broken}");
    served.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_arguments_and_template_variables_are_completed() {
    let served = serve(server(false)).await;
    let client = client(&served).await;
    let prompt = || CompletionTarget::Prompt("plan_trip".into());

    let countries = client
        .complete(prompt(), CompletionRequest::new("country", "f"))
        .await
        .unwrap();
    assert_eq!(countries.values, ["France", "Finland"]);
    assert_eq!((countries.total, countries.has_more), (Some(2), false));
    // The context carries the arguments already chosen.
    let cities = client
        .complete(
            prompt(),
            CompletionRequest::new("city", "P").with_context("country", "France"),
        )
        .await
        .unwrap();
    assert_eq!(cities.values, ["Paris", "Porto-Vecchio"]);
    // No completer: nothing to suggest.
    let days = client
        .complete(prompt(), CompletionRequest::new("days", ""))
        .await
        .unwrap();
    assert!(days.values.is_empty());
    // More than 100: the first 100, the total and `hasMore`.
    let ids = client
        .complete(
            CompletionTarget::ResourceTemplate("users://{id}/files/{+path}".into()),
            CompletionRequest::new("id", "4"),
        )
        .await
        .unwrap();
    assert_eq!(ids.values.len(), 100);
    assert_eq!(ids.values[0], "40");
    assert_eq!((ids.total, ids.has_more), (Some(150), true));

    for (target, argument, says) in [
        (prompt(), "weather", "has no argument 'weather'"),
        (
            CompletionTarget::Prompt("nope".into()),
            "x",
            "there is no prompt 'nope'",
        ),
        (
            CompletionTarget::ResourceTemplate("users://{id}".into()),
            "id",
            "there is no resource template",
        ),
    ] {
        let error = client
            .complete(target, CompletionRequest::new(argument, ""))
            .await
            .unwrap_err();
        assert_eq!(code(&error), Some(-32602));
        assert!(error.to_string().contains(says), "{error}");
    }
    served.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_resources_or_prompts_says_so() {
    let served = serve(
        McpServer::new(agent(hpd_agent::config::CollapsingLayout::Fixed))
            .with_bearer_token(TOKEN)
            .without_collapse(),
    )
    .await;
    let client = client(&served).await;
    assert_eq!(client.harness().tool_names(), ["hello"]);
    for error in [
        client.list_resources().await.unwrap_err(),
        client.read_resource("docs://readme").await.unwrap_err(),
        client.list_prompts().await.unwrap_err(),
        client
            .complete(
                CompletionTarget::Prompt("p".into()),
                CompletionRequest::new("a", ""),
            )
            .await
            .unwrap_err(),
    ] {
        assert!(
            error.to_string().contains("the server does not offer"),
            "{error}"
        );
    }
    // On the wire: the methods are not there.
    let raw = rmcp_client(
        &served,
        ClientLifecycleMode::Initialize,
        Recorder::default(),
    )
    .await;
    let error = raw.peer().list_resources(None).await.unwrap_err();
    assert!(
        error.to_string().contains("-32601") || error.to_string().contains("Method not found"),
        "{error}"
    );
    served.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_lists_and_reads_resources_through_the_harness() {
    let served = serve(server(true)).await;
    let harness = client(&served).await.harness();
    assert_eq!(
        harness.tool_names(),
        ["hello", "Served_list_resources", "Served_read_resource"]
    );

    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("c0", "Served", "{}")]),
        ChatResponse::tool_calls(vec![
            ToolCall::new("c1", "Served_list_resources", "{}"),
            ToolCall::new("c2", "Served_read_resource", r#"{"uri": "docs://readme"}"#),
            ToolCall::new(
                "c3",
                "Served_read_resource",
                r#"{"uri": "assets://logo.png"}"#,
            ),
            ToolCall::new("c4", "Served_read_resource", r#"{"uri": "app://nowhere"}"#),
            ToolCall::new("c5", "Served_read_resource", "{}"),
        ]),
        ChatResponse::text("done"),
    ]);
    let agent = AgentBuilder::new()
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_harness(harness)
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    agent.run("What is there to read?").await.unwrap();
    let requests = model.requests();
    let (listing, failed) = requests[2].tool_result("c1").unwrap();
    assert!(!failed);
    assert!(listing.starts_with("Resources (read one with Served_read_resource):\n- docs://readme (readme, text/plain): How to build"), "{listing}");
    assert!(listing.contains("URI templates (replace each {...} with a value, then Served_read_resource the URI):\n- users://{id}/files/{+path} (user-file, text/plain): A file of a user"), "{listing}");
    assert_eq!(
        requests[2].tool_result("c2"),
        Some(("[resource: docs://readme (text/plain)]\nRun `make`.", false))
    );
    let (image, failed) = requests[2].tool_result("c3").unwrap();
    assert!(!failed && image.starts_with("[image: image/png"), "{image}");
    let (missing, failed) = requests[2].tool_result("c4").unwrap();
    assert!(
        failed && missing.contains("Resource not found: app://nowhere"),
        "{missing}"
    );
    assert_eq!(
        requests[2].tool_result("c5"),
        Some(("Error: give the resource's URI as `uri`", true))
    );
    served.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_functions_can_be_left_out_and_give_way_to_server_tools() {
    let served = serve(server(false)).await;
    let only_tools = McpHarness::http("Served", served.url())
        .with_header("Authorization", format!("Bearer {TOKEN}"))
        .without_resources()
        .connect()
        .await
        .unwrap();
    assert_eq!(only_tools.tool_names(), ["hello"]);
    // The same from an `mcp_servers` entry of a JSON config, `"resources": false`.
    let config = hpd_agent::AgentConfig::from_json(&format!(
        r#"{{"mcp_servers": [{{"name": "Served", "url": "{}",
            "headers": {{"Authorization": "Bearer {TOKEN}"}}, "resources": false}}]}}"#,
        served.url()
    ))
    .unwrap();
    let from_config = McpHarness::from(&config.mcp_servers[0])
        .connect()
        .await
        .unwrap();
    assert_eq!(from_config.tool_names(), ["hello"]);
    assert!(config.to_json().contains(r#""resources": false"#));
    // An allowlist offers the resource functions it names.
    let reader = McpHarness::http("Served", served.url())
        .with_header("Authorization", format!("Bearer {TOKEN}"))
        .with_functions(["read_resource"])
        .connect()
        .await
        .unwrap();
    assert_eq!(reader.tool_names(), ["Served_read_resource"]);
    served.shutdown().await;

    // A server tool named `read_resource` keeps its name beside the harness's qualified one.
    let own = Tool::new(
        "read_resource",
        "The server's own",
        json!({"type": "object"}),
        |_, _| async { ToolResult::ok("own") },
    );
    let agent = AgentBuilder::new()
        .with_harness(HarnessBuilder::new("Own").with_tool(own).build().unwrap())
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    let served = serve(
        McpServer::new(agent)
            .with_bearer_token(TOKEN)
            .without_collapse()
            .with_resource(ServedResource::text("docs://a", "a", "A")),
    )
    .await;
    let harness = client(&served).await.harness();
    assert_eq!(
        harness.tool_names(),
        [
            "read_resource",
            "Served_list_resources",
            "Served_read_resource"
        ]
    );
    served.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registrations_that_do_not_fit_are_refused_when_serving_starts() {
    let cases: Vec<(McpServer, &str)> = vec![
        (
            McpServer::new(agent(hpd_agent::config::CollapsingLayout::Fixed))
                .with_resource(ServedResource::text("docs://a", "a", "A"))
                .with_resource(ServedResource::text("docs://a", "b", "B")),
            "the resource URI 'docs://a' is registered twice",
        ),
        (
            McpServer::new(agent(hpd_agent::config::CollapsingLayout::Fixed))
                .with_resource_template(ServedResourceTemplate::new(
                    "search://{?q}",
                    "search",
                    |_| async { Ok(ResourceBody::text("")) },
                )),
            "only {name} and {+name} are supported",
        ),
        (
            McpServer::new(agent(hpd_agent::config::CollapsingLayout::Fixed))
                .with_resource_template(
                    ServedResourceTemplate::new("users://{id}", "user", |_| async {
                        Ok(ResourceBody::text(""))
                    })
                    .with_completion("name", Completer::values(["a"])),
                ),
            "has no variable 'name' to complete; its variables: id",
        ),
        (
            McpServer::new(agent(hpd_agent::config::CollapsingLayout::Fixed)).with_prompt(
                ServedPrompt::new("p", "P", |_| async { Ok(vec![]) })
                    .with_completion("x", Completer::values(["a"])),
            ),
            "the prompt 'p' has no argument 'x' to complete",
        ),
        (
            McpServer::new(agent(hpd_agent::config::CollapsingLayout::Fixed))
                .with_prompt(ServedPrompt::new("p", "P", |_| async { Ok(vec![]) }))
                .with_prompt(ServedPrompt::new("p", "Q", |_| async { Ok(vec![]) })),
            "the prompt 'p' is registered twice",
        ),
    ];
    for (server, says) in cases {
        let error = server
            .with_bearer_token(TOKEN)
            .serve_http("127.0.0.1:0".parse().unwrap())
            .await
            .unwrap_err();
        assert!(matches!(error, McpError::Invalid { .. }), "{error}");
        assert!(error.to_string().contains(says), "{error}");
    }
}

/// Records `notifications/resources/updated`.
#[derive(Clone, Default)]
struct Recorder {
    updated: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Recorder {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.updated.lock().unwrap().push(params.uri);
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("recorder", "1"),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}

impl Recorder {
    /// Waits (at most five seconds) for `count` updates, and a moment longer for any that
    /// should not come.
    /// The URIs heard so far, in order of URI: updates of different resources are
    /// independent notifications, which the client may handle in any order.
    async fn settle(&self, count: usize) -> Vec<String> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while self.updated.lock().unwrap().len() < count && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        let mut heard = self.updated.lock().unwrap().clone();
        heard.sort();
        heard
    }
}

async fn rmcp_client(
    served: &McpHttpServer,
    lifecycle: ClientLifecycleMode,
    recorder: Recorder,
) -> RunningService<RoleClient, Recorder> {
    let mut headers = std::collections::HashMap::new();
    headers.insert(
        http::HeaderName::from_static("authorization"),
        format!("Bearer {TOKEN}").parse().unwrap(),
    );
    let config =
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            served.url(),
        )
        .custom_headers(headers);
    recorder
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_config(config),
            lifecycle,
        )
        .await
        .unwrap()
}

// `resources/subscribe` is the subscription of the revisions with sessions.
#[allow(deprecated)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribers_hear_of_updates_until_they_unsubscribe() {
    let server = server(false);
    let notifier = server.resource_notifier();
    let served = serve(server).await;
    let recorder = Recorder::default();
    let raw = rmcp_client(&served, ClientLifecycleMode::Initialize, recorder.clone()).await;
    raw.peer()
        .subscribe(SubscribeRequestParams::new("docs://readme"))
        .await
        .unwrap();
    raw.peer()
        .subscribe(SubscribeRequestParams::new("users://3/files/x"))
        .await
        .unwrap();
    let unknown = raw
        .peer()
        .subscribe(SubscribeRequestParams::new("docs://nowhere"))
        .await
        .unwrap_err();
    assert!(
        unknown.to_string().contains("Resource not found"),
        "{unknown}"
    );

    notifier.updated("docs://readme");
    notifier.updated("assets://logo.png"); // not subscribed
    notifier.updated("users://3/files/x");
    assert_eq!(
        recorder.settle(2).await,
        ["docs://readme", "users://3/files/x"]
    );

    raw.peer()
        .unsubscribe(rmcp::model::UnsubscribeRequestParams::new("docs://readme"))
        .await
        .unwrap();
    notifier.updated("docs://readme");
    assert_eq!(recorder.settle(3).await.len(), 2);
    raw.cancel().await.unwrap();
    served.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_streams_of_2026_07_28_get_updates_of_the_accepted_uris() {
    let server = server(true);
    let notifier = server.resource_notifier();
    let served = serve(server).await;
    let raw = rmcp_client(
        &served,
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
        Recorder::default(),
    )
    .await;
    let mut subscription = raw
        .peer()
        .listen(
            SubscriptionFilter::builder()
                .resource_subscriptions(["docs://readme", "docs://nowhere"])
                .build(),
        )
        .await
        .unwrap();
    assert_eq!(
        subscription
            .acknowledged()
            .resource_subscriptions
            .as_deref(),
        Some(&["docs://readme".to_owned()][..])
    );
    // The listen handler runs once the acknowledgment is out; give it a moment to subscribe.
    tokio::time::sleep(Duration::from_millis(200)).await;
    notifier.updated("assets://logo.png");
    notifier.updated("docs://readme");
    let next = tokio::time::timeout(Duration::from_secs(5), subscription.next())
        .await
        .unwrap()
        .unwrap();
    match next {
        Some(ServerNotification::ResourceUpdatedNotification(update)) => {
            assert_eq!(update.params.uri, "docs://readme");
        }
        other => panic!("expected a resource update, got {other:?}"),
    }
    drop(subscription);
    raw.cancel().await.unwrap();
    served.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn caching_hints_are_sent_on_2026_07_28_only() {
    let hinted = serve(
        server(true).with_resource(
            ServedResource::text("docs://cached", "cached", "C")
                .with_cache_hint(CacheHint::private(Duration::from_millis(1500))),
        ),
    )
    .await;
    let raw = rmcp_client(
        &hinted,
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
        Recorder::default(),
    )
    .await;
    let listed = raw.peer().list_resources(None).await.unwrap();
    assert_eq!(
        (listed.ttl_ms, listed.cache_scope),
        (Some(600_000), Some(McpCacheScope::Public))
    );
    let prompts = raw.peer().list_prompts(None).await.unwrap();
    assert_eq!(
        (prompts.ttl_ms, prompts.cache_scope),
        (Some(600_000), Some(McpCacheScope::Public))
    );
    let read = raw
        .peer()
        .read_resource(ReadResourceRequestParams::new("docs://cached"))
        .await
        .unwrap();
    assert_eq!(
        (read.ttl_ms, read.cache_scope),
        (Some(1500), Some(McpCacheScope::Private))
    );
    // A resource without a hint: the safest one, never reuse.
    let plain = raw
        .peer()
        .read_resource(ReadResourceRequestParams::new("docs://readme"))
        .await
        .unwrap();
    assert_eq!(
        (plain.ttl_ms, plain.cache_scope),
        (Some(0), Some(McpCacheScope::Private))
    );
    raw.cancel().await.unwrap();
    hinted.shutdown().await;

    let legacy = serve(server(false)).await;
    let raw = rmcp_client(
        &legacy,
        ClientLifecycleMode::Initialize,
        Recorder::default(),
    )
    .await;
    let listed = raw.peer().list_resources(None).await.unwrap();
    assert_eq!((listed.ttl_ms, listed.cache_scope), (None, None));
    raw.cancel().await.unwrap();
    legacy.shutdown().await;
}
