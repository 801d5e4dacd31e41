//! [`RedisSessionStore`]: sessions as Redis hashes, optionally expiring.

use std::fmt;
use std::future::Future;
use std::time::Duration;

use async_trait::async_trait;
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Client, RedisError};

use super::tls::{self, TlsMode};
use super::{
    DEFAULT_TIMEOUT, SCHEMA_VERSION, SessionStore, StoreError, StoredSession, decode_record,
    encode_record, redact_url, scrub, url_password, validate_id, within,
};
use crate::session::SessionState;

/// The key of a session is this prefix followed by its id.
const SESSION_PREFIX: &str = "hpd:session:";

/// The key holding the schema version.
const SCHEMA_KEY: &str = "hpd:store:schema";

/// The index of session ids: a sorted set whose members all have score 0, so they are in
/// lexicographic (byte) order and a prefix is one `ZRANGEBYLEX` range.
const INDEX_KEY: &str = "hpd:store:sessions";

/// Set once the index holds every session stored before it existed (see `build_index`).
const INDEX_BUILT_KEY: &str = "hpd:store:index-built";

/// Compare-and-set of one session hash, and its id in the index. `KEYS[1]`: the key, `KEYS[2]`:
/// the index; `ARGV`: expected version, record text, time to live in milliseconds (0: none), the
/// id. Returns the new version, -1 on a version mismatch, -2 when the stored version is not a
/// number.
const SAVE_SCRIPT: &str = r"
local stored = redis.call('HGET', KEYS[1], 'version')
local current = 0
if stored then
  current = tonumber(stored)
  if current == nil then return -2 end
end
if current ~= tonumber(ARGV[1]) then return -1 end
redis.call('HSET', KEYS[1], 'version', current + 1, 'data', ARGV[2])
if tonumber(ARGV[3]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
redis.call('ZADD', KEYS[2], 0, ARGV[4])
return current + 1
";

/// Deletes a session hash and its index entry. `KEYS[1]`: the key, `KEYS[2]`: the index;
/// `ARGV[1]`: the id. Returns how many keys were deleted.
const DELETE_SCRIPT: &str = r"
local deleted = redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return deleted
";

/// The ids of the index between `ARGV[1]` and `ARGV[2]` (`ZRANGEBYLEX` bounds) whose session
/// still exists; entries of sessions that expired or were deleted by other means are removed.
/// `KEYS[1]`: the index; `ARGV[3]`: the session key prefix.
const LIST_SCRIPT: &str = r"
local ids = redis.call('ZRANGEBYLEX', KEYS[1], ARGV[1], ARGV[2])
local live = {}
for _, id in ipairs(ids) do
  if redis.call('EXISTS', ARGV[3] .. id) == 1 then
    table.insert(live, id)
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
return live
";

/// Sessions in Redis (feature `redis`): one hash per session (`hpd:session:{id}` with fields
/// `version` and `data`), written by a Lua script that checks the expected version, so a save
/// is atomic.
///
/// With [`with_ttl`](Self::with_ttl) every save also sets the session to expire after that
/// long without saves. The store keeps one multiplexed connection and opens a new one when it
/// is lost: while the server is down calls fail with [`StoreError::Unavailable`]. Every call
/// has a deadline ([`with_timeout`](Self::with_timeout), default [`DEFAULT_TIMEOUT`]): a server
/// that hangs gives `Unavailable` in that time, the connection is dropped and the next call
/// opens a new one. A save abandoned this way may still be applied later; saving the same
/// state again at the same expected version then succeeds. Sessions
/// survive a server restart only when the server persists its data (append-only file or
/// snapshots).
///
/// [`list`](SessionStore::list) reads an index the store keeps: the sorted set
/// `hpd:store:sessions` of all session ids (saves add to it, deletes remove from it, in the
/// same scripts), so listing a prefix costs `O(log n + m)` for `m` results, never a walk of the
/// keyspace. Entries of sessions that expired are dropped when a list meets them. Data stored
/// before the index existed keeps working: the first connection to a database without the
/// marker key `hpd:store:index-built` indexes the existing sessions once (one `SCAN`) and sets
/// it. Sessions that workers of an older build create after that are not indexed; once every
/// worker runs this build, `DEL hpd:store:index-built` makes the next connection index them.
///
/// TLS (rustls) comes with a `rediss://` URL, with the same choices as the PostgreSQL store:
/// the server's certificate must be signed by a trusted authority and issued for the URL's host
/// name (`sslmode=verify-full`, the default), with `sslrootcert=/path/ca.pem` for a private
/// authority (else the system's roots), or is not checked (`sslmode=require`). A `redis://`
/// URL is not encrypted: use it on loopback or a private network.
///
/// ```no_run
/// use std::sync::Arc;
/// use std::time::Duration;
/// use hpd_agent::store::{RedisSessionStore, SessionStore};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let store = RedisSessionStore::connect("redis://:secret@127.0.0.1:6379/0")
///     .await?
///     .with_ttl(Duration::from_secs(24 * 3600));
/// let store: Arc<dyn SessionStore> = Arc::new(store);
/// assert!(!format!("{store:?}").contains("secret"));
/// # Ok(())
/// # }
/// ```
pub struct RedisSessionStore {
    client: Client,
    label: String,
    password: Option<String>,
    ttl: Option<Duration>,
    timeout: Duration,
    /// The live connection and its number (connections are numbered as they are opened).
    connection: tokio::sync::Mutex<(u64, Option<MultiplexedConnection>)>,
}

impl fmt::Debug for RedisSessionStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisSessionStore")
            .field("url", &self.label)
            .field("ttl", &self.ttl)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl RedisSessionStore {
    /// Connects to the server at `url` (`redis://[:password@]host:port[/db]`), records the
    /// schema version on first use and checks it.
    ///
    /// # Errors
    ///
    /// [`StoreError::Config`] for a URL that does not parse, [`StoreError::Unavailable`] when
    /// the server cannot be reached, [`StoreError::UnknownSchema`] when the database was set up
    /// with a schema version this build does not know, [`StoreError::Backend`] when the server
    /// refuses the login.
    ///
    /// `no_run`: it needs a Redis server.
    ///
    /// ```no_run
    /// use std::sync::Arc;
    /// use hpd_agent::store::RedisSessionStore;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), hpd_agent::store::StoreError> {
    /// let store = Arc::new(RedisSessionStore::connect("redis://127.0.0.1:6379/0").await?);
    /// # drop(store);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let label = format!("redis:{}", redact_url(url));
        let tls_scheme = url.trim_start().starts_with("rediss://");
        let default = if tls_scheme {
            TlsMode::VerifyFull
        } else {
            TlsMode::Disable
        };
        let (mut rest, settings) = tls::take_settings(url, default)?;
        match (tls_scheme, settings.mode) {
            (false, TlsMode::Disable) | (true, TlsMode::VerifyFull) => {}
            (true, TlsMode::Require) => {
                // The `redis` crate's way of not checking the certificate.
                if let Some(at) = rest.find('#') {
                    rest.truncate(at);
                }
                rest.push_str("#insecure");
            }
            (true, TlsMode::Disable) => {
                return Err(StoreError::Config(format!(
                    "{label}: sslmode=disable contradicts rediss://; use redis:// for no TLS"
                )));
            }
            (false, _) => {
                return Err(StoreError::Config(format!(
                    "{label}: TLS needs a rediss:// URL (sslmode and sslrootcert apply to it)"
                )));
            }
        }
        let invalid = |e: RedisError| {
            StoreError::Config(format!(
                "invalid Redis URL '{}': {}",
                redact_url(url),
                scrub(&e, url_password(url))
            ))
        };
        let client = match &settings.ca_file {
            Some(ca) => {
                let pem = tls::read_ca(ca)
                    .map_err(|message| StoreError::Config(format!("{label}: {message}")))?;
                let certificates = redis::TlsCertificates {
                    client_tls: None,
                    root_cert: Some(pem),
                };
                Client::build_with_tls(rest.as_str(), certificates).map_err(invalid)?
            }
            None => Client::open(rest.as_str()).map_err(invalid)?,
        };
        let password = client
            .get_connection_info()
            .redis_settings()
            .password()
            .map(str::to_owned);
        let store = RedisSessionStore {
            client,
            label,
            password,
            ttl: None,
            timeout: DEFAULT_TIMEOUT,
            connection: tokio::sync::Mutex::new((0, None)),
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
    /// `no_run`: it needs a Redis server.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use hpd_agent::store::RedisSessionStore;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), hpd_agent::store::StoreError> {
    /// let store = RedisSessionStore::connect("redis://127.0.0.1:6379")
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
    /// `no_run`: it needs a Redis server.
    ///
    /// ```no_run
    /// use hpd_agent::store::{RedisSessionStore, DEFAULT_TIMEOUT};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), hpd_agent::store::StoreError> {
    /// let store = RedisSessionStore::connect("redis://127.0.0.1:6379").await?;
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
            slot.1 = None;
        }
        result
    }

    /// Lets sessions expire `ttl` after their last save (rounded to milliseconds, at least 1).
    ///
    /// `no_run`: it needs a Redis server.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use hpd_agent::store::RedisSessionStore;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), hpd_agent::store::StoreError> {
    /// // Conversations idle for a day are forgotten.
    /// let store = RedisSessionStore::connect("redis://127.0.0.1:6379").await?.with_ttl(Duration::from_secs(24 * 3600));
    /// assert_eq!(store.ttl(), Some(Duration::from_secs(86_400)));
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = Some(ttl);
        self
    }

    /// The time to live set with [`with_ttl`](Self::with_ttl).
    ///
    /// `no_run`: it needs a Redis server.
    ///
    /// ```no_run
    /// use hpd_agent::store::RedisSessionStore;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), hpd_agent::store::StoreError> {
    /// let store = RedisSessionStore::connect("redis://127.0.0.1:6379").await?;
    /// assert_eq!(store.ttl(), None); // sessions never expire unless `with_ttl` is set
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn ttl(&self) -> Option<Duration> {
        self.ttl
    }

    /// The live connection, its number, and whether it was open before this call (a reused
    /// connection may have been lost without anyone noticing yet).
    ///
    /// Kept by hand rather than left to `redis`'s `ConnectionManager`, which reconnects in the
    /// background on its own backoff schedule: every new connection here must first pass the
    /// schema check and build the index (the manager runs no setup on a connection it opens
    /// again), a lost connection is tried again once and only for a call that found it open
    /// (the manager fails the call and reconnects behind it), reconnecting must stay within the
    /// call's deadline, and its failure must be the `Unavailable` error that names the store's
    /// URL without the password.
    async fn connection(&self) -> Result<(MultiplexedConnection, u64, bool), StoreError> {
        let mut slot = self.connection.lock().await;
        if let Some(connection) = slot.1.as_ref() {
            return Ok((connection.clone(), slot.0, true));
        }
        // A backstop a second past the store's deadline, which comes first with the message
        // that names the call.
        let backstop = self.timeout.saturating_add(Duration::from_secs(1));
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(backstop))
            .set_response_timeout(Some(backstop));
        let mut connection = self
            .client
            .get_multiplexed_async_connection_with_config(&config)
            .await
            .map_err(|e| self.map_error(&e))?;
        let _: Option<String> = redis::cmd("SET")
            .arg(SCHEMA_KEY)
            .arg(SCHEMA_VERSION)
            .arg("NX")
            .query_async(&mut connection)
            .await
            .map_err(|e| self.map_error(&e))?;
        let found: Option<String> = redis::cmd("GET")
            .arg(SCHEMA_KEY)
            .query_async(&mut connection)
            .await
            .map_err(|e| self.map_error(&e))?;
        let found = found.unwrap_or_default();
        if found != SCHEMA_VERSION.to_string() {
            return Err(StoreError::UnknownSchema {
                store: self.label.clone(),
                found,
                supported: SCHEMA_VERSION,
            });
        }
        self.build_index(&mut connection).await?;
        slot.0 += 1;
        slot.1 = Some(connection.clone());
        Ok((connection, slot.0, false))
    }

    /// Runs one command. When a connection that was open before turns out to be lost (the
    /// server restarted since the last call), the command runs once more on a new connection;
    /// the second value tells whether it did. A connection-level failure drops the connection
    /// so the next call opens a new one.
    async fn query<T: redis::FromRedisValue>(
        &self,
        command: &redis::Cmd,
    ) -> Result<(T, bool), StoreError> {
        let mut retried = false;
        loop {
            let (mut connection, number, reused) = self.connection().await?;
            let error = match command.query_async(&mut connection).await {
                Ok(value) => return Ok((value, retried)),
                Err(e) => self.map_error(&e),
            };
            if !matches!(error, StoreError::Unavailable { .. }) {
                return Err(error);
            }
            {
                let mut slot = self.connection.lock().await;
                if slot.0 == number {
                    slot.1 = None;
                }
            }
            if !reused || retried {
                return Err(error);
            }
            retried = true;
        }
    }

    /// Indexes the sessions stored before the index existed, once per database: when the
    /// marker key is missing, one `SCAN` over the session keys adds their ids, then the marker
    /// is set. Workers connecting at once may both do it; adding an id twice changes nothing.
    async fn build_index(&self, connection: &mut MultiplexedConnection) -> Result<(), StoreError> {
        let built: bool = redis::cmd("EXISTS")
            .arg(INDEX_BUILT_KEY)
            .query_async(connection)
            .await
            .map_err(|e| self.map_error(&e))?;
        if built {
            return Ok(());
        }
        let pattern = glob_prefix("");
        let mut cursor: u64 = 0;
        let mut indexed = 0usize;
        loop {
            let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(&pattern)
                .arg("COUNT")
                .arg(1000)
                .query_async(connection)
                .await
                .map_err(|e| self.map_error(&e))?;
            let ids: Vec<&str> = keys
                .iter()
                .filter_map(|key| key.strip_prefix(SESSION_PREFIX))
                .collect();
            if !ids.is_empty() {
                let mut add = redis::cmd("ZADD");
                add.arg(INDEX_KEY);
                for id in &ids {
                    add.arg(0).arg(*id);
                }
                let _: i64 = add
                    .query_async(connection)
                    .await
                    .map_err(|e| self.map_error(&e))?;
                indexed += ids.len();
            }
            if next == 0 {
                break;
            }
            cursor = next;
        }
        let _: () = redis::cmd("SET")
            .arg(INDEX_BUILT_KEY)
            .arg(1)
            .query_async(connection)
            .await
            .map_err(|e| self.map_error(&e))?;
        tracing::info!(target: "hpd_agent", store = %self.label, indexed, "indexed the stored sessions");
        Ok(())
    }

    fn map_error(&self, error: &RedisError) -> StoreError {
        let message = scrub(error, self.password.as_deref());
        let unavailable = error.is_io_error()
            || error.is_connection_dropped()
            || error.is_connection_refusal()
            || error.is_timeout()
            || error.is_unrecoverable_error();
        StoreError::failure(unavailable, self.label.clone(), message)
    }

    fn ttl_millis(&self) -> u64 {
        self.ttl.map_or(0, |ttl| {
            u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
        })
    }
}

/// A `SCAN MATCH` pattern matching session keys whose id starts with `prefix` literally.
fn glob_prefix(prefix: &str) -> String {
    let mut pattern = String::from(SESSION_PREFIX);
    for c in prefix.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\' | '^' | '-') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('*');
    pattern
}

#[async_trait]
impl SessionStore for RedisSessionStore {
    async fn load(&self, id: &str) -> Result<Option<StoredSession>, StoreError> {
        validate_id(id)?;
        let ((version, text), _): ((Option<String>, Option<String>), bool) = self
            .bounded(
                &format!("loading session '{id}'"),
                self.query(
                    redis::cmd("HMGET")
                        .arg(format!("{SESSION_PREFIX}{id}"))
                        .arg("version")
                        .arg("data"),
                ),
            )
            .await?;
        let corrupt = |reason: String| StoreError::Corrupt {
            session: id.to_owned(),
            reason,
        };
        let (version, text) = match (version, text) {
            (None, None) => return Ok(None),
            (Some(version), Some(text)) => (version, text),
            (None, Some(_)) => return Err(corrupt("the hash has no 'version' field".to_owned())),
            (Some(_), None) => return Err(corrupt("the hash has no 'data' field".to_owned())),
        };
        let version: u64 = version
            .parse()
            .map_err(|_| corrupt(format!("version '{version}' is not a number")))?;
        let state = decode_record(id, &text)?;
        Ok(Some(StoredSession { state, version }))
    }

    async fn save(&self, id: &str, state: &SessionState, expected: u64) -> Result<u64, StoreError> {
        validate_id(id)?;
        let text = encode_record(state);
        let key = format!("{SESSION_PREFIX}{id}");
        let what = format!("saving session '{id}'");
        let (written, _): (i64, bool) = self
            .bounded(
                &what,
                self.query(
                    redis::cmd("EVAL")
                        .arg(SAVE_SCRIPT)
                        .arg(2)
                        .arg(&key)
                        .arg(INDEX_KEY)
                        .arg(expected)
                        .arg(&text)
                        .arg(self.ttl_millis())
                        .arg(id),
                ),
            )
            .await?;
        if written == -1 {
            // An earlier attempt of this very write may have run (before a lost connection, or
            // after a timeout): then the stored record is this write, and it is no conflict.
            let ((version, data), _): ((Option<u64>, Option<String>), bool) = self
                .bounded(
                    &what,
                    self.query(redis::cmd("HMGET").arg(&key).arg("version").arg("data")),
                )
                .await?;
            if version == Some(expected + 1) && data.as_deref() == Some(text.as_str()) {
                return Ok(expected + 1);
            }
        }
        match written {
            -1 => Err(StoreError::conflict(id, expected)),
            -2 => Err(StoreError::Corrupt {
                session: id.to_owned(),
                reason: "the stored version is not a number".to_owned(),
            }),
            version => u64::try_from(version).map_err(|_| StoreError::Backend {
                store: self.label.clone(),
                message: format!("the save script returned {version}"),
            }),
        }
    }

    async fn delete(&self, id: &str) -> Result<bool, StoreError> {
        validate_id(id)?;
        let (deleted, _): (i64, bool) = self
            .bounded(
                &format!("deleting session '{id}'"),
                self.query(
                    redis::cmd("EVAL")
                        .arg(DELETE_SCRIPT)
                        .arg(2)
                        .arg(format!("{SESSION_PREFIX}{id}"))
                        .arg(INDEX_KEY)
                        .arg(id),
                ),
            )
            .await?;
        Ok(deleted > 0)
    }

    async fn list(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        let (low, high) = lex_range(prefix);
        let (ids, _): (Vec<String>, bool) = self
            .bounded(
                "listing sessions",
                self.query(
                    redis::cmd("EVAL")
                        .arg(LIST_SCRIPT)
                        .arg(1)
                        .arg(INDEX_KEY)
                        .arg(low)
                        .arg(high)
                        .arg(SESSION_PREFIX),
                ),
            )
            .await?;
        // Byte order, which for UTF-8 is the order of `str`'s `Ord`: already sorted.
        Ok(ids)
    }
}

/// The `ZRANGEBYLEX` bounds of the ids starting with `prefix`: from `[prefix` (inclusive) to
/// `(prefix` followed by the byte 0xFF (exclusive), a byte no UTF-8 text contains, so every id
/// with the prefix sorts below it. The empty prefix is the whole set (`-` to `+`).
fn lex_range(prefix: &str) -> (Vec<u8>, Vec<u8>) {
    if prefix.is_empty() {
        return (b"-".to_vec(), b"+".to_vec());
    }
    let mut low = b"[".to_vec();
    low.extend_from_slice(prefix.as_bytes());
    let mut high = b"(".to_vec();
    high.extend_from_slice(prefix.as_bytes());
    high.push(0xFF);
    (low, high)
}

#[cfg(test)]
mod tests {
    use super::{glob_prefix, lex_range};

    #[test]
    fn prefixes_are_lexicographic_ranges() {
        assert_eq!(lex_range(""), (b"-".to_vec(), b"+".to_vec()));
        let (low, high) = lex_range("user-1/");
        assert_eq!(low, b"[user-1/");
        assert_eq!(high, b"(user-1/\xff");
    }

    #[test]
    fn glob_characters_are_escaped() {
        assert_eq!(glob_prefix("a*b?[c]"), r"hpd:session:a\*b\?\[c\]*");
        assert_eq!(glob_prefix(""), "hpd:session:*");
    }
}
