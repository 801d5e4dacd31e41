//! OpenTelemetry traces by the GenAI semantic conventions (cargo feature `otel`).
//!
//! Every run already goes through `tracing` spans (target `hpd_agent`, level INFO): `turn`
//! around a turn, `model_request` around each model request, `tool_call` around each tool
//! call the model makes. With this feature the same spans carry what
//! [`tracing-opentelemetry`](tracing_opentelemetry) needs to export them as the GenAI spans of
//! the [OpenTelemetry semantic conventions](https://opentelemetry.io/docs/specs/semconv/gen-ai/):
//!
//! | `tracing` span | OpenTelemetry span | kind | parent |
//! | --- | --- | --- | --- |
//! | `turn` | `invoke_agent {agent}` (`invoke_agent` for an agent without a name) | `INTERNAL` | the caller's span (a sub-agent's: the `execute_tool` span of its call) |
//! | `model_request` | `chat {model}` (`chat` when the client names no model) | `CLIENT` | `invoke_agent` |
//! | `tool_call` | `execute_tool {tool}` | `INTERNAL` | `invoke_agent` |
//! | (MCP client) | `tools/call {tool}` | `CLIENT` | `execute_tool` |
//! | (MCP server) | `tools/call {tool}` | `SERVER` | the client's `tools/call` span, across processes |
//!
//! # Attributes
//!
//! - `invoke_agent`: `gen_ai.operation.name` (`invoke_agent`), `gen_ai.provider.name`,
//!   `gen_ai.request.model`, `gen_ai.agent.name`, `gen_ai.conversation.id` (the session id of
//!   a session with a store), the turn's summed `gen_ai.usage.input_tokens`,
//!   `gen_ai.usage.output_tokens`, `gen_ai.usage.cache_read.input_tokens` (when the provider
//!   read any from its prompt cache), `gen_ai.usage.reasoning.output_tokens` (when it
//!   reports them) and `gen_ai.response.finish_reasons` (of the last reply); the project's
//!   `hpd_agent.turn.id`, `hpd_agent.collapsing.layout` (the layout requests use: `hide`,
//!   `append`, `fixed`, `native`) and `hpd_agent.iterations`.
//! - `chat`: `gen_ai.operation.name` (`chat`), `gen_ai.provider.name`,
//!   `gen_ai.request.model`, `server.address` and `server.port` (from the base URL, never its
//!   credentials), `gen_ai.conversation.id`, the request's `gen_ai.request.temperature`,
//!   `top_p`, `max_tokens`, `seed` and `stop_sequences` where set, the usage attributes and
//!   `gen_ai.response.finish_reasons` of this reply; `hpd_agent.tools.count` (the tools the
//!   request carried).
//! - `execute_tool`: `gen_ai.operation.name` (`execute_tool`), `gen_ai.tool.name` (the
//!   function a call resolved to, else the name as called), `gen_ai.tool.call.id`,
//!   `gen_ai.tool.type` (`function`); the project's `hpd_agent.harness` (the function's
//!   harness), `hpd_agent.container.expanded` (the container(s) the call expanded: a container
//!   call, or a recovery), `hpd_agent.recovery` (whether that was a recovery: the call named a
//!   member of a collapsed container), `hpd_agent.middleware.blocked` (middleware blocked
//!   the call in `before_function`) and `hpd_agent.approval` for a call that needs approval
//!   (`pending` when the turn pauses for it; `approved`, `edited` or `denied` on the span of
//!   the call in the resumed turn).
//! - `tools/call {tool}` (MCP client and server): `mcp.method.name` (`tools/call`),
//!   `gen_ai.operation.name` (`execute_tool`), `gen_ai.tool.name` (the server's name of the
//!   tool); on the server also `jsonrpc.request.id`.
//!
//! The fields of the `tracing` spans (`agent`, `iteration`, `name`, `call_id`, `tool`,
//! `server`) arrive as attributes too, as `tracing-opentelemetry` exports every field.
//!
//! The names and kinds are set at span creation, the provider, model and operation attributes
//! before the span starts (so samplers see them), the rest as the run learns it.
//! `gen_ai.provider.name` and the model come from [`ChatClient::model_info`](crate::ChatClient::model_info):
//! `openai` for [`OpenAiClient`](crate::providers::openai::OpenAiClient) and
//! [`OpenAiResponsesClient`](crate::providers::openai_responses::OpenAiResponsesClient) (also when an OpenAI-compatible
//! server answers; `server.address` tells which), `anthropic` for
//! [`AnthropicClient`](crate::providers::anthropic::AnthropicClient), `scripted` for
//! [`ScriptedChatClient`](crate::ScriptedChatClient), `unknown` for clients that do not say.
//! The providers do not report the model that answered, so `gen_ai.response.model` is not set.
//!
//! # Errors
//!
//! A failed operation has an error status (its description is the error's text, which never
//! carries credentials) and `error.type`:
//! - `chat` and `invoke_agent`: the HTTP status of a provider error (`429`, `500`, ...,
//!   `http_error` for uncommon ones), `transport`, `timeout`, `malformed_response`,
//!   `configuration`, `script_exhausted`; on `invoke_agent` also `max_iterations`,
//!   `cancelled`, `middleware`, `build`, `store`, `summarizer`.
//! - `execute_tool`: `tool_error` for a result that reports an error (the function failed,
//!   middleware blocked it, bad arguments, a limit, a denied approval), `unknown_tool` for a
//!   name that matches nothing, `cancelled` or `aborted` for calls the run left unanswered.
//! - `tools/call`: `tool_error` for a result with `isError`, `timeout`, `closed` (the
//!   connection is gone) and `protocol` (a JSON-RPC error) on the client; `tool_error` and
//!   `protocol` on the server.
//!
//! # Content
//!
//! Messages, arguments and results stay out of spans by default, as the conventions ask.
//! [`AgentBuilder::with_trace_content`](crate::AgentBuilder::with_trace_content) (or the
//! environment variable `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`) switches
//! them on: `gen_ai.input.messages` and `gen_ai.output.messages` (as JSON text, by the
//! conventions' message schemas) on `invoke_agent` and `chat`, `gen_ai.system_instructions`
//! on `chat`, `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result` on `execute_tool`.
//! API keys, authorization headers and credential values are never recorded, content or not.
//!
//! # MCP across processes
//!
//! [`McpHarness`](crate::mcp::McpHarness) puts the W3C trace context of its `tools/call`
//! span into the request's `params._meta` (`traceparent`, `tracestate` and, when the global
//! propagator sets one, `baggage`: the keys SEP-414 of the MCP specification reserves), and
//! [`McpServer`](crate::mcp::McpServer) makes the context it finds there the parent of its
//! `tools/call` span. So the spans of a served harness, sub-agents' `invoke_agent` and `chat`
//! included, join the caller's trace.
//!
//! # Wiring an exporter
//!
//! The crate depends only on the OpenTelemetry API and the `tracing` bridge; the operator picks
//! the SDK and the exporter and installs a `tracing-opentelemetry` layer. The bridge only finds
//! spans through its own version, so use the versions this crate re-exports,
//! [`opentelemetry`] and [`tracing_opentelemetry`], with their SDK and exporters
//! (`opentelemetry_sdk` and `opentelemetry-otlp` of the same minor version as
//! [`opentelemetry`]):
//!
//! ```
//! use hpd_agent::otel::opentelemetry::trace::TracerProvider as _;
//! use hpd_agent::otel::tracing_opentelemetry;
//! use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient};
//! use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
//! use tracing_subscriber::layer::SubscriberExt as _;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // In production: `opentelemetry_otlp::SpanExporter::builder().with_http().build()?` and
//! // `with_batch_exporter`; the in-memory exporter keeps the spans for this example.
//! let exporter = InMemorySpanExporter::default();
//! let provider = SdkTracerProvider::builder().with_simple_exporter(exporter.clone()).build();
//! let subscriber = tracing_subscriber::registry()
//!     .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("my-service")));
//! let _guard = tracing::subscriber::set_default(subscriber);
//!
//! let model = ScriptedChatClient::with_replies([ChatResponse::text("Hi")]).with_model("m-1");
//! let agent = AgentBuilder::new().with_name("greeter").with_chat_client(model).build()?;
//! agent.run("Hello").await?;
//! provider.force_flush()?;
//! let names: Vec<String> = exporter.get_finished_spans()?.iter().map(|s| s.name.to_string()).collect();
//! assert_eq!(names, ["chat m-1", "invoke_agent greeter"]);
//! # Ok(())
//! # }
//! ```
//!
//! A filter that drops INFO spans of the `hpd_agent` target drops these spans too.

pub use opentelemetry;
pub use tracing_opentelemetry;

#[cfg(feature = "mcp")]
pub(crate) use propagation::{extract, inject};

#[cfg(feature = "mcp")]
mod propagation {
    //! W3C trace context in MCP `_meta` (SEP-414).

    use std::collections::HashMap;
    use std::str::FromStr as _;

    use opentelemetry::propagation::Extractor;
    use opentelemetry::trace::{
        SpanContext, SpanId, TraceContextExt as _, TraceFlags, TraceId, TraceState,
    };
    use opentelemetry::{Context, global};
    use serde_json::{Map, Value};
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;

    /// The `_meta` keys SEP-414 reserves for trace context.
    const KEYS: [&str; 3] = ["traceparent", "tracestate", "baggage"];

    /// Puts the trace context of `span` into `meta` (nothing when `span` is not traced).
    pub(crate) fn inject(span: &tracing::Span, meta: &mut Map<String, Value>) {
        let cx = span.context();
        let mut carrier: HashMap<String, String> = HashMap::new();
        global::get_text_map_propagator(|propagator| propagator.inject_context(&cx, &mut carrier));
        let span_context = cx.span().span_context().clone();
        if span_context.is_valid() && !carrier.contains_key("traceparent") {
            carrier.insert(
                "traceparent".to_owned(),
                format!(
                    "00-{}-{}-{:02x}",
                    span_context.trace_id(),
                    span_context.span_id(),
                    span_context.trace_flags().to_u8()
                ),
            );
            let state = span_context.trace_state().header();
            if !state.is_empty() {
                carrier.insert("tracestate".to_owned(), state);
            }
        }
        for key in KEYS {
            if let Some(value) = carrier.remove(key) {
                meta.insert(key.to_owned(), Value::String(value));
            }
        }
    }

    struct Meta<'a>(&'a Map<String, Value>);

    impl Extractor for Meta<'_> {
        fn get(&self, key: &str) -> Option<&str> {
            self.0.get(key).and_then(Value::as_str)
        }

        fn keys(&self) -> Vec<&str> {
            self.0.keys().map(String::as_str).collect()
        }
    }

    /// The remote context `meta` carries, if any (a malformed `traceparent` counts as none).
    pub(crate) fn extract(meta: &Map<String, Value>) -> Option<Context> {
        if !KEYS.iter().any(|key| meta.contains_key(*key)) {
            return None;
        }
        // The global propagator (an operator's, with baggage perhaps) first. Only a remote
        // context counts: the default propagator answers with the current one (the span the
        // server runs in), which is not what the request carries.
        let cx = global::get_text_map_propagator(|propagator| {
            propagator.extract_with_context(&Context::new(), &Meta(meta))
        });
        let found = cx.span().span_context().clone();
        if found.is_valid() && found.is_remote() {
            return Some(cx);
        }
        let cx = Context::new();
        let parent = parse_traceparent(
            meta.get("traceparent")?.as_str()?,
            meta.get("tracestate").and_then(Value::as_str),
        )?;
        Some(cx.with_remote_span_context(parent))
    }

    /// A W3C `traceparent` (version `00`; later versions are read by their first four fields,
    /// as the recommendation says).
    fn parse_traceparent(traceparent: &str, tracestate: Option<&str>) -> Option<SpanContext> {
        let mut fields = traceparent.trim().split('-');
        let version = fields.next()?;
        let trace_id = fields.next()?;
        let span_id = fields.next()?;
        let flags = fields.next()?;
        let valid_version =
            version.len() == 2 && version != "ff" && version.bytes().all(|b| b.is_ascii_hexdigit());
        if !valid_version
            || (version == "00" && fields.next().is_some())
            || trace_id.len() != 32
            || span_id.len() != 16
            || flags.len() != 2
            || !(trace_id.bytes().chain(span_id.bytes()).chain(flags.bytes()))
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return None;
        }
        let trace_id = TraceId::from_hex(trace_id).ok()?;
        let span_id = SpanId::from_hex(span_id).ok()?;
        let flags = u8::from_str_radix(flags, 16).ok()?;
        let state = tracestate
            .and_then(|state| TraceState::from_str(state).ok())
            .unwrap_or_default();
        let context = SpanContext::new(trace_id, span_id, TraceFlags::new(flags & 1), true, state);
        context.is_valid().then_some(context)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn traceparents_are_read_by_the_w3c_rules() {
            let context = parse_traceparent(
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                Some("rojo=00f067aa0ba902b7"),
            )
            .unwrap();
            assert_eq!(
                context.trace_id().to_string(),
                "4bf92f3577b34da6a3ce929d0e0e4736"
            );
            assert_eq!(context.span_id().to_string(), "00f067aa0ba902b7");
            assert!(context.is_sampled() && context.is_remote());
            assert_eq!(context.trace_state().header(), "rojo=00f067aa0ba902b7");
            for bad in [
                "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
                "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
                "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
                "not a traceparent",
            ] {
                assert!(parse_traceparent(bad, None).is_none(), "{bad}");
            }
            // A later version may add fields.
            assert!(
                parse_traceparent(
                    "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-more",
                    None
                )
                .is_some()
            );
        }

        #[test]
        fn meta_without_trace_context_has_no_parent() {
            let mut meta = Map::new();
            meta.insert("progressToken".into(), Value::from(3));
            assert!(extract(&meta).is_none());
            meta.insert("traceparent".into(), Value::from("garbage"));
            assert!(extract(&meta).is_none());
        }
    }
}
