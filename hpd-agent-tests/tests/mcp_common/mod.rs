//! Helpers shared by the MCP tests: where the servers are, and how to skip without them.

#![allow(dead_code)] // each test file uses its own part of this module

use std::path::PathBuf;

/// The command line in the environment variable `var` (set by `.ci/mcp-servers.sh`), split on
/// whitespace; `None`, after printing why the test is skipped, when it is unset.
pub fn command_from_env(var: &str) -> Option<Vec<String>> {
    match std::env::var(var) {
        Ok(line) if !line.trim().is_empty() => {
            Some(line.split_whitespace().map(str::to_owned).collect())
        }
        _ => {
            hpd_agent_tests::skip!(
                "skipped: {var} is not set (run `eval \"$(bash .ci/mcp-servers.sh)\"` first)"
            );
            None
        }
    }
}

/// A Python interpreter: `HPD_MCP_PYTHON`, else `python3` when it runs. `None`, after printing
/// why the test is skipped, when there is none. `with_sdk` requires `HPD_MCP_PYTHON` (a Python
/// with the official `mcp` SDK).
pub fn python(with_sdk: bool) -> Option<String> {
    if let Ok(python) = std::env::var("HPD_MCP_PYTHON")
        && !python.trim().is_empty()
    {
        return Some(python);
    }
    if with_sdk {
        hpd_agent_tests::skip!(
            "skipped: HPD_MCP_PYTHON (a Python with the `mcp` SDK) is not set (run `eval \"$(bash .ci/mcp-servers.sh)\"` first)"
        );
        return None;
    }
    let works = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success());
    if works {
        Some("python3".to_owned())
    } else {
        hpd_agent_tests::skip!(
            "skipped: no Python interpreter (set HPD_MCP_PYTHON or install python3)"
        );
        None
    }
}

/// The path of a fixture script in `hpd-agent/tests/mcp_fixtures`.
pub fn fixture(name: &str) -> String {
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "..",
        "hpd-agent",
        "tests",
        "mcp_fixtures",
        name,
    ]
    .iter()
    .collect();
    path.to_string_lossy().into_owned()
}

/// A fresh temporary directory for one test.
pub fn temp_dir(label: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "hpd-mcp-{label}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default()
    ));
    std::fs::create_dir_all(&dir).expect("create a temporary directory");
    dir
}

/// A free TCP port on loopback (bound and released; good enough for a test server).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .expect("bind a free loopback port")
}

/// Whether the process `pid` still runs (and is no zombie).
pub fn process_alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| !stat.contains(") Z "))
}

/// One stateless 2026-07-28 request (`method` with `params`, its `_meta` filled in with the
/// client `capabilities`) over raw HTTP to `url`, with a bearer `token`: the JSON-RPC response,
/// from a JSON body or the last event of an event stream. `Mcp-Name` is the params' `name`
/// (or `taskId`) when they have one.
pub async fn stateless_request(
    url: &str,
    token: &str,
    method: &str,
    params: serde_json::Value,
    capabilities: serde_json::Value,
) -> serde_json::Value {
    let mut params = params;
    params["_meta"] = serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    });
    let name = params["name"]
        .as_str()
        .or_else(|| params["taskId"].as_str())
        .map(str::to_owned);
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut request = reqwest::Client::new()
        .post(url)
        .header("Authorization", format!("Bearer {token}"))
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", method);
    if let Some(name) = name {
        request = request.header("Mcp-Name", name);
    }
    let text = request
        .json(&body)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let json = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .next_back()
        .map_or(text.as_str(), str::trim);
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {text}"))
}
