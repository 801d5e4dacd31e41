//! Any sequence of call names against an agent with collapsed macro harnesses, a collapsed
//! dynamic harness and uncollapsed ones, through one `Agent::tool_session`: never panics;
//! every call gets a result; a function of a harness the agent does not register never runs;
//! a function runs only for its own name or a qualified `Harness<sep>function` form of it;
//! a visible function's own name always runs that function; a call that runs nothing is a
//! container's answer or the not-found error.
//!
//! The input is the names, one a line (at most 16); an empty line collapses every container.
#![no_main]

use std::sync::{Mutex, OnceLock};

use hpd_agent::prelude::*;
use hpd_agent::{Agent, AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
use libfuzzer_sys::fuzz_target;

/// The functions that ran since the last look, as (harness, function).
static RAN: Mutex<Vec<(&'static str, &'static str)>> = Mutex::new(Vec::new());

fn ran(harness: &'static str, function: &'static str) -> String {
    RAN.lock().unwrap().push((harness, function));
    format!("{harness}.{function} ran")
}

#[derive(Default)]
struct Math;

#[collapse("Math operations")]
impl Math {
    /// Adds.
    #[ai_function]
    fn add(&self) -> String {
        ran("Math", "add")
    }

    /// Subtracts.
    #[ai_function]
    fn sub(&self) -> String {
        ran("Math", "sub")
    }
}

#[derive(Default)]
struct Files;

#[collapse("File access")]
impl Files {
    /// Reads a file.
    #[ai_function]
    fn read_file(&self) -> String {
        ran("Files", "read_file")
    }

    /// Writes a file.
    #[ai_function]
    fn write_file(&self) -> String {
        ran("Files", "write_file")
    }

    /// Lists files.
    #[ai_function]
    fn list(&self) -> String {
        ran("Files", "list")
    }
}

#[derive(Default)]
struct Plain;

#[tool_harness]
impl Plain {
    /// Answers.
    #[ai_function]
    fn ping(&self) -> String {
        ran("Plain", "ping")
    }
}

/// Registered with the registry but not with the agent: its functions must never run.
#[derive(Default)]
struct Unregistered;

#[tool_harness]
impl Unregistered {
    /// Must not run.
    #[ai_function]
    fn secret(&self) -> String {
        ran("Unregistered", "secret")
    }

    /// Must not run.
    #[ai_function]
    fn delete_all(&self) -> String {
        ran("Unregistered", "delete_all")
    }
}

/// Every function of the agent, as (harness, function).
const FUNCTIONS: [(&str, &str); 9] = [
    ("Math", "add"),
    ("Math", "sub"),
    ("Files", "read_file"),
    ("Files", "write_file"),
    ("Files", "list"),
    ("Plain", "ping"),
    ("web-tools", "fetch_page"),
    ("web-tools", "get"),
    ("Notes", "note"),
];

const SEPARATORS: [&str; 5] = [".", ":", "/", "-", "__"];

fn dynamic_tool(harness: &'static str, name: &'static str) -> Tool {
    Tool::new(
        name,
        "A tool",
        serde_json::json!({"type": "object"}),
        move |_, _| async move { ToolResult::ok(ran(harness, name)) },
    )
}

struct Fixed {
    runtime: tokio::runtime::Runtime,
    agent: Agent,
}

fn fixed() -> &'static Fixed {
    static FIXED: OnceLock<Fixed> = OnceLock::new();
    FIXED.get_or_init(|| {
        let web = HarnessBuilder::new("web-tools")
            .with_collapse("Web access")
            .with_tool(dynamic_tool("web-tools", "fetch_page"))
            .with_tool(dynamic_tool("web-tools", "get"))
            .build()
            .expect("the web harness builds");
        let notes = HarnessBuilder::new("Notes")
            .with_tool(dynamic_tool("Notes", "note"))
            .build()
            .expect("the notes harness builds");
        let agent = AgentBuilder::new()
            .with_tool_harness::<Math>()
            .with_tool_harness::<Files>()
            .with_tool_harness::<Plain>()
            .with_harness(web)
            .with_harness(notes)
            .with_chat_client(ScriptedChatClient::new())
            .build()
            .expect("the agent builds");
        Fixed {
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
                .expect("a runtime"),
            agent,
        }
    })
}

/// Whether `name` may run `function` of `harness`: its own name, or `harness`, a separator
/// and `function` (both compared without ASCII case).
fn names(name: &str, harness: &str, function: &str) -> bool {
    if name == function {
        return true;
    }
    SEPARATORS.iter().any(|separator| {
        name.get(..harness.len())
            .is_some_and(|left| left.eq_ignore_ascii_case(harness))
            && name[harness.len()..].starts_with(separator)
            && name[harness.len() + separator.len()..].eq_ignore_ascii_case(function)
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let fixed = fixed();
    let tools = fixed.agent.tool_session();
    RAN.lock().unwrap().clear();
    for (i, name) in text.split('\n').take(16).enumerate() {
        if name.is_empty() {
            tools.collapse_all();
            continue;
        }
        let visible = tools.visible_tool_names();
        let call_id = format!("c{i}");
        let outcome = fixed
            .runtime
            .block_on(tools.call_tool(&call_id, name, "{}"))
            .unwrap_or_else(|e| panic!("a call without middleware failed: {e}"));
        let result = outcome.result;
        let ran = std::mem::take(&mut *RAN.lock().unwrap());
        assert!(ran.len() <= 1, "{name:?} ran {ran:?}");
        match ran.first() {
            Some(&(harness, function)) => {
                assert!(
                    FUNCTIONS.contains(&(harness, function)),
                    "{name:?} ran {harness}.{function}, which the agent does not register"
                );
                assert!(
                    names(name, harness, function),
                    "{name:?} ran {harness}.{function}"
                );
                assert_eq!(result, ToolResult::ok(format!("{harness}.{function} ran")));
            }
            None => {
                if let Some(&(harness, function)) = FUNCTIONS
                    .iter()
                    .find(|(_, function)| *function == name && visible.iter().any(|v| v == name))
                {
                    panic!("the visible {harness}.{function} did not run for {name:?}: {result:?}");
                }
                if result.is_error {
                    assert!(
                        result
                            .text
                            .starts_with(&format!("Function '{name}' not found.")),
                        "{name:?}: {result:?}"
                    );
                } else {
                    assert!(
                        result.text.contains(" expanded. Available functions: "),
                        "{name:?}: {result:?}"
                    );
                }
            }
        }
    }
});
