//! Unit tests of the connection layer, against the fault server of the integration tests.

use super::*;

/// Says why a test is skipped, on the process's real stderr, and so in the output of a plain
/// `cargo test`: libtest captures what `print!` and `eprint!` write in a passing test, which
/// would hide the reason. `.ci/run` fails when a test of its run says it was skipped.
macro_rules! skip {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

#[test]
fn endpoints_are_checked_before_connecting() {
    let empty = Endpoint::Stdio {
        command: " ".to_owned(),
        args: vec![],
        env: BTreeMap::new(),
    };
    assert!(
        empty
            .validate("S")
            .unwrap_err()
            .to_string()
            .contains("command is empty")
    );

    let ftp = Endpoint::Http {
        url: "ftp://x".to_owned(),
        headers: vec![],
        oauth: None,
    };
    assert!(
        ftp.validate("S")
            .unwrap_err()
            .to_string()
            .contains("http://")
    );

    let reserved = Endpoint::Http {
        url: "http://127.0.0.1:1/mcp".to_owned(),
        headers: vec![("Mcp-Session-Id".to_owned(), "x".to_owned())],
        oauth: None,
    };
    let message = reserved.validate("S").unwrap_err().to_string();
    assert!(message.contains("set by the MCP transport"), "{message}");

    let bad_value = Endpoint::Http {
        url: "http://127.0.0.1:1/mcp".to_owned(),
        headers: vec![("Authorization".to_owned(), "a\nb".to_owned())],
        oauth: None,
    };
    assert!(
        bad_value
            .validate("S")
            .unwrap_err()
            .to_string()
            .contains("not a valid header value")
    );

    let good = Endpoint::Http {
        url: "http://127.0.0.1:1/mcp".to_owned(),
        headers: vec![("Authorization".to_owned(), "Bearer t".to_owned())],
        oauth: None,
    };
    assert!(good.validate("S").is_ok());
}

#[test]
fn endpoints_describe_themselves() {
    let stdio = Endpoint::Stdio {
        command: "npx".to_owned(),
        args: vec!["-y".to_owned(), "server".to_owned()],
        env: BTreeMap::new(),
    };
    assert_eq!(stdio.describe(), "npx -y server");
}

#[tokio::test]
async fn a_missing_program_is_a_spawn_error() {
    let endpoint = Endpoint::Stdio {
        command: "/nonexistent/hpd-agent-no-such-server".to_owned(),
        args: vec![],
        env: BTreeMap::new(),
    };
    let error = Connection::connect(
        "Missing",
        &endpoint,
        Duration::from_secs(5),
        Default::default(),
    )
    .await
    .unwrap_err();
    assert!(matches!(error, McpError::Spawn { .. }), "{error}");
    assert!(
        error.to_string().contains("MCP server 'Missing'"),
        "{error}"
    );
}

#[tokio::test]
async fn a_program_that_is_no_server_fails_the_handshake() {
    let endpoint = Endpoint::Stdio {
        command: "sh".to_owned(),
        args: vec![
            "-c".to_owned(),
            "echo not an mcp server >&2; exit 1".to_owned(),
        ],
        env: BTreeMap::new(),
    };
    let error = Connection::connect("Sh", &endpoint, Duration::from_secs(10), Default::default())
        .await
        .unwrap_err();
    let message = error.to_string();
    assert!(message.contains("MCP server 'Sh'"), "{message}");
}

/// The fault server of the integration tests, run with the Python of `HPD_MCP_PYTHON` or
/// `python3`; `None` (the test prints why it is skipped) when neither runs.
fn fault_server(mode: &str) -> Option<Endpoint> {
    let python = std::env::var("HPD_MCP_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let works = std::process::Command::new(&python)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !works {
        skip!("skipped: no Python interpreter (set HPD_MCP_PYTHON or install python3)");
        return None;
    }
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/mcp_fixtures/fault_server.py"
    );
    Some(Endpoint::Stdio {
        command: python,
        args: vec![script.to_owned(), mode.to_owned()],
        env: BTreeMap::new(),
    })
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

const SECOND: Duration = Duration::from_secs(1);

#[tokio::test]
async fn lists_calls_and_notices_list_changes() {
    let Some(endpoint) = fault_server("list-changed") else {
        return;
    };
    let connection = Connection::connect("Fault", &endpoint, 10 * SECOND, Default::default())
        .await
        .unwrap();
    let names = |tools: Vec<RemoteTool>| tools.into_iter().map(|t| t.name).collect::<Vec<_>>();
    assert_eq!(
        names(connection.list_tools(5 * SECOND).await.unwrap()),
        ["echo", "add_tool"]
    );

    let echoed = connection
        .call(
            "echo",
            object(serde_json::json!({"text": "hi"})),
            5 * SECOND,
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        super::super::content::from_mcp(&echoed),
        crate::ToolResult::ok("hi")
    );

    assert!(!connection.take_tools_changed());
    connection
        .call("add_tool", Map::new(), 5 * SECOND, None)
        .await
        .unwrap();
    // The notification is written before the result, so it has been handled by now or
    // very soon after.
    let mut changed = false;
    for _ in 0..50 {
        if connection.take_tools_changed() {
            changed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(changed, "notifications/tools/list_changed was not noticed");
    assert_eq!(
        names(connection.list_tools(5 * SECOND).await.unwrap()),
        ["echo", "add_tool", "extra"]
    );
}

#[tokio::test]
async fn a_crashing_server_closes_the_connection() {
    let Some(endpoint) = fault_server("crash") else {
        return;
    };
    let connection = Connection::connect("Fault", &endpoint, 10 * SECOND, Default::default())
        .await
        .unwrap();
    let failure = connection
        .call("crash", Map::new(), 5 * SECOND, None)
        .await
        .unwrap_err();
    let CallFailure::Closed(message) = failure else {
        panic!("expected Closed, got {failure:?}")
    };
    assert!(message.contains("crashing on purpose"), "{message}");
    // Later calls fail at once.
    let again = connection
        .call("echo", Map::new(), 5 * SECOND, None)
        .await
        .unwrap_err();
    assert!(matches!(again, CallFailure::Closed(_)), "{again:?}");
    assert!(connection.is_closed());
}

#[tokio::test]
async fn a_hanging_server_times_out_and_stops_answering_pings() {
    let Some(endpoint) = fault_server("hang") else {
        return;
    };
    let connection = Connection::connect("Fault", &endpoint, 10 * SECOND, Default::default())
        .await
        .unwrap();
    assert!(connection.ping(5 * SECOND).await);
    let failure = connection
        .call("hang", Map::new(), Duration::from_millis(300), None)
        .await
        .unwrap_err();
    assert_eq!(failure, CallFailure::TimedOut(Duration::from_millis(300)));
    assert!(!connection.ping(Duration::from_millis(300)).await);
}

#[tokio::test]
async fn a_malformed_tool_list_is_a_clear_error() {
    let Some(endpoint) = fault_server("malformed") else {
        return;
    };
    let connection = Connection::connect("Fault", &endpoint, 10 * SECOND, Default::default())
        .await
        .unwrap();
    let error = connection.list_tools(5 * SECOND).await.unwrap_err();
    let message = error.to_string();
    assert!(
        message.starts_with("MCP server 'Fault': listing its tools failed"),
        "{message}"
    );
}

#[tokio::test]
async fn the_server_process_ends_when_the_connection_is_dropped() {
    let Some(mut endpoint) = fault_server("list-changed") else {
        return;
    };
    let log = std::env::temp_dir().join(format!("hpd-mcp-drop-{}.pid", std::process::id()));
    if let Endpoint::Stdio { command, args, .. } = &mut endpoint {
        // Run the server through a shell that records its pid, then execs it.
        let script = format!(
            "echo $$ > {}; exec {} {}",
            log.display(),
            command,
            args.join(" ")
        );
        *command = "sh".to_owned();
        *args = vec!["-c".to_owned(), script];
    }
    let connection = Connection::connect("Fault", &endpoint, 10 * SECOND, Default::default())
        .await
        .unwrap();
    let pid = std::fs::read_to_string(&log).unwrap().trim().to_owned();
    let alive = |pid: &str| {
        std::path::Path::new(&format!("/proc/{pid}")).exists()
            && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .unwrap_or_default()
                .contains(") Z ")
    };
    assert!(alive(&pid));
    drop(connection);
    let mut ended = false;
    for _ in 0..100 {
        if !alive(&pid) {
            ended = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = std::fs::remove_file(&log);
    assert!(ended, "the server process {pid} still runs after the drop");
}
