//! Many worker processes share sessions through one store, as stateless workers behind a load
//! balancer do: `store_worker` (this crate's binary) started as 4 OS processes taking turns of
//! randomly chosen sessions of a shared list, first through PostgreSQL, then through Redis.
//! Midway one process is killed with `SIGKILL` in the middle of a turn and started again.
//!
//! Afterwards every stored history is complete and valid for every provider (each turn whole:
//! the user's message, the tool call, its result, the answer; no turn twice, none half
//! written), and every turn a process reported as saved is there. Throughput and conflict rate
//! are printed (`BENCHMARKS.md` has the figures).
//!
//! Needs `HPD_POSTGRES_URL` and `HPD_REDIS_URL` (`.ci/run` sets them); without them the tests
//! say they were skipped. Size: `HPD_MANY_PROCESSES_TURNS` turns per process (default 30) over
//! `HPD_MANY_PROCESSES_SESSIONS` sessions (default 6).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hpd_agent::ChatMessage;
use hpd_agent::store::{PostgresSessionStore, RedisSessionStore, SessionStore};

const WORKERS: usize = 4;

fn setting(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

fn spawn(
    backend: &str,
    url: &str,
    prefix: &str,
    sessions: usize,
    turns: usize,
    worker: usize,
    log: &Path,
) -> Child {
    Command::new(env!("CARGO_BIN_EXE_store_worker"))
        .args([
            backend,
            url,
            prefix,
            &sessions.to_string(),
            &turns.to_string(),
            &worker.to_string(),
            &log.display().to_string(),
        ])
        .spawn()
        .unwrap_or_else(|e| panic!("start worker {worker}: {e}"))
}

fn lines(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The turns of a stored history, each as its user message, checked whole: user message, an
/// assistant message with one call, its result, the answer.
fn turns_of(id: &str, history: &[ChatMessage]) -> Vec<String> {
    assert_eq!(
        history.len() % 4,
        0,
        "{id}: a half-written turn: {history:#?}"
    );
    history
        .chunks(4)
        .map(|turn| {
            let [
                ChatMessage::User { content },
                ChatMessage::Assistant {
                    tool_calls,
                    content: None,
                    ..
                },
                ChatMessage::Tool {
                    call_id,
                    is_error: false,
                    ..
                },
                ChatMessage::Assistant {
                    content: Some(answer),
                    tool_calls: answer_calls,
                    ..
                },
            ] = turn
            else {
                panic!("{id}: not a whole turn: {turn:#?}")
            };
            assert_eq!(tool_calls.len(), 1, "{id}: {turn:#?}");
            assert_eq!(
                &tool_calls[0].id, call_id,
                "{id}: the result answers its call"
            );
            assert!(answer_calls.is_empty());
            // The answer belongs to the same worker run as the message.
            let owner = content.rsplit_once("-t").map_or("", |(owner, _)| owner);
            assert!(answer.contains(owner), "{id}: answer {answer} to {content}");
            content.clone()
        })
        .collect()
}

async fn many_processes(backend: &str, var: &str, store: Arc<dyn SessionStore>, url: &str) {
    let turns = setting("HPD_MANY_PROCESSES_TURNS", 30);
    let sessions = setting("HPD_MANY_PROCESSES_SESSIONS", 6);
    let prefix = format!("many-{}-{}/", backend, std::process::id());
    for id in store.list(&prefix).await.expect("list") {
        store.delete(&id).await.expect("clean up");
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let log = |worker: usize, life: usize| -> PathBuf {
        dir.path().join(format!("w{worker}-{life}.log"))
    };

    let started = Instant::now();
    let mut children: Vec<Child> = (0..WORKERS)
        .map(|w| spawn(backend, url, &prefix, sessions, turns, w, &log(w, 0)))
        .collect();

    // Kill worker 0 in the middle of a turn (its last line is a `start`), once it is well
    // under way, then start it again.
    let victim = log(0, 0);
    let deadline = Instant::now() + Duration::from_secs(120);
    let killed_in_turn = loop {
        let seen = lines(&victim);
        let saved = seen.iter().filter(|l| l.starts_with("saved ")).count();
        if saved >= turns / 3 && seen.last().is_some_and(|l| l.starts_with("start ")) {
            children[0].kill().expect("SIGKILL worker 0");
            children[0].wait().expect("reap worker 0");
            break true;
        }
        if saved >= turns || Instant::now() > deadline {
            break false;
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    assert!(
        killed_in_turn,
        "worker 0 was killed mid-turn: {:?}",
        lines(&victim)
    );
    let killed_message = lines(&victim)
        .last()
        .and_then(|l| l.strip_prefix("start "))
        .map(str::to_owned)
        .expect("the turn it was killed in");
    children[0] = spawn(backend, url, &prefix, sessions, turns, 0, &log(0, 1));
    for (w, child) in children.iter_mut().enumerate() {
        let status = child.wait().expect("wait");
        assert!(status.success(), "worker {w} failed: {status}");
    }
    let elapsed = started.elapsed();

    // What the workers reported.
    let mut reported: BTreeMap<String, String> = BTreeMap::new(); // message -> session
    let mut conflicts = 0;
    for w in 0..WORKERS {
        for life in 0..2 {
            for line in lines(&log(w, life)) {
                if let Some(rest) = line.strip_prefix("saved ") {
                    let (id, message) = rest.split_once(' ').expect("saved <id> <message>");
                    assert!(
                        reported.insert(message.to_owned(), id.to_owned()).is_none(),
                        "{message} reported twice"
                    );
                } else if line.starts_with("conflict ") {
                    conflicts += 1;
                }
            }
        }
    }

    // What is stored: every history whole and valid, no turn twice, every reported turn there.
    let ids = store.list(&prefix).await.expect("list");
    assert!(!ids.is_empty());
    let mut stored: BTreeMap<String, String> = BTreeMap::new();
    for id in &ids {
        let session = store.load(id).await.expect("load").expect("listed");
        for message in turns_of(id, &session.state.history) {
            assert!(
                stored.insert(message.clone(), id.clone()).is_none(),
                "{message} stored twice"
            );
        }
    }
    for (message, id) in &reported {
        assert_eq!(
            stored.get(message),
            Some(id),
            "the reported turn {message} of {id} is stored there"
        );
    }
    // Only the turn the kill interrupted may be stored without being reported.
    let unreported: BTreeSet<&String> = stored
        .keys()
        .filter(|m| !reported.contains_key(*m))
        .collect();
    assert!(
        unreported.iter().all(|m| **m == killed_message),
        "stored but never reported: {unreported:?} (killed in {killed_message})"
    );

    let total = reported.len();
    let expected = WORKERS * turns
        + lines(&log(0, 0))
            .iter()
            .filter(|l| l.starts_with("saved "))
            .count();
    assert_eq!(total, expected, "every turn of every life was saved");
    let rate = total as f64 / elapsed.as_secs_f64();
    println!(
        "{backend} ({var}): {WORKERS} processes, {sessions} sessions, {total} turns saved in {:.2} s: {rate:.0} turns/s; {conflicts} conflicts ({:.1}% of saves); killed in {killed_message}, {} turn(s) stored but not reported",
        elapsed.as_secs_f64(),
        100.0 * conflicts as f64 / (total + conflicts) as f64,
        unreported.len()
    );
    for id in ids {
        store.delete(&id).await.expect("clean up");
    }
}

fn url(var: &str, what: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            hpd_agent_tests::skip!(
                "skipped: {var} is not set, so there is no {what} server to share (.ci/run starts one)"
            );
            None
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_processes_share_sessions_through_postgres() {
    let Some(url) = url("HPD_POSTGRES_URL", "PostgreSQL") else {
        return;
    };
    let store = Arc::new(PostgresSessionStore::connect(&url).await.expect("connect"));
    many_processes("postgres", "HPD_POSTGRES_URL", store, &url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_processes_share_sessions_through_redis() {
    let Some(url) = url("HPD_REDIS_URL", "Redis") else {
        return;
    };
    let store = Arc::new(RedisSessionStore::connect(&url).await.expect("connect"));
    many_processes("redis", "HPD_REDIS_URL", store, &url).await;
}
