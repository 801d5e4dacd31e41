//! The harnesses of a crate that renames hpd-agent work like any other: registered by type and
//! by name, called through an agent.

use agents::config::ToolHarnessReference;
use agents::harness::HarnessInfo;
use agents::{AgentBuilder, ChatMessage, ChatResponse, ScriptedChatClient, ToolCall};
use renamed_dependency::{Alarm, Calendar, Clock};

#[test]
fn the_macros_declared_each_harness() {
    let clock = HarnessInfo::of::<Clock>();
    assert_eq!(clock.rust_type(), "renamed_dependency::Clock");
    assert_eq!(
        clock.schemas()[0]["properties"]["offset"]["description"],
        "Hours to add."
    );
    assert!(HarnessInfo::of::<Calendar>().is_collapsed());
    assert!(std::ptr::eq(
        HarnessInfo::find("alarm").unwrap(),
        HarnessInfo::of::<Alarm>()
    ));
}

#[tokio::test]
async fn an_agent_calls_them() {
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![
            ToolCall::new("c1", "hour", r#"{"offset": 3}"#),
            ToolCall::new("c2", "set_alarm", r#"{"minutes": 0}"#),
            ToolCall::new("c3", "Calendar", "{}"),
        ]),
        ChatResponse::tool_calls(vec![ToolCall::new(
            "c4",
            "call_function",
            r#"{"name": "next_free_day", "arguments": {}}"#,
        )]),
        ChatResponse::text("done"),
    ]);
    let agent = AgentBuilder::new()
        .with_tool_harness::<Clock>()
        .with_tool_harness::<Calendar>()
        .with_tool_harness_reference(
            &ToolHarnessReference::new("Alarm").with_functions(["set_alarm"]),
        )
        .with_chat_client(model.clone())
        .build()
        .unwrap();
    let output = agent.run("when?").await.unwrap();
    assert_eq!(output.text, "done");
    let requests = model.requests();
    let results: Vec<(String, String)> = requests[2]
        .messages
        .iter()
        .filter_map(|message| match message {
            ChatMessage::Tool {
                call_id, content, ..
            } => Some((call_id.clone(), content.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(results[0], ("c1".to_owned(), "15".to_owned()));
    assert!(
        results[1].1.contains("minutes must be at least 1"),
        "{results:?}"
    );
    assert!(results[2].1.contains("Dates are ISO 8601."), "{results:?}");
    assert_eq!(results[3], ("c4".to_owned(), "2026-12-03".to_owned()));
}
