//! Benchmarks of the runtime's own overhead (the model is a scripted client, so the figures are
//! what the agent adds to every request): building an agent, computing the visible tools,
//! calling a function, and a whole turn with an expansion and a parallel batch.
//!
//! Run with `cargo bench -p hpd-agent-tests --bench agent_loop`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use hpd_agent::harness::HarnessInfo;
use hpd_agent::{Agent, AgentBuilder, ChatResponse, ScriptedChatClient, ToolCall};
use hpd_agent_tests::{DatabaseTools, FaultTools, FileTools, MathTools, WeatherTools};

fn agent(client: &ScriptedChatClient) -> Agent {
    AgentBuilder::new()
        .with_instructions("Base.")
        .with_tool_harness::<MathTools>()
        .with_tool_harness::<WeatherTools>()
        .with_tool_harness::<DatabaseTools>()
        .with_tool_harness::<FileTools>()
        .with_tool_harness::<FaultTools>()
        .with_chat_client(client.clone())
        .build()
        .expect("agent builds")
}

fn script(client: &ScriptedChatClient) {
    client.push(ChatResponse::tool_calls(vec![ToolCall::new(
        "c1",
        "MathTools",
        "{}",
    )]));
    client.push(ChatResponse::tool_calls(vec![
        ToolCall::new("c2", "add", r#"{"a": 2, "b": 3}"#),
        ToolCall::new("c3", "get_weather", r#"{"city": "Oslo"}"#),
    ]));
    client.push(ChatResponse::text("done"));
}

fn benches(c: &mut Criterion) {
    let client = ScriptedChatClient::new();
    c.bench_function("build agent (5 harnesses)", |b| {
        b.iter(|| black_box(agent(&client)))
    });

    let agent = agent(&client);
    c.bench_function("visible tools of a fresh session", |b| {
        b.iter(|| black_box(agent.initial_tool_names()));
    });

    let add = HarnessInfo::of::<MathTools>()
        .functions()
        .expect("MathTools")
        .into_iter()
        .find(|f| f.name() == "add")
        .expect("add");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    c.bench_function("call add (parse, run, serialize)", |b| {
        b.iter(|| {
            runtime.block_on(add.call("c1", black_box(r#"{"a": 2, "b": 3}"#), Default::default()))
        });
    });

    c.bench_function("turn: expand, two parallel calls, answer", |b| {
        b.iter(|| {
            script(&client);
            let out = runtime.block_on(agent.run("go")).expect("run");
            let _ = client.take_requests();
            black_box(out)
        });
    });
}

criterion_group!(agent_loop, benches);
criterion_main!(agent_loop);
