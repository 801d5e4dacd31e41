//! Served functions as MCP tasks (the 2026-07-28 tasks extension) against the project's own
//! `McpServer` on loopback: the lifecycle and the inlined result, cancellation reaching the
//! function's token, an unknown task id, the bound on stored tasks and the TTL, a task that
//! asks the client (`tasks/update`), a call that gathers its input before it becomes a task,
//! and `Required` functions refused to clients without the extension (the project's own
//! client, `McpHarness`, declares none, so it gets plain calls of `Optional` functions).
//! The task requests go over raw HTTP, as a client of the extension sends them.

mod mcp_common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hpd_agent::mcp::{McpHarness, McpHttpServer, McpServer, TaskSupport};
use hpd_agent::tool::Elicitation;
use hpd_agent::{
    AgentBuilder, CancellationToken, HarnessBuilder, ScriptedChatClient, Tool, ToolResult,
};
use serde_json::{Value, json};

const TOKEN: &str = "tasks-token-5c1a";
const TASKS: &str = "io.modelcontextprotocol/tasks";

/// The token the last `wait` call got, to see that `tasks/cancel` reached it.
type SeenToken = Arc<Mutex<Option<CancellationToken>>>;

fn tools(seen: &SeenToken) -> Vec<Tool> {
    let seen = Arc::clone(seen);
    vec![
        Tool::new(
            "compute",
            "Sleeps `ms`, then answers",
            json!({"type": "object", "properties": {"ms": {"type": "integer"}}, "required": ["ms"]}),
            |args, ctx| async move {
                let ms = args["ms"].as_u64().unwrap_or(0);
                ctx.report_progress(0.0, Some(1.0), Some("starting"));
                tokio::time::sleep(Duration::from_millis(ms)).await;
                ToolResult::ok(format!("computed in {ms} ms"))
            },
        ),
        Tool::new(
            "fail",
            "Fails as a tool",
            json!({"type": "object"}),
            |_, _| async { ToolResult::error("it failed, as a tool") },
        ),
        Tool::new(
            "wait",
            "Waits until cancelled",
            json!({"type": "object"}),
            move |_, ctx| {
                let seen = Arc::clone(&seen);
                async move {
                    *seen.lock().unwrap() = Some(ctx.cancellation_token().clone());
                    ctx.cancellation_token().cancelled().await;
                    ToolResult::ok("stopped")
                }
            },
        ),
        Tool::new(
            "confirm",
            "Asks the user to confirm",
            json!({"type": "object"}),
            |_, ctx| async move {
                let form = Elicitation::form(
                    "Go on?",
                    json!({"type": "object", "properties": {"go": {"type": "boolean"}}, "required": ["go"]}),
                )
                .with_key("go");
                match ctx.elicit(form).await {
                    Ok(answer) => ToolResult::ok(format!(
                        "go: {}",
                        answer.field("go").unwrap_or(&Value::Null)
                    )),
                    Err(error) => ToolResult::error(error.to_string()),
                }
            },
        ),
        Tool::new(
            "name_then_work",
            "Asks a name, then works on as a task",
            json!({"type": "object"}),
            |_, ctx| async move {
                let form = Elicitation::form(
                    "Your name?",
                    json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
                )
                .with_key("name");
                let name = match ctx.elicit(form).await {
                    Ok(answer) => answer
                        .field("name")
                        .and_then(Value::as_str)
                        .unwrap_or("?")
                        .to_owned(),
                    Err(error) => return ToolResult::error(error.to_string()),
                };
                ctx.continue_as_task();
                tokio::time::sleep(Duration::from_millis(100)).await;
                ToolResult::ok(format!("worked for {name}"))
            },
        ),
        Tool::new(
            "plain",
            "Never a task",
            json!({"type": "object"}),
            |_, _| async { ToolResult::ok("plain") },
        ),
    ]
}

async fn serve(configure: impl FnOnce(McpServer) -> McpServer) -> (McpHttpServer, SeenToken) {
    let seen = SeenToken::default();
    let agent = AgentBuilder::new()
        .with_harness(
            HarnessBuilder::new("Jobs")
                .with_tools(tools(&seen))
                .build()
                .unwrap(),
        )
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    let server = configure(
        McpServer::new(agent)
            .with_bearer_token(TOKEN)
            .with_task_support("compute", TaskSupport::Optional)
            .with_task_support("fail", TaskSupport::Required)
            .with_task_support("wait", TaskSupport::Optional)
            .with_task_support("confirm", TaskSupport::Optional)
            .with_task_after_input("name_then_work", TaskSupport::Required),
    )
    .serve_http("127.0.0.1:0".parse().unwrap())
    .await
    .unwrap();
    (server, seen)
}

/// One stateless 2026-07-28 request over raw HTTP (with the tasks extension declared when
/// `tasks`): the JSON-RPC response.
async fn rpc(server: &McpHttpServer, method: &str, params: Value, tasks: bool) -> Value {
    let mut capabilities = json!({"elicitation": {}});
    if tasks {
        capabilities["extensions"] = json!({ TASKS: {} });
    }
    mcp_common::stateless_request(&server.url(), TOKEN, method, params, capabilities).await
}

/// A task-creating `tools/call`: the task's id.
async fn start(server: &McpHttpServer, name: &str, arguments: Value) -> String {
    let created = rpc(
        server,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
        true,
    )
    .await;
    let result = &created["result"];
    assert_eq!(result["resultType"], "task", "{created}");
    assert!(
        result.get("task").is_none() && result.get("result").is_none(),
        "{created}"
    );
    result["taskId"].as_str().unwrap().to_owned()
}

async fn get(server: &McpHttpServer, id: &str) -> Value {
    rpc(server, "tasks/get", json!({"taskId": id}), true).await
}

/// Polls `tasks/get` until the task's status is `status` (or terminal): the last answer.
async fn poll(server: &McpHttpServer, id: &str, status: &str) -> Value {
    for _ in 0..200 {
        let got = get(server, id).await;
        let now = got["result"]["status"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if now == status || ["completed", "failed", "cancelled"].contains(&now.as_str()) {
            return got["result"].clone();
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("task {id} did not reach {status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_runs_and_inlines_its_result() {
    let (server, _) = serve(|s| s).await;
    let discovered = rpc(&server, "server/discover", json!({}), true).await;
    assert!(
        discovered["result"]["capabilities"]["extensions"][TASKS].is_object(),
        "{discovered}"
    );

    let id = start(&server, "compute", json!({"ms": 300})).await;
    // Stored before the answer: a tasks/get right away finds it, working.
    let working = get(&server, &id).await;
    assert_eq!(working["result"]["status"], "working", "{working}");
    assert_eq!(working["result"]["resultType"], "complete");
    assert!(working["result"]["ttlMs"].as_u64().unwrap() > 0);
    // Its progress report is its status message.
    assert_eq!(
        working["result"]["statusMessage"], "0/1: starting",
        "{working}"
    );

    let done = poll(&server, &id, "completed").await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "computed in 300 ms");
    assert_eq!(done["result"]["isError"], false);

    // A tool error is a completed task with an error result, not a failed one.
    let id = start(&server, "fail", json!({})).await;
    let done = poll(&server, &id, "completed").await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["isError"], true);
    assert_eq!(done["result"]["content"][0]["text"], "it failed, as a tool");

    // A function without task support stays a plain call.
    let plain = rpc(
        &server,
        "tools/call",
        json!({"name": "plain", "arguments": {}}),
        true,
    )
    .await;
    assert_eq!(plain["result"]["resultType"], "complete", "{plain}");
    assert_eq!(plain["result"]["content"][0]["text"], "plain");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_reaches_the_functions_token() {
    let (server, seen) = serve(|s| s).await;
    let id = start(&server, "wait", json!({})).await;
    // The function started and holds its token.
    let token = loop {
        if let Some(token) = seen.lock().unwrap().clone() {
            break token;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert!(!token.is_cancelled());
    let ack = rpc(&server, "tasks/cancel", json!({"taskId": id}), true).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let done = poll(&server, &id, "cancelled").await;
    assert_eq!(done["status"], "cancelled", "{done}");
    assert!(done.get("result").is_none(), "{done}");
    assert!(
        token.is_cancelled(),
        "tasks/cancel did not reach the function's token"
    );
    // Cancelling a finished task is acknowledged and changes nothing.
    let again = rpc(&server, "tasks/cancel", json!({"taskId": id}), true).await;
    assert_eq!(
        again["result"],
        json!({"resultType": "complete"}),
        "{again}"
    );
    assert_eq!(get(&server, &id).await["result"]["status"], "cancelled");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_task_ids_and_removed_methods_are_clear_errors() {
    let (server, _) = serve(|s| s).await;
    for method in ["tasks/get", "tasks/cancel"] {
        let answer = rpc(&server, method, json!({"taskId": "no-such-task"}), true).await;
        assert_eq!(answer["error"]["code"], -32602, "{method}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains("unknown task 'no-such-task'"), "{message}");
    }
    let answer = rpc(
        &server,
        "tasks/update",
        json!({"taskId": "no-such-task", "inputResponses": {}}),
        true,
    )
    .await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    // The extension removed tasks/result and tasks/list (the result is inlined by tasks/get).
    for method in ["tasks/result", "tasks/list"] {
        let answer = rpc(&server, method, json!({"taskId": "no-such-task"}), true).await;
        assert_eq!(answer["error"]["code"], -32601, "{method}: {answer}");
    }
    // A client without the extension may not use the methods at all.
    let answer = rpc(
        &server,
        "tasks/get",
        json!({"taskId": "no-such-task"}),
        false,
    )
    .await;
    assert_eq!(answer["error"]["code"], -32021, "{answer}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn required_tasks_are_refused_without_the_extension() {
    let (server, _) = serve(|s| s).await;
    // Raw: -32021 naming the extension, before the function runs.
    let refused = rpc(
        &server,
        "tools/call",
        json!({"name": "fail", "arguments": {}}),
        false,
    )
    .await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert!(
        refused["error"]["data"]["requiredCapabilities"]["extensions"][TASKS].is_object(),
        "{refused}"
    );
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("'fail' runs only as a task"),
        "{refused}"
    );

    // The project's own client declares no extension: an optional task function is a plain
    // call, a required one an error result that says why.
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
    let tools = agent.tool_session();
    let plain = tools
        .call_tool("c1", "compute", r#"{"ms": 1}"#)
        .await
        .unwrap();
    assert_eq!(plain.result.text, "computed in 1 ms");
    assert!(!plain.result.is_error);
    let refused = tools.call_tool("c2", "fail", "{}").await.unwrap();
    assert!(refused.result.is_error);
    assert!(
        refused.result.text.contains("runs only as a task"),
        "{}",
        refused.result.text
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_tasks_are_bounded_and_expire() {
    let (server, _) = serve(|s| {
        s.with_max_tasks(2)
            .with_task_ttl(Duration::from_millis(700))
    })
    .await;
    let first = start(&server, "compute", json!({"ms": 5000})).await;
    let second = start(&server, "compute", json!({"ms": 0})).await;
    assert_eq!(poll(&server, &second, "completed").await["ttlMs"], 700);
    // Two kept (one running, one finished): a third is refused, and says why.
    let refused = rpc(
        &server,
        "tools/call",
        json!({"name": "compute", "arguments": {"ms": 0}}),
        true,
    )
    .await;
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("keeps at most 2 tasks"),
        "{refused}"
    );
    // Once their TTL is up they are gone (the running call with them), and there is room.
    tokio::time::sleep(Duration::from_millis(900)).await;
    for id in [&first, &second] {
        assert_eq!(get(&server, id).await["error"]["code"], -32602);
    }
    start(&server, "compute", json!({"ms": 0})).await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_asks_the_client_through_tasks_update() {
    let (server, _) = serve(|s| s).await;
    let id = start(&server, "confirm", json!({})).await;
    let asking = poll(&server, &id, "input_required").await;
    assert_eq!(asking["status"], "input_required", "{asking}");
    assert_eq!(
        asking["inputRequests"]["go"]["method"], "elicitation/create",
        "{asking}"
    );
    // An unknown key is ignored: the task still waits.
    let ack = rpc(
        &server,
        "tasks/update",
        json!({"taskId": id, "inputResponses": {"other": {"action": "accept"}}}),
        true,
    )
    .await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    assert_eq!(
        get(&server, &id).await["result"]["status"],
        "input_required"
    );
    let ack = rpc(
        &server,
        "tasks/update",
        json!({"taskId": id, "inputResponses": {"go": {"action": "accept", "content": {"go": true}}}}),
        true,
    )
    .await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let done = poll(&server, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "go: true", "{done}");
    assert!(done.get("inputRequests").is_none(), "{done}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_gathers_its_input_then_becomes_a_task() {
    let (server, _) = serve(|s| s).await;
    let first = rpc(
        &server,
        "tools/call",
        json!({"name": "name_then_work", "arguments": {}}),
        true,
    )
    .await;
    let round = &first["result"];
    assert_eq!(round["resultType"], "input_required", "{first}");
    assert!(round.get("taskId").is_none(), "{first}");
    assert_eq!(
        round["inputRequests"]["name"]["method"],
        "elicitation/create"
    );
    let mut retry = json!({
        "name": "name_then_work",
        "arguments": {},
        "inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}},
    });
    if let Some(state) = round.get("requestState") {
        retry["requestState"] = state.clone();
    }
    let second = rpc(&server, "tools/call", retry, true).await;
    assert_eq!(second["result"]["resultType"], "task", "{second}");
    assert!(second["result"].get("requestState").is_none(), "{second}");
    let id = second["result"]["taskId"].as_str().unwrap();
    let done = poll(&server, id, "completed").await;
    assert_eq!(
        done["result"]["content"][0]["text"], "worked for Ada",
        "{done}"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_settings_are_checked() {
    let agent = AgentBuilder::new()
        .with_harness(
            HarnessBuilder::new("Jobs")
                .with_tools(tools(&SeenToken::default()))
                .build()
                .unwrap(),
        )
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    let error = McpServer::new(agent.clone())
        .with_unauthenticated_access()
        .with_task_support("no_such_function", TaskSupport::Optional)
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("'no_such_function'"), "{error}");
    assert!(
        error.contains("compute"),
        "the valid names are listed: {error}"
    );
    let error = McpServer::new(agent)
        .with_unauthenticated_access()
        .with_max_tasks(0)
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("max_tasks"), "{error}");
}
