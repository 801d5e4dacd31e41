//! `add(a, b)` with the arguments text `{"a": 2, "b": 3}`, in one run:
//!
//! - the limit: `serde_json::from_str` into a two-field struct, the addition,
//!   `serde_json::to_string` of the result;
//! - hpd-agent: `Function::call` and `ToolSession::call` (name lookup, empty middleware chain);
//! - rmcp 3.11: `ToolRouter::call` of a `#[tool_router]` + `#[tool]` server with a
//!   `ToolCallContext`, the way rmcp's server loop calls it for a `tools/call` request. Its
//!   `RequestContext` needs a `Peer`, which only a running service hands out: the server runs
//!   over an in-memory `tokio::io::duplex` with an rmcp client on the other end, and the
//!   benchmark calls the router directly with that peer (no message crosses the pipe). rmcp
//!   takes the arguments as a parsed JSON object, so it is measured from the text (parsing it
//!   into a `JsonObject` first, as its message parsing does) and from a parsed object (cloned
//!   per call).
//!
//! Every call is polled in place (once, with a no-op waker: no executor is entered, as inside a
//! server's or agent loop's own task; every body here is synchronous and finishes in that
//! poll), and hpd-agent's and rmcp's are also awaited with `block_on` on a current-thread Tokio
//! runtime.
//!
//! ```sh
//! cd bench/call_overhead && CARGO_INCREMENTAL=0 cargo bench
//! ```

use std::hint::black_box;
use std::time::Duration;

use call_overhead::{Adder, RmcpAdder};
use criterion::{Criterion, criterion_group, criterion_main};
use hpd_agent::harness::HarnessInfo;
use hpd_agent::{AgentBuilder, CancellationToken, ScriptedChatClient};
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{CallToolRequestParams, CallToolResponse, JsonObject, NumberOrString};
use rmcp::service::RequestContext;

const ARGUMENTS: &str = r#"{"a": 2, "b": 3}"#;

#[derive(serde::Deserialize)]
struct AddArgs {
    a: i64,
    b: i64,
}

/// Polls a future once without an executor; every call measured here finishes in that poll.
fn in_place<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(output) => output,
        std::task::Poll::Pending => panic!("a synchronous call did not finish at once"),
    }
}

/// The text of rmcp's answer, checked once so both sides are known to compute the same thing.
fn rmcp_text(response: &CallToolResponse) -> String {
    match response {
        CallToolResponse::Complete(result) => result
            .content
            .first()
            .and_then(|c| c.as_text())
            .map(|t| t.text.clone())
            .unwrap_or_default(),
        other => panic!("unexpected rmcp answer {other:?}"),
    }
}

fn calls(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut group = c.benchmark_group("call add");

    group.bench_function("limit: from_str, add, to_string", |b| {
        b.iter(|| {
            let args: AddArgs = serde_json::from_str(black_box(ARGUMENTS)).expect("args");
            black_box(serde_json::to_string(&(args.a + args.b)).expect("result"))
        });
    });

    // hpd-agent.
    let add = HarnessInfo::of::<Adder>()
        .functions()
        .expect("Adder")
        .into_iter()
        .find(|f| f.name() == "add")
        .expect("add");
    let token = CancellationToken::new();
    assert_eq!(in_place(add.call("c1", ARGUMENTS, token.clone())).text, "5");
    group.bench_function("hpd-agent Function::call, in place", |b| {
        b.iter(|| in_place(add.call("c1", black_box(ARGUMENTS), token.clone())));
    });
    group.bench_function("hpd-agent Function::call, block_on", |b| {
        b.iter(|| runtime.block_on(add.call("c1", black_box(ARGUMENTS), token.clone())));
    });
    let agent = AgentBuilder::new()
        .with_tool_harness::<Adder>()
        .without_harness_collapsing()
        .with_chat_client(ScriptedChatClient::new())
        .build()
        .expect("agent");
    let session = agent.tool_session();
    assert_eq!(
        in_place(session.call_tool("c1", "add", ARGUMENTS))
            .expect("call")
            .result
            .text,
        "5"
    );
    group.bench_function("hpd-agent ToolSession::call, in place", |b| {
        b.iter(|| in_place(session.call_tool("c1", "add", black_box(ARGUMENTS))).expect("call"));
    });
    group.bench_function("hpd-agent ToolSession::call, block_on", |b| {
        b.iter(|| {
            runtime
                .block_on(session.call_tool("c1", "add", black_box(ARGUMENTS)))
                .expect("call")
        });
    });

    // rmcp: a running server (and a client on the other end of an in-memory pipe) for the peer.
    let (server, _client) = runtime.block_on(async {
        let (server_io, client_io) = tokio::io::duplex(64 * 1024);
        let (server, client) = tokio::join!(
            rmcp::serve_server(RmcpAdder, server_io),
            rmcp::serve_client((), client_io),
        );
        (server.expect("rmcp server"), client.expect("rmcp client"))
    });
    let peer = server.peer().clone();
    let service = RmcpAdder;
    let router = RmcpAdder::tool_router();
    let call_rmcp = |arguments: JsonObject| {
        let params = CallToolRequestParams::new("add").with_arguments(arguments);
        let context = RequestContext::new(NumberOrString::Number(1), peer.clone());
        router.call(ToolCallContext::new(&service, params, context))
    };
    let parsed: JsonObject = serde_json::from_str(ARGUMENTS).expect("object");
    assert_eq!(
        rmcp_text(&in_place(call_rmcp(parsed.clone())).expect("rmcp call")),
        "5"
    );
    group.bench_function("rmcp ToolRouter::call from the text, in place", |b| {
        b.iter(|| {
            let arguments: JsonObject = serde_json::from_str(black_box(ARGUMENTS)).expect("object");
            in_place(call_rmcp(arguments)).expect("rmcp call")
        });
    });
    group.bench_function("rmcp ToolRouter::call from the text, block_on", |b| {
        b.iter(|| {
            let arguments: JsonObject = serde_json::from_str(black_box(ARGUMENTS)).expect("object");
            runtime.block_on(call_rmcp(arguments)).expect("rmcp call")
        });
    });
    group.bench_function(
        "rmcp ToolRouter::call from a parsed object, in place",
        |b| {
            b.iter(|| in_place(call_rmcp(black_box(&parsed).clone())).expect("rmcp call"));
        },
    );
    group.finish();
    drop(server);
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20)
}

criterion_group! {
    name = call_overhead;
    config = config();
    targets = calls
}
criterion_main!(call_overhead);
