//! One worker process of the many-processes test (`tests/many_processes.rs`): takes turns of
//! randomly chosen sessions of a shared store, as a stateless worker behind a load balancer
//! does, and writes what it did to a log file, one line each, flushed at once:
//!
//! - `start <message>` before a turn,
//! - `saved <session> <message>` once the turn is stored (after `append_unsaved` when the save
//!   lost a race: the documented way on, which loses nothing),
//! - `conflict <session> <message>` for each lost race.
//!
//! Each turn calls a tool (which takes a few milliseconds, so a kill often lands inside a
//! turn) and answers. Messages are `w<worker>-<run>-t<turn>`, unique across processes.
//!
//! Usage: `store_worker <postgres|redis> <url> <prefix> <sessions> <turns> <worker> <log file>`

use std::io::Write as _;
use std::sync::Arc;
use std::time::Duration;

use hpd_agent::store::{PostgresSessionStore, RedisSessionStore, SessionStore, StoreError};
use hpd_agent::{
    AgentBuilder, ChatResponse, HarnessBuilder, RunError, ScriptedChatClient, Tool, ToolCall,
    ToolResult,
};

fn random(bound: usize) -> usize {
    use std::collections::hash_map::RandomState;
    use std::hash::BuildHasher;
    let value = RandomState::new().hash_one(std::time::Instant::now());
    usize::try_from(value % u64::try_from(bound.max(1)).unwrap_or(1)).unwrap_or(0)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [backend, url, prefix, sessions, turns, worker, log] = args.as_slice() else {
        return Err("usage: store_worker <postgres|redis> <url> <prefix> <sessions> <turns> <worker> <log file>".into());
    };
    let sessions: usize = sessions.parse()?;
    let turns: usize = turns.parse()?;
    let store: Arc<dyn SessionStore> = match backend.as_str() {
        "postgres" => Arc::new(PostgresSessionStore::connect(url).await?),
        "redis" => Arc::new(RedisSessionStore::connect(url).await?),
        other => return Err(format!("unknown backend '{other}'").into()),
    };
    let mut log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)?;
    // A run id, so a restarted worker never repeats a message of its earlier life.
    let run = format!("{:x}", random(usize::MAX));

    let script = (0..turns).flat_map(|t| {
        [
            ChatResponse::tool_calls(vec![ToolCall::new(
                format!("call-w{worker}-{run}-{t}"),
                "record",
                format!(r#"{{"turn": {t}}}"#),
            )]),
            ChatResponse::text(format!("done w{worker}-{run}-t{t}")),
        ]
    });
    let model = ScriptedChatClient::with_replies(script);
    let record = Tool::new(
        "record",
        "Records a turn",
        serde_json::json!({"type": "object", "properties": {"turn": {"type": "integer"}}}),
        |args, _| async move {
            tokio::time::sleep(Duration::from_millis(5)).await;
            ToolResult::ok(format!("recorded {}", args["turn"]))
        },
    );
    let agent = AgentBuilder::new()
        .with_harness(HarnessBuilder::new("Records").with_tool(record).build()?)
        .with_chat_client(model)
        .build()?;

    for t in 0..turns {
        let id = format!("{prefix}s{}", random(sessions));
        let message = format!("w{worker}-{run}-t{t}");
        writeln!(log, "start {message}")?;
        log.flush()?;
        let mut session = agent.open_session(store.clone(), id.clone()).await?;
        match session.run(message.clone()).await {
            Ok(_) => {}
            Err(RunError::Store(StoreError::Conflict {
                unsaved: Some(turn),
                ..
            })) => {
                let mut turn = *turn;
                loop {
                    writeln!(log, "conflict {id} {message}")?;
                    log.flush()?;
                    match session.append_unsaved(&turn).await {
                        Ok(()) => break,
                        Err(StoreError::Conflict {
                            unsaved: Some(again),
                            ..
                        }) => turn = *again,
                        Err(other) => return Err(other.into()),
                    }
                }
            }
            Err(other) => return Err(other.into()),
        }
        writeln!(log, "saved {id} {message}")?;
        log.flush()?;
    }
    Ok(())
}
