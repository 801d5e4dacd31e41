//! Helpers shared by several test files: a recording `tracing` subscriber, a provider server
//! that echoes the API key in its error, and a counting tool for run-time harnesses.

#![allow(dead_code)] // each test file uses its own part of this module

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use hpd_agent::{Tool, ToolResult};
use serde_json::{Value, json};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

/// Records every event and span of the crate (all levels) as text: `span {name} {fields}`,
/// `record {fields}` and `event {target} {fields}` lines, fields as ` name=value`.
#[derive(Default)]
pub struct Recorder {
    next: AtomicU64,
    lines: Mutex<Vec<String>>,
    /// Records the events of every crate (rmcp, its OAuth client, ...), not only this one's.
    every_target: bool,
}

struct Fields(String);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!(" {}={value:?}", field.name()));
    }
}

impl Recorder {
    /// A recorder that lives until the process ends, as a subscriber passed by reference to
    /// `tracing::subscriber::with_default` must.
    pub fn leak() -> &'static Recorder {
        Box::leak(Box::default())
    }

    /// [`leak`](Self::leak), recording the events and spans of every crate.
    pub fn leak_every_target() -> &'static Recorder {
        Box::leak(Box::new(Recorder {
            every_target: true,
            ..Recorder::default()
        }))
    }

    /// The lines recorded so far.
    pub fn lines(&self) -> Vec<String> {
        self.lines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn push(&self, line: String) {
        self.lines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(line);
    }
}

impl Subscriber for &'static Recorder {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        self.every_target || metadata.target().starts_with("hpd_agent")
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut fields = Fields(String::new());
        span.record(&mut fields);
        self.push(format!("span {}{}", span.metadata().name(), fields.0));
        Id::from_u64(self.next.fetch_add(1, Ordering::SeqCst) + 1)
    }

    fn record(&self, _span: &Id, values: &Record<'_>) {
        let mut fields = Fields(String::new());
        values.record(&mut fields);
        self.push(format!("record{}", fields.0));
    }

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields(String::new());
        event.record(&mut fields);
        self.push(format!("event {}{}", event.metadata().target(), fields.0));
    }

    fn enter(&self, _span: &Id) {}

    fn exit(&self, _span: &Id) {}
}

/// A provider server that fails with `secret` in its message: 503 once (retried, so traced),
/// then 401.
pub async fn echoing_server(secret: &str) -> MockServer {
    let server = MockServer::start().await;
    let body = json!({"type": "error", "error": {"type": "authentication_error",
                      "message": format!("Incorrect API key provided: {secret}")}});
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(503).set_body_json(body.clone()))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(401).set_body_json(body))
        .mount(&server)
        .await;
    server
}

/// The parameter schema of a tool taking a `city` string.
pub fn city_schema() -> Value {
    json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
}

/// A tool that counts its calls in `calls` and answers `"{function}: {city} ({harness})"`.
pub fn counted(name: &'static str, calls: &Arc<AtomicUsize>) -> Tool {
    let calls = Arc::clone(calls);
    Tool::new(
        name,
        format!("The {name} tool"),
        city_schema(),
        move |args, ctx| {
            let calls = Arc::clone(&calls);
            async move {
                calls.fetch_add(1, Ordering::SeqCst);
                let city = args["city"].as_str().unwrap_or("?").to_owned();
                ToolResult::ok(format!(
                    "{}: {city} ({})",
                    ctx.function_name(),
                    ctx.harness_name()
                ))
            }
        },
    )
}
