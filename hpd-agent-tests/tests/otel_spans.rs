//! The OpenTelemetry GenAI spans of the `otel` feature, checked with the SDK's in-memory
//! exporter behind `tracing-opentelemetry`: each span's name, kind, parent and attributes over
//! a turn with a container expansion, a recovery, a failed call, a blocked call, an unknown
//! tool and a request the provider partly read from its prompt cache; content on and off;
//! provider failures (with credentials kept out); a sub-agent's turn under its call; MCP calls
//! whose trace context travels in `_meta` (from `McpHarness`, and from another client); and, when
//! `HPD_OTLP_URL` names a collector (Arize Phoenix, started by `.ci/run`), the same spans
//! exported over OTLP/HTTP and read back from the collector.

mod support;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use hpd_agent::mcp::{McpHarness, McpServer};
use hpd_agent::otel::opentelemetry::trace::{
    SpanId, SpanKind, Status, TraceId, TracerProvider as _,
};
use hpd_agent::otel::opentelemetry::{Array, Value};
use hpd_agent::otel::tracing_opentelemetry;
use hpd_agent::store::MemorySessionStore;
use hpd_agent::{
    AgentBuilder, ChatResponse, HarnessBuilder, ScriptedChatClient, Tool, ToolCall, ToolResult,
    chat::Usage, config::CollapsingLayout, providers::openai::OpenAiClient,
};
use hpd_agent_tests::{FileTools, MathTools, RecordingMiddleware};
use opentelemetry_otlp::WithExportConfig as _;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt as _;

/// One tracer provider for the whole binary (a `tracing` subscriber is global here, since the
/// MCP tests run on a multi-threaded runtime); each test picks its own traces by agent name.
/// With `HPD_OTLP_URL` set, the spans also go to that collector over OTLP/HTTP (protobuf).
fn traces() -> &'static (InMemorySpanExporter, SdkTracerProvider) {
    static TRACES: OnceLock<(InMemorySpanExporter, SdkTracerProvider)> = OnceLock::new();
    TRACES.get_or_init(|| {
        let exporter = InMemorySpanExporter::default();
        let mut provider = SdkTracerProvider::builder().with_simple_exporter(exporter.clone());
        if let Some(url) = otlp_url() {
            // The blocking HTTP client must not be built (or dropped) on a runtime's thread.
            let otlp = std::thread::spawn(move || {
                opentelemetry_otlp::SpanExporter::builder()
                    .with_http()
                    .with_endpoint(format!("{url}/v1/traces"))
                    .build()
                    .unwrap()
            })
            .join()
            .unwrap();
            provider = provider.with_batch_exporter(otlp);
        }
        let provider = provider.build();
        let subscriber = tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("hpd-agent-tests")));
        tracing::subscriber::set_global_default(subscriber).unwrap();
        (exporter, provider)
    })
}

fn exporter() -> &'static InMemorySpanExporter {
    &traces().0
}

/// The base URL of the OTLP collector (Arize Phoenix), when one runs.
fn otlp_url() -> Option<String> {
    std::env::var("HPD_OTLP_URL")
        .ok()
        .filter(|url| !url.is_empty())
        .map(|url| url.trim_end_matches('/').to_owned())
}

/// The finished spans of every trace whose root span is named `root`, oldest first.
fn trace_of(root: &str) -> Vec<SpanData> {
    let spans = exporter().get_finished_spans().unwrap();
    let traces: Vec<TraceId> = spans
        .iter()
        .filter(|s| s.name == root && s.parent_span_id == SpanId::INVALID)
        .map(|s| s.span_context.trace_id())
        .collect();
    assert!(!traces.is_empty(), "no trace rooted at {root}");
    spans
        .into_iter()
        .filter(|s| traces.contains(&s.span_context.trace_id()))
        .collect()
}

fn attr<'a>(span: &'a SpanData, key: &str) -> Option<&'a Value> {
    let found: Vec<&Value> = span
        .attributes
        .iter()
        .filter(|kv| kv.key.as_str() == key)
        .map(|kv| &kv.value)
        .collect();
    assert!(
        found.len() <= 1,
        "{key} is set {} times on {}",
        found.len(),
        span.name
    );
    found.first().copied()
}

fn text(value: &str) -> Value {
    Value::from(value.to_owned())
}

fn strings(values: &[&str]) -> Value {
    Value::Array(Array::String(
        values.iter().map(|v| (*v).to_owned().into()).collect(),
    ))
}

/// Asserts `span` has these attribute values.
#[track_caller]
fn has(span: &SpanData, expected: &[(&str, Value)]) {
    for (key, value) in expected {
        assert_eq!(
            attr(span, key),
            Some(value),
            "{key} of {} (attributes: {:?})",
            span.name,
            span.attributes
        );
    }
}

/// Asserts `span` has none of these attributes.
#[track_caller]
fn lacks(span: &SpanData, keys: &[&str]) {
    for key in keys {
        assert_eq!(attr(span, key), None, "{key} on {}", span.name);
    }
}

fn named<'a>(spans: &'a [SpanData], name: &str) -> Vec<&'a SpanData> {
    spans.iter().filter(|s| s.name == name).collect()
}

fn one<'a>(spans: &'a [SpanData], name: &str) -> &'a SpanData {
    let found = named(spans, name);
    assert_eq!(found.len(), 1, "spans named {name}: {:?}", names(spans));
    found[0]
}

fn names(spans: &[SpanData]) -> Vec<String> {
    spans.iter().map(|s| s.name.to_string()).collect()
}

/// The `execute_tool` span of the call with this id.
fn call<'a>(spans: &'a [SpanData], id: &str) -> &'a SpanData {
    spans
        .iter()
        .find(|s| attr(s, "gen_ai.tool.call.id") == Some(&text(id)))
        .unwrap_or_else(|| panic!("no execute_tool span for {id}"))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

const CONTENT_KEYS: [&str; 5] = [
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
];

/// A turn of `agent` name over collapsed `MathTools` and `FileTools`, with middleware that
/// blocks `multiply`: an expansion, a recovery, a failed, a blocked and an unknown call, and
/// a second request the provider partly read from its cache.
fn script() -> ScriptedChatClient {
    ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![
            ToolCall::new("c1", "MathTools", "{}"),
            ToolCall::new("c2", "read_file", r#"{"path": "notes.txt"}"#),
        ])
        .with_usage(Usage::new(100, 5)),
        ChatResponse::tool_calls(vec![
            ToolCall::new("c3", "divide", r#"{"a": 1, "b": 0}"#),
            ToolCall::new("c4", "multiply", r#"{"a": 2, "b": 3}"#),
            ToolCall::new("c5", "no_such_tool", "{}"),
            ToolCall::new("c6", "add", r#"{"a": 1, "b": 2}"#),
        ])
        .with_usage(Usage::new(150, 9).with_cached_input_tokens(120)),
        ChatResponse::text("3").with_usage(
            Usage::new(200, 2)
                .with_cached_input_tokens(150)
                .with_reasoning_tokens(1),
        ),
    ])
    .with_model("scripted-1")
}

fn run_scripted_turn(name: &str, content: bool) {
    exporter();
    let agent = AgentBuilder::new()
        .with_name(name)
        .with_instructions("Answer with a number.")
        .with_tool_harness::<MathTools>()
        .with_tool_harness::<FileTools>()
        .with_middleware(RecordingMiddleware::new("gate").blocking(["multiply"]))
        // The layout where the model calls containers and hidden members by name.
        .with_collapsing_layout(CollapsingLayout::Hide)
        .configure_harness_collapsing(|c| c.container_notes = false)
        .with_trace_content(content)
        .with_chat_client(script())
        .build()
        .unwrap();
    runtime().block_on(async {
        let store = Arc::new(MemorySessionStore::new());
        let mut session = agent
            .open_session(store, format!("conversation-of-{name}"))
            .await
            .unwrap();
        assert_eq!(session.run("1 + 2?").await.unwrap().text, "3");
    });
}

#[test]
fn a_turn_is_an_invoke_agent_span_with_chat_and_execute_tool_children() {
    run_scripted_turn("tracer", false);
    let spans = trace_of("invoke_agent tracer");
    let turn = one(&spans, "invoke_agent tracer");
    assert_eq!(turn.span_kind, SpanKind::Internal);
    assert_eq!(turn.status, Status::Unset);
    has(
        turn,
        &[
            ("gen_ai.operation.name", text("invoke_agent")),
            ("gen_ai.provider.name", text("scripted")),
            ("gen_ai.request.model", text("scripted-1")),
            ("gen_ai.agent.name", text("tracer")),
            ("gen_ai.conversation.id", text("conversation-of-tracer")),
            ("gen_ai.usage.input_tokens", Value::I64(450)),
            ("gen_ai.usage.output_tokens", Value::I64(16)),
            ("gen_ai.usage.cache_read.input_tokens", Value::I64(270)),
            ("gen_ai.usage.reasoning.output_tokens", Value::I64(1)),
            ("gen_ai.response.finish_reasons", strings(&["stop"])),
            ("hpd_agent.collapsing.layout", text("hide")),
            ("hpd_agent.iterations", Value::I64(3)),
        ],
    );
    assert!(matches!(
        attr(turn, "hpd_agent.turn.id"),
        Some(Value::String(_))
    ));

    // Three model requests, each a CLIENT child of the turn, with its own usage.
    let chats = named(&spans, "chat scripted-1");
    assert_eq!(chats.len(), 3, "{:?}", names(&spans));
    for chat in &chats {
        assert_eq!(chat.span_kind, SpanKind::Client);
        assert_eq!(chat.parent_span_id, turn.span_context.span_id());
        has(
            chat,
            &[
                ("gen_ai.operation.name", text("chat")),
                ("gen_ai.provider.name", text("scripted")),
                ("gen_ai.request.model", text("scripted-1")),
                ("gen_ai.conversation.id", text("conversation-of-tracer")),
            ],
        );
        // A scripted client has no server.
        lacks(chat, &["server.address", "server.port", "error.type"]);
        lacks(chat, &CONTENT_KEYS);
    }
    has(
        chats[0],
        &[
            ("gen_ai.usage.input_tokens", Value::I64(100)),
            ("gen_ai.usage.output_tokens", Value::I64(5)),
            ("gen_ai.response.finish_reasons", strings(&["tool_call"])),
            // Only the two containers are visible at first.
            ("hpd_agent.tools.count", Value::I64(2)),
        ],
    );
    lacks(chats[0], &["gen_ai.usage.cache_read.input_tokens"]);
    // The cached request.
    has(
        chats[1],
        &[
            ("gen_ai.usage.input_tokens", Value::I64(150)),
            ("gen_ai.usage.cache_read.input_tokens", Value::I64(120)),
            ("gen_ai.usage.output_tokens", Value::I64(9)),
        ],
    );
    has(
        chats[2],
        &[("gen_ai.response.finish_reasons", strings(&["stop"]))],
    );

    // One INTERNAL execute_tool child of the turn per call the model made.
    let tools: Vec<&SpanData> = spans
        .iter()
        .filter(|s| s.name.starts_with("execute_tool "))
        .collect();
    assert_eq!(tools.len(), 6, "{:?}", names(&spans));
    for tool in &tools {
        assert_eq!(tool.span_kind, SpanKind::Internal);
        assert_eq!(tool.parent_span_id, turn.span_context.span_id());
        has(
            tool,
            &[
                ("gen_ai.operation.name", text("execute_tool")),
                ("gen_ai.tool.type", text("function")),
            ],
        );
        lacks(tool, &CONTENT_KEYS);
    }
    // The container call: an expansion, no recovery.
    let expansion = call(&spans, "c1");
    assert_eq!(expansion.name, "execute_tool MathTools");
    assert_eq!(expansion.status, Status::Unset);
    has(
        expansion,
        &[
            ("gen_ai.tool.name", text("MathTools")),
            ("hpd_agent.container.expanded", text("MathTools")),
            ("hpd_agent.recovery", Value::Bool(false)),
        ],
    );
    // A member of the still collapsed FileTools: recovery expands it (and answers with its
    // members, as `execute_recovered_calls` is off).
    let recovery = call(&spans, "c2");
    assert_eq!(recovery.name, "execute_tool read_file");
    has(
        recovery,
        &[
            ("gen_ai.tool.name", text("read_file")),
            ("hpd_agent.container.expanded", text("FileTools")),
            ("hpd_agent.recovery", Value::Bool(true)),
        ],
    );
    lacks(recovery, &["error.type"]);
    // A function that fails.
    let failed = call(&spans, "c3");
    assert_eq!(failed.name, "execute_tool divide");
    has(
        failed,
        &[
            ("error.type", text("tool_error")),
            ("hpd_agent.harness", text("MathTools")),
        ],
    );
    assert!(
        matches!(failed.status, Status::Error { .. }),
        "{:?}",
        failed.status
    );
    lacks(
        failed,
        &[
            "hpd_agent.container.expanded",
            "hpd_agent.middleware.blocked",
        ],
    );
    // A call middleware blocked.
    let blocked = call(&spans, "c4");
    assert_eq!(blocked.name, "execute_tool multiply");
    has(
        blocked,
        &[
            ("hpd_agent.middleware.blocked", Value::Bool(true)),
            ("error.type", text("tool_error")),
        ],
    );
    // A name that matches nothing.
    let unknown = call(&spans, "c5");
    assert_eq!(unknown.name, "execute_tool no_such_tool");
    has(unknown, &[("error.type", text("unknown_tool"))]);
    // A call that succeeds.
    let ok = call(&spans, "c6");
    assert_eq!(ok.name, "execute_tool add");
    assert_eq!(ok.status, Status::Unset);
    lacks(ok, &["error.type", "hpd_agent.middleware.blocked"]);

    // Every span is of the one trace, and the calls of a response follow its request.
    assert!(
        spans
            .iter()
            .all(|s| s.span_context.trace_id() == turn.span_context.trace_id())
    );
    assert!(call(&spans, "c3").start_time >= chats[1].end_time);
    assert!(chats[2].start_time >= call(&spans, "c6").end_time);
}

#[test]
fn content_is_recorded_only_when_switched_on() {
    run_scripted_turn("recorder", true);
    let spans = trace_of("invoke_agent recorder");
    let turn = one(&spans, "invoke_agent recorder");
    let json = |span: &SpanData, key: &str| -> serde_json::Value {
        match attr(span, key) {
            Some(Value::String(s)) => serde_json::from_str(s.as_str()).unwrap(),
            other => panic!("{key} of {}: {other:?}", span.name),
        }
    };
    assert_eq!(
        json(turn, "gen_ai.input.messages"),
        json!([{"role": "user", "parts": [{"type": "text", "content": "1 + 2?"}]}])
    );
    assert_eq!(
        json(turn, "gen_ai.output.messages"),
        json!([{"role": "assistant", "parts": [{"type": "text", "content": "3"}], "finish_reason": "stop"}])
    );
    let chats = named(&spans, "chat scripted-1");
    assert_eq!(
        json(chats[0], "gen_ai.system_instructions"),
        json!([{"type": "text", "content": "Answer with a number."}])
    );
    assert_eq!(
        json(chats[0], "gen_ai.output.messages")[0]["parts"][1],
        json!({"type": "tool_call", "id": "c2", "name": "read_file", "arguments": {"path": "notes.txt"}})
    );
    // The last request carries the whole turn: the results of the calls included.
    let sent = json(chats[2], "gen_ai.input.messages");
    let roles: Vec<&str> = sent
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "tool",
            "tool",
            "assistant",
            "tool",
            "tool",
            "tool",
            "tool"
        ]
    );
    assert_eq!(
        sent[8]["parts"][0],
        json!({"type": "tool_call_response", "id": "c6", "response": "3"})
    );
    let ok = call(&spans, "c6");
    has(
        ok,
        &[
            ("gen_ai.tool.call.arguments", text(r#"{"a": 1, "b": 2}"#)),
            ("gen_ai.tool.call.result", text("3")),
        ],
    );
    // The result of a failed call is not recorded as a result.
    lacks(call(&spans, "c3"), &["gen_ai.tool.call.result"]);
    has(
        call(&spans, "c3"),
        &[("gen_ai.tool.call.arguments", text(r#"{"a": 1, "b": 0}"#))],
    );
}

#[test]
fn provider_failures_set_error_type_and_status_and_keep_credentials_out() {
    exporter();
    const KEY: &str = "sk-otel-planted-secret-5Yb2";
    runtime().block_on(async {
        // A server that refuses the key and echoes it, at a URL with a password.
        let server = support::echoing_server(KEY).await;
        let url = format!("http://user:{KEY}@{}/v1", server.address());
        let client = OpenAiClient::new("gpt-test", KEY)
            .and_then(|c| c.with_base_url(url))
            .unwrap()
            .with_retry_policy(hpd_agent::providers::retry::RetryPolicy {
                max_retries: 1,
                backoff: Duration::from_millis(1),
                ..Default::default()
            });
        let agent = AgentBuilder::new()
            .with_name("refused")
            .with_trace_content(true)
            .with_chat_client(client)
            .build()
            .unwrap();
        agent.run("hi").await.unwrap_err();

        // A scripted client that runs out of replies.
        let agent = AgentBuilder::new()
            .with_name("exhausted")
            .with_chat_client(ScriptedChatClient::new())
            .build()
            .unwrap();
        agent.run("hi").await.unwrap_err();
    });

    let spans = trace_of("invoke_agent refused");
    let chat = one(&spans, "chat gpt-test");
    assert_eq!(chat.span_kind, SpanKind::Client);
    has(
        chat,
        &[
            ("gen_ai.provider.name", text("openai")),
            ("gen_ai.request.model", text("gpt-test")),
            ("server.address", text("127.0.0.1")),
            ("error.type", text("401")),
        ],
    );
    assert!(matches!(attr(chat, "server.port"), Some(Value::I64(port)) if *port > 0));
    assert!(matches!(chat.status, Status::Error { .. }));
    let turn = one(&spans, "invoke_agent refused");
    has(turn, &[("error.type", text("401"))]);
    // Nothing of any span carries the key: names, attributes, events, status.
    for span in &spans {
        let rendered = format!("{span:?}");
        assert!(!rendered.contains(KEY), "the key leaked into {rendered}");
    }

    let spans = trace_of("invoke_agent exhausted");
    has(
        one(&spans, "chat"),
        &[
            ("error.type", text("script_exhausted")),
            ("gen_ai.provider.name", text("scripted")),
        ],
    );
    has(
        one(&spans, "invoke_agent exhausted"),
        &[("error.type", text("script_exhausted"))],
    );
}

/// An agent whose harness is served over MCP (streamable HTTP on loopback) by another agent:
/// the served side's spans join the caller's trace through `_meta`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_calls_carry_the_trace_context_to_the_served_harness() {
    exporter();
    let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    let echo = Tool::new(
        "shout",
        "Repeats a text loudly",
        schema,
        |args, _ctx| async move {
            ToolResult::ok(args["text"].as_str().unwrap_or_default().to_uppercase())
        },
    );
    let served = AgentBuilder::new()
        .with_harness(HarnessBuilder::new("Loud").with_tool(echo).build().unwrap())
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    let server = McpServer::new(served)
        .with_unauthenticated_access()
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let remote = McpHarness::http("Remote", server.url())
        .with_header("Authorization", "Bearer mcp-otel-planted-secret-8Kq1")
        .without_collapse()
        .connect()
        .await
        .unwrap();
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("m1", "shout", r#"{"text": "hi"}"#)]),
        ChatResponse::text("HI"),
    ]);
    let caller = AgentBuilder::new()
        .with_name("mcp-caller")
        .with_harness(remote)
        .with_trace_content(true)
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    caller.run("shout hi").await.unwrap();
    assert_eq!(model.requests()[1].tool_result("m1"), Some(("HI", false)));
    server.shutdown().await;

    let spans = trace_of("invoke_agent mcp-caller");
    let tool = call(&spans, "m1");
    assert_eq!(tool.name, "execute_tool shout");
    let client = spans
        .iter()
        .find(|s| s.name == "tools/call shout" && s.span_kind == SpanKind::Client)
        .unwrap_or_else(|| panic!("no client span: {:?}", names(&spans)));
    assert_eq!(client.parent_span_id, tool.span_context.span_id());
    has(
        client,
        &[
            ("mcp.method.name", text("tools/call")),
            ("gen_ai.tool.name", text("shout")),
            ("gen_ai.operation.name", text("execute_tool")),
        ],
    );
    // The server's span is in the caller's trace, a child of the client's span, and its
    // parent is remote: it came through the request's `_meta`.
    let served = spans
        .iter()
        .find(|s| s.name == "tools/call shout" && s.span_kind == SpanKind::Server)
        .unwrap_or_else(|| {
            let all = exporter().get_finished_spans().unwrap();
            let servers: Vec<_> = all
                .iter()
                .filter(|s| s.span_kind == SpanKind::Server)
                .collect();
            panic!(
                "no server span in the caller's trace: {:?}; server spans: {servers:#?}",
                names(&spans)
            )
        });
    assert_eq!(served.parent_span_id, client.span_context.span_id());
    assert!(served.parent_span_is_remote);
    has(
        served,
        &[
            ("mcp.method.name", text("tools/call")),
            ("gen_ai.tool.name", text("shout")),
        ],
    );
    assert!(matches!(
        attr(served, "jsonrpc.request.id"),
        Some(Value::String(_))
    ));
    for span in &spans {
        let rendered = format!("{span:?}");
        assert!(
            !rendered.contains("mcp-otel-planted-secret-8Kq1"),
            "{rendered}"
        );
    }
}

/// The spans of one turn, exported over OTLP/HTTP to a real collector (Arize Phoenix on
/// loopback, started by `.ci/run`) and read back from its REST API: names, kinds, parents and
/// the GenAI attributes arrive as sent.
#[test]
fn spans_reach_a_real_collector_over_otlp() {
    let Some(url) = otlp_url() else {
        eprintln!(
            "skipped: HPD_OTLP_URL is not set (.ci/run starts Arize Phoenix, .ci/phoenix.sh)"
        );
        return;
    };
    run_scripted_turn("exported", false);
    let (_, provider) = traces();
    provider.force_flush().unwrap();
    let local = trace_of("invoke_agent exported");
    let trace_id = local[0].span_context.trace_id().to_string();
    let query = format!("{url}/v1/projects/default/spans/otlpv1?trace_id={trace_id}&limit=100");
    // The collector stores what it receives in batches: wait for all of the turn's spans.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let spans = loop {
        let body: serde_json::Value =
            runtime().block_on(async { reqwest::get(&query).await.unwrap().json().await.unwrap() });
        let spans = body["data"].as_array().cloned().unwrap_or_default();
        if spans.len() >= local.len() {
            break spans;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the collector has {} of {} spans: {body}",
            spans.len(),
            local.len()
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let mut received: Vec<&str> = spans.iter().filter_map(|s| s["name"].as_str()).collect();
    received.sort_unstable();
    let mut sent = names(&local);
    sent.sort_unstable();
    assert_eq!(received, sent);
    let find = |name: &str| {
        spans
            .iter()
            .filter(|s| s["name"] == name)
            .collect::<Vec<_>>()
    };
    let root = find("invoke_agent exported")[0];
    let attribute = |span: &serde_json::Value, key: &str| -> serde_json::Value {
        span["attributes"]
            .as_array()
            .and_then(|all| all.iter().find(|kv| kv["key"] == key))
            .map(|kv| kv["value"].clone())
            .unwrap_or(serde_json::Value::Null)
    };
    assert_eq!(
        attribute(root, "gen_ai.operation.name")["string_value"],
        "invoke_agent"
    );
    assert_eq!(
        attribute(root, "gen_ai.agent.name")["string_value"],
        "exported"
    );
    for span in &spans {
        if span["name"] != "invoke_agent exported" {
            assert_eq!(span["parent_span_id"], root["span_id"], "{span}");
        }
    }
    let chats = find("chat scripted-1");
    assert_eq!(chats.len(), 3);
    assert!(
        chats.iter().any(
            |chat| attribute(chat, "gen_ai.usage.cache_read.input_tokens")["int_value"]
                .to_string()
                .trim_matches('"')
                == "120"
        ),
        "{chats:?}"
    );
    for chat in &chats {
        assert_eq!(
            attribute(chat, "gen_ai.provider.name")["string_value"],
            "scripted"
        );
        assert_eq!(
            attribute(chat, "gen_ai.request.model")["string_value"],
            "scripted-1"
        );
    }
    let failed = find("execute_tool divide")[0];
    assert_eq!(
        attribute(failed, "error.type")["string_value"],
        "tool_error"
    );
}

/// Another MCP client (rmcp's own, over streamable HTTP) sends a `tools/call` whose `_meta`
/// carries a W3C trace context it made up: the served call's span is a child of that remote
/// span, in its trace, and a malformed `traceparent` is ignored (the call still runs).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_reads_the_trace_context_from_meta_on_the_wire() {
    use rmcp::ServiceExt as _;
    use rmcp::model::{CallToolRequestParams, MetaObject, RequestMetaObject};
    exporter();
    let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    let tool = Tool::new(
        "whisper",
        "Repeats a text quietly",
        schema,
        |args, _ctx| async move {
            ToolResult::ok(args["text"].as_str().unwrap_or_default().to_lowercase())
        },
    );
    let served = AgentBuilder::new()
        .with_harness(
            HarnessBuilder::new("Quiet")
                .with_tool(tool)
                .build()
                .unwrap(),
        )
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .unwrap();
    let server = McpServer::new(served)
        .with_unauthenticated_access()
        .serve_http("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let client = ()
        .serve(rmcp::transport::StreamableHttpClientTransport::from_uri(
            server.url(),
        ))
        .await
        .unwrap();
    let call = |traceparent: &str| {
        let mut meta = serde_json::Map::new();
        meta.insert("traceparent".into(), traceparent.into());
        meta.insert("tracestate".into(), "hpd=test".into());
        let mut params = CallToolRequestParams::new("whisper")
            .with_arguments(json!({"text": "HUSH"}).as_object().unwrap().clone());
        params.meta = Some(RequestMetaObject(MetaObject(meta)));
        params
    };
    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let parent = "00f067aa0ba902b7";
    let result = client
        .call_tool(call(&format!("00-{trace_id}-{parent}-01")))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false));
    let malformed = client.call_tool(call("00-not-a-trace-01")).await.unwrap();
    assert_eq!(malformed.is_error, Some(false));
    client.cancel().await.unwrap();
    server.shutdown().await;

    let spans = exporter().get_finished_spans().unwrap();
    let served: Vec<&SpanData> = spans
        .iter()
        .filter(|s| s.name == "tools/call whisper" && s.span_kind == SpanKind::Server)
        .collect();
    assert_eq!(served.len(), 2, "{:?}", names(&spans));
    let joined = served
        .iter()
        .find(|s| s.span_context.trace_id().to_string() == trace_id)
        .expect("a served span in the caller's trace");
    assert_eq!(joined.parent_span_id.to_string(), parent);
    assert!(joined.parent_span_is_remote);
    assert_eq!(joined.span_context.trace_state().header(), "hpd=test");
    // The malformed context gave no parent: a trace of its own.
    let alone = served
        .iter()
        .find(|s| s.span_context.trace_id().to_string() != trace_id)
        .unwrap();
    assert!(!alone.parent_span_is_remote);
}

/// A sub-agent's turn is an `invoke_agent` span under the `execute_tool` span of its call,
/// with its own `chat` and `execute_tool` children, in the parent's trace.
#[test]
fn a_sub_agent_turn_nests_under_its_call() {
    exporter();
    let client = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new(
            "s1",
            "researcher",
            r#"{"input": "Weather in Oslo?"}"#,
        )]),
        ChatResponse::tool_calls(vec![ToolCall::new(
            "s2",
            "get_weather",
            r#"{"city": "Oslo"}"#,
        )]),
        ChatResponse::text("Sunny in Oslo."),
        ChatResponse::text("Sunny."),
    ]);
    let config = hpd_agent::AgentConfig::from_json(
        r#"{"Instructions": "Research.", "ToolHarnesses": ["WeatherTools"]}"#,
    )
    .unwrap();
    let agent = AgentBuilder::new()
        .with_name("delegator")
        .with_sub_agent(hpd_agent::SubAgent::new(
            "researcher",
            "Researches a question.",
            config,
        ))
        .with_chat_client(client)
        .build()
        .unwrap();
    assert_eq!(
        runtime().block_on(agent.run("Weather?")).unwrap().text,
        "Sunny."
    );

    let spans = trace_of("invoke_agent delegator");
    let root = one(&spans, "invoke_agent delegator");
    let delegation = call(&spans, "s1");
    assert_eq!(delegation.name, "execute_tool researcher");
    assert_eq!(delegation.parent_span_id, root.span_context.span_id());
    let child = spans
        .iter()
        .find(|s| {
            s.name.starts_with("invoke_agent")
                && s.parent_span_id == delegation.span_context.span_id()
        })
        .unwrap_or_else(|| panic!("no child turn under the call: {:?}", names(&spans)));
    assert_eq!(child.span_kind, SpanKind::Internal);
    let inner = call(&spans, "s2");
    assert_eq!(inner.name, "execute_tool get_weather");
    assert_eq!(inner.parent_span_id, child.span_context.span_id());
    let child_chats = spans
        .iter()
        .filter(|s| s.name.starts_with("chat") && s.parent_span_id == child.span_context.span_id())
        .count();
    assert_eq!(child_chats, 2);
}

/// A call that needs approval: its span in the paused turn says `pending`; the resumed turn
/// (another `invoke_agent` span) runs the approved call and answers the denied one, each in an
/// `execute_tool` span that names the decision.
#[test]
fn approval_decisions_are_on_the_call_spans() {
    exporter();
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    let delete = Tool::new(
        "delete",
        "Deletes a record",
        schema,
        |args, _ctx| async move {
            ToolResult::ok(format!("deleted {}", args["name"].as_str().unwrap_or("?")))
        },
    )
    .with_approval_required();
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![
            ToolCall::new("a1", "delete", r#"{"name": "old"}"#),
            ToolCall::new("a2", "delete", r#"{"name": "prod"}"#),
        ]),
        ChatResponse::text("Deleted old."),
    ]);
    let agent = AgentBuilder::new()
        .with_name("gatekeeper")
        .with_harness(
            HarnessBuilder::new("Records")
                .with_tool(delete)
                .build()
                .unwrap(),
        )
        .with_chat_client(model)
        .build()
        .unwrap();
    runtime().block_on(async {
        let mut session = agent.session();
        let paused = session.run("Delete old and prod").await.unwrap();
        assert_eq!(paused.pending_approvals.len(), 2);
        let output = session
            .decide(
                hpd_agent::approval::Approvals::new()
                    .approve("a1")
                    .deny("a2", "prod stays"),
            )
            .await
            .unwrap();
        assert_eq!(output.text, "Deleted old.");
    });
    let spans = trace_of("invoke_agent gatekeeper");
    let turns = named(&spans, "invoke_agent gatekeeper");
    assert_eq!(turns.len(), 2, "the paused turn and the resumed one");
    let of = |id: &str| -> Vec<&SpanData> {
        spans
            .iter()
            .filter(|s| attr(s, "gen_ai.tool.call.id") == Some(&text(id)))
            .collect()
    };
    for id in ["a1", "a2"] {
        let calls = of(id);
        assert_eq!(
            calls.len(),
            2,
            "{id}: one span when paused, one when resumed"
        );
        assert!(calls.iter().all(|s| s.name == "execute_tool delete"));
        has(calls[0], &[("hpd_agent.approval", text("pending"))]);
    }
    has(
        of("a1")[1],
        &[
            ("hpd_agent.approval", text("approved")),
            ("hpd_agent.harness", text("Records")),
        ],
    );
    lacks(of("a1")[1], &["error.type"]);
    has(
        of("a2")[1],
        &[
            ("hpd_agent.approval", text("denied")),
            ("error.type", text("tool_error")),
        ],
    );
    // The resumed calls are children of the resumed turn.
    let resumed = turns
        .iter()
        .find(|t| t.span_context.span_id() == of("a1")[1].parent_span_id)
        .expect("the resumed call's parent is a turn");
    assert_ne!(resumed.span_context.span_id(), of("a1")[0].parent_span_id);
}
