//! The accuracy harness (`cargo bench -p hpd-agent-tests --bench accuracy`) against a real
//! llama.cpp server and the real MCP reference servers, as a smoke test: two tasks under every
//! layout, and a report that is complete (a row per layout, every task accounted for, the
//! requests counted). The scores are not checked: the small model of the CI server is no
//! measure of accuracy.
//!
//! Needs `HPD_LLAMA_URL` (`.ci/llama-server.sh start`) and the MCP servers' variables
//! (`eval "$(bash .ci/mcp-servers.sh)"`); without them the test says it was skipped.

#[path = "../benches/accuracy_harness/mod.rs"]
mod accuracy_harness;
#[path = "../benches/catalog/mod.rs"]
mod catalog;

/// Tasks per layout. Few, with short replies and at most two requests each: on a shared
/// 2-core machine the small model generates only a few tokens a second.
const TASKS: [&str; 2] = ["sum-integers", "time-paris"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_layout_gets_a_complete_report() {
    let test = "every_layout_gets_a_complete_report";
    let Some(url) = std::env::var("HPD_LLAMA_URL")
        .ok()
        .filter(|u| !u.trim().is_empty())
    else {
        hpd_agent_tests::skip!(
            "{test}: skipped: HPD_LLAMA_URL is not set (start a server with \
             `.ci/llama-server.sh start` and export the URL it prints)"
        );
        return;
    };
    if std::env::var("HPD_MCP_EVERYTHING").is_err() {
        hpd_agent_tests::skip!(
            "{test}: skipped: HPD_MCP_EVERYTHING is not set (run eval \"$(bash .ci/mcp-servers.sh)\")"
        );
        return;
    }
    let all = accuracy_harness::tasks();
    assert!(all.len() >= 40, "the task list has {} tasks", all.len());
    for task in &all {
        assert!(
            task.arguments.is_object(),
            "task {}: arguments are an object",
            task.id
        );
    }
    let tasks: Vec<_> = all
        .into_iter()
        .filter(|t| TASKS.contains(&t.id.as_str()))
        .collect();
    assert_eq!(tasks.len(), TASKS.len(), "the smoke tasks exist");
    let provider = accuracy_harness::llama(&url).expect("llama client");
    let layouts: Vec<&str> = accuracy_harness::LAYOUTS.iter().map(|(n, _)| *n).collect();
    let reports = accuracy_harness::run(&provider, &tasks, &layouts, 2, 32, false, true)
        .await
        .expect("the harness runs");
    let text = accuracy_harness::render(&provider.label, &reports, true);
    println!("{text}");
    assert_eq!(
        reports.iter().map(|r| r.layout).collect::<Vec<_>>(),
        layouts,
        "a report per layout, in order:\n{text}"
    );
    for report in &reports {
        assert_eq!(report.tasks, TASKS.len(), "{text}");
        assert!(report.solved <= report.tasks, "{text}");
        assert_eq!(
            report.solved + report.unsolved.len(),
            report.tasks,
            "every task is solved or says why not:\n{text}"
        );
        assert!(
            report.requests >= report.tasks as u64,
            "at least one model request per task:\n{text}"
        );
        assert!(report.failed_requests <= report.requests, "{text}");
        assert!(report.cached <= report.input, "{text}");
        assert!(
            report.requests == report.failed_requests || report.input > 0,
            "answered requests report their prompt tokens:\n{text}"
        );
    }
    // llama.cpp has no deferred loading: native runs as fixed, and says so.
    let native = reports
        .iter()
        .find(|r| r.layout == "native")
        .expect("native");
    assert_eq!(native.fallback.as_deref(), Some("fixed"), "{text}");
    assert_eq!(
        text.lines().filter(|l| l.starts_with("| ")).count(),
        layouts.len() + 1,
        "a header and a row per layout:\n{text}"
    );
}
