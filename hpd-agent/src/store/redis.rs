//! [`RedisSessionStore`]: sessions as Redis hashes, optionally expiring.

use std::collections::BTreeSet;
use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Client, RedisError};

use super::{
    SCHEMA_VERSION, SessionStore, StoreError, StoredSession, decode_record, encode_record,
    redact_url, scrub, url_password, validate_id,
};
use crate::session::SessionState;

/// How long connecting and each command may take.
const TIMEOUT: Duration = Duration::from_secs(5);

/// The key of a session is this prefix followed by its id.
const SESSION_PREFIX: &str = "hpd:session:";

/// The key holding the schema version.
const SCHEMA_KEY: &str = "hpd:store:schema";

/// Compare-and-set of one session hash. `KEYS[1]`: the key; `ARGV`: expected version, record
/// text, time to live in milliseconds (0: none). Returns the new version, -1 on a version
/// mismatch, -2 when the stored version is not a number.
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
return current + 1
";

/// Sessions in Redis (feature `redis`): one hash per session (`hpd:session:{id}` with fields
/// `version` and `data`), written by a Lua script that checks the expected version, so a save
/// is atomic.
///
/// With [`with_ttl`](Self::with_ttl) every save also sets the session to expire after that
/// long without saves. The store keeps one multiplexed connection and opens a new one when it
/// is lost: while the server is down calls fail with [`StoreError::Unavailable`]. Sessions
/// survive a server restart only when the server persists its data (append-only file or
/// snapshots). [`list`](SessionStore::list) walks the database's keys with `SCAN`, so it costs
/// time in proportion to all keys of the database, not only the sessions. The connection is not
/// encrypted (no TLS): use it on loopback or a private network.
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
    /// The live connection and its number (connections are numbered as they are opened).
    connection: tokio::sync::Mutex<(u64, Option<MultiplexedConnection>)>,
}

impl fmt::Debug for RedisSessionStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisSessionStore")
            .field("url", &self.label)
            .field("ttl", &self.ttl)
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
    /// # async fn main() -> Result<(), hpd_agent::StoreError> {
    /// let store = Arc::new(RedisSessionStore::connect("redis://127.0.0.1:6379/0").await?);
    /// # drop(store);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let label = format!("redis:{}", redact_url(url));
        let client = Client::open(url).map_err(|e| {
            StoreError::Config(format!(
                "invalid Redis URL '{}': {}",
                redact_url(url),
                scrub(&e, url_password(url))
            ))
        })?;
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
            connection: tokio::sync::Mutex::new((0, None)),
        };
        store.connection().await?;
        Ok(store)
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
    /// # async fn main() -> Result<(), hpd_agent::StoreError> {
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
    /// # async fn main() -> Result<(), hpd_agent::StoreError> {
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
    async fn connection(&self) -> Result<(MultiplexedConnection, u64, bool), StoreError> {
        let mut slot = self.connection.lock().await;
        if let Some(connection) = slot.1.as_ref() {
            return Ok((connection.clone(), slot.0, true));
        }
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(TIMEOUT))
            .set_response_timeout(Some(TIMEOUT));
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

/// A `SCAN MATCH` pattern matching keys that start with `prefix` literally.
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
            .query(
                redis::cmd("HMGET")
                    .arg(format!("{SESSION_PREFIX}{id}"))
                    .arg("version")
                    .arg("data"),
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
        let (written, retried): (i64, bool) = self
            .query(
                redis::cmd("EVAL")
                    .arg(SAVE_SCRIPT)
                    .arg(1)
                    .arg(&key)
                    .arg(expected)
                    .arg(&text)
                    .arg(self.ttl_millis()),
            )
            .await?;
        if written == -1 && retried {
            // The first attempt may have run before the connection was lost: then the stored
            // record is this very write.
            let ((version, data), _): ((Option<u64>, Option<String>), bool) = self
                .query(redis::cmd("HMGET").arg(&key).arg("version").arg("data"))
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
            .query(redis::cmd("DEL").arg(format!("{SESSION_PREFIX}{id}")))
            .await?;
        Ok(deleted > 0)
    }

    async fn list(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        let pattern = glob_prefix(prefix);
        let mut ids = BTreeSet::new();
        let mut cursor: u64 = 0;
        loop {
            let ((next, keys), _): ((u64, Vec<String>), bool) = self
                .query(
                    redis::cmd("SCAN")
                        .arg(cursor)
                        .arg("MATCH")
                        .arg(&pattern)
                        .arg("COUNT")
                        .arg(1000),
                )
                .await?;
            ids.extend(
                keys.iter()
                    .filter_map(|key| key.strip_prefix(SESSION_PREFIX))
                    .filter(|id| id.starts_with(prefix))
                    .map(str::to_owned),
            );
            if next == 0 {
                break;
            }
            cursor = next;
        }
        Ok(ids.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::glob_prefix;

    #[test]
    fn glob_characters_are_escaped() {
        assert_eq!(glob_prefix("a*b?[c]"), r"hpd:session:a\*b\?\[c\]*");
        assert_eq!(glob_prefix(""), "hpd:session:*");
    }
}
