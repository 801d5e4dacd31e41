//! Load check of the session stores (not a timed test: it prints figures). For each store,
//! 200 sessions take 5 turns each, 32 sessions at a time; every turn is a stateless worker's:
//! open the session from the store, run one turn (a tool call, then an answer), save. At the
//! end every stored history must be complete (20 messages, the 5 user messages in order).
//!
//! ```text
//! cargo bench -p hpd-agent-tests --bench session_stores
//! ```
//!
//! Memory and SQLite always run; PostgreSQL with `HPD_POSTGRES_URL`, Redis with
//! `HPD_REDIS_URL` (start them with `.ci/postgres.sh start` and `.ci/redis.sh start`).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use hpd_agent::store::{
    MemorySessionStore, PostgresSessionStore, RedisSessionStore, SessionStore, SqliteSessionStore,
    StoreError, StoredSession,
};
use hpd_agent::{
    Agent, AgentBuilder, ChatClient, ChatMessage, ChatResponse, ToolCall, agent::SessionState,
    async_trait, chat::ChatError, chat::ChatRequest, chat::TextSink,
};
use hpd_agent_tests::WeatherTools;

const SESSIONS: usize = 200;
const TURNS: usize = 5;
const CONCURRENCY: usize = 32;

/// Calls `get_weather` once per turn, then answers.
struct Model;

#[async_trait]
impl ChatClient for Model {
    async fn complete(
        &self,
        request: ChatRequest<'_>,
        _text: TextSink<'_>,
    ) -> Result<ChatResponse, ChatError> {
        Ok(match request.messages.last() {
            Some(ChatMessage::User { .. }) => ChatResponse::tool_calls(vec![ToolCall::new(
                format!("c{}", request.messages.len()),
                "get_weather",
                r#"{"city":"Oslo"}"#,
            )]),
            _ => ChatResponse::text("It is sunny in Oslo."),
        })
    }
}

/// A store that records how long each save takes.
#[derive(Debug)]
struct Timed {
    inner: Arc<dyn SessionStore>,
    saves: Mutex<Vec<Duration>>,
}

#[async_trait]
impl SessionStore for Timed {
    async fn load(&self, id: &str) -> Result<Option<StoredSession>, StoreError> {
        self.inner.load(id).await
    }
    async fn save(&self, id: &str, state: &SessionState, expected: u64) -> Result<u64, StoreError> {
        let started = Instant::now();
        let result = self.inner.save(id, state, expected).await;
        self.saves
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(started.elapsed());
        result
    }
    async fn delete(&self, id: &str) -> Result<bool, StoreError> {
        self.inner.delete(id).await
    }
    async fn list(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        self.inner.list(prefix).await
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

async fn drive(name: &str, store: Arc<dyn SessionStore>, agent: &Agent) {
    let timed = Arc::new(Timed {
        inner: store,
        saves: Mutex::new(Vec::new()),
    });
    let prefix = format!("bench-{}-{}/", std::process::id(), name);
    let ids: Vec<String> = (0..SESSIONS).map(|i| format!("{prefix}{i:03}")).collect();
    let started = Instant::now();
    futures::stream::iter(ids.iter().cloned())
        .map(|id| {
            let store: Arc<dyn SessionStore> = timed.clone();
            let agent = agent.clone();
            tokio::spawn(async move {
                for turn in 0..TURNS {
                    let mut session = agent
                        .open_session(store.clone(), id.clone())
                        .await
                        .expect("open");
                    session
                        .run(format!("turn {turn}"))
                        .await
                        .expect("turn and save");
                }
            })
        })
        .buffer_unordered(CONCURRENCY)
        .for_each(|joined| async move { joined.expect("session task") })
        .await;
    let elapsed = started.elapsed();

    let expected_users: Vec<String> = (0..TURNS).map(|t| format!("turn {t}")).collect();
    for id in &ids {
        let stored = timed.load(id).await.expect("load").expect("stored");
        let users: Vec<&str> = stored
            .state
            .history
            .iter()
            .filter_map(|m| match m {
                ChatMessage::User { content } => Some(content.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(stored.version, TURNS as u64, "{id}");
        assert_eq!(stored.state.history.len(), TURNS * 4, "{id}");
        assert_eq!(users, expected_users, "{id}");
    }
    for id in &ids {
        timed.delete(id).await.expect("delete");
    }

    let mut saves = timed
        .saves
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    saves.sort();
    let turns = SESSIONS * TURNS;
    println!(
        "{name:<9} {turns} turns in {:>6.2} s  {:>8.0} turns/s  save p50 {:>8.3} ms  p99 {:>8.3} ms  {SESSIONS}/{SESSIONS} histories complete",
        elapsed.as_secs_f64(),
        turns as f64 / elapsed.as_secs_f64(),
        percentile(&saves, 0.50).as_secs_f64() * 1e3,
        percentile(&saves, 0.99).as_secs_f64() * 1e3,
    );
}

fn url(var: &str) -> Option<String> {
    let url = std::env::var(var).ok().filter(|u| !u.trim().is_empty());
    if url.is_none() {
        println!("skipped: {var} is not set");
    }
    url
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let agent = AgentBuilder::new()
            .with_tool_harness::<WeatherTools>()
            .with_chat_client(Model)
            .build()
            .expect("agent builds");
        println!(
            "{SESSIONS} sessions x {TURNS} turns, {CONCURRENCY} sessions at a time, each turn: open, run (tool call + answer), save"
        );
        drive("memory", Arc::new(MemorySessionStore::new()), &agent).await;

        let dir = tempfile::tempdir().expect("temp dir");
        let sqlite = SqliteSessionStore::open(dir.path().join("bench.db"))
            .await
            .expect("open SQLite");
        drive("sqlite", Arc::new(sqlite), &agent).await;

        if let Some(url) = url("HPD_POSTGRES_URL") {
            let store = PostgresSessionStore::connect(&url).await.expect("connect");
            drive("postgres", Arc::new(store), &agent).await;
        }
        if let Some(url) = url("HPD_REDIS_URL") {
            let store = RedisSessionStore::connect(&url).await.expect("connect");
            drive("redis", Arc::new(store), &agent).await;
        }
    });
}
