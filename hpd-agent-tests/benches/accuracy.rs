//! The accuracy harness, for your own model: 45 tasks over the six MCP reference servers, each
//! run under every layout (flat, hide, append, fixed, native), with the tasks solved, the model
//! requests and the billed input cost per layout (see `accuracy_harness/mod.rs` for what counts
//! as solved).
//!
//! ```sh
//! eval "$(bash .ci/mcp-servers.sh)"
//! ANTHROPIC_API_KEY=sk-ant-... cargo bench -p hpd-agent-tests --bench accuracy
//! HPD_PROVIDER=openai_responses OPENAI_API_KEY=sk-... cargo bench -p hpd-agent-tests --bench accuracy
//! HPD_LLAMA_URL=$(bash .ci/llama-server.sh start) cargo bench -p hpd-agent-tests --bench accuracy
//! ```
//!
//! The provider is read as the demo reads it (`HPD_PROVIDER` and that provider's variables,
//! else `HPD_LLAMA_URL`, else `ANTHROPIC_API_KEY`, else `OPENAI_API_KEY`). Optional:
//! `HPD_ACCURACY_TASKS` (a number: the first N tasks; or task ids separated by commas),
//! `HPD_ACCURACY_LAYOUTS` (layout names separated by commas), `HPD_ACCURACY_MAX_ITERATIONS`
//! (model requests per task, default 6), `HPD_ACCURACY_MAX_OUTPUT_TOKENS` (per request,
//! default 1024; a lower limit shortens the final answers of a slow model, and a call cut
//! short fails as it would with any limit), `HPD_ACCURACY_VERBOSE=1` (list the unsolved tasks and
//! why: the calls that reached a function, the model's replies request by request and the
//! containers opened), `HPD_ACCURACY_STOP_WHEN_SOLVED=1` (end a task's session as soon as the
//! solving call has run, without sending the next request: the same tasks are solved, in less
//! time on a slow model, and the requests and tokens are those until the solving call),
//! `HPD_ACCURACY_OUT` (a file: each layout's report, its row and its unsolved tasks, is
//! appended to it as soon as that layout finishes, so a run of hours on a slow model loses no
//! finished layout when it is stopped), `HPD_ACCURACY_RESOURCES=0` (connect the servers with
//! `McpHarness::without_resources`: no `list_resources`/`read_resource` members; no task needs
//! them). The layouts run in the order given. Besides the five run by default, the variants
//! run when named: `fixed+open_ahead` and `native+open_ahead` with opening ahead on
//! (`collapsing.open_ahead` at `DEFAULT_OPEN_AHEAD`), `fixed+notes` and `native+notes` with
//! `collapsing.container_notes` on (and `hide+notes`, `append+notes`), `fixed+notes+open_ahead`
//! with both, and `default`, the
//! agent's default collapsing settings untouched. The five layouts run by default name every
//! setting: opening ahead and notes are off in them, whatever the defaults.
//!
//! On two cores, Qwen2.5-Coder-1.5B-Instruct from `.ci/qwen-server.sh` (BENCHMARKS.md,
//! "Accuracy on a real model"):
//!
//! ```sh
//! HPD_LLAMA_URL=$(bash .ci/qwen-server.sh start) HPD_ACCURACY_OUT=accuracy-rows.md \
//!   HPD_ACCURACY_LAYOUTS=flat,fixed,hide,append cargo bench -p hpd-agent-tests --bench accuracy
//! ```

mod accuracy_harness;
mod catalog;

use std::io::Write;

use accuracy_harness::{LAYOUTS, Task};

fn selected_tasks() -> Vec<Task> {
    let all = accuracy_harness::tasks();
    match std::env::var("HPD_ACCURACY_TASKS") {
        Ok(value) if value.trim().parse::<usize>().is_ok() => {
            let n: usize = value.trim().parse().unwrap_or(all.len());
            all.into_iter().take(n).collect()
        }
        Ok(value) if !value.trim().is_empty() => {
            let ids: Vec<&str> = value.split(',').map(str::trim).collect();
            all.into_iter()
                .filter(|t| ids.contains(&t.id.as_str()))
                .collect()
        }
        _ => all,
    }
}

fn main() {
    let provider = match accuracy_harness::provider_from_env() {
        Ok(Some(provider)) => provider,
        Ok(None) => {
            eprintln!(
                "no provider configured: set HPD_PROVIDER with its key (ANTHROPIC_API_KEY, OPENAI_API_KEY), or HPD_LLAMA_URL"
            );
            std::process::exit(2);
        }
        Err(e) => {
            eprintln!("provider: {e}");
            std::process::exit(2);
        }
    };
    let tasks = selected_tasks();
    let layouts: Vec<String> = match std::env::var("HPD_ACCURACY_LAYOUTS") {
        Ok(value) if !value.trim().is_empty() => {
            value.split(',').map(|l| l.trim().to_owned()).collect()
        }
        _ => LAYOUTS.iter().map(|(n, _)| (*n).to_owned()).collect(),
    };
    let layouts: Vec<&str> = layouts.iter().map(String::as_str).collect();
    let max_iterations = std::env::var("HPD_ACCURACY_MAX_ITERATIONS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(6);
    let max_output_tokens = std::env::var("HPD_ACCURACY_MAX_OUTPUT_TOKENS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(1024);
    let verbose = std::env::var("HPD_ACCURACY_VERBOSE").is_ok_and(|v| v == "1");
    let stop_when_solved = std::env::var("HPD_ACCURACY_STOP_WHEN_SOLVED").is_ok_and(|v| v == "1");
    let resources = !std::env::var("HPD_ACCURACY_RESOURCES").is_ok_and(|v| v == "0");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let out = std::env::var("HPD_ACCURACY_OUT")
        .ok()
        .filter(|v| !v.trim().is_empty());
    println!("{} tasks, layouts {}", tasks.len(), layouts.join(", "));
    let mut reports = Vec::new();
    for layout in &layouts {
        let report = match runtime.block_on(accuracy_harness::run(
            &provider,
            &tasks,
            &[layout],
            max_iterations,
            max_output_tokens,
            stop_when_solved,
            resources,
        )) {
            Ok(mut finished) => match finished.pop() {
                Some(report) => report,
                None => {
                    eprintln!(
                        "accuracy harness: no layout named '{layout}' (the layouts: {})",
                        accuracy_harness::layout_names().join(", ")
                    );
                    std::process::exit(2);
                }
            },
            Err(e) => {
                eprintln!("accuracy harness: {e}");
                std::process::exit(1);
            }
        };
        if let Some(path) = &out {
            let text =
                accuracy_harness::render(&provider.label, std::slice::from_ref(&report), true);
            if let Err(e) = append(path, &format!("{text}\n")) {
                eprintln!("HPD_ACCURACY_OUT {path}: {e}");
                std::process::exit(1);
            }
        }
        reports.push(report);
    }
    print!(
        "{}",
        accuracy_harness::render(&provider.label, &reports, verbose)
    );
}

/// Appends `text` to the file at `path`, made when missing.
fn append(path: &str, text: &str) -> std::io::Result<()> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?
        .write_all(text.as_bytes())
}
