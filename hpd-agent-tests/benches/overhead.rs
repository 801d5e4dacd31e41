//! Per-request and per-call overhead of the runtime.
//!
//! - visibility + request assembly: the visible tool list of a session (the same computation the
//!   agent loop makes before each request, read through `ToolSession::visible_tools`) and the
//!   `ChatRequest` built from it, with 100, 1,000 and 10,000 registered functions and 0, 1 and
//!   10 expanded containers. The catalog is 10 small collapsed harnesses of 9 functions (the
//!   ones expanded) and one large collapsed harness with the rest, so the visible list has the
//!   same length at every catalog size.
//! - call overhead: `add(a, b)` with `{"a": 2, "b": 3}` through `Function::call` (argument
//!   parsing, body, result serialization) and through `ToolSession::call` (name lookup, empty
//!   middleware chain, events), against the limit: `serde_json::from_str` of the arguments,
//!   the addition, `serde_json::to_string` of the result. Each call is measured twice: awaited
//!   with `block_on` on a current-thread Tokio runtime, and polled once in place (no executor
//!   entered, as inside the agent loop's own task; the body is synchronous, so it finishes in
//!   that poll).
//!
//! ```sh
//! cargo bench -p hpd-agent-tests --bench overhead
//! ```

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use hpd_agent::harness::HarnessInfo;
use hpd_agent::{
    Agent, AgentBuilder, ChatMessage, HarnessBuilder, ScriptedChatClient, Tool, ToolResult,
    chat::ChatRequest, chat::ModelOptions,
};

/// `add` alone, with nothing but the addition in its body (the conformance fixture `MathTools`
/// also writes to an execution log, which would be measured too).
#[derive(Debug, Default)]
pub struct Adder;

#[hpd_agent::tool_harness]
impl Adder {
    /// Adds two integers.
    #[hpd_agent::ai_function]
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

fn tool(name: String) -> Tool {
    Tool::new(
        name.clone(),
        format!("Does {name}."),
        serde_json::json!({"type": "object", "properties": {"x": {"type": "string"}}}),
        |_args, _ctx| async { ToolResult::ok("done") },
    )
}

/// 10 harnesses of 9 functions, then one holding the rest of `total`.
fn agent(total: usize) -> Agent {
    let mut builder = AgentBuilder::new().with_chat_client(ScriptedChatClient::new());
    for h in 0..10 {
        let harness = HarnessBuilder::new(format!("Small{h}"))
            .with_collapse(format!("Small harness {h}"))
            .with_tools((0..9).map(|f| tool(format!("s{h}_f{f}"))))
            .build()
            .expect("harness");
        builder = builder.with_harness(harness);
    }
    let large = HarnessBuilder::new("Large")
        .with_collapse("The rest")
        .with_tools((0..total - 90).map(|f| tool(format!("l_f{f}"))))
        .build()
        .expect("harness");
    builder.with_harness(large).build().expect("agent")
}

fn visibility(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let history = vec![ChatMessage::user("hello")];
    let options = ModelOptions::default();
    let mut group = c.benchmark_group("visible tools + request");
    for total in [100, 1_000, 10_000] {
        let agent = agent(total);
        for expanded in [0, 1, 10] {
            let session = agent.tool_session();
            for h in 0..expanded {
                runtime
                    .block_on(session.call_tool("c", &format!("Small{h}"), "{}"))
                    .expect("expand");
            }
            group.bench_with_input(
                BenchmarkId::new(format!("{total} functions"), format!("{expanded} expanded")),
                &session,
                |b, session| {
                    b.iter(|| {
                        let visible = session.visible_tools();
                        let request =
                            ChatRequest::new("Base.", &history, &visible).with_options(&options);
                        black_box(request.tools.len())
                    });
                },
            );
        }
    }
    group.finish();
}

#[derive(serde::Deserialize)]
struct AddArgs {
    a: i64,
    b: i64,
}

fn calls(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut group = c.benchmark_group("call add");
    group.bench_function("limit: from_str, add, to_string", |b| {
        b.iter(|| {
            let args: AddArgs =
                serde_json::from_str(black_box(r#"{"a": 2, "b": 3}"#)).expect("args");
            black_box(serde_json::to_string(&(args.a + args.b)).expect("result"))
        });
    });
    let add = HarnessInfo::of::<Adder>()
        .functions()
        .expect("Adder")
        .into_iter()
        .find(|f| f.name() == "add")
        .expect("add");
    // The caller's cancellation token (a run's), made once: each call gets a clone of it.
    let token = hpd_agent::CancellationToken::new();
    group.bench_function("Function::call", |b| {
        b.iter(|| {
            runtime.block_on(add.call("c1", black_box(r#"{"a": 2, "b": 3}"#), token.clone()))
        });
    });
    group.bench_function("Function::call, polled in place", |b| {
        b.iter(|| in_place(add.call("c1", black_box(r#"{"a": 2, "b": 3}"#), token.clone())));
    });
    let agent = AgentBuilder::new()
        .with_tool_harness::<Adder>()
        .without_harness_collapsing()
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .expect("agent");
    let session = agent.tool_session();
    group.bench_function("ToolSession::call (lookup, empty middleware)", |b| {
        b.iter(|| {
            runtime
                .block_on(session.call_tool("c1", "add", black_box(r#"{"a": 2, "b": 3}"#)))
                .expect("call")
        });
    });
    group.bench_function("ToolSession::call, polled in place", |b| {
        b.iter(|| {
            in_place(session.call_tool("c1", "add", black_box(r#"{"a": 2, "b": 3}"#)))
                .expect("call")
        });
    });
    group.finish();
}

/// Polls a future once, as the task that awaits it would, without entering an executor (the
/// agent loop awaits a call inside its own, already running task). A synchronous body
/// finishes in that poll.
fn in_place<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(output) => output,
        std::task::Poll::Pending => panic!("the call of a synchronous body did not finish at once"),
    }
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20)
}

criterion_group! {
    name = overhead;
    config = config();
    targets = visibility, calls
}
criterion_main!(overhead);
