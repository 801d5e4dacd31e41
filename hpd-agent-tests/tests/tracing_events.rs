//! Runs are mirrored into `tracing`: a `turn` span, `model_request` and `tool_call` spans, and a
//! debug event per agent event. A small recording subscriber stands in for a real one.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient, ToolCall};
use hpd_agent_tests::MathTools;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

#[derive(Default)]
struct Recorder {
    next: AtomicU64,
    lines: Mutex<Vec<String>>,
}

struct Fields(String);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!(" {}={value:?}", field.name()));
    }
}

impl Recorder {
    fn push(&self, line: String) {
        self.lines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(line);
    }
}

impl Subscriber for &'static Recorder {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target().starts_with("hpd_agent")
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut fields = Fields(String::new());
        span.record(&mut fields);
        self.push(format!("span {}{}", span.metadata().name(), fields.0));
        Id::from_u64(self.next.fetch_add(1, Ordering::SeqCst) + 1)
    }

    fn record(&self, _span: &Id, _values: &Record<'_>) {}

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields(String::new());
        event.record(&mut fields);
        self.push(format!("event{}", fields.0));
    }

    fn enter(&self, _span: &Id) {}

    fn exit(&self, _span: &Id) {}
}

#[test]
fn runs_are_mirrored_into_tracing() {
    let recorder: &'static Recorder = Box::leak(Box::default());
    let client = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![ToolCall::new(
            "c1",
            "MathTools.add",
            r#"{"a":1,"b":2}"#,
        )]),
        ChatResponse::tool_calls(vec![ToolCall::new("c2", "add", r#"{"a":1,"b":2}"#)]),
        ChatResponse::text("3"),
    ]);
    let agent = AgentBuilder::new()
        .with_name("tracer")
        .with_tool_harness::<MathTools>()
        .with_chat_client(client)
        .build()
        .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    tracing::subscriber::with_default(recorder, || {
        runtime.block_on(agent.run("1+2")).unwrap();
    });
    let lines = recorder
        .lines
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let has = |needle: &str| lines.iter().any(|l| l.contains(needle));
    assert!(has("span turn agent=tracer"), "{lines:#?}");
    assert!(has("span model_request iteration=1"), "{lines:#?}");
    assert!(has("span tool_call name=\"add\" call_id=c2"), "{lines:#?}");
    assert!(
        has("message=iteration started iteration=1 visible_tools=MathTools"),
        "{lines:#?}"
    );
    assert!(
        has("message=iteration started iteration=2 visible_tools=add, multiply, divide"),
        "{lines:#?}"
    );
    assert!(
        has("message=container expanded harness=\"MathTools\" recovery=true"),
        "{lines:#?}"
    );
    assert!(has("message=turn finished"), "{lines:#?}");
}
