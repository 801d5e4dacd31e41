//! Whatever the model sends (any call names, any argument text, any number of calls), a run
//! finishes, every call gets exactly one result in call order, and the session can go on.

use std::sync::{Arc, Mutex};

use hpd_agent::{
    AgentBuilder, AgentEvent, ChatMessage, ChatResponse, ScriptedChatClient, ToolCall,
};
use hpd_agent_tests::{DatabaseTools, FaultTools, FileTools, MathTools, SearchTools, WeatherTools};
use proptest::prelude::*;

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::sample::select(vec![
            "add",
            "divide",
            "MathTools",
            "mathtools.add",
            "MathTools__divide",
            "query",
            "DatabaseTools",
            "get_weather",
            "get_forecast",
            "explode",
            "echo",
            "ping",
            "search",
            "tavily_search",
            "read_file",
            "write_file",
            "FileTools/write_file",
            "",
        ])
        .prop_map(str::to_owned),
        ".{0,12}",
    ]
}

fn arguments() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("null".to_owned()),
        Just("{}".to_owned()),
        Just(r#"{"a": 1, "b": 2}"#.to_owned()),
        Just(r#"{"a": 1.5, "b": 0}"#.to_owned()),
        Just(r#"{"city": "Oslo", "days": 3}"#.to_owned()),
        Just(r#"{"days": -1, "city": null}"#.to_owned()),
        Just(r#"{"sql": "select", "text": "x", "path": "a", "query": "q"}"#.to_owned()),
        Just("[1, 2]".to_owned()),
        Just("\"text\"".to_owned()),
        Just(r#"{"a": "#.to_owned()),
        Just(r#"{"a": 99999999999999999999999}"#.to_owned()),
        ".{0,24}",
    ]
}

fn responses() -> impl Strategy<Value = Vec<Vec<(String, String)>>> {
    proptest::collection::vec(proptest::collection::vec((name(), arguments()), 1..5), 0..4)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, .. ProptestConfig::default() })]

    #[test]
    fn any_model_output_keeps_the_history_valid(
        responses in responses(),
        execute in any::<bool>(),
        notes in any::<bool>(),
    ) {
        let client = ScriptedChatClient::new();
        let finished = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&finished);
        let agent = AgentBuilder::new()
            .with_tool_harness::<MathTools>()
            .with_tool_harness::<WeatherTools>()
            .with_tool_harness::<DatabaseTools>()
            .with_tool_harness::<FileTools>()
            .with_tool_harness::<FaultTools>()
            .with_tool_harness::<SearchTools>()
            .configure_harness_collapsing(|c| {
                c.execute_recovered_calls = execute;
                c.container_notes = notes;
            })
            .on_event(move |event| {
                if let AgentEvent::ToolCallFinished { call_id, .. } = event {
                    seen.lock().unwrap().push(call_id.clone());
                }
            })
            .with_max_iterations(8)
            .with_chat_client(client.clone())
            .build()
            .unwrap();
        let mut id = 0;
        let mut expected_calls = Vec::new();
        for calls in &responses {
            let calls: Vec<ToolCall> = calls
                .iter()
                .map(|(name, arguments)| {
                    id += 1;
                    expected_calls.push(format!("c{id}"));
                    ToolCall::new(format!("c{id}"), name.clone(), arguments.clone())
                })
                .collect();
            client.push(ChatResponse::tool_calls(calls));
        }
        client.push(ChatResponse::text("done"));
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let mut session = agent.session();
        let out = runtime.block_on(session.run("go")).unwrap();
        prop_assert_eq!(out.text, "done");

        // Every call the model made got exactly one result, in order.
        prop_assert_eq!(&*finished.lock().unwrap(), &expected_calls);
        // The history pairs every call it holds with one result right after its response, in
        // call order, and holds no result without its call. Without notes it holds every
        // call; with them, a response answered by the layout alone left a note instead.
        let history = session.history();
        let mut held = Vec::new();
        for (i, message) in history.iter().enumerate() {
            if let ChatMessage::Assistant { tool_calls, .. } = message {
                let ids: Vec<&str> = tool_calls.iter().map(|c| c.id.as_str()).collect();
                let results: Vec<&str> = history[i + 1..]
                    .iter()
                    .take(ids.len())
                    .filter_map(|m| match m {
                        ChatMessage::Tool { call_id, .. } => Some(call_id.as_str()),
                        _ => None,
                    })
                    .collect();
                prop_assert_eq!(&results, &ids);
                held.extend(ids.iter().map(|id| (*id).to_owned()));
            }
        }
        let answered: Vec<&str> = history
            .iter()
            .filter_map(|m| match m {
                ChatMessage::Tool { call_id, .. } => Some(call_id.as_str()),
                _ => None,
            })
            .collect();
        prop_assert_eq!(&answered, &held.iter().map(String::as_str).collect::<Vec<_>>());
        if !notes {
            prop_assert_eq!(held, expected_calls.clone());
        }

        client.push(ChatResponse::text("again"));
        prop_assert_eq!(runtime.block_on(session.run("next")).unwrap().text, "again");
    }
}
