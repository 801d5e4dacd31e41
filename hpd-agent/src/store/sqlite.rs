//! [`SqliteSessionStore`]: the embedded default, one SQLite file.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use rusqlite::{Connection, ErrorCode, OptionalExtension, TransactionBehavior, params};

use super::{
    DEFAULT_TIMEOUT, SCHEMA_VERSION, SessionStore, StoreError, StoredSession, decode_record,
    encode_record, validate_id, within,
};
use crate::session::SessionState;

/// Sessions in one SQLite file (feature `sqlite`, on by default; SQLite is compiled in).
///
/// The file is opened in WAL mode, so readers never wait for a writer and several processes can
/// share it. Every call runs on Tokio's blocking threads, never on the async workers. Saves are
/// single `INSERT`/`UPDATE` statements guarded by the expected version, durable when they
/// return (SQLite's default `synchronous` setting).
///
/// ```
/// use std::sync::Arc;
/// use hpd_agent::store::{SessionStore, SqliteSessionStore};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = std::env::temp_dir().join(format!("hpd-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let store: Arc<dyn SessionStore> = Arc::new(SqliteSessionStore::open(dir.join("sessions.db")).await?);
/// assert!(store.list("").await?.is_empty());
/// # drop(store);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok(())
/// # }
/// ```
pub struct SqliteSessionStore {
    path: PathBuf,
    timeout: Duration,
    connection: Arc<Mutex<Connection>>,
}

impl fmt::Debug for SqliteSessionStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqliteSessionStore")
            .field("path", &self.path)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl SqliteSessionStore {
    /// Opens (or creates) the file at `path`, switches it to WAL mode, and creates the tables
    /// on first use.
    ///
    /// # Errors
    ///
    /// [`StoreError::Unavailable`] when the file cannot be opened or is locked,
    /// [`StoreError::UnknownSchema`] when the file was set up with a schema version this build
    /// does not know, [`StoreError::Backend`] when the file is not an SQLite database.
    ///
    /// ```
    /// use hpd_agent::agent::SessionState;
    /// use hpd_agent::store::{SessionStore, SqliteSessionStore};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), hpd_agent::store::StoreError> {
    /// let path = std::env::temp_dir().join(format!("hpd-agent-doc-open-{}.db", std::process::id()));
    /// let store = SqliteSessionStore::open(&path).await?;
    /// store.save("s", &SessionState::default(), 0).await?;
    /// drop(store);
    /// let reopened = SqliteSessionStore::open(&path).await?; // the file keeps the sessions
    /// assert_eq!(reopened.load("s").await?.unwrap().version, 1);
    /// # drop(reopened);
    /// # for suffix in ["", "-wal", "-shm"] { let _ = std::fs::remove_file(format!("{}{suffix}", path.display())); }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref().to_owned();
        let label = label(&path);
        let opened = {
            let path = path.clone();
            let task_label = label.clone();
            tokio::task::spawn_blocking(move || open_blocking(&path, &task_label))
                .await
                .map_err(|e| StoreError::Backend {
                    store: label,
                    message: format!("the opening task failed: {e}"),
                })??
        };
        Ok(SqliteSessionStore {
            path,
            timeout: DEFAULT_TIMEOUT,
            connection: Arc::new(Mutex::new(opened)),
        })
    }

    /// Sets the deadline of every call: how long a write waits for another process's write
    /// (SQLite's busy timeout; then the call fails with [`StoreError::Unavailable`] saying the
    /// database is locked), and, one second more, how long a call may take in all before it is
    /// abandoned as `Unavailable` (a file on a hung network share). Default:
    /// [`DEFAULT_TIMEOUT`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use hpd_agent::store::SqliteSessionStore;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), hpd_agent::store::StoreError> {
    /// let path = std::env::temp_dir().join(format!("hpd-agent-doc-timeout-{}.db", std::process::id()));
    /// let store = SqliteSessionStore::open(&path).await?.with_timeout(Duration::from_secs(1));
    /// assert_eq!(store.timeout(), Duration::from_secs(1));
    /// # drop(store);
    /// # for suffix in ["", "-wal", "-shm"] { let _ = std::fs::remove_file(format!("{}{suffix}", path.display())); }
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        let connection = self
            .connection
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Err(e) = connection.busy_timeout(timeout) {
            tracing::warn!(target: "hpd_agent", error = %e, "the SQLite busy timeout was not changed");
        }
        drop(connection);
        self
    }

    /// The deadline of every call.
    ///
    /// ```
    /// use hpd_agent::store::{SqliteSessionStore, DEFAULT_TIMEOUT};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), hpd_agent::store::StoreError> {
    /// let path = std::env::temp_dir().join(format!("hpd-agent-doc-deadline-{}.db", std::process::id()));
    /// let store = SqliteSessionStore::open(&path).await?;
    /// assert_eq!(store.timeout(), DEFAULT_TIMEOUT);
    /// # drop(store);
    /// # for suffix in ["", "-wal", "-shm"] { let _ = std::fs::remove_file(format!("{}{suffix}", path.display())); }
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The file's path.
    ///
    /// ```
    /// use hpd_agent::store::SqliteSessionStore;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), hpd_agent::store::StoreError> {
    /// let path = std::env::temp_dir().join(format!("hpd-agent-doc-path-{}.db", std::process::id()));
    /// let store = SqliteSessionStore::open(&path).await?;
    /// assert_eq!(store.path(), path);
    /// # drop(store);
    /// # for suffix in ["", "-wal", "-shm"] { let _ = std::fs::remove_file(format!("{}{suffix}", path.display())); }
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    async fn with_connection<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Connection) -> Result<T, rusqlite::Error> + Send + 'static,
    ) -> Result<T, StoreError> {
        let connection = Arc::clone(&self.connection);
        let label = label(&self.path);
        let task = tokio::task::spawn_blocking(move || {
            // A statement that failed half-way leaves nothing behind (SQLite rolls it back), so
            // the connection is usable after a panic elsewhere.
            let mut connection = connection.lock().unwrap_or_else(PoisonError::into_inner);
            work(&mut connection)
        });
        // SQLite gives up waiting for a lock after the timeout itself, with its own (clearer)
        // error; the deadline here, a second later, catches a call that hangs otherwise.
        let deadline = self.timeout.saturating_add(Duration::from_secs(1));
        within(deadline, &label, "the call", async {
            let result = task.await.map_err(|e| StoreError::Backend {
                store: label.clone(),
                message: format!("the store task failed: {e}"),
            })?;
            result.map_err(|e| map_error(&label, &e))
        })
        .await
    }
}

fn label(path: &Path) -> String {
    format!("sqlite:{}", path.display())
}

fn open_blocking(path: &Path, label: &str) -> Result<Connection, StoreError> {
    let map = |e: rusqlite::Error| map_error(label, &e);
    let mut connection = Connection::open(path).map_err(map)?;
    connection.busy_timeout(DEFAULT_TIMEOUT).map_err(map)?;
    let mode: String = connection
        .query_row("PRAGMA journal_mode=WAL", [], |row| row.get(0))
        .map_err(map)?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::Backend {
            store: label.to_owned(),
            message: format!("cannot switch to WAL mode (journal mode stays '{mode}')"),
        });
    }
    let found: String = {
        let tx = connection
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(map)?;
        tx.execute_batch(
            "CREATE TABLE IF NOT EXISTS hpd_store_meta (
                 key TEXT PRIMARY KEY NOT NULL,
                 value TEXT NOT NULL
             );
             CREATE TABLE IF NOT EXISTS hpd_sessions (
                 id TEXT PRIMARY KEY NOT NULL,
                 version INTEGER NOT NULL,
                 data TEXT NOT NULL,
                 updated_at INTEGER NOT NULL
             );",
        )
        .map_err(map)?;
        tx.execute(
            "INSERT OR IGNORE INTO hpd_store_meta (key, value) VALUES ('schema_version', ?1)",
            params![SCHEMA_VERSION.to_string()],
        )
        .map_err(map)?;
        let found = tx
            .query_row(
                "SELECT value FROM hpd_store_meta WHERE key = 'schema_version'",
                [],
                |row| row.get(0),
            )
            .map_err(map)?;
        tx.commit().map_err(map)?;
        found
    };
    if found != SCHEMA_VERSION.to_string() {
        return Err(StoreError::UnknownSchema {
            store: label.to_owned(),
            found,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(connection)
}

fn map_error(label: &str, error: &rusqlite::Error) -> StoreError {
    let unavailable = matches!(
        error.sqlite_error_code(),
        Some(
            ErrorCode::DatabaseBusy
                | ErrorCode::DatabaseLocked
                | ErrorCode::CannotOpen
                | ErrorCode::SystemIoFailure
                | ErrorCode::DiskFull
                | ErrorCode::ReadOnly
                | ErrorCode::PermissionDenied
        )
    );
    StoreError::failure(unavailable, label.to_owned(), error.to_string())
}

fn to_i64(version: u64) -> i64 {
    // Versions count saves; they never come near i64::MAX.
    i64::try_from(version).unwrap_or(i64::MAX)
}

fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[async_trait]
impl SessionStore for SqliteSessionStore {
    async fn load(&self, id: &str) -> Result<Option<StoredSession>, StoreError> {
        validate_id(id)?;
        let key = id.to_owned();
        let row: Option<(i64, String)> = self
            .with_connection(move |c| {
                c.prepare_cached("SELECT version, data FROM hpd_sessions WHERE id = ?1")?
                    .query_row(params![key], |row| Ok((row.get(0)?, row.get(1)?)))
                    .optional()
            })
            .await?;
        let Some((version, text)) = row else {
            return Ok(None);
        };
        let version = u64::try_from(version).map_err(|_| StoreError::Corrupt {
            session: id.to_owned(),
            reason: format!("negative version {version}"),
        })?;
        let state = decode_record(id, &text)?;
        Ok(Some(StoredSession { state, version }))
    }

    async fn save(&self, id: &str, state: &SessionState, expected: u64) -> Result<u64, StoreError> {
        validate_id(id)?;
        let text = encode_record(state);
        let key = id.to_owned();
        let written = self
            .with_connection(move |c| {
                let now = now_millis();
                if expected == 0 {
                    c.prepare_cached(
                        "INSERT INTO hpd_sessions (id, version, data, updated_at)
                         VALUES (?1, 1, ?2, ?3) ON CONFLICT (id) DO NOTHING",
                    )?
                    .execute(params![key, text, now])
                } else {
                    c.prepare_cached(
                        "UPDATE hpd_sessions SET version = ?2 + 1, data = ?3, updated_at = ?4
                         WHERE id = ?1 AND version = ?2",
                    )?
                    .execute(params![key, to_i64(expected), text, now])
                }
            })
            .await?;
        if written == 1 {
            Ok(expected + 1)
        } else {
            Err(StoreError::conflict(id, expected))
        }
    }

    async fn delete(&self, id: &str) -> Result<bool, StoreError> {
        validate_id(id)?;
        let key = id.to_owned();
        let deleted = self
            .with_connection(move |c| {
                c.prepare_cached("DELETE FROM hpd_sessions WHERE id = ?1")?
                    .execute(params![key])
            })
            .await?;
        Ok(deleted > 0)
    }

    async fn list(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        let prefix = prefix.to_owned();
        self.with_connection(move |c| {
            let mut statement = c.prepare_cached(
                "SELECT id FROM hpd_sessions WHERE substr(id, 1, length(?1)) = ?1 ORDER BY id",
            )?;
            let ids = statement.query_map(params![prefix], |row| row.get(0))?;
            ids.collect()
        })
        .await
    }
}
