//! Sub-agents: a tool that runs a child agent with its own instructions and tools.
//!
//! A `SubAgent` is one tool (a single `input` string) whose call runs a fresh child agent built
//! from its own `AgentConfig`; the child's final answer is the tool result. Register one on its
//! own with `AgentBuilder::with_sub_agent`, or declare it inside a harness with `#[sub_agent]`
//! on a method returning it: then it is a member of that harness, behind its container when the
//! harness is collapsed. `with_parent_functions` hands functions of the parent's harnesses to
//! the child. The child uses the parent's chat client unless its config names a model; its
//! events reach the parent's subscribers wrapped in `AgentEvent::SubAgent`.
//!
//! One scripted model plays the parent and both children, so the example runs offline:
//!
//! ```text
//! cargo run -p hpd-agent-examples --example sub_agents
//! ```

use hpd_agent::prelude::*;
use hpd_agent::{
    AgentBuilder, AgentConfig, AgentEvent, ChatResponse, ScriptedChatClient, ToolCall,
    config::CALL_TOOL,
};

/// Writing helpers, collapsed; the `editor` sub-agent is one of its members.
#[derive(Default)]
pub struct Writing;

#[collapse("Writing helpers")]
impl Writing {
    /// Counts the words of a text.
    #[ai_function]
    fn word_count(&self, text: String) -> usize {
        text.split_whitespace().count()
    }

    /// A child agent that shortens texts, allowed to count words with the parent's tool.
    #[sub_agent]
    fn editor(&self) -> SubAgent {
        let config =
            AgentConfig::default().with_instructions("You shorten texts to at most five words.");
        SubAgent::new("editor", "Shortens a text.", config)
            .with_parent_functions(["Writing.word_count"])
    }
}

/// Prints each agent's requests and calls, indented by how deep the agent runs.
fn print_event(event: &AgentEvent, agent: &str, depth: usize) {
    let indent = "  ".repeat(depth);
    match event {
        AgentEvent::SubAgent { name, event, .. } => print_event(event, name, depth + 1),
        AgentEvent::IterationStarted { visible_tools, .. } => {
            println!(
                "{indent}{agent}: request with tools [{}]",
                visible_tools.join(", ")
            );
        }
        AgentEvent::ToolCallStarted {
            name, arguments, ..
        } => println!("{indent}{agent}: calls {name}({arguments})"),
        AgentEvent::ToolCallFinished { name, result, .. } => {
            println!("{indent}{agent}: {name} -> {result}");
        }
        _ => {}
    }
}

fn call(id: &str, name: &str, arguments: &str) -> ChatResponse {
    ChatResponse::tool_calls(vec![ToolCall::new(id, name, arguments)])
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let researcher = SubAgent::new(
        "researcher",
        "Researches a question and answers with a source.",
        AgentConfig::from_json(r#"{"instructions": "You research. Cite one source."}"#)?,
    );
    // The replies in the order the requests come: parent, child, parent, ...
    let script = ScriptedChatClient::with_replies([
        call(
            "p1",
            "researcher",
            r#"{"input": "When was the Eiffel Tower built?"}"#,
        ),
        ChatResponse::text("1887 to 1889 (source: toureiffel.paris)."), // researcher
        call("p2", "Writing", "{}"),
        // Writing answered with its members' schemas: call one through the call tool.
        call(
            "p3",
            CALL_TOOL,
            r#"{"name": "editor", "arguments": {"input": "It was built from 1887 to 1889."}}"#,
        ),
        call("e1", "word_count", r#"{"text": "Built 1887 to 1889."}"#), // editor
        ChatResponse::text("Built 1887 to 1889."),                      // editor
        ChatResponse::text("The Eiffel Tower: built 1887 to 1889."),
    ]);
    let agent = AgentBuilder::new()
        .with_instructions("You answer in one short sentence.")
        .with_sub_agent(researcher)
        .with_tool_harness::<Writing>()
        .with_chat_client(script)
        .on_event(|event| print_event(event, "main", 0))
        .build()?;

    let output = agent
        .run("When was the Eiffel Tower built? Keep it short.")
        .await?;
    println!("answer: {}", output.text);
    println!(
        "\nEach child ran in its own session with its own instructions and tools; \
         the parent saw only its answer."
    );
    Ok(())
}
