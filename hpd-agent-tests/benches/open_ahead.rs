//! Opening ahead of the model (`collapsing.open_ahead`), measured on the accuracy harness's 45
//! tasks over the MCP reference servers' catalog (six collapsed harnesses, 51 tools).
//!
//! For each task the agent (`fixed` layout) ranks the containers against the task's prompt
//! before its first request and opens those that score at least the threshold. No model is
//! asked: a scripted client answers the first request, and the openings are read from the
//! agent's `ContainerExpanded` events and from the first request it sent. Per threshold the
//! bench prints how often the container the task needed was opened (the model then needs no
//! container round trip: the round trips saved), how often it ranked first, how often it was
//! the only one opened, how
//! often only other containers were (their schemas cost tokens and buy nothing), and how often
//! nothing was, with the `o200k_base` tokens the openings added to the first request. Then,
//! for every task, the member the `fixed` layout's note names as fitting the message best once
//! the model opens the container the task needs (`collapsing.container_notes`), against the
//! member the task needs. Last, the same for requests in other words than the tasks'
//! (`open_ahead_paraphrases.json`), written after the ranking and the hint were chosen on the
//! tasks, so that what the figures owe to tuning shows. And how often a note points to the
//! container a task needs when the model opened another itself (in `hide`, which never opens
//! ahead), and how often it points away from the right one.
//!
//! ```sh
//! eval "$(bash .ci/mcp-servers.sh)"
//! cargo bench -p hpd-agent-tests --bench open_ahead
//! ```
//!
//! With `HPD_OPEN_AHEAD_LIST` set it also lists, for every task, the containers opened at the
//! default threshold and the hint, so that two builds' listings can be compared line by line
//! (which tasks a change to the ranking touches, to run again on a model).

mod accuracy_harness;
mod catalog;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use hpd_agent::config::CollapsingLayout;
use hpd_agent::harness::DynamicHarness;
use hpd_agent::{AgentBuilder, AgentEvent, ChatMessage, ChatResponse, ScriptedChatClient};

/// The thresholds measured (BM25 scores).
const THRESHOLDS: [f64; 10] = [2.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 12.0, 14.0];

/// Messages that need none of the catalog's tools (talk, general knowledge, writing): an
/// opening for one of them costs its schemas' tokens and buys nothing.
const NO_TOOL: [&str; 12] = [
    "Hello, how are you?",
    "Thanks, that is all.",
    "What can you do?",
    "Who are you?",
    "Write a haiku about autumn.",
    "Explain what a monad is.",
    "Summarise our conversation so far.",
    "Translate 'good morning' into French.",
    "What is the capital of Australia?",
    "Give me three ideas for a birthday present.",
    "Is a tomato a fruit or a vegetable?",
    "Please answer in shorter sentences from now on.",
];

/// What opening ahead did for one task.
struct Outcome {
    /// The harnesses opened, best first.
    opened: Vec<String>,
    /// Tokens of the opening results in the first request.
    tokens: usize,
}

/// Runs one task's first request with opening ahead at `threshold`.
async fn open_for(
    harnesses: &[DynamicHarness],
    prompt: &str,
    threshold: f64,
) -> Result<Outcome, String> {
    let client = ScriptedChatClient::with_replies([ChatResponse::text("ok")]);
    let opened = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&opened);
    let builder = AgentBuilder::new()
        .with_collapsing_layout(CollapsingLayout::Fixed)
        .configure_harness_collapsing(|c| c.open_ahead = Some(threshold))
        .on_event(move |event| {
            if let AgentEvent::ContainerExpanded { harness, .. } = event {
                seen.lock().expect("events").push(harness.clone());
            }
        })
        .with_chat_client(client.clone());
    let agent = catalog::register_mcp(builder, harnesses)
        .build()
        .map_err(|e| e.to_string())?;
    agent.run(prompt).await.map_err(|e| e.to_string())?;
    let requests = client.requests();
    let first = requests.first().ok_or("no request was sent")?;
    // In `fixed` an opening goes into the user's message (the containers' answers, then the
    // request again); in `native` into a tool result. What the message holds beyond the
    // request itself is what the openings added.
    let sent: usize = first
        .messages
        .iter()
        .map(|m| match m {
            ChatMessage::Tool { content, .. } | ChatMessage::User { content } => {
                catalog::tokens(content).len()
            }
            _ => 0,
        })
        .sum();
    let tokens = sent.saturating_sub(catalog::tokens(prompt).len());
    let opened = opened.lock().expect("events").clone();
    Ok(Outcome { opened, tokens })
}

/// The note that answers the model's own call of container `harness` for `prompt` in `layout`
/// (the `container_notes` setting, with nothing opened ahead, which is on by default).
async fn note_for(
    harnesses: &[DynamicHarness],
    prompt: &str,
    harness: &str,
    layout: CollapsingLayout,
) -> Result<String, String> {
    let client = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![hpd_agent::ToolCall::new("c1", harness, "{}")]),
        ChatResponse::text("ok"),
    ]);
    let builder = AgentBuilder::new()
        .with_collapsing_layout(layout)
        .configure_harness_collapsing(|c| {
            c.container_notes = true;
            c.open_ahead = None;
        })
        .with_chat_client(client.clone());
    let agent = catalog::register_mcp(builder, harnesses)
        .build()
        .map_err(|e| e.to_string())?;
    agent.run(prompt).await.map_err(|e| e.to_string())?;
    let requests = client.requests();
    let second = requests.get(1).ok_or("no second request was sent")?;
    let Some(ChatMessage::User { content }) = second.messages.last() else {
        return Err("the second request does not end with the note".to_owned());
    };
    Ok(content.clone())
}

/// The members a note names for `prompt` once the model opens `harness` itself: the `fixed`
/// layout's hint of the members that fit the message best, best first. Empty when the note
/// names none.
async fn hint_for(
    harnesses: &[DynamicHarness],
    prompt: &str,
    harness: &str,
) -> Result<Vec<String>, String> {
    let content = note_for(harnesses, prompt, harness, CollapsingLayout::Fixed).await?;
    let lead = format!("Of the functions of {harness}, ");
    let Some((_, rest)) = content.split_once(&lead) else {
        return Ok(Vec::new());
    };
    if let Some((member, _)) = rest.split_once(" fits the request best") {
        return Ok(vec![member.to_owned()]);
    }
    let Some((_, list)) = rest.split_once("these fit the request best:") else {
        return Err(format!("a hint of an unknown form: {rest:?}"));
    };
    Ok(list
        .lines()
        .filter_map(|line| line.strip_prefix("- "))
        .filter_map(|line| line.split_once(':').map(|(name, _)| name.to_owned()))
        .collect())
}

/// The container a note points to once the model opens `harness` itself for `prompt` in
/// `hide` (which never opens ahead): the harness it names as fitting the request better, or
/// `None` when the note names none.
async fn pointer_for(
    harnesses: &[DynamicHarness],
    prompt: &str,
    harness: &str,
) -> Result<Option<String>, String> {
    let content = note_for(harnesses, prompt, harness, CollapsingLayout::Hide).await?;
    Ok(content
        .split("\n\n")
        .find(|paragraph| paragraph.contains(" fits the request better than "))
        .and_then(|paragraph| paragraph.split([' ', '(']).next())
        .map(str::to_owned))
}

/// How the notes' pointers to a better container fared over a set of requests.
#[derive(Default)]
struct Pointers {
    /// Requests times the containers they do not need (each opened in turn).
    pairs: usize,
    /// Of those, the notes that name the needed container.
    to_needed: usize,
    /// Of those, the notes that name another container.
    to_other: usize,
    /// Notes of the needed container that name another.
    false_pointers: usize,
}

impl Pointers {
    /// Counts the `pointer` of the note the model got for opening `opened` where the request
    /// needs `needed`; the pointer again when it names another container than `needed`.
    fn add(&mut self, opened: &str, needed: &str, pointer: Option<String>) -> Option<String> {
        if opened == needed {
            self.false_pointers += usize::from(pointer.is_some());
            return pointer;
        }
        self.pairs += 1;
        match pointer {
            Some(name) if name == needed => {
                self.to_needed += 1;
                None
            }
            Some(name) => {
                self.to_other += 1;
                Some(name)
            }
            None => None,
        }
    }

    /// The counts for `requests` requests, after "with another container ... opened, ".
    fn summary(&self, requests: usize) -> String {
        format!(
            "it names the needed one for {} of {}, another for {}, none for {}; with the needed \
             one opened, it names another for {} of {requests}",
            self.to_needed,
            self.pairs,
            self.to_other,
            self.pairs - self.to_needed - self.to_other,
            self.false_pointers,
        )
    }
}

/// A verb of change (`asks_for_change` reads it so) that no text of the catalog holds, so that
/// it moves no ranking: added to a message, it turns the annotations' guard off.
const UNUSED_CHANGE_VERB: &str = "purge";

/// The functions of the catalog whose annotations say they change things (the servers'
/// `readOnlyHint: false`, or `destructiveHint: true` alone).
fn changing_functions(harnesses: &[DynamicHarness]) -> Result<HashSet<String>, String> {
    let builder = AgentBuilder::new()
        .configure_harness_collapsing(|c| c.enabled = false)
        .with_chat_client(ScriptedChatClient::new());
    let agent = catalog::register_mcp(builder, harnesses)
        .build()
        .map_err(|e| e.to_string())?;
    Ok(agent
        .tool_session()
        .visible_tools()
        .iter()
        .filter(|tool| tool.annotations.changes_things())
        .map(|tool| tool.name.clone())
        .collect())
}

/// How the hints of a set of requests named the functions they need.
#[derive(Default)]
struct HintTally {
    /// The needed function named alone.
    alone: usize,
    /// Named first of several.
    first: usize,
    /// Named later among several.
    later: usize,
    /// Names in all hints, for the mean.
    names: usize,
    /// Requests with a hint.
    hinted: usize,
    misses: Vec<String>,
    /// Requests that need a function that changes nothing, whose hint names one that changes
    /// things.
    writes_for_reads: Vec<String>,
}

impl HintTally {
    fn add(&mut self, what: String, needed: &str, hint: &[String], changing: &HashSet<String>) {
        if !changing.contains(needed) {
            let writers: Vec<&str> = hint
                .iter()
                .filter(|name| changing.contains(*name))
                .map(String::as_str)
                .collect();
            if !writers.is_empty() {
                self.writes_for_reads.push(format!(
                    "{what}: needed {needed}, named {}",
                    writers.join(", ")
                ));
            }
        }
        self.names += hint.len();
        self.hinted += usize::from(!hint.is_empty());
        match hint.iter().position(|name| name == needed) {
            Some(0) if hint.len() == 1 => self.alone += 1,
            Some(0) => self.first += 1,
            Some(_) => self.later += 1,
            None => self.misses.push(format!(
                "{what}: needed {needed}, named {}",
                if hint.is_empty() {
                    "none".to_owned()
                } else {
                    hint.join(", ")
                }
            )),
        }
    }

    fn summary(&self) -> String {
        format!(
            "names the needed function in {} (alone in {}, first of several in {}, later among \
             several in {}); {:.1} names per hint; for {} requests whose function changes \
             nothing it names one that does{}",
            self.alone + self.first + self.later,
            self.alone,
            self.first,
            self.later,
            self.names as f64 / self.hinted.max(1) as f64,
            self.writes_for_reads.len(),
            if self.writes_for_reads.is_empty() {
                String::new()
            } else {
                format!(" ({})", self.writes_for_reads.join("; "))
            }
        )
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    // A folder named as the accuracy harness's are (`/tmp/.tmpXXXXXX`): the tasks' paths are
    // part of the ranked message, and a name of words ("open", "ahead") would rank the
    // members that share them.
    let scratch_dir = tempfile::tempdir().expect("scratch folder");
    let scratch = scratch_dir.path().canonicalize().expect("scratch folder");
    let harnesses = match runtime.block_on(catalog::mcp_catalog(&scratch)) {
        Ok(harnesses) => harnesses,
        Err(e) => {
            eprintln!("open_ahead: the MCP catalog is needed: {e}");
            std::process::exit(2);
        }
    };
    // The harness that has `function`, and a request with its folders filled in.
    let harness_of = |function: &str| {
        harnesses
            .iter()
            .find(|h| h.tool_names().iter().any(|name| name == function))
            .map(|h| h.name().to_owned())
            .unwrap_or_else(|| panic!("no harness has {function}"))
    };
    let folder = scratch.display().to_string();
    let fill = |request: &str| {
        request
            .replace("{scratch}", &folder)
            .replace("{repo}", &format!("{folder}/repo"))
    };
    let changing =
        changing_functions(&harnesses).unwrap_or_else(|e| panic!("the catalog's annotations: {e}"));
    let tasks = accuracy_harness::tasks();
    let needed: Vec<String> = tasks
        .iter()
        .map(|task| harness_of(&task.function))
        .collect();
    println!(
        "opening ahead on {} tasks over {} MCP harnesses (fixed layout; at most {} opened a turn)",
        tasks.len(),
        harnesses.len(),
        hpd_agent::config::OPEN_AHEAD_MAX
    );
    println!(
        "| threshold | needed opened (round trips saved) | needed ranked first | needed alone | other only | nothing | containers opened | tokens added, mean per task | opened for the {} messages needing no tool |",
        NO_TOOL.len()
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut misses: Vec<String> = Vec::new();
    // Per task, the containers opened at the default threshold (for the listing below).
    let mut opened_by_default: Vec<Vec<String>> = Vec::new();
    for threshold in THRESHOLDS {
        let (mut hit, mut first, mut alone, mut other, mut nothing, mut count, mut tokens) =
            (0, 0, 0, 0, 0, 0, 0);
        for (task, needed) in tasks.iter().zip(&needed) {
            let prompt = fill(&task.prompt);
            let outcome = runtime
                .block_on(open_for(&harnesses, &prompt, threshold))
                .unwrap_or_else(|e| panic!("task {}: {e}", task.id));
            count += outcome.opened.len();
            tokens += outcome.tokens;
            if outcome.opened.first() == Some(needed) {
                first += 1;
            }
            if outcome.opened.contains(needed) {
                hit += 1;
                if outcome.opened.len() == 1 {
                    alone += 1;
                }
            } else if outcome.opened.is_empty() {
                nothing += 1;
            } else {
                other += 1;
            }
            if threshold == hpd_agent::config::DEFAULT_OPEN_AHEAD {
                opened_by_default.push(outcome.opened.clone());
            }
            if threshold == hpd_agent::config::DEFAULT_OPEN_AHEAD
                && !outcome.opened.contains(needed)
            {
                misses.push(format!(
                    "{}: needed {needed}, opened {:?}",
                    task.id, outcome.opened
                ));
            }
        }
        let mut idle = Vec::new();
        for message in NO_TOOL {
            let outcome = runtime
                .block_on(open_for(&harnesses, message, threshold))
                .unwrap_or_else(|e| panic!("{message:?}: {e}"));
            if let Some(opened) = outcome.opened.first() {
                idle.push(format!("{message:?}: {opened}"));
            }
        }
        println!(
            "| {threshold} | {hit} | {first} | {alone} | {other} | {nothing} | {count} | {:.0} | {} |",
            tokens as f64 / tasks.len() as f64,
            if idle.is_empty() {
                "0".to_owned()
            } else {
                format!("{} ({})", idle.len(), idle.join("; "))
            }
        );
    }
    println!(
        "\nat the default threshold ({}), tasks whose container was not opened:",
        hpd_agent::config::DEFAULT_OPEN_AHEAD
    );
    for miss in misses {
        println!("- {miss}");
    }
    // The member hint of a note, for the harness each task needs.
    let mut tally = HintTally::default();
    let mut unguarded = HintTally::default();
    let mut guarded = Vec::new();
    let mut listing = Vec::new();
    for (index, (task, needed)) in tasks.iter().zip(&needed).enumerate() {
        let prompt = fill(&task.prompt);
        let hint = runtime
            .block_on(hint_for(&harnesses, &prompt, needed))
            .unwrap_or_else(|e| panic!("task {}: {e}", task.id));
        // The hint as it would be without the annotations' guard: the same message with a verb
        // of change that no tool's text holds, so that it ranks the same and reads as a change.
        let without = runtime
            .block_on(hint_for(
                &harnesses,
                &format!("{prompt} {UNUSED_CHANGE_VERB}"),
                needed,
            ))
            .unwrap_or_else(|e| panic!("task {}: {e}", task.id));
        if without != hint {
            guarded.push(format!(
                "{}: {} instead of {}",
                task.id,
                hint.join(", "),
                without.join(", ")
            ));
        }
        listing.push(format!(
            "- {}: opened {}; hint {}",
            task.id,
            opened_by_default
                .get(index)
                .filter(|opened| !opened.is_empty())
                .map_or_else(|| "nothing".to_owned(), |opened| opened.join(", ")),
            if hint.is_empty() {
                "none".to_owned()
            } else {
                hint.join(", ")
            }
        ));
        unguarded.add(task.id.clone(), &task.function, &without, &changing);
        tally.add(task.id.clone(), &task.function, &hint, &changing);
    }
    println!(
        "
the note's member hint without the annotations' guard (a verb of change added to \
         each message): {}; the guard changed the hint of {} tasks{}",
        unguarded.summary(),
        guarded.len(),
        if guarded.is_empty() {
            String::new()
        } else {
            format!(" ({})", guarded.join("; "))
        }
    );
    println!(
        "\nthe note's member hint (container_notes, the needed container opened by the model), \
         on {} tasks: {}; the others:",
        tasks.len(),
        tally.summary()
    );
    for miss in &tally.misses {
        println!("- {miss}");
    }
    // The note's pointer to a better container, when the model opens a container itself
    // (`hide`, which never opens ahead): for each task, every container but the one it needs,
    // and the one it needs.
    let mut pointers = Pointers::default();
    let mut pointed_wrong = Vec::new();
    for (task, needed) in tasks.iter().zip(&needed) {
        let prompt = fill(&task.prompt);
        for harness in &harnesses {
            let pointer = runtime
                .block_on(pointer_for(&harnesses, &prompt, harness.name()))
                .unwrap_or_else(|e| panic!("task {}: {e}", task.id));
            if let Some(other) = pointers.add(harness.name(), needed, pointer) {
                pointed_wrong.push(if harness.name() == needed {
                    format!("{} (needs {needed}): {other}", task.id)
                } else {
                    format!(
                        "{} (needs {needed}, opened {}): {other}",
                        task.id,
                        harness.name()
                    )
                });
            }
        }
    }
    println!(
        "\nthe note's pointer to a better container (hide, the model opening a container itself): \
         with another container than the task needs opened, {}{}",
        pointers.summary(tasks.len()),
        if pointed_wrong.is_empty() {
            String::new()
        } else {
            format!(" (wrong pointers: {})", pointed_wrong.join("; "))
        }
    );
    if std::env::var_os("HPD_OPEN_AHEAD_LIST").is_some() {
        println!(
            "\nevery task: the containers opened at the default threshold, and the hint of the \
             needed one's note"
        );
        for line in &listing {
            println!("{line}");
        }
    }
    // Requests in other words than the tasks', written after the ranking and the hint were
    // chosen on the tasks: how far the figures above carry over to requests nobody tuned for.
    let paraphrases: Vec<(String, String)> =
        serde_json::from_str(include_str!("open_ahead_paraphrases.json"))
            .expect("open_ahead_paraphrases.json is a list of [request, function] pairs");
    let (mut ranked_first, mut opened) = (0, 0);
    let mut tally = HintTally::default();
    let mut paraphrase_pointers = Pointers::default();
    for (request, function) in &paraphrases {
        let needed = harness_of(function);
        let request = fill(request);
        let best = runtime
            .block_on(open_for(&harnesses, &request, 0.0))
            .unwrap_or_else(|e| panic!("{request:?}: {e}"));
        if best.opened.first() == Some(&needed) {
            ranked_first += 1;
        }
        let at_default = runtime
            .block_on(open_for(
                &harnesses,
                &request,
                hpd_agent::config::DEFAULT_OPEN_AHEAD,
            ))
            .unwrap_or_else(|e| panic!("{request:?}: {e}"));
        if at_default.opened.contains(&needed) {
            opened += 1;
        }
        let hint = runtime
            .block_on(hint_for(&harnesses, &request, &needed))
            .unwrap_or_else(|e| panic!("{request:?}: {e}"));
        tally.add(format!("{request:?}"), function, &hint, &changing);
        for harness in &harnesses {
            let pointer = runtime
                .block_on(pointer_for(&harnesses, &request, harness.name()))
                .unwrap_or_else(|e| panic!("{request:?}: {e}"));
            paraphrase_pointers.add(harness.name(), &needed, pointer);
        }
    }
    println!(
        "\non {} requests in other words (open_ahead_paraphrases.json): the needed container \
         ranked first for {ranked_first}, opened at the default threshold for {opened}; the hint \
         {}; the others:",
        paraphrases.len(),
        tally.summary()
    );
    for miss in &tally.misses {
        println!("- {miss}");
    }
    println!(
        "the note's pointer for these requests: with another container opened, {}",
        paraphrase_pointers.summary(paraphrases.len())
    );
    drop(scratch_dir);
}
