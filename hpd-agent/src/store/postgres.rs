//! [`PostgresSessionStore`]: sessions in a PostgreSQL table, for many workers.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio_postgres::config::SslMode;
use tokio_postgres::error::SqlState;
use tokio_postgres::{Client, NoTls, Statement};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::tls::{self, TlsMode, TlsSettings};

use super::{
    DEFAULT_TIMEOUT, SCHEMA_VERSION, SessionStore, StoreError, StoredSession, decode_record,
    encode_record, redact_url, scrub, url_password, validate_id, within,
};
use crate::session::SessionState;

/// How long a connection attempt may take when the URL sets no `connect_timeout`.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The advisory lock that serialises schema creation between workers connecting at once.
const SCHEMA_LOCK: i64 = 0x6870_645f_7374_6f72; // "hpd_stor"

/// Creates the tables when missing (`{lock}` and `{version}` are filled in).
const SCHEMA: &str = "
BEGIN;
SELECT pg_advisory_xact_lock({lock});
CREATE TABLE IF NOT EXISTS hpd_store_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS hpd_sessions (
    id TEXT PRIMARY KEY,
    version BIGINT NOT NULL,
    data TEXT NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
INSERT INTO hpd_store_meta (key, value) VALUES ('schema_version', '{version}') ON CONFLICT (key) DO NOTHING;
COMMIT;
";

/// Sessions in a PostgreSQL table (feature `postgres`), for many stateless workers sharing
/// conversations.
///
/// The store keeps one connection (queries from many tasks are pipelined on it) and opens a new
/// one when it is lost: while the server is down every call fails with
/// [`StoreError::Unavailable`], and the first call after it is back succeeds. Every call has a
/// deadline ([`with_timeout`](Self::with_timeout), default [`DEFAULT_TIMEOUT`]): a server that
/// hangs gives `Unavailable` in that time, the connection is dropped, and the next call opens a
/// new one. A save abandoned this way may still be applied by the server later; saving the
/// same state again at the same expected version then succeeds (a save whose exact record is
/// already stored is not a conflict). Tables
/// `hpd_sessions` and `hpd_store_meta` are created in the first schema of the connection's
/// `search_path` on first use. Saves are single statements guarded by the expected version.
///
/// TLS (rustls) is chosen in the URL, with libpq's parameters: `sslmode=disable` (the default:
/// no TLS), `sslmode=require` (encrypted, the server's certificate is not checked) or
/// `sslmode=verify-full` (the certificate must be signed by a trusted authority and issued for
/// the URL's host name), and `sslrootcert=/path/ca.pem` for a private authority (else the
/// system's roots are trusted). A server whose certificate fails the check is refused with
/// [`StoreError::Unavailable`] saying why.
///
/// ```no_run
/// use std::sync::Arc;
/// use hpd_agent::store::{PostgresSessionStore, SessionStore};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let store: Arc<dyn SessionStore> =
///     Arc::new(PostgresSessionStore::connect("postgres://app:secret@127.0.0.1:5432/app").await?);
/// // The password never shows.
/// assert!(!format!("{store:?}").contains("secret"));
/// # Ok(())
/// # }
/// ```
pub struct PostgresSessionStore {
    config: tokio_postgres::Config,
    label: String,
    password: Option<String>,
    timeout: Duration,
    /// The TLS connector, `None` for `sslmode=disable`; and what the settings were, for errors.
    tls: Option<MakeRustlsConnect>,
    tls_settings: TlsSettings,
    connection: tokio::sync::Mutex<Option<Arc<Connection>>>,
}

impl fmt::Debug for PostgresSessionStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresSessionStore")
            .field("url", &self.label)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// One connection and its prepared statements.
struct Connection {
    client: Client,
    load: Statement,
    insert: Statement,
    update: Statement,
    delete: Statement,
    list: Statement,
}

impl PostgresSessionStore {
    /// Connects to the server at `url` (`postgres://user:password@host:port/database`, or
    /// libpq's `key=value` form), creates the tables on first use and checks their schema
    /// version.
    ///
    /// # Errors
    ///
    /// [`StoreError::Config`] for a URL that does not parse, [`StoreError::Unavailable`] when
    /// the server cannot be reached, [`StoreError::UnknownSchema`] when the tables were set up
    /// with a schema version this build does not know, [`StoreError::Backend`] when the server
    /// refuses the login or the statements.
    ///
    /// `no_run`: it needs a PostgreSQL server.
    ///
    /// ```no_run
    /// use std::sync::Arc;
    /// use hpd_agent::store::PostgresSessionStore;
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let url = std::env::var("DATABASE_URL")?; // postgres://user:password@127.0.0.1:5432/app
    /// let store = Arc::new(PostgresSessionStore::connect(&url).await?);
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// let session = agent.open_session(store, "user-42").await?;
    /// # drop(session);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let label = format!("postgres:{}", redact_url(url));
        let (rest, tls_settings) = tls::take_settings(url, TlsMode::Disable)?;
        let mut config: tokio_postgres::Config = rest.parse().map_err(|e| {
            StoreError::Config(format!(
                "invalid PostgreSQL URL '{}': {}",
                redact_url(url),
                scrub(&e, url_password(url))
            ))
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        let password = config
            .get_password()
            .map(|p| String::from_utf8_lossy(p).into_owned());
        let tls = tls::client_config(&tls_settings)
            .map_err(|message| StoreError::Config(format!("{label}: {message}")))?
            .map(MakeRustlsConnect::new);
        if tls.is_some() {
            // TLS or nothing: never the plain connection `prefer` would fall back to.
            config.ssl_mode(SslMode::Require);
        }
        let store = PostgresSessionStore {
            config,
            label,
            password,
            timeout: DEFAULT_TIMEOUT,
            tls,
            tls_settings,
            connection: tokio::sync::Mutex::new(None),
        };
        within(
            DEFAULT_TIMEOUT,
            &store.label,
            "connecting",
            store.connection(),
        )
        .await?;
        Ok(store)
    }

    /// Sets the deadline of every call (connecting again included). Default:
    /// [`DEFAULT_TIMEOUT`].
    ///
    /// `no_run`: it needs a PostgreSQL server.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use hpd_agent::store::PostgresSessionStore;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), hpd_agent::store::StoreError> {
    /// let store = PostgresSessionStore::connect("postgres://app@127.0.0.1/app")
    ///     .await?
    ///     .with_timeout(Duration::from_secs(2)); // a hung server: Unavailable after 2 s
    /// assert_eq!(store.timeout(), Duration::from_secs(2));
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The deadline of every call.
    ///
    /// `no_run`: it needs a PostgreSQL server.
    ///
    /// ```no_run
    /// use hpd_agent::store::{PostgresSessionStore, DEFAULT_TIMEOUT};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), hpd_agent::store::StoreError> {
    /// let store = PostgresSessionStore::connect("postgres://app@127.0.0.1/app").await?;
    /// assert_eq!(store.timeout(), DEFAULT_TIMEOUT);
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Runs one store call within the deadline; past it the connection is dropped, so the next
    /// call opens a new one.
    async fn bounded<T>(
        &self,
        what: &str,
        work: impl Future<Output = Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        let result = within(self.timeout, &self.label, what, work).await;
        if let Err(StoreError::Unavailable { .. }) = &result
            && let Ok(mut slot) = self.connection.try_lock()
        {
            *slot = None;
        }
        result
    }

    /// The live connection, opening a new one when there is none or it was lost, and whether
    /// it was open before this call.
    async fn connection(&self) -> Result<(Arc<Connection>, bool), StoreError> {
        let mut slot = self.connection.lock().await;
        if let Some(connection) = slot.as_ref()
            && !connection.client.is_closed()
        {
            return Ok((Arc::clone(connection), true));
        }
        *slot = None;
        let connection = Arc::new(self.open().await?);
        *slot = Some(Arc::clone(&connection));
        Ok((connection, false))
    }

    /// Runs `work` on the live connection. When a connection that was open before turns out
    /// to be lost (the server restarted since the last call), `work` runs once more on a new
    /// connection; the second value tells whether it did.
    async fn run<T, F>(
        &self,
        work: impl Fn(Arc<Connection>) -> F + Send + Sync,
    ) -> Result<(T, bool), StoreError>
    where
        F: Future<Output = Result<T, tokio_postgres::Error>> + Send,
    {
        let (connection, reused) = self.connection().await?;
        let error = match work(connection).await {
            Ok(value) => return Ok((value, false)),
            Err(e) => self.map_error(&e),
        };
        if !reused || !matches!(error, StoreError::Unavailable { .. }) {
            return Err(error);
        }
        let (connection, _) = self.connection().await?;
        match work(connection).await {
            Ok(value) => Ok((value, true)),
            Err(e) => Err(self.map_error(&e)),
        }
    }

    async fn open(&self) -> Result<Connection, StoreError> {
        let client = match &self.tls {
            None => {
                let (client, driver) = self
                    .config
                    .connect(NoTls)
                    .await
                    .map_err(|e| self.map_error(&e))?;
                tokio::spawn(async move {
                    if let Err(e) = driver.await {
                        tracing::debug!(target: "hpd_agent", error = %e, "PostgreSQL connection ended");
                    }
                });
                client
            }
            Some(tls) => {
                let (client, driver) = self
                    .config
                    .connect(tls.clone())
                    .await
                    .map_err(|e| self.tls_error(&e))?;
                tokio::spawn(async move {
                    if let Err(e) = driver.await {
                        tracing::debug!(target: "hpd_agent", error = %e, "PostgreSQL connection ended");
                    }
                });
                client
            }
        };
        let schema = SCHEMA
            .replace("{lock}", &SCHEMA_LOCK.to_string())
            .replace("{version}", &SCHEMA_VERSION.to_string());
        client
            .batch_execute(&schema)
            .await
            .map_err(|e| self.map_error(&e))?;
        let found: String = client
            .query_one(
                "SELECT value FROM hpd_store_meta WHERE key = 'schema_version'",
                &[],
            )
            .await
            .map_err(|e| self.map_error(&e))?
            .try_get(0)
            .map_err(|e| self.map_error(&e))?;
        if found != SCHEMA_VERSION.to_string() {
            return Err(StoreError::UnknownSchema {
                store: self.label.clone(),
                found,
                supported: SCHEMA_VERSION,
            });
        }
        let prepare = async |sql: &str| client.prepare(sql).await.map_err(|e| self.map_error(&e));
        let load = prepare("SELECT version, data FROM hpd_sessions WHERE id = $1").await?;
        let insert = prepare(
            "INSERT INTO hpd_sessions (id, version, data) VALUES ($1, 1, $2) \
             ON CONFLICT (id) DO NOTHING",
        )
        .await?;
        let update = prepare(
            "UPDATE hpd_sessions SET version = version + 1, data = $3, updated_at = now() \
             WHERE id = $1 AND version = $2",
        )
        .await?;
        let delete = prepare("DELETE FROM hpd_sessions WHERE id = $1").await?;
        let list = prepare(
            "SELECT id FROM hpd_sessions WHERE starts_with(id, $1) ORDER BY id COLLATE \"C\"",
        )
        .await?;
        Ok(Connection {
            client,
            load,
            insert,
            update,
            delete,
            list,
        })
    }

    /// A failure to connect with TLS, saying what was asked of the server's certificate.
    fn tls_error(&self, error: &tokio_postgres::Error) -> StoreError {
        let what = match (&self.tls_settings.mode, &self.tls_settings.ca_file) {
            (TlsMode::VerifyFull, Some(ca)) => format!(
                "TLS with sslmode=verify-full: the certificate must be signed by an authority of '{}' and name the host",
                ca.display()
            ),
            (TlsMode::VerifyFull, None) => "TLS with sslmode=verify-full: the certificate must be signed by an authority the system trusts and name the host".to_owned(),
            _ => "TLS with sslmode=require".to_owned(),
        };
        match self.map_error(error) {
            StoreError::Unavailable { store, message } => StoreError::Unavailable {
                store,
                message: format!("{message} ({what})"),
            },
            StoreError::Backend { store, message } => StoreError::Backend {
                store,
                message: format!("{message} ({what})"),
            },
            other => other,
        }
    }

    fn map_error(&self, error: &tokio_postgres::Error) -> StoreError {
        let message = scrub(error, self.password.as_deref());
        let unavailable = match error.code() {
            None => true, // I/O, closed connection, timeout
            Some(code) => [
                SqlState::ADMIN_SHUTDOWN,
                SqlState::CRASH_SHUTDOWN,
                SqlState::CANNOT_CONNECT_NOW,
                SqlState::TOO_MANY_CONNECTIONS,
                SqlState::CONNECTION_EXCEPTION,
                SqlState::CONNECTION_FAILURE,
                SqlState::SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION,
            ]
            .contains(code),
        };
        StoreError::failure(unavailable, self.label.clone(), message)
    }
}

fn to_i64(version: u64) -> i64 {
    // Versions count saves; they never come near i64::MAX.
    i64::try_from(version).unwrap_or(i64::MAX)
}

#[async_trait]
impl SessionStore for PostgresSessionStore {
    async fn load(&self, id: &str) -> Result<Option<StoredSession>, StoreError> {
        validate_id(id)?;
        let id = id.to_owned();
        let (row, _) = self
            .bounded(
                &format!("loading session '{id}'"),
                self.run(|c| load_row(c, id.clone())),
            )
            .await?;
        let Some((version, text)) = row else {
            return Ok(None);
        };
        let version = u64::try_from(version).map_err(|_| StoreError::Corrupt {
            session: id.clone(),
            reason: format!("negative version {version}"),
        })?;
        let state = decode_record(&id, &text)?;
        Ok(Some(StoredSession { state, version }))
    }

    async fn save(&self, id: &str, state: &SessionState, expected: u64) -> Result<u64, StoreError> {
        validate_id(id)?;
        let text = encode_record(state);
        let key = id.to_owned();
        let what = format!("saving session '{key}'");
        let (written, _) = self
            .bounded(
                &what,
                self.run(|c| {
                    let (id, text) = (key.clone(), text.clone());
                    async move {
                        if expected == 0 {
                            c.client.execute(&c.insert, &[&id, &text]).await
                        } else {
                            c.client
                                .execute(&c.update, &[&id, &to_i64(expected), &text])
                                .await
                        }
                    }
                }),
            )
            .await?;
        if written == 1 {
            return Ok(expected + 1);
        }
        // An earlier attempt of this very write may have run (before a lost connection, or
        // after a timeout): then the stored record is this write, and it is no conflict.
        let (stored, _) = self
            .bounded(&what, self.run(|c| load_row(c, key.clone())))
            .await?;
        if stored == Some((to_i64(expected + 1), text)) {
            return Ok(expected + 1);
        }
        Err(StoreError::conflict(&key, expected))
    }

    async fn delete(&self, id: &str) -> Result<bool, StoreError> {
        validate_id(id)?;
        let key = id.to_owned();
        let (deleted, _) = self
            .bounded(
                &format!("deleting session '{key}'"),
                self.run(|c| {
                    let id = key.clone();
                    async move { c.client.execute(&c.delete, &[&id]).await }
                }),
            )
            .await?;
        Ok(deleted > 0)
    }

    async fn list(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        let prefix = prefix.to_owned();
        let (ids, _) = self
            .bounded(
                "listing sessions",
                self.run(|c| {
                    let prefix = prefix.clone();
                    async move {
                        c.client
                            .query(&c.list, &[&prefix])
                            .await?
                            .iter()
                            .map(|row| row.try_get(0))
                            .collect::<Result<Vec<String>, _>>()
                    }
                }),
            )
            .await?;
        Ok(ids)
    }
}

/// The version and record text of `id`.
async fn load_row(
    c: Arc<Connection>,
    id: String,
) -> Result<Option<(i64, String)>, tokio_postgres::Error> {
    let Some(row) = c.client.query_opt(&c.load, &[&id]).await? else {
        return Ok(None);
    };
    Ok(Some((row.try_get(0)?, row.try_get(1)?)))
}
