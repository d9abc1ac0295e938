//! Requests the client sent us that are still being served, each with the token that
//! `$/cancel_request` fires.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

#[derive(Default)]
pub struct Inflight {
    tokens: Mutex<HashMap<String, CancellationToken>>,
}

impl Inflight {
    /// Registers a request; `None` if a request with the same id is still in flight.
    pub fn begin(&self, id: &Value) -> Option<CancellationToken> {
        let token = CancellationToken::new();
        let mut tokens = self.lock();
        match tokens.entry(key(id)) {
            std::collections::hash_map::Entry::Occupied(_) => None,
            std::collections::hash_map::Entry::Vacant(slot) => Some(slot.insert(token).clone()),
        }
    }

    pub fn end(&self, id: &Value) {
        self.lock().remove(&key(id));
    }

    /// Fires the request's token; unknown or finished ids are ignored, as the spec allows.
    pub fn cancel(&self, id: &Value) {
        if let Some(token) = self.lock().get(&key(id)) {
            token.cancel();
        }
    }

    pub fn cancel_all(&self) {
        for token in self.lock().values() {
            token.cancel();
        }
    }

    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, CancellationToken>> {
        self.tokens.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// `1` and `"1"` are different ids; their JSON text keeps them apart.
fn key(id: &Value) -> String {
    id.to_string()
}
