//! A tool built at run time (`HarnessBuilder` + `Tool`) with any schema text, called through
//! `Agent::tool_session` with any arguments text: building never panics (a schema that is not
//! a JSON object schema is a build error); a built tool called with a JSON object (or empty,
//! blank or `null` text, which count as `{}`) runs its handler with exactly that object;
//! any other text gives the invalid-arguments result and the handler does not run.
//!
//! The input is the schema text, a 0xFF byte, then the arguments text; without a 0xFF byte the
//! schema is a fixed valid one and the whole input is the arguments text.
#![no_main]

use std::sync::{Arc, Mutex, OnceLock};

use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

const SCHEMA: &str = r#"{"type": "object", "properties": {"text": {"type": "string"}, "n": {"type": "integer"}}, "required": ["text"]}"#;

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a runtime")
    })
}

/// The arguments as the documented rule reads them: empty, blank or `null` is `{}`; anything
/// else must be a JSON object.
fn arguments_object(text: &str) -> Option<Value> {
    let trimmed = text.trim();
    if trimmed.is_empty() || trimmed == "null" {
        return Some(Value::Object(serde_json::Map::new()));
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(Value::Null) => Some(Value::Object(serde_json::Map::new())),
        Ok(value @ Value::Object(_)) => Some(value),
        _ => None,
    }
}

fuzz_target!(|data: &[u8]| {
    let (schema, arguments) = match data.iter().position(|&b| b == 0xff) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (SCHEMA.as_bytes(), data),
    };
    let (Ok(schema), Ok(arguments)) = (std::str::from_utf8(schema), std::str::from_utf8(arguments))
    else {
        return;
    };
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let record = Arc::clone(&seen);
    let tool = Tool::new(
        "probe",
        "Records its arguments",
        schema,
        move |args, _ctx| {
            let record = Arc::clone(&record);
            async move {
                let text = args.to_string();
                record.lock().unwrap().push(args);
                ToolResult::ok(text)
            }
        },
    );
    let harness = match HarnessBuilder::new("Dynamic").with_tool(tool).build() {
        Ok(harness) => harness,
        Err(error) => {
            assert!(
                !error.to_string().is_empty(),
                "a build error without a message"
            );
            return;
        }
    };
    let agent = match AgentBuilder::new()
        .with_harness(harness)
        .with_chat_client(ScriptedChatClient::new())
        .build()
    {
        Ok(agent) => agent,
        Err(error) => {
            assert!(
                !error.to_string().is_empty(),
                "a build error without a message"
            );
            return;
        }
    };
    let tools = agent.tool_session();
    let outcome = runtime()
        .block_on(tools.call_tool("c1", "probe", arguments))
        .unwrap_or_else(|e| panic!("a call without middleware failed: {e}"));
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    match arguments_object(arguments) {
        Some(object) => {
            assert_eq!(seen, [object.clone()], "the handler got other arguments");
            assert_eq!(outcome.result, ToolResult::ok(object.to_string()));
        }
        None => {
            assert!(seen.is_empty(), "the handler ran on {arguments:?}");
            assert!(outcome.result.is_error, "{outcome:?}");
            assert!(
                outcome
                    .result
                    .text
                    .starts_with("Invalid arguments for 'probe': "),
                "{outcome:?}"
            );
        }
    }
});
