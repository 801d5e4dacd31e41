//! Runs every per-capability example offline and checks the lines of its output that prove
//! the capability worked, so the examples cannot rot. (The demo has its own test, `demo.rs`.)
//!
//! The test runs the built binaries in `target/<profile>/examples/`, found from this test's own
//! path (`target/<profile>/deps/examples_run-...`); it never runs cargo. `cargo test -p
//! hpd-agent-examples` and `cargo test --workspace` build the examples before they run any test
//! (checked by deleting `target/debug/examples/collapsing`: `cargo test -p hpd-agent-examples`
//! and `cargo test --workspace --no-run` both put it back). `cargo test -p hpd-agent-examples
//! --test examples_run` alone builds only this test, not the examples (with `--examples` too it
//! builds them as test harnesses, not as the binaries run here): a missing example then fails
//! with a message saying what to run, and a stale one may fail on its old output.
//!
//! Each example runs with the provider environment removed (`HPD_PROVIDER`, API keys,
//! `*_BASE_URL`), `NO_COLOR=1`, stdin closed and a timeout.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use hpd_agent::mcp::McpHarness;

mod support;

/// How long one example may take.
const TIMEOUT: Duration = Duration::from_secs(60);

/// The examples this test runs; `every_example_is_run` keeps it in step with `Cargo.toml`.
const TESTED: &[&str] = &[
    "plain_harness",
    "collapsing",
    "selective_registration",
    "from_config",
    "scoped_middleware",
    "metadata",
    "sub_agents",
    "runtime_tools",
    "library_harness",
    "mcp_client",
    "mcp_server",
    "mcp_oauth",
    "mcp_sampling",
    "persistent_chat",
    "typed_answer",
    "approval",
    "traces",
    "vision_tool",
];

/// A command for the example with the provider environment cleared.
fn command(name: &str) -> Command {
    let mut command = support::offline_command(name);
    command.env("NO_COLOR", "1").stdin(Stdio::null());
    command
}

/// Waits for the child, killing it after [`TIMEOUT`].
fn wait(name: &str, child: &mut Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        if let Some(status) = child.try_wait().expect("wait for the example") {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("example {name} did not finish within {TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs the example with `args` and returns its stdout; fails when it does not succeed.
fn run(name: &str, args: &[&str]) -> String {
    let mut child = command(name)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start example {name}: {e}"));
    let mut stdout = child.stdout.take().expect("piped stdout");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        stdout.read_to_string(&mut text).map(|_| text)
    });
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        stderr.read_to_string(&mut text).map(|_| text)
    });
    let status = wait(name, &mut child);
    let out = out.join().expect("stdout reader").expect("stdout is UTF-8");
    let err = err.join().expect("stderr reader").unwrap_or_default();
    assert!(
        status.success(),
        "example {name} failed ({status}):\n--- stdout\n{out}\n--- stderr\n{err}"
    );
    out
}

/// Asserts that `output` contains every needle, in this order.
fn expect_in_order(name: &str, output: &str, needles: &[&str]) {
    let mut rest = output;
    for needle in needles {
        match rest.find(needle) {
            Some(at) => rest = &rest[at + needle.len()..],
            None => panic!(
                "example {name}: expected {needle:?} (after the lines before it) in:\n{output}"
            ),
        }
    }
}

#[test]
fn every_example_is_run() {
    let manifest = include_str!("../Cargo.toml");
    let mut declared: Vec<&str> = manifest
        .split("[[example]]")
        .skip(1)
        .filter_map(|section| {
            let line = section
                .lines()
                .find(|l| l.trim_start().starts_with("name"))?;
            line.split('"').nth(1)
        })
        .filter(|name| !name.starts_with("demo")) // tests/demo.rs runs those
        .collect();
    declared.sort_unstable();
    let mut tested = TESTED.to_vec();
    tested.sort_unstable();
    assert_eq!(
        declared, tested,
        "examples in Cargo.toml vs. examples run by this test"
    );
}

#[test]
fn plain_harness() {
    let out = run("plain_harness", &[]);
    expect_in_order(
        "plain_harness",
        &out,
        &[
            "forecast: Forecasts the weather of a city for the coming days.",
            "city (string, required): The city",
            "days (integer, optional): How many days ahead",
            "model calls forecast({\"city\": \"Oslo\", \"days\": 30})",
            "error result: Error: days must be between 1 and 7, not 30",
            "result: Oslo: rain for the next 2 day(s), 9 °C",
            "answer: Take an umbrella",
        ],
    );
}

#[test]
fn collapsing() {
    let out = run("collapsing", &[]);
    expect_in_order(
        "collapsing",
        &out,
        &[
            "container MathTools: \"Math operations (functions: add, multiply)\"",
            "layout: native (the default; fixed on this client",
            "turn 1",
            "request: tools [now, MathTools, call_function]",
            "MathTools expanded (recovery: a hidden function was called)",
            "Call multiply again to run it.",
            r#"{"name":"multiply","description":"Multiplies two integers.""#,
            "### MathTools",
            "Use exact integer arithmetic; never estimate.",
            "request: tools [now, MathTools, call_function]",
            "model calls multiply -> 42",
            "answer: 6 × 7 = 42.",
            "turn 2",
            "request: tools [now, MathTools, call_function]",
            "MathTools expanded (the container was called, or a function it showed earlier)",
            "model calls add -> 42",
            "answer: 40 + 2 = 42.",
            "in the hide layout",
            "request: tools [now, MathTools]",
            "MathTools expanded (the container was called, or a function it showed earlier)",
            "request: tools [now, add, multiply]",
            "active container instructions: MathTools: Use exact integer arithmetic",
            "model calls multiply -> 42",
        ],
    );
    // Outside `hide`, the tool list is the same on every request.
    let fixed = out.split("in the hide layout").next().unwrap_or_default();
    assert!(
        fixed
            .lines()
            .filter(|l| l.contains("request: tools"))
            .all(|l| l.trim() == "request: tools [now, MathTools, call_function]"),
        "{out}"
    );
}

#[test]
fn selective_registration() {
    let out = run("selective_registration", &[]);
    expect_in_order(
        "selective_registration",
        &out,
        &[
            "tools offered: list_files, read_file, Database",
            "container Database: \"Database operations (functions: query)\"",
            "ran     read_file -> (contents of docs/notes.txt)",
            "refused delete_file -> Function 'delete_file' not found.",
            "refused drop_table -> Function 'drop_table' not found.",
            "function 'remove_file' not found in harness 'Files'",
        ],
    );
    assert!(
        !out.contains("deleted") && !out.contains("dropped"),
        "{out}"
    );
}

#[test]
fn from_config() {
    let out = run("from_config", &[]);
    expect_in_order(
        "from_config",
        &out,
        &[
            "agent 'travel-assistant' built from",
            "agent.json",
            "tools offered: forecast, Currency",
            "Currency -> Currency expanded. Available functions: convert",
            "convert -> 1127.00 NOK (after a 2% fee)",
            "invalid AgentConfig at 'tool_harnesses[0]'",
            "unknown key 'functons' in ToolHarnessReference (did you mean 'functions'?)",
            "build: harness 'Wether' not found; known harnesses:",
        ],
    );
}

#[test]
fn scoped_middleware() {
    let out = run("scoped_middleware", &[]);
    expect_in_order(
        "scoped_middleware",
        &out,
        &[
            "model calls Bank({})",
            "[audit] log opened",
            "model calls forecast({\"city\": \"Rome\"})",
            "[audit] Bank.balance({\"account\": \"savings\"})",
            "[audit] Bank.transfer(",
            "[audit] transfer returned \"moved 300 EUR from savings to travel\"",
            "The audit log saw 2 of 4 calls",
        ],
    );
    assert!(!out.contains("[audit] Weather"), "{out}");
    assert!(!out.contains("[audit] forecast"), "{out}");
}

#[test]
fn metadata() {
    let out = run("metadata", &[]);
    expect_in_order(
        "metadata",
        &out,
        &[
            "free tier",
            "search: Searches the web with DuckDuckGo.",
            "paid tier",
            "search: Searches the web with Kagi.",
            "image_search: Finds images with Kagi.",
            "model calls image_search -> Function 'image_search' not found",
            "metadata of harness 'Search' is invalid",
            "missing field `images`",
        ],
    );
    let free = &out[..out.find("paid tier").unwrap_or(out.len())];
    assert!(!free.contains("image_search:"), "{out}");
}

#[test]
fn sub_agents() {
    let out = run("sub_agents", &[]);
    expect_in_order(
        "sub_agents",
        &out,
        &[
            "main: request with tools [researcher, Writing, call_function]",
            "main: calls researcher(",
            "  researcher: request with tools []",
            "main: researcher -> 1887 to 1889 (source: toureiffel.paris).",
            "main: Writing -> Writing expanded. Available functions: word_count, editor",
            "main: calls editor(",
            "  editor: request with tools [word_count]",
            "  editor: word_count -> 4",
            "main: editor -> Built 1887 to 1889.",
            "answer: The Eiffel Tower: built 1887 to 1889.",
        ],
    );
}

#[test]
fn runtime_tools() {
    let out = run("runtime_tools", &[]);
    expect_in_order(
        "runtime_tools",
        &out,
        &[
            "harness Tickets from the manifest: create_ticket, close_ticket",
            "request: tools [Tickets, call_function]",
            "Call them through call_function",
            "request: tools [Tickets, call_function]",
            "create_ticket -> create_ticket done with {\"title\":\"Printer on fire\"}",
            "lists: Tickets, call_function",
            "Call close_ticket again to run it.",
            "the container expanded: true",
            "lists: Tickets, call_function",
            "close_ticket -> close_ticket done with {\"id\":7}",
            "invalid tool name 'close ticket'",
        ],
    );
}

#[test]
fn library_harness() {
    let out = run("library_harness", &[]);
    expect_in_order(
        "library_harness",
        &out,
        &[
            "the registry found 'UnitConverter' (harness_library::UnitConverter)",
            "builder with_tool_harness_reference: tools [celsius_to_fahrenheit]",
            "celsius_to_fahrenheit -> 70.7",
            "tools [celsius_to_fahrenheit, kilometres_to_miles]",
        ],
    );
}

#[test]
fn mcp_client_against_itself() {
    let out = run("mcp_client", &[]);
    expect_in_order(
        "mcp_client",
        &out,
        &[
            "connected MCP server 'Units' over stdio: celsius_to_fahrenheit, kilometres_to_miles",
            "request: tools [Units, call_function]",
            "Units -> Units expanded.",
            "request: tools [Units, call_function]",
            "kilometres_to_miles -> 26.21875",
            "answer: A marathon is about 26.2 miles.",
        ],
    );
}

#[test]
fn mcp_sampling_answered_by_the_clients_model() {
    let out = run("mcp_sampling", &[]);
    let client_side = [
        "client: Notes asks for a completion of up to 500 tokens; capped at 64",
        "client: the agent's model got the server's request: system \"You write one-sentence summaries.\", max tokens Some(64), no tools: true",
        "client: summarize -> Summary (scripted): Servers can ask their clients for help.",
        "answer: The note says servers can ask their clients for help.",
    ];
    let mut expected = vec![
        "== 2025-11-25: the server asks the client with a request",
        "server: summarize runs (run 1) and asks the client's model",
    ];
    expected.extend(client_side);
    expected.extend([
        "the function ran 1 time(s)",
        "== 2026-07-28: the server answers input_required, the client calls again",
        "server: summarize runs (run 1) and asks the client's model",
        "client: Notes asks for a completion of up to 500 tokens; capped at 64",
        // The call is sent again with the answer: the function runs a second time.
        "server: summarize runs (run 2) and asks the client's model",
    ]);
    expected.extend(&client_side[1..]);
    expected.push("the function ran 2 time(s)");
    expect_in_order("mcp_sampling", &out, &expected);
}

#[test]
fn mcp_server_over_stdio_seen_by_mcp_client() {
    let server = support::example_binary("mcp_server");
    let server = server.to_str().expect("a UTF-8 path");
    let out = run("mcp_client", &[server]);
    expect_in_order(
        "mcp_client",
        &out,
        &[
            // The served call tool is renamed: the client's own layout has one.
            "as Other: get_weather, MathTools, TextTools, Other_call_function",
            "request: tools [Units, Other, call_function]",
        ],
    );
}

/// A child process that is killed when the test ends, also when it fails.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn mcp_server_over_http() {
    let token = "examples-run-token";
    let mut child = KillOnDrop(
        command("mcp_server")
            .args(["--http", "127.0.0.1:0"])
            .env("HPD_MCP_TOKEN", token)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start mcp_server"),
    );
    let stderr = child.0.stderr.take().expect("piped stderr");
    let mut stderr = BufReader::new(stderr);
    let mut first = String::new();
    stderr
        .read_line(&mut first)
        .expect("read the server's first line");
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let Some(url) = first.trim().strip_prefix("serving MCP on ") else {
        panic!("unexpected first line from mcp_server: {first}");
    };
    let refused = McpHarness::http("Demo", url)
        .with_header("Authorization", "Bearer wrong")
        .connect()
        .await;
    assert!(refused.is_err(), "a wrong token must be refused");
    let harness = McpHarness::http("Demo", url)
        .with_header("Authorization", format!("Bearer {token}"))
        .connect()
        .await
        .expect("connect with the token");
    assert_eq!(
        harness.tool_names(),
        [
            "get_weather",
            "MathTools",
            "TextTools",
            "Demo_call_function"
        ]
    );
}

#[test]
fn persistent_chat() {
    let out = run("persistent_chat", &[]);
    expect_in_order(
        "persistent_chat",
        &out,
        &[
            "opened 'user-ada': 0 stored messages",
            "agent: Nice to meet you, Ada.",
            "saved: 2 messages, version 1",
            "after a restart",
            "opened 'user-ada': 2 stored messages",
            "earlier, user: My name is Ada.",
            "agent: You are Ada; you told me earlier.",
            "saved: 4 messages, version 2",
        ],
    );
}

#[test]
fn typed_answer() {
    let out = run("typed_answer", &[]);
    expect_in_order(
        "typed_answer",
        &out,
        &[
            "provider: a scripted model plays the turn",
            r#"schema: PackingList (strict: true), required ["city","items","umbrella","weather"]"#,
            "request 1: tools [\"get_weather\"]",
            "  tool get_weather -> Rain showers, 12 C in Bergen",
            "request 2",
            "  answer rejected at '/items/1/quantity': 0 is less than the minimum of 1 (asking again)",
            "request 3",
            "typed answer after 3 requests:",
            "  city: Bergen",
            "  umbrella: true",
            "  - 3 x rain jacket",
            "  - 1 x thermos",
        ],
    );
}

#[test]
fn approval() {
    let out = run("approval", &[]);
    expect_in_order(
        "approval",
        &out,
        &[
            "paused: true",
            r#"waiting: c2 pay_invoice({"invoice":"INV-1","amount":40})"#,
            r#"waiting: c3 pay_invoice({"invoice":"INV-2","amount":900})"#,
            r#"waiting: c5 refund({"order":9,"amount":500})"#,
            "saved at version 1",
            "reopened 'accounts-payable': 3 calls wait",
            "agent: Paid INV-1 and 90 EUR of INV-2",
            "c1: INV-1: 40 EUR (Acme), INV-2: 900 EUR (Globex)",
            "c2: paid 40 EUR on INV-1",
            r#"c3: The user edited the arguments before approving; the call ran with {"amount":90,"invoice":"INV-2"} | paid 90 EUR on INV-2"#,
            "c4: refunded 20 EUR on order 7",
            "c5 (error): Function 'refund' was denied by the user: refunds over 100 EUR need the manager",
            "stored: version 2, 8 messages, paused: false",
            "log: c2 pay_invoice: approved",
            r#"log: c3 pay_invoice: approved, edited to {"amount":90,"invoice":"INV-2"}"#,
            "log: c5 refund: denied",
        ],
    );
    assert!(
        !out.contains("waiting: c4"),
        "a small refund needs no approval: {out}"
    );
}

/// The OAuth example against the authorization server `.ci/run` starts (`HPD_OIDC_ISSUER`):
/// the served agent takes that server's tokens, and the example's client signs in and calls a
/// tool. Without the variable it says what it needs and exits successfully.
#[test]
fn traces() {
    let out = run("traces", &[]);
    expect_in_order(
        "traces",
        &out,
        &[
            "answer: 2 + 3 = 5; 1 / 0 has no answer.",
            "invoke_agent calculator [Internal]",
            "gen_ai.operation.name = invoke_agent",
            "gen_ai.usage.cache_read.input_tokens = 192",
            "chat scripted-1 [Client]",
            r#"gen_ai.response.finish_reasons = ["tool_call"]"#,
            "execute_tool Math [Internal]",
            "hpd_agent.container.expanded = Math",
            "chat scripted-1 [Client]",
            "gen_ai.usage.cache_read.input_tokens = 64",
            "execute_tool add [Internal]",
            "hpd_agent.harness = Math",
            "execute_tool divide [Internal]",
            "error.type = tool_error",
            "chat scripted-1 [Client]",
            r#"gen_ai.response.finish_reasons = ["stop"]"#,
        ],
    );
}

#[test]
fn mcp_oauth() {
    match std::env::var("HPD_OIDC_ISSUER") {
        Ok(_) => {
            let out = run("mcp_oauth", &[]);
            expect_in_order(
                "mcp_oauth",
                &out,
                &[
                    "serving ",
                    "authorization URL: ",
                    "signed in; tools: ",
                    "hello -> ",
                ],
            );
        }
        Err(_) => {
            hpd_agent_tests_skip(
                "skipped: HPD_OIDC_ISSUER is not set (`bash .ci/oidc-provider.sh start`)",
            );
            let mut child = command("mcp_oauth")
                .env_remove("HPD_OIDC_ISSUER")
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("start mcp_oauth");
            let mut err = String::new();
            child
                .stderr
                .take()
                .expect("piped stderr")
                .read_to_string(&mut err)
                .expect("stderr is UTF-8");
            assert!(wait("mcp_oauth", &mut child).success());
            assert!(err.contains("set HPD_OIDC_ISSUER"), "{err}");
        }
    }
}

/// The skip line on the real stderr (past libtest's capture), as `hpd_agent_tests::skip!` writes it.
fn hpd_agent_tests_skip(line: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "{line}");
}

#[test]
fn vision_tool() {
    let out = run("vision_tool", &[]);
    expect_in_order(
        "vision_tool",
        &out,
        &[
            r#"output schema of stats: {"description":"Summary figures of a series.","properties":{"count""#,
            "answer: The middle bar is the tallest: 7.",
            "tool result call_1: [image: image/png, ",
            r#"  part: {"type":"image","mime_type":"image/png","data":"iVBORw0KGgo"#,
            r#"tool result call_2: {"count":3,"max":7,"min":3}"#,
        ],
    );
}
