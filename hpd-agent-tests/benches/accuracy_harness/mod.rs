//! The accuracy harness: a task list over the catalog of the six MCP reference servers, each
//! task with the function and the arguments that solve it, run under every collapsing layout
//! against whatever model is configured.
//!
//! A task is solved when the agent, within one turn, runs the task's function (whatever path
//! the call took: a direct call, a qualified name, the call tool of `fixed`, a native deferred
//! call) with arguments that hold every key of the task's `arguments` with the same value
//! (objects are compared key by key, so extra keys are allowed; arrays element by element;
//! strings exactly, after trimming; numbers as numbers). The calls are seen by a global
//! middleware, so only calls that reach a function count. Per layout the report gives the tasks
//! solved, the model requests made, the prompt tokens and the cached ones the provider reported,
//! and the billed input cost in units of the uncached input price under Anthropic's rule
//! (uncached written at 1.25x, cached read at 0.1x) and OpenAI's (uncached 1x, cached 0.1x).
//!
//! Used by `benches/accuracy.rs` (the command users run) and by the llama.cpp smoke test
//! `tests/accuracy_smoke.rs`.

#![allow(dead_code)]

use std::path::Path;
use std::sync::{Arc, Mutex};

use hpd_agent::{
    AgentBuilder, AgentEvent, ChatClient, ChatResponse, Middleware, async_trait, chat::ChatError,
    chat::ChatRequest, chat::DeferredTools, chat::ModelOptions, chat::TextSink,
    config::CollapsingLayout, config::DEFAULT_OPEN_AHEAD, middleware::FunctionCall,
    middleware::HookResult, providers::anthropic::AnthropicClient, providers::openai::OpenAiClient,
    providers::openai_responses::OpenAiResponsesClient,
};
use serde::Deserialize;
use serde_json::Value;

use crate::catalog;

/// One task: a prompt, and the call that solves it.
#[derive(Debug, Clone, Deserialize)]
pub struct Task {
    /// A short name.
    pub id: String,
    /// What the user asks. `{scratch}` and `{repo}` stand for the scratch folder the
    /// filesystem server may use and the git repository inside it.
    pub prompt: String,
    /// The function that solves it.
    pub function: String,
    /// The arguments it must get (a subset of what it gets).
    pub arguments: Value,
}

/// Every task, from `tasks.json`.
pub fn tasks() -> Vec<Task> {
    serde_json::from_str(include_str!("tasks.json")).expect("tasks.json is a list of tasks")
}

/// The layouts the harness runs: collapsing off, and the four collapsing layouts as such
/// (opening ahead and container notes off, whatever the defaults).
pub const LAYOUTS: [(&str, Option<CollapsingLayout>); 5] = [
    ("flat", None),
    ("hide", Some(CollapsingLayout::Hide)),
    ("append", Some(CollapsingLayout::Append)),
    ("fixed", Some(CollapsingLayout::Fixed)),
    ("native", Some(CollapsingLayout::Native)),
];

/// Layouts with settings besides the layout, run only when named (not among [`LAYOUTS`], the
/// default list): `+open_ahead` turns opening ahead on (`collapsing.open_ahead` at
/// [`DEFAULT_OPEN_AHEAD`]: before a task's first request the best-ranked container is opened
/// for the model when it scores at least that), `+notes` turns `collapsing.container_notes` on
/// (a response of container calls only leaves a note in the user's turn instead of the calls
/// and their results), and `default` is the agent's default collapsing settings, untouched
/// (`native` with the settings `CollapsingConfig::default()` gives).
pub const VARIANT_LAYOUTS: [(&str, CollapsingLayout, Variant); 8] = [
    (
        "default",
        CollapsingLayout::Native,
        Variant {
            open_ahead: false,
            notes: false,
            defaults: true,
        },
    ),
    (
        "fixed+open_ahead",
        CollapsingLayout::Fixed,
        Variant {
            open_ahead: true,
            notes: false,
            defaults: false,
        },
    ),
    (
        "native+open_ahead",
        CollapsingLayout::Native,
        Variant {
            open_ahead: true,
            notes: false,
            defaults: false,
        },
    ),
    (
        "fixed+notes",
        CollapsingLayout::Fixed,
        Variant {
            open_ahead: false,
            notes: true,
            defaults: false,
        },
    ),
    (
        "native+notes",
        CollapsingLayout::Native,
        Variant {
            open_ahead: false,
            notes: true,
            defaults: false,
        },
    ),
    (
        "fixed+notes+open_ahead",
        CollapsingLayout::Fixed,
        Variant {
            open_ahead: true,
            notes: true,
            defaults: false,
        },
    ),
    (
        "hide+notes",
        CollapsingLayout::Hide,
        Variant {
            open_ahead: false,
            notes: true,
            defaults: false,
        },
    ),
    (
        "append+notes",
        CollapsingLayout::Append,
        Variant {
            open_ahead: false,
            notes: true,
            defaults: false,
        },
    ),
];

/// The settings a layout of [`VARIANT_LAYOUTS`] turns on.
#[derive(Debug, Clone, Copy, Default)]
pub struct Variant {
    /// `collapsing.open_ahead` at [`DEFAULT_OPEN_AHEAD`].
    pub open_ahead: bool,
    /// `collapsing.container_notes`.
    pub notes: bool,
    /// The default settings, untouched: the two fields above are not applied.
    pub defaults: bool,
}

/// Every layout name [`run`] takes: [`LAYOUTS`], then [`VARIANT_LAYOUTS`].
pub fn layout_names() -> Vec<&'static str> {
    LAYOUTS
        .iter()
        .map(|(n, _)| *n)
        .chain(VARIANT_LAYOUTS.iter().map(|(n, _, _)| *n))
        .collect()
}

/// A configured model: the client and a line saying which it is.
pub struct Provider {
    /// The client every layout's agent uses.
    pub client: Arc<dyn ChatClient>,
    /// Which provider, model and address.
    pub label: String,
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// A client for the llama.cpp server at `url` (its OpenAI Chat Completions endpoint).
pub fn llama(url: &str) -> Result<Provider, ChatError> {
    let url = url.trim().trim_end_matches('/');
    let client = OpenAiClient::new("smollm2", "")?
        .with_base_url(format!("{url}/v1"))?
        .with_timeout(std::time::Duration::from_secs(600))
        .with_streaming(false);
    Ok(Provider {
        client: Arc::new(client),
        label: format!("llama.cpp at {url} (OpenAI Chat Completions)"),
    })
}

/// The provider the environment configures, as the demo reads it: `HPD_PROVIDER`
/// (`openai`, `openai_responses`, `anthropic`) with that provider's variables; else
/// `HPD_LLAMA_URL` (a llama.cpp server); else Anthropic when `ANTHROPIC_API_KEY` is set, else
/// OpenAI Chat Completions when `OPENAI_API_KEY` is set. `None` when nothing is configured.
pub fn provider_from_env() -> Result<Option<Provider>, ChatError> {
    let provider = match var("HPD_PROVIDER") {
        Some(provider) => provider.to_ascii_lowercase(),
        None => match var("HPD_LLAMA_URL") {
            Some(url) => return llama(&url).map(Some),
            None if var("ANTHROPIC_API_KEY").is_some() => "anthropic".to_owned(),
            None if var("OPENAI_API_KEY").is_some() => "openai".to_owned(),
            None => return Ok(None),
        },
    };
    let openai_model = || var("OPENAI_MODEL").unwrap_or_else(|| "gpt-4o-mini".to_owned());
    Ok(Some(match provider.as_str() {
        "openai" => {
            let client = OpenAiClient::from_env(openai_model())?;
            let label = format!(
                "openai (Chat Completions) at {}, model {}",
                client.base_url(),
                client.model()
            );
            Provider {
                client: Arc::new(client),
                label,
            }
        }
        "openai_responses" => {
            let client = OpenAiResponsesClient::from_env(openai_model())?;
            let label = format!(
                "openai_responses (Responses API) at {}, model {}",
                client.base_url(),
                client.model()
            );
            Provider {
                client: Arc::new(client),
                label,
            }
        }
        "anthropic" => {
            let model = var("ANTHROPIC_MODEL").unwrap_or_else(|| "claude-sonnet-4-5".to_owned());
            let client = AnthropicClient::from_env(model)?;
            let label = format!(
                "anthropic (Messages API) at {}, model {}",
                client.base_url(),
                client.model()
            );
            Provider {
                client: Arc::new(client),
                label,
            }
        }
        other => {
            return Err(ChatError::Config(format!(
                "HPD_PROVIDER is '{other}'; expected openai, openai_responses or anthropic"
            )));
        }
    }))
}

/// Request counts and token usage, summed.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    requests: u64,
    failed_requests: u64,
    input: u64,
    cached: u64,
}

/// The calls that reached a function in the running task: canonical name, arguments.
type Made = Arc<Mutex<Vec<(String, String)>>>;

/// The running task's function and the arguments that solve it.
type Goal = Arc<Mutex<Option<(String, Value)>>>;

/// Forwards to the configured client (its form of deferred loading included), tallies every
/// request and notes what the model answered, for the reasons of unsolved tasks.
struct Counting {
    inner: Arc<dyn ChatClient>,
    tally: Arc<Mutex<Tally>>,
    trace: Arc<Mutex<Vec<String>>>,
    /// With `stop_when_solved`: the running task's function and arguments, and the calls
    /// that reached a function so far.
    goal: Option<(Goal, Made)>,
}

/// The text [`Counting`] answers with, in place of the model, once the task is solved and
/// `stop_when_solved` is on.
pub const SOLVED_STOP: &str = "(the harness stopped the task here: it is solved)";

#[async_trait]
impl ChatClient for Counting {
    async fn complete(
        &self,
        request: ChatRequest<'_>,
        text: TextSink<'_>,
    ) -> Result<ChatResponse, ChatError> {
        if let Some((goal, calls)) = &self.goal {
            let goal = goal.lock().expect("goal").clone();
            if let Some((function, expected)) = goal
                && solves(&calls.lock().expect("calls"), &function, &expected)
            {
                return Ok(ChatResponse::text(SOLVED_STOP));
            }
        }
        let result = self.inner.complete(request, text).await;
        let mut tally = self.tally.lock().expect("tally");
        tally.requests += 1;
        match &result {
            Ok(response) => {
                tally.input += response.usage.input_tokens;
                tally.cached += response.usage.cached_input_tokens;
            }
            Err(_) => tally.failed_requests += 1,
        }
        self.trace.lock().expect("trace").push(match &result {
            Ok(response) if response.tool_calls.is_empty() => format!(
                "text {}",
                shortened(response.text.as_deref().unwrap_or_default())
            ),
            Ok(response) => response
                .tool_calls
                .iter()
                .map(|call| format!("{} {}", call.name, shortened(&call.arguments)))
                .collect::<Vec<_>>()
                .join(" + "),
            Err(e) => format!("failed: {}", shortened(&e.to_string())),
        });
        result
    }

    fn deferred_tools(&self) -> DeferredTools {
        self.inner.deferred_tools()
    }
}

/// Records the function calls that reach a function: canonical name and arguments.
struct Calls(Made);

#[async_trait]
impl Middleware for Calls {
    async fn before_function(&self, call: &mut FunctionCall) -> HookResult {
        self.0
            .lock()
            .expect("calls")
            .push((call.function_name().to_owned(), call.arguments().to_owned()));
        Ok(())
    }
}

/// Whether one of `made` (function, arguments as JSON text) is a call of `function` with
/// arguments that hold `expected` ([`matches`]).
fn solves(made: &[(String, String)], function: &str, expected: &Value) -> bool {
    made.iter().any(|(f, arguments)| {
        f == function
            && serde_json::from_str::<Value>(arguments)
                .is_ok_and(|actual| matches(expected, &actual))
    })
}

/// Whether `actual` holds `expected`: objects key by key (extra keys allowed), arrays element
/// by element, strings equal after trimming, numbers equal as numbers, anything else equal.
pub fn matches(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Object(want), Value::Object(got)) => want
            .iter()
            .all(|(key, value)| got.get(key).is_some_and(|g| matches(value, g))),
        (Value::Array(want), Value::Array(got)) => {
            want.len() == got.len() && want.iter().zip(got).all(|(w, g)| matches(w, g))
        }
        (Value::String(want), Value::String(got)) => want.trim() == got.trim(),
        (Value::Number(want), Value::Number(got)) => want.as_f64() == got.as_f64(),
        _ => expected == actual,
    }
}

/// `value` with `{scratch}` and `{repo}` replaced in every string.
fn substitute(value: &Value, scratch: &str, repo: &str) -> Value {
    match value {
        Value::String(s) => Value::String(s.replace("{scratch}", scratch).replace("{repo}", repo)),
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| substitute(v, scratch, repo)).collect())
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), substitute(v, scratch, repo)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A scratch folder for one layout's run: two text files and a git repository of one commit
/// with an unstaged change.
///
/// # Errors
///
/// A file could not be written or git failed.
fn prepare(dir: &Path) -> Result<(), String> {
    let io = |e: std::io::Error| e.to_string();
    std::fs::write(dir.join("notes.txt"), "Design review at 10:00.\n").map_err(io)?;
    std::fs::write(dir.join("draft.txt"), "Launch plan, first draft.\n").map_err(io)?;
    let repo = dir.join("repo");
    std::fs::create_dir(&repo).map_err(io)?;
    std::fs::write(repo.join("README.md"), "# Demo\n").map_err(io)?;
    let git = |args: &[&str]| -> Result<(), String> {
        let status = std::process::Command::new("git")
            .args([
                "-c",
                "user.name=Harness",
                "-c",
                "user.email=harness@example.com",
            ])
            .args(args)
            .current_dir(&repo)
            .stdout(std::process::Stdio::null())
            .status()
            .map_err(|e| format!("git: {e}"))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("git {args:?} failed"))
        }
    };
    git(&["init", "-q", "-b", "main"])?;
    git(&["add", "README.md"])?;
    git(&["commit", "-q", "-m", "First commit"])?;
    std::fs::write(repo.join("README.md"), "# Demo\n\nMore text.\n").map_err(io)?;
    Ok(())
}

/// The outcome of one layout.
#[derive(Debug, Clone)]
pub struct LayoutReport {
    /// The layout asked for.
    pub layout: &'static str,
    /// The layout used, when the agent fell back to another one.
    pub fallback: Option<String>,
    /// Tasks run.
    pub tasks: usize,
    /// Tasks solved.
    pub solved: usize,
    /// Tasks whose run ended with an error (a failed request, the iteration limit...).
    pub errors: usize,
    /// Model requests made, and how many of them failed.
    pub requests: u64,
    /// The failed ones among them.
    pub failed_requests: u64,
    /// Prompt tokens the provider reported, cached ones included.
    pub input: u64,
    /// Cached prompt tokens the provider reported.
    pub cached: u64,
    /// Per unsolved task: its id and why.
    pub unsolved: Vec<(String, String)>,
}

impl LayoutReport {
    /// Billed input under Anthropic's rule, in uncached-token units.
    pub fn anthropic(&self) -> f64 {
        1.25 * (self.input - self.cached) as f64 + 0.1 * self.cached as f64
    }

    /// Billed input under OpenAI's rule, in uncached-token units.
    pub fn openai(&self) -> f64 {
        (self.input - self.cached) as f64 + 0.1 * self.cached as f64
    }
}

/// Runs `tasks` under each of `layouts` (names of [`LAYOUTS`] and [`VARIANT_LAYOUTS`])
/// against `provider`, each layout with its own agent, MCP servers and scratch folder, each
/// task in a fresh session of at most `max_iterations` model requests of at most
/// `max_output_tokens` tokens each. With `stop_when_solved` a task's session ends as soon as
/// the solving call has reached its function: the next request is answered with
/// [`SOLVED_STOP`] instead of being sent, and is not counted. The tasks solved are the same;
/// the requests and tokens are then those a task took until it was solved (or all of them when
/// it was not), without the model's closing answer or any calls it makes after the solving one.
///
/// # Errors
///
/// The MCP servers could not be started (their variables are unset: run
/// `eval "$(bash .ci/mcp-servers.sh)"`), or a scratch folder could not be made.
pub async fn run(
    provider: &Provider,
    tasks: &[Task],
    layouts: &[&str],
    max_iterations: usize,
    max_output_tokens: u32,
    stop_when_solved: bool,
    resources: bool,
) -> Result<Vec<LayoutReport>, String> {
    let mut reports = Vec::new();
    let known = LAYOUTS
        .iter()
        .map(|&(name, layout)| (name, layout, Variant::default()))
        .chain(
            VARIANT_LAYOUTS
                .iter()
                .map(|&(name, layout, variant)| (name, Some(layout), variant)),
        );
    for (name, layout, variant) in known.filter(|(n, _, _)| layouts.contains(n)) {
        let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
        // The filesystem server resolves symbolic links; so do the task paths.
        let root = scratch.path().canonicalize().map_err(|e| e.to_string())?;
        prepare(&root)?;
        let scratch_text = root.display().to_string();
        let repo_text = root.join("repo").display().to_string();
        let harnesses = catalog::mcp_catalog_with(&root, resources).await?;
        let tally = Arc::new(Mutex::new(Tally::default()));
        let calls = Arc::new(Mutex::new(Vec::new()));
        let trace = Arc::new(Mutex::new(Vec::new()));
        let goal = Arc::new(Mutex::new(None));
        let fallback = Arc::new(Mutex::new(None));
        let noted = Arc::clone(&fallback);
        let traced = Arc::clone(&trace);
        let mut builder = catalog::register_mcp(AgentBuilder::new(), &harnesses)
            .with_instructions(
                "You are a helpful assistant. Use the tools to do what the user asks, then say briefly what you did.",
            )
            .with_max_iterations(max_iterations)
            .with_model_options(
                ModelOptions::new()
                    .with_temperature(0.0)
                    .with_max_output_tokens(max_output_tokens),
            )
            .with_middleware(Calls(Arc::clone(&calls)))
            .on_event(move |event| {
                match event {
                    AgentEvent::LayoutFallback { used, .. } => {
                        *noted.lock().expect("fallback") = Some(used.to_string());
                    }
                    AgentEvent::ContainerExpanded { harness, recovery } => {
                        let how = if *recovery { " (recovery)" } else { "" };
                        traced
                            .lock()
                            .expect("trace")
                            .push(format!("opened {harness}{how}"));
                    }
                    _ => {}
                }
            })
            .with_chat_client(Counting {
                inner: Arc::clone(&provider.client),
                tally: Arc::clone(&tally),
                trace: Arc::clone(&trace),
                goal: stop_when_solved.then(|| (Arc::clone(&goal), Arc::clone(&calls))),
            });
        builder = match layout {
            None => builder.without_harness_collapsing(),
            Some(layout) if variant.defaults => builder.with_collapsing_layout(layout),
            Some(layout) => builder
                .with_collapsing_layout(layout)
                .configure_harness_collapsing(|c| {
                    c.open_ahead = variant.open_ahead.then_some(DEFAULT_OPEN_AHEAD);
                    c.container_notes = variant.notes;
                }),
        };
        let agent = builder.build().map_err(|e| e.to_string())?;
        let mut report = LayoutReport {
            layout: name,
            fallback: None,
            tasks: tasks.len(),
            solved: 0,
            errors: 0,
            requests: 0,
            failed_requests: 0,
            input: 0,
            cached: 0,
            unsolved: Vec::new(),
        };
        for task in tasks {
            calls.lock().expect("calls").clear();
            trace.lock().expect("trace").clear();
            let prompt = task
                .prompt
                .replace("{scratch}", &scratch_text)
                .replace("{repo}", &repo_text);
            let expected = substitute(&task.arguments, &scratch_text, &repo_text);
            *goal.lock().expect("goal") = Some((task.function.clone(), expected.clone()));
            let started = std::time::Instant::now();
            let requests_before = tally.lock().expect("tally").requests;
            let outcome = agent.session().run(prompt).await;
            let made = calls.lock().expect("calls").clone();
            let model = format!("model: {}", trace.lock().expect("trace").join(" | "));
            let solved = solves(&made, &task.function, &expected);
            // What reached a function, for the reasons below.
            let called = || {
                let calls: Vec<String> = made
                    .iter()
                    .map(|(f, arguments)| format!("{f} {}", shortened(arguments)))
                    .collect();
                format!("called {}", calls.join(", "))
            };
            if let Err(e) = &outcome {
                report.errors += 1;
                if !solved {
                    let why = if made.is_empty() {
                        format!("error: {e}; no function called; {model}")
                    } else {
                        format!("error: {e}; {}; {model}", called())
                    };
                    report.unsolved.push((task.id.clone(), why));
                }
            } else if !solved {
                let why = if made.is_empty() {
                    let reply = outcome
                        .as_ref()
                        .map(|o| o.text.as_str())
                        .unwrap_or_default();
                    format!("no function called; replied: {}; {model}", shortened(reply))
                } else {
                    format!("{}; {model}", called())
                };
                report.unsolved.push((task.id.clone(), why));
            }
            if solved {
                report.solved += 1;
            }
            // One line per task on stderr, to follow a run of hours (with the model's replies,
            // which a stopped run would otherwise lose).
            eprintln!(
                "{name} {}: {}, {} requests, {:.0} s; {model}",
                task.id,
                if solved { "solved" } else { "unsolved" },
                tally.lock().expect("tally").requests - requests_before,
                started.elapsed().as_secs_f64()
            );
        }
        let tally = *tally.lock().expect("tally");
        report.requests = tally.requests;
        report.failed_requests = tally.failed_requests;
        report.input = tally.input;
        report.cached = tally.cached;
        report.fallback = fallback.lock().expect("fallback").clone();
        drop(agent);
        drop(harnesses);
        reports.push(report);
    }
    Ok(reports)
}

/// `text` on one line and cut to 120 characters, for the reasons of unsolved tasks.
fn shortened(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(120) {
        Some((end, _)) => format!("{}...", &line[..end]),
        None => line,
    }
}

/// The report as a Markdown table, one row per layout, then the unsolved tasks.
pub fn render(provider: &str, reports: &[LayoutReport], verbose: bool) -> String {
    let mut text = format!(
        "accuracy over the MCP reference servers, provider {provider}\n\
         | layout | tasks | solved | errors | requests | failed requests | prompt tokens | cached | billed, Anthropic rule | billed, OpenAI rule |\n\
         |---|---|---|---|---|---|---|---|---|---|\n"
    );
    for r in reports {
        let layout = match &r.fallback {
            Some(used) => format!("{} (ran as {used})", r.layout),
            None => r.layout.to_owned(),
        };
        text.push_str(&format!(
            "| {layout} | {} | {} | {} | {} | {} | {} | {} | {:.0} | {:.0} |\n",
            r.tasks,
            r.solved,
            r.errors,
            r.requests,
            r.failed_requests,
            r.input,
            r.cached,
            r.anthropic(),
            r.openai()
        ));
    }
    if verbose {
        for r in reports {
            for (id, why) in &r.unsolved {
                text.push_str(&format!("unsolved {} {id}: {why}\n", r.layout));
            }
        }
    }
    text
}
