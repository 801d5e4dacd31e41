//! Runs are mirrored into `tracing`: a `turn` span, `model_request` and `tool_call` spans, and a
//! debug event per agent event. A small recording subscriber stands in for a real one.

mod support;

use hpd_agent::{AgentBuilder, ChatResponse, ScriptedChatClient, ToolCall};
use hpd_agent_tests::MathTools;
use support::Recorder;

#[test]
fn runs_are_mirrored_into_tracing() {
    let recorder = Recorder::leak();
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
        .with_collapsing_layout(hpd_agent::config::CollapsingLayout::Hide)
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
    let lines = recorder.lines();
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
