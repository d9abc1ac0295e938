//! The last `session/list` answer, kept with the store's version it was read at: the same
//! request again, with nothing committed since (by this engine or another process on the
//! same file), is answered with it — no query, no rows, no serializing. An editor's session
//! picker asks for the same page over and over; any commit makes the next request read
//! afresh.

use std::sync::{Arc, Mutex};

use serde_json::value::RawValue;

use crate::store::Version;

/// What a `session/list` asked for: its working directory (as stored) and cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListKey {
    pub cwd: Option<String>,
    pub cursor: Option<String>,
}

#[derive(Default)]
pub struct ListCache {
    last: Mutex<Option<Entry>>,
}

struct Entry {
    key: ListKey,
    version: Version,
    answer: Arc<RawValue>,
}

impl ListCache {
    /// The answer to `key` if it was read at `version`.
    pub fn get(&self, key: &ListKey, version: Version) -> Option<Arc<RawValue>> {
        let last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        last.as_ref()
            .filter(|e| e.version == version && e.key == *key)
            .map(|e| e.answer.clone())
    }

    /// Keeps `answer`, read at `version`, in place of the last one.
    pub fn put(&self, key: ListKey, version: Version, answer: Arc<RawValue>) {
        let entry = Entry {
            key,
            version,
            answer,
        };
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(entry);
    }
}
