//! The session-store suite against every backend: memory and SQLite always; PostgreSQL when
//! `HPD_POSTGRES_URL` is set and Redis when `HPD_REDIS_URL` is set (`.ci/run` starts both;
//! without them those tests print why they were skipped and pass).
//!
//! Also: schema versions a build does not know are refused, and store URLs never show their
//! password in errors or `Debug` output.

mod store_suite;

use std::sync::Arc;

use hpd_agent::async_trait;
use hpd_agent::store::{
    MemorySessionStore, PostgresSessionStore, RedisSessionStore, SessionStore, SqliteSessionStore,
    StoreError,
};
use store_suite::{Backend, GARBAGE, RawAccess};

// ---- memory

struct MemoryRaw(Arc<MemorySessionStore>);

#[async_trait]
impl RawAccess for MemoryRaw {
    async fn corrupt(&self, id: &str) {
        let (version, _) = self.0.raw(id).expect("stored");
        self.0.insert_raw(id, version, GARBAGE);
    }
    async fn read(&self, id: &str) -> Option<String> {
        self.0.raw(id).map(|(_, text)| text)
    }
}

async fn memory() -> Option<Backend> {
    let store = Arc::new(MemorySessionStore::new());
    Some(Backend::new(
        "memory",
        store.clone(),
        Box::new(MemoryRaw(store)),
    ))
}

// ---- SQLite

struct SqliteRaw {
    path: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl SqliteRaw {
    fn connection(&self) -> ::rusqlite::Connection {
        let connection = ::rusqlite::Connection::open(&self.path).expect("open the file");
        connection
            .busy_timeout(std::time::Duration::from_secs(5))
            .expect("busy timeout");
        connection
    }
}

#[async_trait]
impl RawAccess for SqliteRaw {
    async fn corrupt(&self, id: &str) {
        let changed = self
            .connection()
            .execute(
                "UPDATE hpd_sessions SET data = ?1 WHERE id = ?2",
                ::rusqlite::params![GARBAGE, id],
            )
            .expect("update");
        assert_eq!(changed, 1);
    }
    async fn read(&self, id: &str) -> Option<String> {
        use ::rusqlite::OptionalExtension as _;
        self.connection()
            .query_row("SELECT data FROM hpd_sessions WHERE id = ?1", [id], |row| {
                row.get(0)
            })
            .optional()
            .expect("select")
    }
}

async fn sqlite() -> Option<Backend> {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("sessions.db");
    let store = SqliteSessionStore::open(&path).await.expect("open");
    Some(Backend::new(
        "sqlite",
        Arc::new(store),
        Box::new(SqliteRaw { path, _dir: dir }),
    ))
}

// ---- PostgreSQL

fn env_url(var: &str, what: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            hpd_agent_tests::skip!(
                "skipped: {var} is not set, so there is no {what} server to test against (.ci/run starts one)"
            );
            None
        }
    }
}

async fn postgres_client(url: &str) -> ::tokio_postgres::Client {
    let (client, driver) = ::tokio_postgres::connect(url, ::tokio_postgres::NoTls)
        .await
        .expect("raw PostgreSQL connection");
    tokio::spawn(driver);
    client
}

struct PostgresRaw(::tokio_postgres::Client);

#[async_trait]
impl RawAccess for PostgresRaw {
    async fn corrupt(&self, id: &str) {
        let changed = self
            .0
            .execute(
                "UPDATE hpd_sessions SET data = $1 WHERE id = $2",
                &[&GARBAGE, &id],
            )
            .await
            .expect("update");
        assert_eq!(changed, 1);
    }
    async fn read(&self, id: &str) -> Option<String> {
        self.0
            .query_opt("SELECT data FROM hpd_sessions WHERE id = $1", &[&id])
            .await
            .expect("select")
            .map(|row| row.get(0))
    }
}

async fn postgres() -> Option<Backend> {
    let url = env_url("HPD_POSTGRES_URL", "PostgreSQL")?;
    let store = PostgresSessionStore::connect(&url).await.expect("connect");
    let raw = PostgresRaw(postgres_client(&url).await);
    Some(Backend::new("postgres", Arc::new(store), Box::new(raw)))
}

// ---- Redis

struct RedisRaw(::redis::aio::MultiplexedConnection);

#[async_trait]
impl RawAccess for RedisRaw {
    async fn corrupt(&self, id: &str) {
        let mut connection = self.0.clone();
        let _: i64 = ::redis::cmd("HSET")
            .arg(format!("hpd:session:{id}"))
            .arg("data")
            .arg(GARBAGE)
            .query_async(&mut connection)
            .await
            .expect("HSET");
    }
    async fn read(&self, id: &str) -> Option<String> {
        let mut connection = self.0.clone();
        ::redis::cmd("HGET")
            .arg(format!("hpd:session:{id}"))
            .arg("data")
            .query_async(&mut connection)
            .await
            .expect("HGET")
    }
}

async fn redis_connection(url: &str) -> ::redis::aio::MultiplexedConnection {
    ::redis::Client::open(url)
        .expect("URL")
        .get_multiplexed_async_connection()
        .await
        .expect("raw Redis connection")
}

async fn redis() -> Option<Backend> {
    let url = env_url("HPD_REDIS_URL", "Redis")?;
    let store = RedisSessionStore::connect(&url).await.expect("connect");
    let raw = RedisRaw(redis_connection(&url).await);
    Some(Backend::new("redis", Arc::new(store), Box::new(raw)))
}

// ---- TLS-only PostgreSQL and Redis (`.ci/run` starts them with a throwaway CA)

/// `url` without its `sslmode` and `sslrootcert` parameters, and the CA file it names.
fn split_tls(url: &str) -> (String, String) {
    let (base, query) = url.split_once('?').expect("a TLS URL has a query");
    let mut ca = None;
    let kept: Vec<&str> = query
        .split('&')
        .filter(|pair| match pair.split_once('=') {
            Some(("sslrootcert", path)) => {
                ca = Some(path.to_owned());
                false
            }
            Some(("sslmode", _)) => false,
            _ => true,
        })
        .collect();
    let base = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    (base, ca.expect("the TLS URL names its CA file"))
}

async fn postgres_tls_client(url: &str) -> ::tokio_postgres::Client {
    use ::rustls::pki_types::CertificateDer;
    use ::rustls::pki_types::pem::PemObject as _;
    let (base, ca) = split_tls(url);
    let mut roots = ::rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(&ca).expect("CA file") {
        roots.add(cert.expect("CA certificate")).expect("add CA");
    }
    let config = ::rustls::ClientConfig::builder_with_provider(Arc::new(
        ::rustls::crypto::aws_lc_rs::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_root_certificates(roots)
    .with_no_client_auth();
    let mut pg: ::tokio_postgres::Config = base.parse().expect("URL");
    pg.ssl_mode(::tokio_postgres::config::SslMode::Require);
    let (client, driver) = pg
        .connect(::tokio_postgres_rustls::MakeRustlsConnect::new(config))
        .await
        .expect("raw TLS PostgreSQL connection");
    tokio::spawn(driver);
    client
}

async fn postgres_tls() -> Option<Backend> {
    let url = env_url("HPD_POSTGRES_TLS_URL", "TLS-only PostgreSQL")?;
    let store = PostgresSessionStore::connect(&url)
        .await
        .expect("connect over TLS");
    let raw = PostgresRaw(postgres_tls_client(&url).await);
    Some(Backend::new("postgres-tls", Arc::new(store), Box::new(raw)))
}

async fn redis_tls_connection(url: &str) -> ::redis::aio::MultiplexedConnection {
    let (base, ca) = split_tls(url);
    let certificates = ::redis::TlsCertificates {
        client_tls: None,
        root_cert: Some(std::fs::read(ca).expect("CA file")),
    };
    ::redis::Client::build_with_tls(base.as_str(), certificates)
        .expect("URL")
        .get_multiplexed_async_connection()
        .await
        .expect("raw TLS Redis connection")
}

async fn redis_tls() -> Option<Backend> {
    let url = env_url("HPD_REDIS_TLS_URL", "TLS-only Redis")?;
    let store = RedisSessionStore::connect(&url)
        .await
        .expect("connect over TLS");
    let raw = RedisRaw(redis_tls_connection(&url).await);
    Some(Backend::new("redis-tls", Arc::new(store), Box::new(raw)))
}

/// One test per case and backend.
macro_rules! suite {
    ($backend:ident: $($case:ident),* $(,)?) => {
        mod $backend {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let Some(backend) = super::$backend().await else { return };
                    println!("{}: {}", backend.name, stringify!($case));
                    super::store_suite::$case(&backend).await;
                    backend.cleanup().await;
                }
            )*
        }
    };
}

macro_rules! all_backends {
    ($($backend:ident),*) => {
        $(
            suite!($backend:
                round_trip_with_tool_calls,
                containers_persist,
                workers_take_turns,
                two_writers_at_once,
                conflict_hands_back_the_unsaved_turn,
                corrupt_row,
                list_by_prefix,
                delete,
                invalid_ids,
                approval_paused_and_resumed_elsewhere,
            );
        )*
    };
}

all_backends!(memory, sqlite, postgres, redis, postgres_tls, redis_tls);

// ---- schema versions

fn assert_unknown_schema(result: Result<impl std::fmt::Debug, StoreError>) {
    let err = result.expect_err("unknown schema version");
    assert!(
        matches!(&err, StoreError::UnknownSchema { found, supported: 1, .. } if found == "99"),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains("schema version 99; this build knows only version 1"),
        "{err}"
    );
}

#[tokio::test]
async fn sqlite_refuses_an_unknown_schema_version() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("sessions.db");
    drop(SqliteSessionStore::open(&path).await.expect("create"));
    ::rusqlite::Connection::open(&path)
        .expect("open")
        .execute(
            "UPDATE hpd_store_meta SET value = '99' WHERE key = 'schema_version'",
            [],
        )
        .expect("update");
    assert_unknown_schema(SqliteSessionStore::open(&path).await);
}

#[tokio::test]
async fn sqlite_uses_wal_mode_and_reports_a_file_it_cannot_open() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("sessions.db");
    drop(SqliteSessionStore::open(&path).await.expect("create"));
    let mode: String = ::rusqlite::Connection::open(&path)
        .expect("open")
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .expect("pragma");
    assert_eq!(mode, "wal");

    let err = SqliteSessionStore::open(dir.path().join("missing-folder/sessions.db"))
        .await
        .expect_err("no such folder");
    assert!(matches!(err, StoreError::Unavailable { .. }), "{err:?}");
    assert!(err.to_string().contains("missing-folder"), "{err}");
}

#[tokio::test]
async fn postgres_refuses_an_unknown_schema_version() {
    let Some(url) = env_url("HPD_POSTGRES_URL", "PostgreSQL") else {
        return;
    };
    // A schema of its own, so the shared tables are untouched.
    let schema = format!("hpd_schema_test_{}", std::process::id());
    let client = postgres_client(&url).await;
    client
        .batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
        ))
        .await
        .expect("create schema");
    let separator = if url.contains('?') { '&' } else { '?' };
    let scoped = format!("{url}{separator}options=-csearch_path%3D{schema}");
    drop(
        PostgresSessionStore::connect(&scoped)
            .await
            .expect("create tables"),
    );
    client
        .execute(
            &format!(
                "UPDATE {schema}.hpd_store_meta SET value = '99' WHERE key = 'schema_version'"
            ),
            &[],
        )
        .await
        .expect("update");
    let result = PostgresSessionStore::connect(&scoped).await;
    client
        .batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
        .await
        .expect("drop schema");
    assert_unknown_schema(result);
}

#[tokio::test]
async fn redis_refuses_an_unknown_schema_version_and_applies_the_ttl() {
    let Some(url) = env_url("HPD_REDIS_URL", "Redis") else {
        return;
    };
    // Database 15, so the shared database keeps its schema key.
    let base = match url.rsplit_once('/') {
        Some((base, db))
            if db.chars().all(|c| c.is_ascii_digit())
                && base.contains("://")
                && !base.ends_with('/') =>
        {
            base.to_owned()
        }
        _ => url.trim_end_matches('/').to_owned(),
    };
    let scoped = format!("{base}/15");
    let mut raw = redis_connection(&scoped).await;
    let _: i64 = ::redis::cmd("DEL")
        .arg("hpd:store:schema")
        .query_async(&mut raw)
        .await
        .expect("DEL");

    let store = RedisSessionStore::connect(&scoped)
        .await
        .expect("create")
        .with_ttl(std::time::Duration::from_secs(60));
    let id = format!("ttl-{}", std::process::id());
    store
        .save(&id, &hpd_agent::agent::SessionState::default(), 0)
        .await
        .expect("save");
    let ttl: i64 = ::redis::cmd("PTTL")
        .arg(format!("hpd:session:{id}"))
        .query_async(&mut raw)
        .await
        .expect("PTTL");
    assert!((1..=60_000).contains(&ttl), "ttl {ttl}");
    assert!(store.delete(&id).await.expect("delete"));

    let _: () = ::redis::cmd("SET")
        .arg("hpd:store:schema")
        .arg("99")
        .query_async(&mut raw)
        .await
        .expect("SET");
    let result = RedisSessionStore::connect(&scoped).await;
    let _: i64 = ::redis::cmd("DEL")
        .arg("hpd:store:schema")
        .query_async(&mut raw)
        .await
        .expect("DEL");
    assert_unknown_schema(result);
}

// ---- secrets

const SECRET: &str = "hunter2-not-shown";

fn assert_hidden(text: &str) {
    assert!(!text.contains(SECRET), "the password shows in: {text}");
}

#[tokio::test]
async fn postgres_urls_never_show_their_password() {
    // Nothing listens on port 1: the connection is refused.
    let err = PostgresSessionStore::connect(&format!("postgres://app:{SECRET}@127.0.0.1:1/db"))
        .await
        .expect_err("refused");
    assert!(matches!(err, StoreError::Unavailable { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("postgres://app:***@127.0.0.1:1/db"),
        "{err}"
    );
    assert_hidden(&err.to_string());
    assert_hidden(&format!("{err:?}"));
    let err = PostgresSessionStore::connect(&format!("host=127.0.0.1 port=1 password={SECRET}"))
        .await
        .expect_err("refused");
    assert_hidden(&err.to_string());
    let err =
        PostgresSessionStore::connect(&format!("postgres://app:{SECRET}@127.0.0.1:notaport/db"))
            .await
            .expect_err("bad URL");
    assert!(matches!(err, StoreError::Config(_)), "{err:?}");
    assert_hidden(&format!("{err} {err:?}"));

    let Some(url) = env_url("HPD_POSTGRES_URL", "PostgreSQL") else {
        return;
    };
    // A real server: the store's Debug output, and a login with a wrong password.
    let store = PostgresSessionStore::connect(&url).await.expect("connect");
    let real = url_password(&url);
    let shown = format!("{store:?}");
    assert!(shown.contains("***") && !shown.contains(&real), "{shown}");
    let wrong = url.replace(&real, SECRET);
    let err = PostgresSessionStore::connect(&wrong)
        .await
        .expect_err("wrong password");
    assert!(matches!(err, StoreError::Backend { .. }), "{err:?}");
    assert_hidden(&format!("{err} {err:?}"));
}

#[tokio::test]
async fn redis_urls_never_show_their_password() {
    let err = RedisSessionStore::connect(&format!("redis://:{SECRET}@127.0.0.1:1/0"))
        .await
        .expect_err("refused");
    assert!(matches!(err, StoreError::Unavailable { .. }), "{err:?}");
    assert!(
        err.to_string().contains("redis://:***@127.0.0.1:1/0"),
        "{err}"
    );
    assert_hidden(&format!("{err} {err:?}"));
    let err = RedisSessionStore::connect(&format!("rediss://:{SECRET}@127.0.0.1:1/x"))
        .await
        .expect_err("bad URL");
    assert_hidden(&format!("{err} {err:?}"));

    let Some(url) = env_url("HPD_REDIS_URL", "Redis") else {
        return;
    };
    let store = RedisSessionStore::connect(&url).await.expect("connect");
    let real = url_password(&url);
    let shown = format!("{store:?}");
    assert!(shown.contains("***") && !shown.contains(&real), "{shown}");
    let wrong = url.replace(&real, SECRET);
    let err = RedisSessionStore::connect(&wrong)
        .await
        .expect_err("wrong password");
    assert_hidden(&format!("{err} {err:?}"));
}

/// The password of a `scheme://user:password@host` URL.
fn url_password(url: &str) -> String {
    let authority = url
        .split("://")
        .nth(1)
        .and_then(|rest| rest.split('@').next());
    let password = authority.and_then(|a| a.split_once(':')).map(|(_, p)| p);
    password.expect("the URL has a password").to_owned()
}

// ---- a failed save at the end of a turn

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_locked_by_another_process_fails_the_save_and_a_later_run_saves_it() {
    use hpd_agent::{AgentBuilder, ChatResponse, RunError, ScriptedChatClient};

    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("sessions.db");
    let store = Arc::new(
        SqliteSessionStore::open(&path)
            .await
            .expect("open")
            .with_timeout(std::time::Duration::from_secs(2)),
    );
    let model = ScriptedChatClient::with_replies(["one", "two", "three"].map(ChatResponse::text));
    let agent = AgentBuilder::new()
        .with_chat_client(model)
        .build()
        .expect("agent builds");
    let mut session = agent
        .open_session(store.clone(), "locked")
        .await
        .expect("open");
    session.run("first").await.expect("saved");

    // Another process holds the write lock for longer than the store waits (2 s).
    let other = ::rusqlite::Connection::open(&path).expect("open");
    other.execute_batch("BEGIN EXCLUSIVE").expect("lock");
    let err = session.run("second").await.expect_err("the save fails");
    assert!(
        matches!(err, RunError::Store(StoreError::Unavailable { .. })),
        "{err:?}"
    );
    assert!(err.to_string().contains("locked"), "{err}");
    assert_eq!(session.history().len(), 4, "the turn is kept in memory");
    assert!(!session.is_saved());
    other.execute_batch("ROLLBACK").expect("unlock");

    // The next turn saves both.
    session.run("third").await.expect("saved");
    assert!(session.is_saved());
    assert_eq!(session.stored_version(), Some(2));
    let stored = store.load("locked").await.expect("load").expect("stored");
    assert_eq!(stored.state.history, session.history());
    assert_eq!(stored.state.history.len(), 6);

    // Nothing to save: `save` is a no-op; an unbound session says it has no store.
    session.save().await.expect("nothing due");
    let err = agent.session().save().await.expect_err("unbound");
    assert!(matches!(err, StoreError::Unbound), "{err:?}");
}

// ---- the Redis index

/// `calls` of a command in the server's `INFO commandstats`.
async fn command_calls(connection: &mut ::redis::aio::MultiplexedConnection, name: &str) -> u64 {
    let info: String = ::redis::cmd("INFO")
        .arg("commandstats")
        .query_async(connection)
        .await
        .expect("INFO");
    info.lines()
        .find_map(|line| line.strip_prefix(&format!("cmdstat_{name}:calls=")))
        .and_then(|rest| rest.split(',').next())
        .and_then(|calls| calls.parse().ok())
        .unwrap_or(0)
}

#[tokio::test]
async fn redis_lists_from_its_index_and_indexes_older_data_once() {
    let Some(url) = env_url("HPD_REDIS_URL", "Redis") else {
        return;
    };
    // Database 14, so the shared database keeps its index marker.
    let scoped = match url.rsplit_once('/') {
        Some((base, db)) if db.chars().all(|c| c.is_ascii_digit()) && base.contains("://") => {
            format!("{base}/14")
        }
        _ => format!("{}/14", url.trim_end_matches('/')),
    };
    let mut raw = redis_connection(&scoped).await;
    let _: () = ::redis::cmd("FLUSHDB")
        .query_async(&mut raw)
        .await
        .expect("FLUSHDB");
    // Sessions stored by a build without the index: hashes only.
    for id in ["old/a", "old/b", "other/c"] {
        let _: i64 = ::redis::cmd("HSET")
            .arg(format!("hpd:session:{id}"))
            .arg("version")
            .arg(1)
            .arg("data")
            .arg(r#"{"format":1,"state":{"history":[]}}"#)
            .query_async(&mut raw)
            .await
            .expect("HSET");
    }
    let _: () = ::redis::cmd("SET")
        .arg("hpd:store:schema")
        .arg("1")
        .query_async(&mut raw)
        .await
        .expect("SET");

    // The first connection indexes them, once.
    let store = RedisSessionStore::connect(&scoped).await.expect("connect");
    assert_eq!(store.list("old/").await.expect("list"), ["old/a", "old/b"]);
    let scans = command_calls(&mut raw, "scan").await;
    assert!(scans >= 1, "the existing data was indexed with SCAN");
    drop(RedisSessionStore::connect(&scoped).await.expect("again"));

    // Saves and deletes keep the index; listing never scans: from here on the store connects as
    // a user that may run every command but SCAN, so a scan would fail the call. (A count of
    // the server's SCAN calls would also see the other tests of this binary.)
    let _: () = ::redis::cmd("ACL")
        .arg("SETUSER")
        .arg("hpd-noscan")
        .arg("on")
        .arg(">noscan-password")
        .arg("~*")
        .arg("&*")
        .arg("+@all")
        .arg("-scan")
        .query_async(&mut raw)
        .await
        .expect("ACL SETUSER");
    let noscan = match scoped.split_once("://") {
        Some((scheme, rest)) => {
            let host = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
            format!("{scheme}://hpd-noscan:noscan-password@{host}")
        }
        None => panic!("not a Redis URL: {scoped}"),
    };
    let store = RedisSessionStore::connect(&noscan)
        .await
        .expect("connect as a user without SCAN");
    let state = hpd_agent::agent::SessionState::default();
    store.save("new/x", &state, 0).await.expect("save");
    store.save("new/y", &state, 0).await.expect("save");
    assert!(store.delete("old/a").await.expect("delete"));
    let expiring = store.with_ttl(std::time::Duration::from_millis(50));
    expiring.save("new/gone", &state, 0).await.expect("save");
    tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    assert_eq!(
        expiring.list("").await.expect("list"),
        ["new/x", "new/y", "old/b", "other/c"]
    );
    assert_eq!(
        expiring.list("new/").await.expect("list"),
        ["new/x", "new/y"]
    );
    assert!(expiring.list("nothing/").await.expect("list").is_empty());
    // The expired session's entry was dropped when a list met it.
    let score: Option<f64> = ::redis::cmd("ZSCORE")
        .arg("hpd:store:sessions")
        .arg("new/gone")
        .query_async(&mut raw)
        .await
        .expect("ZSCORE");
    assert_eq!(score, None);
    let _: () = ::redis::cmd("ACL")
        .arg("DELUSER")
        .arg("hpd-noscan")
        .query_async(&mut raw)
        .await
        .expect("ACL DELUSER");
    let _: () = ::redis::cmd("FLUSHDB")
        .query_async(&mut raw)
        .await
        .expect("FLUSHDB");
}

// ---- TLS: what is refused

/// `url` with its CA file replaced by the other authority `.ci/tls-certs.sh` makes, which
/// signed nothing the servers use.
fn with_wrong_ca(url: &str) -> String {
    let (_, ca) = split_tls(url);
    let wrong = std::path::Path::new(&ca).with_file_name("wrong-ca.pem");
    url.replace(&ca, &wrong.display().to_string())
}

async fn tls_refusals(var: &str, what: &str, connect: fn(String) -> BoxedConnect) {
    let Some(url) = env_url(var, what) else {
        return;
    };
    let (_, ca) = split_tls(&url);
    // The right CA and host name: accepted.
    connect(url.clone())
        .await
        .expect("verify-full with the right CA");

    // Another authority: refused, naming the certificate problem and the CA file.
    let wrong = with_wrong_ca(&url);
    let error = connect(wrong.clone())
        .await
        .expect_err("a wrong CA is refused");
    let text = error.to_string();
    assert!(matches!(error, StoreError::Unavailable { .. }), "{error:?}");
    assert!(text.to_lowercase().contains("certificate"), "{text}");
    assert!(text.contains("wrong-ca.pem"), "{text}");
    println!("{what}, wrong CA: {text}");

    // The certificate is for `localhost`: by address, the host name is wrong.
    let by_address = url.replace("@localhost:", "@127.0.0.1:");
    let error = connect(by_address)
        .await
        .expect_err("a wrong host name is refused");
    let text = error.to_string();
    assert!(matches!(error, StoreError::Unavailable { .. }), "{error:?}");
    assert!(text.to_lowercase().contains("certificate"), "{text}");
    println!("{what}, wrong host name: {text}");

    // `require` encrypts without checking: the wrong CA and the address are accepted.
    let require = with_wrong_ca(&url)
        .replace("@localhost:", "@127.0.0.1:")
        .replace("sslmode=verify-full&", "")
        .replacen('?', "?sslmode=require&", 1);
    connect(require)
        .await
        .expect("require does not check the certificate");

    // Without TLS the TLS-only server refuses.
    let (plain, _) = split_tls(&url);
    let plain = plain.replacen("rediss://", "redis://", 1);
    assert!(
        connect(plain).await.is_err(),
        "a plain connection is refused"
    );
    assert!(std::path::Path::new(&ca).exists());
}

type BoxedConnect = std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<Arc<dyn SessionStore>, StoreError>> + Send>,
>;

#[tokio::test]
async fn postgres_tls_refuses_a_wrong_ca_and_a_wrong_host_name() {
    tls_refusals("HPD_POSTGRES_TLS_URL", "PostgreSQL", |url| {
        Box::pin(async move {
            let store = PostgresSessionStore::connect(&url).await?;
            Ok(Arc::new(store) as Arc<dyn SessionStore>)
        })
    })
    .await;
}

#[tokio::test]
async fn redis_tls_refuses_a_wrong_ca_and_a_wrong_host_name() {
    tls_refusals("HPD_REDIS_TLS_URL", "Redis", |url| {
        Box::pin(async move {
            let store = RedisSessionStore::connect(&url).await?;
            Ok(Arc::new(store) as Arc<dyn SessionStore>)
        })
    })
    .await;
}
