//! Property test of the collapsing rules: for random sets of registered harnesses (Rust and
//! built at run time, some collapsed, some selected partially, some never collapsed) and random
//! model calls (container
//! names, member names, qualified names in every separator and case, unknown names):
//!
//! - no function outside the agent's registered set is ever executed;
//! - a member of a collapsed harness is visible only while its container is expanded, that is
//!   after a container call or recovery in the same turn, and never together with its container;
//! - the visible list never contains duplicates.
//!
//! It has its own test binary because it reads the process-wide fixture execution log.

use std::collections::BTreeSet;
use std::sync::Mutex;

use hpd_agent::{
    AgentBuilder, ChatResponse, HarnessBuilder, ScriptedChatClient, Tool, ToolCall, ToolResult,
    harness::DynamicHarness, providers::scripted::RecordedRequest,
};
use hpd_agent_tests::{
    DatabaseTools, FaultTools, FileTools, MathTools, SearchTools, WeatherTools,
    executions as execution_log, reset_logs,
};
use proptest::prelude::*;

/// (harness, collapsed, functions) of the fixtures used here.
const HARNESSES: &[(&str, bool, &[&str])] = &[
    ("MathTools", true, &["add", "multiply", "divide"]),
    ("DatabaseTools", true, &["query"]),
    ("FileTools", true, &["read_file", "write_file"]),
    ("WeatherTools", false, &["get_weather", "get_forecast"]),
    ("FaultTools", false, &["explode", "echo", "ping"]),
    ("SearchTools", false, &["search", "tavily_search"]),
    // Built at run time by `dynamic_harness`.
    ("Radar", true, &["sweep", "track"]),
    ("Notes", false, &["note_add", "note_list"]),
];

/// The first index of `HARNESSES` that is built at run time.
const FIRST_DYNAMIC: usize = 6;

/// What the tools built at run time executed, as `"{Harness}.{tool}"`.
static DYNAMIC_EXECUTIONS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The harness `HARNESSES[index]` built at run time; its tools log their executions.
fn dynamic_harness(index: usize) -> DynamicHarness {
    let (name, collapsed, functions) = HARNESSES[index];
    let tools = functions.iter().map(|&function| {
        let executed = format!("{name}.{function}");
        Tool::new(
            function,
            "",
            serde_json::json!({"type": "object"}),
            move |_, _| {
                let executed = executed.clone();
                async move {
                    DYNAMIC_EXECUTIONS
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push(executed);
                    ToolResult::ok("ok")
                }
            },
        )
    });
    let builder = HarnessBuilder::new(name).with_tools(tools);
    let builder = if collapsed {
        builder.with_collapse(format!("{name} tools"))
    } else {
        builder
    };
    builder.build().expect("valid fixture")
}

#[derive(Debug, Clone)]
struct Registration {
    harness: usize,
    /// `None`: whole harness; else the selected function indexes.
    selection: Option<BTreeSet<usize>>,
    never_collapse: bool,
}

#[derive(Debug, Clone)]
struct Setup {
    registrations: Vec<Registration>,
    collapsing: bool,
    recovery: bool,
    execute_recovered: bool,
    turns: Vec<Vec<Vec<String>>>,
}

fn registration() -> impl Strategy<Value = Registration> {
    (
        0..HARNESSES.len(),
        any::<bool>(),
        any::<bool>(),
        any::<u8>(),
    )
        .prop_map(|(harness, whole, never_collapse, mask)| {
            let count = HARNESSES[harness].2.len();
            let mut selected: BTreeSet<usize> =
                (0..count).filter(|i| mask & (1 << i) != 0).collect();
            if selected.is_empty() {
                selected.insert(usize::from(mask) % count);
            }
            Registration {
                harness,
                selection: if whole { None } else { Some(selected) },
                never_collapse,
            }
        })
}

/// A call name: a member, a container, a qualified name or an unknown name.
fn call_name() -> impl Strategy<Value = String> {
    let all: Vec<(&str, &str)> = HARNESSES
        .iter()
        .flat_map(|(h, _, fs)| fs.iter().map(move |f| (*h, *f)))
        .collect();
    let members = all.clone();
    prop_oneof![
        proptest::sample::select(members).prop_map(|(_, f)| f.to_owned()),
        proptest::sample::select(HARNESSES.iter().map(|h| h.0).collect::<Vec<_>>())
            .prop_map(str::to_owned),
        (
            proptest::sample::select(all),
            proptest::sample::select(vec![".", ":", "/", "-", "__"]),
            any::<bool>()
        )
            .prop_map(|((h, f), sep, lower)| {
                let name = format!("{h}{sep}{f}");
                if lower { name.to_lowercase() } else { name }
            }),
        "[a-z_]{1,12}".prop_map(|s| format!("x{s}")),
        Just("MathTools.subtract".to_owned()),
    ]
}

fn setup() -> impl Strategy<Value = Setup> {
    (
        proptest::collection::vec(registration(), 1..5),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        proptest::collection::vec(
            proptest::collection::vec(proptest::collection::vec(call_name(), 1..4), 0..4),
            1..3,
        ),
    )
        .prop_map(
            |(registrations, collapsing, recovery, execute_recovered, turns)| Setup {
                registrations,
                collapsing,
                recovery,
                execute_recovered,
                turns,
            },
        )
}

fn register(
    builder: AgentBuilder,
    r: &Registration,
    dynamic: &[(usize, DynamicHarness)],
) -> AgentBuilder {
    if let Some((_, harness)) = dynamic.iter().find(|(h, _)| *h == r.harness) {
        return match &r.selection {
            None => builder.with_harness(harness.clone()),
            Some(selected) => selected.iter().fold(builder, |b, &i| {
                let name = HARNESSES[r.harness].2[i];
                b.with_harness(harness.select([name]).expect("declared tool"))
            }),
        };
    }
    macro_rules! by_type {
        ($T:ty) => {
            match &r.selection {
                None => builder.with_tool_harness::<$T>(),
                Some(selected) => selected.iter().fold(builder, |b, &i| {
                    b.with_tool_harness_options::<$T>(|o| {
                        o.with_functions([HARNESSES[r.harness].2[i]])
                    })
                }),
            }
        };
    }
    match r.harness {
        0 => by_type!(MathTools),
        1 => by_type!(DatabaseTools),
        2 => by_type!(FileTools),
        3 => by_type!(WeatherTools),
        4 => by_type!(FaultTools),
        5 => by_type!(SearchTools),
        _ => unreachable!("dynamic harnesses are registered above"),
    }
}

/// The registered set: harness index -> registered function names (whole wins over selection,
/// selections unite), and whether the harness stays collapsed.
fn model(setup: &Setup) -> Vec<(usize, BTreeSet<&'static str>, bool)> {
    let mut out: Vec<(usize, BTreeSet<&'static str>, bool)> = Vec::new();
    let mut whole: BTreeSet<usize> = BTreeSet::new();
    for r in &setup.registrations {
        let names: BTreeSet<&'static str> = match &r.selection {
            None => {
                whole.insert(r.harness);
                HARNESSES[r.harness].2.iter().copied().collect()
            }
            Some(sel) => sel.iter().map(|&i| HARNESSES[r.harness].2[i]).collect(),
        };
        match out.iter_mut().find(|(h, _, _)| *h == r.harness) {
            Some((_, existing, _)) => existing.extend(names),
            None => out.push((r.harness, names, false)),
        }
    }
    for (h, names, collapsed) in &mut out {
        if whole.contains(h) {
            *names = HARNESSES[*h].2.iter().copied().collect();
        }
        let never = setup
            .registrations
            .iter()
            .any(|r| r.harness == *h && r.never_collapse);
        *collapsed = setup.collapsing && HARNESSES[*h].1 && !never;
    }
    out
}

/// Whether a call name refers to `harness`: its container, a registered member, or
/// `Harness{sep}anything`.
fn mentions(name: &str, harness: &str, functions: &BTreeSet<&'static str>) -> bool {
    let lower = name.to_lowercase();
    let prefix = harness.to_lowercase();
    name == harness
        || functions.contains(name)
        || ([".", ":", "/", "-", "__"]
            .iter()
            .any(|sep| lower.starts_with(&format!("{prefix}{sep}"))))
}

fn check_request(
    request: &RecordedRequest,
    registered: &[(usize, BTreeSet<&'static str>, bool)],
) -> Result<(), TestCaseError> {
    let names = request.tool_names();
    let unique: BTreeSet<&str> = names.iter().copied().collect();
    prop_assert_eq!(
        unique.len(),
        names.len(),
        "duplicate visible tools: {:?}",
        names
    );
    for (h, functions, collapsed) in registered {
        if !collapsed {
            continue;
        }
        let harness = HARNESSES[*h].0;
        let visible_members: Vec<&str> = functions
            .iter()
            .copied()
            .filter(|f| names.contains(f))
            .collect();
        if visible_members.is_empty() {
            continue;
        }
        prop_assert_eq!(
            visible_members.len(),
            functions.len(),
            "members shown in part"
        );
        prop_assert!(
            !names.contains(&harness),
            "{} shown with its members",
            harness
        );
        // Expanded in this turn: some call of this turn named the container, one of its
        // registered members, or a qualified name of the harness.
        let last_user = request
            .messages
            .iter()
            .rposition(|m| matches!(m, hpd_agent::ChatMessage::User { .. }))
            .unwrap_or(0);
        let expanded = request.messages[last_user..].iter().any(|m| match m {
            hpd_agent::ChatMessage::Assistant { tool_calls, .. } => tool_calls
                .iter()
                .any(|c| mentions(&c.name, harness, functions)),
            _ => false,
        });
        prop_assert!(expanded, "{} members visible without an expansion", harness);
    }
    Ok(())
}

fn run_case(setup: &Setup) -> Result<(), TestCaseError> {
    reset_logs();
    DYNAMIC_EXECUTIONS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clear();
    let client = ScriptedChatClient::new();
    // One harness per index, so that several registrations of it merge.
    let dynamic: Vec<(usize, DynamicHarness)> = (FIRST_DYNAMIC..HARNESSES.len())
        .map(|h| (h, dynamic_harness(h)))
        .collect();
    let builder = setup
        .registrations
        .iter()
        .fold(AgentBuilder::new(), |b, r| register(b, r, &dynamic));
    let never: Vec<String> = setup
        .registrations
        .iter()
        .filter(|r| r.never_collapse)
        .map(|r| HARNESSES[r.harness].0.to_lowercase())
        .collect();
    let (collapsing, recovery, execute) =
        (setup.collapsing, setup.recovery, setup.execute_recovered);
    let agent = builder
        .configure_harness_collapsing(|c| {
            c.enabled = collapsing;
            c.recovery = recovery;
            c.execute_recovered_calls = execute;
            c.never_collapse = never;
        })
        .with_max_iterations(64)
        .with_chat_client(client.clone())
        .build()
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let registered = model(setup);
    let allowed: BTreeSet<String> = registered
        .iter()
        .flat_map(|(h, fs, _)| fs.iter().map(move |f| format!("{}.{f}", HARNESSES[*h].0)))
        .collect();

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let mut session = agent.session();
    let mut id = 0;
    for turn in &setup.turns {
        for calls in turn {
            let calls = calls
                .iter()
                .map(|name| {
                    id += 1;
                    ToolCall::new(format!("c{id}"), name.clone(), "{}")
                })
                .collect();
            client.push(ChatResponse::tool_calls(calls));
        }
        client.push(ChatResponse::text("done"));
        let out = runtime
            .block_on(session.run("go"))
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(out.text, "done");
    }
    for request in client.requests() {
        check_request(&request, &registered)?;
    }
    let dynamic_log = DYNAMIC_EXECUTIONS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    for executed in execution_log().into_iter().chain(dynamic_log) {
        prop_assert!(
            allowed.contains(&executed),
            "{} ran but is not registered",
            executed
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn collapsing_never_leaks(setup in setup()) {
        run_case(&setup)?;
    }
}
