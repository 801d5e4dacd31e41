//! The server of a store hangs (every server process gets `SIGSTOP`) in the middle of a
//! session: each call gives `Unavailable` within the store's deadline, naming what was tried;
//! once the server is resumed (`SIGCONT`) the next call works on a new connection, and the turn
//! kept in memory is saved (also when the server applied the abandoned save after all).
//!
//! Needs the server's URL and a command that pauses and resumes it: `HPD_POSTGRES_URL` with
//! `HPD_POSTGRES_CTL`, `HPD_REDIS_URL` with `HPD_REDIS_CTL` (each CTL is run as `$CTL pause` and
//! `$CTL resume`; `.ci/run` sets them to `.ci/postgres.sh` and `.ci/redis.sh`). Without them the
//! tests print why they were skipped. These tests hang shared servers, so they live in their own
//! test binary: cargo runs test binaries one after another.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hpd_agent::store::{PostgresSessionStore, RedisSessionStore, SessionStore, StoreError};
use hpd_agent::{AgentBuilder, ChatResponse, RunError, ScriptedChatClient};

/// The deadline of the stores under test.
const DEADLINE: Duration = Duration::from_millis(1500);

/// Runs `$ctl {action}` through the shell and fails the test when it fails.
fn control(ctl: &str, action: &str) {
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{ctl} {action}"))
        .stdout(std::process::Stdio::null())
        .status()
        .expect("run the control command");
    assert!(status.success(), "`{ctl} {action}` failed: {status}");
}

/// Resumes the server if the test ends early, so later tests find it answering.
struct Resume(Option<String>);

impl Drop for Resume {
    fn drop(&mut self) {
        if let Some(ctl) = self.0.take() {
            control(&ctl, "resume");
        }
    }
}

fn setting(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|v| !v.trim().is_empty())
}

/// `result` is `Unavailable` within a bounded time after `started`, with the deadline in its
/// message.
fn assert_bounded_unavailable<T: std::fmt::Debug>(
    what: &str,
    started: Instant,
    result: Result<T, StoreError>,
) {
    let elapsed = started.elapsed();
    let error = result.expect_err(what);
    assert!(
        matches!(error, StoreError::Unavailable { .. }),
        "{what}: {error:?}"
    );
    assert!(
        error
            .to_string()
            .contains(&format!("got no answer within {DEADLINE:?}")),
        "{what}: {error}"
    );
    assert!(
        elapsed >= DEADLINE && elapsed < DEADLINE * 3,
        "{what}: answered after {elapsed:?}, the deadline is {DEADLINE:?}"
    );
    println!("{what} with the server hung, after {elapsed:?}: {error}");
}

async fn paused_then_resumed<F, Fut>(url_var: &str, ctl_var: &str, connect: F)
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Result<Arc<dyn SessionStore>, StoreError>>,
{
    let (Some(url), Some(ctl)) = (setting(url_var), setting(ctl_var)) else {
        hpd_agent_tests::skip!(
            "skipped: {url_var} and {ctl_var} must both be set (a server URL and a command taking pause|resume; .ci/run sets them)"
        );
        return;
    };
    let store = connect(url.clone()).await.expect("connect");
    let id = format!("hang-{}-{url_var}", std::process::id());
    let _ = store.delete(&id).await;
    let model = ScriptedChatClient::with_replies(
        ["first answer", "second answer", "third answer"].map(ChatResponse::text),
    );
    let agent = AgentBuilder::new()
        .with_chat_client(model)
        .build()
        .expect("agent builds");
    let mut session = agent
        .open_session(store.clone(), id.clone())
        .await
        .expect("open");
    session.run("first").await.expect("first turn is saved");

    control(&ctl, "pause");
    let resume = Resume(Some(ctl.clone()));
    let started = Instant::now();
    let error = session.run("second").await.expect_err("the save hangs");
    let RunError::Store(error) = error else {
        panic!("expected a store error, got {error:?}")
    };
    assert_bounded_unavailable("the save of a turn", started, Err::<(), _>(error));
    assert_eq!(session.history().len(), 4, "the turn is kept in memory");
    assert!(!session.is_saved());
    let started = Instant::now();
    assert_bounded_unavailable("a load", started, store.load(&id).await);
    let started = Instant::now();
    assert_bounded_unavailable("a list", started, store.list(&id).await);

    drop(resume);
    // The server answers again: the next call opens a new connection, and saving the kept turn
    // succeeds, whether or not the server ran the abandoned save when it woke up.
    session.save().await.expect("saved after the resume");
    assert!(session.is_saved());
    assert_eq!(session.stored_version(), Some(2));
    session.run("third").await.expect("the next turn is saved");
    let stored = store.load(&id).await.expect("load").expect("stored");
    assert_eq!(stored.version, 3);
    assert_eq!(stored.state.history, session.history());
    assert!(store.delete(&id).await.expect("delete"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_paused_then_resumed() {
    paused_then_resumed("HPD_POSTGRES_URL", "HPD_POSTGRES_CTL", |url| async move {
        let store = PostgresSessionStore::connect(&url)
            .await?
            .with_timeout(DEADLINE);
        Ok(Arc::new(store) as Arc<dyn SessionStore>)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_paused_then_resumed() {
    paused_then_resumed("HPD_REDIS_URL", "HPD_REDIS_CTL", |url| async move {
        let store = RedisSessionStore::connect(&url)
            .await?
            .with_timeout(DEADLINE);
        Ok(Arc::new(store) as Arc<dyn SessionStore>)
    })
    .await;
}
