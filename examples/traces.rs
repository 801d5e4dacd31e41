//! The OpenTelemetry GenAI spans of one turn (cargo feature `otel`), printed as a tree.
//!
//! Offline: a scripted model expands a collapsed harness, calls one of its functions, calls a
//! function that fails, and answers; the provider reports part of the second prompt as read
//! from its cache. The spans go to the SDK's in-memory exporter through
//! `tracing-opentelemetry`; a service would install an OTLP exporter instead (see the
//! `hpd_agent::otel` docs).
//!
//! Run with `cargo run -p hpd-agent-examples --example traces`.

use hpd_agent::otel::opentelemetry::trace::{SpanId, TracerProvider as _};
use hpd_agent::otel::tracing_opentelemetry;
use hpd_agent::{
    AgentBuilder, ChatResponse, HarnessBuilder, ScriptedChatClient, Tool, ToolCall, ToolResult,
    chat::Usage,
};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt as _;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let layer = tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("traces-example"))
        // Code locations, threads and busy/idle times are not GenAI attributes: left out here.
        .with_location(false)
        .with_threads(false)
        .with_tracked_inactivity(false);
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))?;

    let numbers =
        json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}});
    let add = Tool::new(
        "add",
        "Adds a and b",
        numbers.clone(),
        |args, _| async move {
            ToolResult::ok(
                (args["a"].as_f64().unwrap_or(0.0) + args["b"].as_f64().unwrap_or(0.0)).to_string(),
            )
        },
    );
    let divide = Tool::new("divide", "Divides a by b", numbers, |args, _| async move {
        match args["b"].as_f64() {
            Some(b) if b != 0.0 => {
                ToolResult::ok((args["a"].as_f64().unwrap_or(0.0) / b).to_string())
            }
            _ => ToolResult::error("Error: division by zero"),
        }
    });
    let math = HarnessBuilder::new("Math")
        .with_collapse("Arithmetic")
        .with_tool(add)
        .with_tool(divide)
        .build()?;
    let usage = |input, cached, output| Usage::new(input, output).with_cached_input_tokens(cached);
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new("call-1", "Math", "{}")])
            .with_usage(usage(80, 0, 4)),
        ChatResponse::tool_calls(vec![
            ToolCall::new("call-2", "add", r#"{"a": 2, "b": 3}"#),
            ToolCall::new("call-3", "divide", r#"{"a": 1, "b": 0}"#),
        ])
        .with_usage(usage(130, 64, 12)),
        ChatResponse::text("2 + 3 = 5; 1 / 0 has no answer.").with_usage(usage(190, 128, 14)),
    ])
    .with_model("scripted-1");
    let agent = AgentBuilder::new()
        .with_name("calculator")
        .with_harness(math)
        .with_chat_client(model)
        .build()?;
    let output = agent.run("What are 2 + 3 and 1 / 0?").await?;
    println!("answer: {}\n", output.text);

    provider.force_flush()?;
    let spans = exporter.get_finished_spans()?;
    for root in spans.iter().filter(|s| s.parent_span_id == SpanId::INVALID) {
        print_tree(&spans, root, 0);
    }
    Ok(())
}

/// Prints `span` and, indented under it, its children in the order they started.
fn print_tree(spans: &[SpanData], span: &SpanData, depth: usize) {
    let indent = "  ".repeat(depth);
    println!("{indent}{} [{:?}]", span.name, span.span_kind);
    if !matches!(
        span.status,
        hpd_agent::otel::opentelemetry::trace::Status::Unset
    ) {
        println!("{indent}  status: {:?}", span.status);
    }
    let mut attributes: Vec<_> = span
        .attributes
        .iter()
        .filter(|kv| {
            let key = kv.key.as_str();
            key.starts_with("gen_ai.") || key.starts_with("hpd_agent.") || key.starts_with("error.")
        })
        .collect();
    attributes.sort_by(|a, b| a.key.as_str().cmp(b.key.as_str()));
    for kv in attributes {
        println!("{indent}  {} = {}", kv.key, kv.value);
    }
    let mut children: Vec<&SpanData> = spans
        .iter()
        .filter(|s| s.parent_span_id == span.span_context.span_id())
        .collect();
    children.sort_by_key(|s| s.start_time);
    for child in children {
        print_tree(spans, child, depth + 1);
    }
}
