//! The `mcp_server` example driven by the official Python SDK's client
//! (`hpd-agent/tests/mcp_fixtures/python_client.py`), over stdio and over streamable HTTP:
//! list the tools, call a container (its result carries the members' schemas; the default
//! `fixed` layout sends no `notifications/tools/list_changed`), list again (the same list), call
//! a member through `call_function`, call a hidden member of the other container.
//!
//! Needs `HPD_MCP_PYTHON` (a Python with the `mcp` SDK, printed by `.ci/mcp-servers.sh`) and
//! the built example (`cargo test --workspace` builds examples before running tests; alone,
//! `cargo build -p hpd-agent-examples --example mcp_server`). Skipped, saying why, without
//! either.

use std::io::BufRead as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// Says why a test is skipped, on the process's real stderr, and so in the output of a plain
/// `cargo test`: libtest captures what `print!` and `eprint!` write in a passing test, which
/// would hide the reason. `.ci/run` fails when a test of its run says it was skipped.
macro_rules! skip {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

fn python() -> Option<String> {
    match std::env::var("HPD_MCP_PYTHON") {
        Ok(python) if !python.trim().is_empty() => Some(python),
        _ => {
            skip!(
                "skipped: HPD_MCP_PYTHON is not set (run `eval \"$(bash .ci/mcp-servers.sh)\"` first)"
            );
            None
        }
    }
}

/// `target/<profile>/examples/mcp_server`, next to this test's `deps` directory.
fn example() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let path = exe.parent()?.parent()?.join("examples").join("mcp_server");
    if path.exists() {
        Some(path)
    } else {
        skip!(
            "skipped: {} is not built (run `cargo build -p hpd-agent-examples --example mcp_server`)",
            path.display()
        );
        None
    }
}

fn script() -> String {
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../hpd-agent/tests/mcp_fixtures/python_client.py"
    )
    .to_owned()
}

fn check(output: std::process::Output) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}");
    assert!(
        output.status.success(),
        "the Python client failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("tool list unchanged, no notifications/tools/list_changed"),
        "{stdout}"
    );
    assert!(stdout.trim_end().ends_with("ok"), "{stdout}");
}

#[test]
fn python_sdk_client_over_stdio() {
    let (Some(python), Some(server)) = (python(), example()) else {
        return;
    };
    let output = Command::new(python)
        .arg(script())
        .arg("stdio")
        .arg(server)
        .output()
        .expect("run the Python client");
    check(output);
}

#[test]
fn python_sdk_client_over_streamable_http() {
    let (Some(python), Some(server)) = (python(), example()) else {
        return;
    };
    let token = "python-test-token";
    let mut child = Command::new(server)
        .args(["--http", "127.0.0.1:0"])
        .env("HPD_MCP_TOKEN", token)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the example");
    let stderr = child.stderr.take().expect("piped stderr");
    let mut line = String::new();
    std::io::BufReader::new(stderr)
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("serving MCP on ")
        .map(str::to_owned);
    let Some(url) = url else {
        let _ = child.kill();
        panic!("unexpected first line from the server: {line}");
    };
    let output = Command::new(python)
        .arg(script())
        .args(["http", &url, token])
        .output()
        .expect("run the Python client");
    let _ = child.kill();
    let _ = child.wait();
    check(output);
}
