//! [`MemorySessionStore`]: sessions in a map in the process.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;

use super::{SessionStore, StoreError, StoredSession, decode_record, encode_record, validate_id};
use crate::session::SessionState;

/// Sessions kept in the process, as encoded records (so what it accepts and rejects matches the
/// other backends). Cheap to create; clone the `Arc` it is used through to share it.
///
/// ```
/// use std::sync::Arc;
/// use hpd_agent::store::{MemorySessionStore, SessionStore};
///
/// let store: Arc<dyn SessionStore> = Arc::new(MemorySessionStore::new());
/// # drop(store);
/// ```
#[derive(Debug, Default)]
pub struct MemorySessionStore {
    records: Mutex<BTreeMap<String, (u64, String)>>,
}

impl MemorySessionStore {
    /// An empty store.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use hpd_agent::store::{MemorySessionStore, SessionStore};
    ///
    /// let store: Arc<dyn SessionStore> = Arc::new(MemorySessionStore::new());
    /// # drop(store);
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores a raw record text at `version`, as another program writing to a shared store
    /// might; it is decoded (and possibly rejected as [`StoreError::Corrupt`]) when loaded.
    /// Meant for tests of decoding errors.
    ///
    /// ```
    /// use hpd_agent::store::{MemorySessionStore, SessionStore, StoreError};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let store = MemorySessionStore::new();
    /// store.insert_raw("s", 1, "not json");
    /// assert!(matches!(store.load("s").await, Err(StoreError::Corrupt { .. })));
    /// assert_eq!(store.raw("s"), Some((1, "not json".to_owned())));
    /// # }
    /// ```
    pub fn insert_raw(&self, id: &str, version: u64, text: &str) {
        self.lock()
            .insert(id.to_owned(), (version, text.to_owned()));
    }

    /// The raw record of `id` and its version, as stored.
    ///
    /// ```
    /// use hpd_agent::agent::SessionState;
    /// use hpd_agent::store::{MemorySessionStore, SessionStore};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), hpd_agent::store::StoreError> {
    /// let store = MemorySessionStore::new();
    /// store.save("s", &SessionState::default(), 0).await?;
    /// assert_eq!(store.raw("s"), Some((1, r#"{"format":1,"state":{"history":[]}}"#.to_owned())));
    /// assert_eq!(store.raw("other"), None);
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn raw(&self, id: &str) -> Option<(u64, String)> {
        self.lock().get(id).cloned()
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, (u64, String)>> {
        // The map is never left half-updated, so a panic elsewhere does not invalidate it.
        self.records.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[async_trait]
impl SessionStore for MemorySessionStore {
    async fn load(&self, id: &str) -> Result<Option<StoredSession>, StoreError> {
        validate_id(id)?;
        let Some((version, text)) = self.raw(id) else {
            return Ok(None);
        };
        let state = decode_record(id, &text)?;
        Ok(Some(StoredSession { state, version }))
    }

    async fn save(&self, id: &str, state: &SessionState, expected: u64) -> Result<u64, StoreError> {
        validate_id(id)?;
        let text = encode_record(state);
        let mut records = self.lock();
        let current = records.get(id).map_or(0, |(version, _)| *version);
        if current != expected {
            return Err(StoreError::conflict(id, expected));
        }
        records.insert(id.to_owned(), (expected + 1, text));
        Ok(expected + 1)
    }

    async fn delete(&self, id: &str) -> Result<bool, StoreError> {
        validate_id(id)?;
        Ok(self.lock().remove(id).is_some())
    }

    async fn list(&self, prefix: &str) -> Result<Vec<String>, StoreError> {
        Ok(self
            .lock()
            .range(prefix.to_owned()..)
            .take_while(|(id, _)| id.starts_with(prefix))
            .map(|(id, _)| id.clone())
            .collect())
    }
}
