//! The server of a store goes down in the middle of a turn: the turn returns `Unavailable`, the
//! session in memory keeps the turn, and once the server is back a retry saves it. A restart
//! between two turns goes unnoticed.
//!
//! Needs the server's URL and a command that stops and starts it: `HPD_POSTGRES_URL` with
//! `HPD_POSTGRES_CTL`, `HPD_REDIS_URL` with `HPD_REDIS_CTL` (each CTL is run as `$CTL stop` and
//! `$CTL start`; `.ci/run` sets them to `.ci/postgres.sh` and `.ci/redis.sh`). Without them the
//! tests print why they were skipped. These tests stop shared servers, so they live in their
//! own test binary: cargo runs test binaries one after another.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use hpd_agent::store::{PostgresSessionStore, RedisSessionStore, SessionStore, StoreError};
use hpd_agent::{
    AgentBuilder, ChatClient, ChatResponse, RunError, ScriptedChatClient, async_trait,
    chat::ChatError, chat::ChatRequest, chat::TextSink,
};

/// Runs `$ctl {action}` through the shell and fails the test when it fails.
async fn control(ctl: &str, action: &str) {
    let command = format!("{ctl} {action}");
    let status = tokio::task::spawn_blocking(move || {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(&command)
            .stdout(std::process::Stdio::null())
            .status()
    })
    .await
    .expect("control task")
    .expect("run the control command");
    assert!(status.success(), "`{ctl} {action}` failed: {status}");
}

/// Starts the server again if the test ends early, so later tests find it running.
struct Restart(Option<String>);

impl Drop for Restart {
    fn drop(&mut self) {
        if let Some(ctl) = self.0.take() {
            let _ = std::process::Command::new("sh")
                .arg("-c")
                .arg(format!("{ctl} start"))
                .stdout(std::process::Stdio::null())
                .status();
        }
    }
}

/// The scripted model, except that it stops the store's server while answering the first
/// request it sees while armed.
struct StopsServer {
    model: ScriptedChatClient,
    ctl: String,
    armed: AtomicBool,
}

#[async_trait]
impl ChatClient for StopsServer {
    async fn complete(
        &self,
        request: ChatRequest<'_>,
        text: TextSink<'_>,
    ) -> Result<ChatResponse, ChatError> {
        if self.armed.swap(false, Ordering::SeqCst) {
            control(&self.ctl, "stop").await;
        }
        self.model.complete(request, text).await
    }
}

fn setting(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|v| !v.trim().is_empty())
}

async fn stop_mid_run<F, Fut>(url_var: &str, ctl_var: &str, connect: F)
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Result<Arc<dyn SessionStore>, StoreError>>,
{
    let (Some(url), Some(ctl)) = (setting(url_var), setting(ctl_var)) else {
        hpd_agent_tests::skip!(
            "skipped: {url_var} and {ctl_var} must both be set (a server URL and a command taking stop|start|pause|resume; .ci/run sets them)"
        );
        return;
    };
    let store = connect(url.clone()).await.expect("connect");
    let id = format!("outage-{}-{}", std::process::id(), url_var);
    let _ = store.delete(&id).await;

    let model = Arc::new(StopsServer {
        model: ScriptedChatClient::with_replies([
            ChatResponse::text("first answer"),
            ChatResponse::text("second answer"),
            ChatResponse::text("third answer"),
        ]),
        ctl: ctl.clone(),
        armed: AtomicBool::new(false),
    });
    let agent = AgentBuilder::new()
        .with_chat_client(model.clone())
        .build()
        .expect("agent builds");
    let mut session = agent
        .open_session(store.clone(), id.clone())
        .await
        .expect("open");
    session.run("first").await.expect("first turn is saved");
    assert_eq!(session.stored_version(), Some(1));

    // The second turn: the server goes down while the model answers.
    model.armed.store(true, Ordering::SeqCst);
    let restart = Restart(Some(ctl.clone()));
    let err = session.run("second").await.expect_err("the save fails");
    assert!(
        matches!(err, RunError::Store(StoreError::Unavailable { .. })),
        "{err:?}"
    );
    println!("turn with the server down: {err}");
    assert_eq!(session.history().len(), 4, "the turn is kept in memory");
    assert!(!session.is_saved());
    assert_eq!(session.stored_version(), Some(1));
    let again = session.save().await.expect_err("still down");
    assert!(matches!(again, StoreError::Unavailable { .. }), "{again:?}");
    assert!(!session.is_saved());

    control(&ctl, "start").await;
    drop(restart);
    let mut attempts = 1;
    loop {
        match session.save().await {
            Ok(()) => break,
            Err(StoreError::Unavailable { .. }) if attempts < 20 => {
                attempts += 1;
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            Err(e) => panic!("retry after restart failed: {e:?}"),
        }
    }
    println!("saved after the restart on attempt {attempts}");
    assert!(session.is_saved());
    assert_eq!(session.stored_version(), Some(2));

    // A restart between two turns goes unnoticed: the store's connection was lost, and the
    // save opens a new one.
    control(&ctl, "stop").await;
    let restart = Restart(Some(ctl.clone()));
    control(&ctl, "start").await;
    drop(restart);
    session
        .run("third")
        .await
        .expect("the turn after a restart is saved");
    assert_eq!(session.stored_version(), Some(3));

    // A fresh connection sees the whole conversation.
    let fresh = connect(url).await.expect("reconnect");
    let stored = fresh.load(&id).await.expect("load").expect("stored");
    assert_eq!(stored.version, 3);
    assert_eq!(stored.state.history, session.history());
    assert!(fresh.delete(&id).await.expect("delete"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_stopped_mid_run() {
    stop_mid_run("HPD_POSTGRES_URL", "HPD_POSTGRES_CTL", |url| async move {
        let store: Arc<dyn SessionStore> = Arc::new(PostgresSessionStore::connect(&url).await?);
        Ok(store)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_stopped_mid_run() {
    stop_mid_run("HPD_REDIS_URL", "HPD_REDIS_CTL", |url| async move {
        let store: Arc<dyn SessionStore> = Arc::new(RedisSessionStore::connect(&url).await?);
        Ok(store)
    })
    .await;
}
