//! The run's `tracing` spans: `turn`, `model_request` and `tool_call` (target `hpd_agent`,
//! level INFO). With the `otel` feature they are also the OpenTelemetry GenAI spans
//! `invoke_agent {agent}`, `chat {model}` and `execute_tool {tool}`: the span names and kinds
//! travel in the `otel.name` and `otel.kind` fields that `tracing-opentelemetry` reads, and the
//! attributes are set on the OpenTelemetry span directly (they do not show in other `tracing`
//! subscribers). See [`crate::otel`] for the attributes and how an operator exports them.
//!
//! Entry points: [`turn_span`], [`chat_span`], [`tool_span`] and the `record_*` functions that
//! fill a span in as the run learns more. Without the feature the `record_*` functions do
//! nothing.

use tracing::Span;

use crate::chat::{ChatError, ChatRequest, ChatResponse, FinishReason, ModelInfo, ToolCall, Usage};
use crate::error::RunError;
use crate::tool::ToolResult;

/// What every span of one turn shares.
#[derive(Debug, Clone, Default)]
pub(crate) struct TurnTrace {
    /// The session's id (`gen_ai.conversation.id`), for sessions with a store.
    #[cfg_attr(not(feature = "otel"), allow(dead_code))]
    pub(crate) conversation: Option<String>,
    /// Whether messages, arguments and results are recorded (off by default).
    pub(crate) content: bool,
}

/// The `turn` span (`invoke_agent {agent}`).
pub(crate) fn turn_span(
    agent: &str,
    info: ModelInfo<'_>,
    trace: &TurnTrace,
    turn_id: &str,
    message: &str,
) -> Span {
    #[cfg(feature = "otel")]
    {
        let name = if agent.is_empty() {
            "invoke_agent".to_owned()
        } else {
            format!("invoke_agent {agent}")
        };
        let span = tracing::info_span!(
            target: "hpd_agent",
            "turn",
            agent = %agent,
            otel.name = %name,
            otel.kind = "internal",
        );
        otel::turn(&span, agent, info, trace, turn_id, message);
        span
    }
    #[cfg(not(feature = "otel"))]
    {
        let _ = (info, trace, turn_id, message);
        tracing::info_span!(target: "hpd_agent", "turn", agent = %agent)
    }
}

/// Records the collapsing layout of the current turn on its span.
pub(crate) fn record_layout(layout: &'static str) {
    #[cfg(feature = "otel")]
    otel::set(&Span::current(), "hpd_agent.collapsing.layout", layout);
    #[cfg(not(feature = "otel"))]
    let _ = layout;
}

/// Records the usage and the last finish reason of the current turn on its span.
pub(crate) fn record_turn_usage(usage: Usage, finish_reason: &FinishReason, iterations: usize) {
    #[cfg(feature = "otel")]
    {
        let span = Span::current();
        otel::usage(&span, usage);
        otel::finish_reasons(&span, finish_reason);
        otel::set(
            &span,
            "hpd_agent.iterations",
            i64::try_from(iterations).unwrap_or(i64::MAX),
        );
    }
    #[cfg(not(feature = "otel"))]
    let _ = (usage, finish_reason, iterations);
}

/// Records how the turn ended: its answer (with content on) or its error.
pub(crate) fn record_turn_end(span: &Span, outcome: Result<&str, &RunError>, content: bool) {
    #[cfg(feature = "otel")]
    match outcome {
        Ok(text) if content => otel::set(
            span,
            "gen_ai.output.messages",
            otel::output_messages(Some(text), &[], &FinishReason::Stop),
        ),
        Ok(_) => {}
        Err(error) => otel::error(span, run_error_type(error), &error.to_string()),
    }
    #[cfg(not(feature = "otel"))]
    let _ = (span, outcome, content);
}

/// The `model_request` span (`chat {model}`).
pub(crate) fn chat_span(
    info: ModelInfo<'_>,
    trace: &TurnTrace,
    iteration: usize,
    request: &ChatRequest<'_>,
) -> Span {
    #[cfg(feature = "otel")]
    {
        let name = match info.model {
            Some(model) => format!("chat {model}"),
            None => "chat".to_owned(),
        };
        let span = tracing::info_span!(
            target: "hpd_agent",
            "model_request",
            iteration,
            otel.name = %name,
            otel.kind = "client",
        );
        otel::chat(&span, info, trace, request);
        span
    }
    #[cfg(not(feature = "otel"))]
    {
        let _ = (info, trace, request);
        tracing::info_span!(target: "hpd_agent", "model_request", iteration)
    }
}

/// Records the model's answer, or why there is none, on a `model_request` span.
pub(crate) fn record_chat(span: &Span, outcome: Result<&ChatResponse, &ChatError>, content: bool) {
    #[cfg(feature = "otel")]
    match outcome {
        Ok(response) => {
            otel::usage(span, response.usage);
            otel::finish_reasons(span, &response.finish_reason);
            if content {
                otel::set(
                    span,
                    "gen_ai.output.messages",
                    otel::output_messages(
                        response.text.as_deref(),
                        &response.tool_calls,
                        &response.finish_reason,
                    ),
                );
            }
        }
        Err(error) => otel::error(span, chat_error_type(error), &error.to_string()),
    }
    #[cfg(not(feature = "otel"))]
    let _ = (span, outcome, content);
}

/// Records that the run was cancelled while `span` was waiting.
pub(crate) fn record_cancelled(span: &Span) {
    #[cfg(feature = "otel")]
    otel::error(span, "cancelled", "run cancelled");
    #[cfg(not(feature = "otel"))]
    let _ = span;
}

/// The `tool_call` span of one call the model made (`execute_tool {tool}`); its name is set
/// by [`record_tool`] once the call is resolved.
pub(crate) fn tool_span(call: &ToolCall, trace: &TurnTrace) -> Span {
    #[cfg(feature = "otel")]
    {
        let span = tracing::info_span!(
            target: "hpd_agent",
            "tool_call",
            name = call.name.as_str(),
            call_id = %call.id,
            otel.name = tracing::field::Empty,
            otel.kind = "internal",
        );
        otel::tool(&span, call, trace);
        span
    }
    #[cfg(not(feature = "otel"))]
    {
        let _ = trace;
        tracing::info_span!(
            target: "hpd_agent",
            "tool_call",
            name = call.name.as_str(),
            call_id = %call.id,
        )
    }
}

/// Names the tool a call resolved to (the function, or the name as called when it names no
/// function), with its harness when known. Call once per span, before it is entered.
pub(crate) fn record_tool(span: &Span, tool: &str, harness: Option<&str>) {
    #[cfg(feature = "otel")]
    {
        span.record("otel.name", format!("execute_tool {tool}"));
        otel::set(span, "gen_ai.tool.name", tool.to_owned());
        if let Some(harness) = harness {
            otel::set(span, "hpd_agent.harness", harness.to_owned());
        }
    }
    #[cfg(not(feature = "otel"))]
    let _ = (span, tool, harness);
}

/// Records the containers a call expanded, and whether it was a recovery (a call of a member
/// of a collapsed container).
pub(crate) fn record_expanded(span: &Span, containers: &[String], recovery: bool) {
    #[cfg(feature = "otel")]
    if !containers.is_empty() {
        otel::set(span, "hpd_agent.container.expanded", containers.join(", "));
        otel::set(span, "hpd_agent.recovery", recovery);
    }
    #[cfg(not(feature = "otel"))]
    let _ = (span, containers, recovery);
}

/// Records the result of a call: `error.type` (`error_type`, else `tool_error`) when it
/// reports an error; the result text with content on.
pub(crate) fn record_tool_result(
    span: &Span,
    result: &ToolResult,
    error_type: Option<&'static str>,
    content: bool,
) {
    #[cfg(feature = "otel")]
    {
        if result.is_error {
            otel::error(
                span,
                error_type.unwrap_or("tool_error"),
                "the tool call failed",
            );
        } else if content {
            otel::set(span, "gen_ai.tool.call.result", result.text.clone());
        }
    }
    #[cfg(not(feature = "otel"))]
    let _ = (span, result, error_type, content);
}

/// Records where a call that needs approval stands (`hpd_agent.approval`): `pending` when the
/// turn pauses for it, `approved`, `edited` or `denied` when it resumes.
pub(crate) fn record_approval(span: &Span, state: &'static str) {
    #[cfg(feature = "otel")]
    otel::set(span, "hpd_agent.approval", state);
    #[cfg(not(feature = "otel"))]
    let _ = (span, state);
}

/// Records on the current span (the call's) that middleware blocked the call.
pub(crate) fn record_blocked() {
    #[cfg(feature = "otel")]
    otel::set(&Span::current(), "hpd_agent.middleware.blocked", true);
}

/// The MCP client's span of one `tools/call` request (`tools/call {tool}`, kind `CLIENT`).
#[cfg(feature = "mcp")]
pub(crate) fn mcp_client_span(tool: &str, server: &str) -> Span {
    #[cfg(feature = "otel")]
    {
        let span = tracing::info_span!(
            target: "hpd_agent::mcp",
            "mcp_call",
            tool,
            server,
            otel.name = %format!("tools/call {tool}"),
            otel.kind = "client",
        );
        otel::mcp(&span, tool);
        span
    }
    #[cfg(not(feature = "otel"))]
    tracing::info_span!(target: "hpd_agent::mcp", "mcp_call", tool, server)
}

/// The MCP server's span of one `tools/call` request (`tools/call {tool}`, kind `SERVER`),
/// child of the trace context the request's `_meta` carries.
#[cfg(feature = "mcp")]
pub(crate) fn mcp_server_span(
    tool: &str,
    request_id: &dyn std::fmt::Display,
    meta: &serde_json::Map<String, serde_json::Value>,
) -> Span {
    #[cfg(feature = "otel")]
    {
        use tracing_opentelemetry::OpenTelemetrySpanExt as _;
        let span = tracing::info_span!(
            target: "hpd_agent::mcp",
            "mcp_serve",
            tool,
            otel.name = %format!("tools/call {tool}"),
            otel.kind = "server",
        );
        if let Some(parent) = crate::otel::extract(meta) {
            // Only fails without the OpenTelemetry layer, where there is nothing to join.
            let _ = span.set_parent(parent);
        }
        otel::mcp(&span, tool);
        otel::set(&span, "jsonrpc.request.id", request_id.to_string());
        span
    }
    #[cfg(not(feature = "otel"))]
    {
        let _ = (request_id, meta);
        tracing::info_span!(target: "hpd_agent::mcp", "mcp_serve", tool)
    }
}

/// Records how an MCP `tools/call` ended: `(error.type, description)` when it failed.
#[cfg(feature = "mcp")]
pub(crate) fn record_mcp_call(span: &Span, failure: Option<(&'static str, &str)>) {
    #[cfg(feature = "otel")]
    if let Some((error_type, description)) = failure {
        otel::error(span, error_type, description);
    }
    #[cfg(not(feature = "otel"))]
    let _ = (span, failure);
}

/// The `error.type` of a provider failure: the HTTP status, or a word for the kind.
#[cfg(feature = "otel")]
pub(crate) fn chat_error_type(error: &ChatError) -> &'static str {
    match error {
        ChatError::Status { status, .. } => status_text(*status),
        ChatError::Transport(_) => "transport",
        ChatError::Timeout(_) => "timeout",
        ChatError::Malformed(_) => "malformed_response",
        ChatError::Config(_) => "configuration",
        ChatError::ScriptExhausted(_) => "script_exhausted",
        #[allow(unreachable_patterns)]
        _ => "_OTHER",
    }
}

/// The `error.type` of a failed turn.
#[cfg(feature = "otel")]
pub(crate) fn run_error_type(error: &RunError) -> &'static str {
    match error {
        RunError::Chat(error) => chat_error_type(error),
        RunError::MaxIterations(_) => "max_iterations",
        RunError::Cancelled => "cancelled",
        RunError::Middleware { .. } => "middleware",
        RunError::Config(_) => "configuration",
        RunError::Build(_) => "build",
        RunError::Store(_) => "store",
        RunError::Summarizer(_) => "summarizer",
        #[allow(unreachable_patterns)]
        _ => "_OTHER",
    }
}

/// An HTTP status as a static string (the common ones; others are `http_error`).
#[cfg(feature = "otel")]
fn status_text(status: u16) -> &'static str {
    match status {
        400 => "400",
        401 => "401",
        403 => "403",
        404 => "404",
        408 => "408",
        409 => "409",
        413 => "413",
        422 => "422",
        429 => "429",
        500 => "500",
        502 => "502",
        503 => "503",
        504 => "504",
        529 => "529",
        _ => "http_error",
    }
}

#[cfg(feature = "otel")]
pub(crate) mod otel {
    //! The OpenTelemetry attributes of the spans, set through `tracing-opentelemetry`.

    use opentelemetry::trace::Status;
    use opentelemetry::{Array, StringValue, Value};
    use serde_json::{Value as Json, json};
    use tracing::Span;
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;

    use super::TurnTrace;
    use crate::chat::{
        ChatMessage, ChatRequest, FinishReason, ModelInfo, ModelOptions, ToolCall, Usage,
    };

    /// Sets one attribute (nothing happens without the OpenTelemetry layer).
    pub(crate) fn set(span: &Span, key: &'static str, value: impl Into<Value>) {
        span.set_attribute(key, value);
    }

    fn strings(values: impl IntoIterator<Item = String>) -> Value {
        Value::Array(Array::String(
            values.into_iter().map(StringValue::from).collect(),
        ))
    }

    fn provider(span: &Span, info: ModelInfo<'_>) {
        set(
            span,
            "gen_ai.provider.name",
            info.provider.unwrap_or("unknown").to_owned(),
        );
        if let Some(model) = info.model {
            set(span, "gen_ai.request.model", model.to_owned());
        }
    }

    pub(crate) fn turn(
        span: &Span,
        agent: &str,
        info: ModelInfo<'_>,
        trace: &TurnTrace,
        turn_id: &str,
        message: &str,
    ) {
        set(span, "gen_ai.operation.name", "invoke_agent");
        provider(span, info);
        if !agent.is_empty() {
            set(span, "gen_ai.agent.name", agent.to_owned());
        }
        if let Some(id) = &trace.conversation {
            set(span, "gen_ai.conversation.id", id.clone());
        }
        set(span, "hpd_agent.turn.id", turn_id.to_owned());
        if trace.content {
            let messages =
                json!([{"role": "user", "parts": [{"type": "text", "content": message}]}]);
            set(span, "gen_ai.input.messages", messages.to_string());
        }
    }

    pub(crate) fn chat(
        span: &Span,
        info: ModelInfo<'_>,
        trace: &TurnTrace,
        request: &ChatRequest<'_>,
    ) {
        set(span, "gen_ai.operation.name", "chat");
        provider(span, info);
        if let Some((host, port)) = info.base_url.and_then(server) {
            set(span, "server.address", host);
            set(span, "server.port", i64::from(port));
        }
        if let Some(id) = &trace.conversation {
            set(span, "gen_ai.conversation.id", id.clone());
        }
        options(span, request.options);
        set(
            span,
            "hpd_agent.tools.count",
            i64::try_from(request.tools.len()).unwrap_or(i64::MAX),
        );
        if trace.content {
            if !request.instructions.is_empty() {
                let instructions = json!([{"type": "text", "content": request.instructions}]);
                set(span, "gen_ai.system_instructions", instructions.to_string());
            }
            set(
                span,
                "gen_ai.input.messages",
                input_messages(request.messages).to_string(),
            );
        }
    }

    fn options(span: &Span, options: &ModelOptions) {
        if let Some(t) = options.temperature {
            set(span, "gen_ai.request.temperature", t);
        }
        if let Some(p) = options.top_p {
            set(span, "gen_ai.request.top_p", p);
        }
        if let Some(n) = options.max_output_tokens {
            set(span, "gen_ai.request.max_tokens", i64::from(n));
        }
        if let Some(seed) = options.seed {
            set(span, "gen_ai.request.seed", seed);
        }
        if !options.stop.is_empty() {
            set(
                span,
                "gen_ai.request.stop_sequences",
                strings(options.stop.clone()),
            );
        }
    }

    /// The host and port of a base URL (never its user or password).
    fn server(base_url: &str) -> Option<(String, u16)> {
        let url = reqwest::Url::parse(base_url).ok()?;
        Some((url.host_str()?.to_owned(), url.port_or_known_default()?))
    }

    pub(crate) fn tool(span: &Span, call: &ToolCall, trace: &TurnTrace) {
        set(span, "gen_ai.operation.name", "execute_tool");
        set(span, "gen_ai.tool.call.id", call.id.clone());
        set(span, "gen_ai.tool.type", "function");
        if trace.content {
            set(span, "gen_ai.tool.call.arguments", call.arguments.clone());
        }
    }

    #[cfg(feature = "mcp")]
    pub(crate) fn mcp(span: &Span, tool: &str) {
        set(span, "mcp.method.name", "tools/call");
        set(span, "gen_ai.operation.name", "execute_tool");
        set(span, "gen_ai.tool.name", tool.to_owned());
    }

    pub(crate) fn usage(span: &Span, usage: Usage) {
        let int = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        set(span, "gen_ai.usage.input_tokens", int(usage.input_tokens));
        set(span, "gen_ai.usage.output_tokens", int(usage.output_tokens));
        if usage.cached_input_tokens > 0 {
            set(
                span,
                "gen_ai.usage.cache_read.input_tokens",
                int(usage.cached_input_tokens),
            );
        }
        if usage.reasoning_tokens > 0 {
            set(
                span,
                "gen_ai.usage.reasoning.output_tokens",
                int(usage.reasoning_tokens),
            );
        }
    }

    /// The finish reason as the conventions' output messages name it.
    fn reason(reason: &FinishReason) -> String {
        match reason {
            FinishReason::Stop => "stop".to_owned(),
            FinishReason::ToolCalls => "tool_call".to_owned(),
            FinishReason::Length => "length".to_owned(),
            FinishReason::ContentFilter => "content_filter".to_owned(),
            FinishReason::Other(other) => other.clone(),
        }
    }

    pub(crate) fn finish_reasons(span: &Span, finish_reason: &FinishReason) {
        set(
            span,
            "gen_ai.response.finish_reasons",
            strings([reason(finish_reason)]),
        );
    }

    /// Sets `error.type` and the span's error status.
    pub(crate) fn error(span: &Span, error_type: &'static str, description: &str) {
        set(span, "error.type", error_type);
        span.set_status(Status::error(description.to_owned()));
    }

    /// Arguments as the JSON they are, else as the text the model sent.
    fn arguments(text: &str) -> Json {
        serde_json::from_str(text).unwrap_or_else(|_| Json::String(text.to_owned()))
    }

    fn call_part(call: &ToolCall) -> Json {
        json!({"type": "tool_call", "id": call.id, "name": call.name, "arguments": arguments(&call.arguments)})
    }

    /// The conversation by the conventions' input messages schema.
    pub(crate) fn input_messages(messages: &[ChatMessage]) -> Json {
        Json::Array(
            messages
                .iter()
                .map(|message| match message {
                    ChatMessage::User { content } => {
                        json!({"role": "user", "parts": [{"type": "text", "content": content}]})
                    }
                    ChatMessage::Assistant {
                        content,
                        tool_calls,
                        ..
                    } => {
                        let mut parts: Vec<Json> = content
                            .iter()
                            .map(|text| json!({"type": "text", "content": text}))
                            .collect();
                        parts.extend(tool_calls.iter().map(call_part));
                        json!({"role": "assistant", "parts": parts})
                    }
                    ChatMessage::Tool {
                        call_id, content, ..
                    } => json!({"role": "tool", "parts": [
                        {"type": "tool_call_response", "id": call_id, "response": content}
                    ]}),
                })
                .collect(),
        )
    }

    /// One answer by the conventions' output messages schema.
    pub(crate) fn output_messages(
        text: Option<&str>,
        calls: &[ToolCall],
        finish_reason: &FinishReason,
    ) -> String {
        let mut parts: Vec<Json> = text
            .iter()
            .map(|text| json!({"type": "text", "content": text}))
            .collect();
        parts.extend(calls.iter().map(call_part));
        json!([{"role": "assistant", "parts": parts, "finish_reason": reason(finish_reason)}])
            .to_string()
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn servers_are_named_without_credentials() {
            assert_eq!(
                server("https://user:s3cret@api.example.com/v1"),
                Some(("api.example.com".to_owned(), 443))
            );
            assert_eq!(
                server("http://127.0.0.1:8080"),
                Some(("127.0.0.1".to_owned(), 8080))
            );
            assert_eq!(server("not a url"), None);
        }

        #[test]
        fn messages_follow_the_schema() {
            let messages = [
                ChatMessage::user("Weather in Paris?"),
                ChatMessage::Assistant {
                    content: None,
                    tool_calls: vec![ToolCall::new("c1", "weather", r#"{"city":"Paris"}"#)],
                    reasoning: Vec::new(),
                },
                ChatMessage::Tool {
                    call_id: "c1".into(),
                    content: "rainy".into(),
                    is_error: false,
                    references: Vec::new(),
                    parts: Vec::new(),
                },
            ];
            assert_eq!(
                input_messages(&messages),
                json!([
                    {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]},
                    {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "weather", "arguments": {"city": "Paris"}}]},
                    {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "rainy"}]},
                ])
            );
            let output: Json =
                serde_json::from_str(&output_messages(Some("Rainy."), &[], &FinishReason::Stop))
                    .unwrap();
            assert_eq!(
                output,
                json!([{"role": "assistant", "parts": [{"type": "text", "content": "Rainy."}], "finish_reason": "stop"}])
            );
        }
    }
}
