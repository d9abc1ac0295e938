//! The diagnostics a language server pushed (`textDocument/publishDiagnostics`), by document,
//! and waiting for the push that describes a given content.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::exchange::{CallError, Exchange, Reply, until_changed};

/// Diagnostics a server pushed for one document.
#[derive(Clone)]
pub struct Published {
    pub version: Option<i64>,
    /// The connection's count of pushes when this one arrived.
    pub seq: u64,
    pub diagnostics: Value,
}

#[derive(Default)]
pub struct Pushed {
    by_uri: Mutex<HashMap<String, Published>>,
    pushes: AtomicU64,
    /// Woken by each push and by the end of the connection.
    changed: Notify,
}

impl Pushed {
    fn by_uri(&self) -> std::sync::MutexGuard<'_, HashMap<String, Published>> {
        self.by_uri.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Keeps a `publishDiagnostics` notification's content.
    pub fn record(&self, params: &Value) {
        let Some(uri) = params["uri"].as_str() else {
            return;
        };
        let seq = self.pushes.fetch_add(1, Ordering::AcqRel) + 1;
        let published = Published {
            version: params["version"].as_i64(),
            seq,
            diagnostics: params["diagnostics"].clone(),
        };
        self.by_uri().insert(uri.to_owned(), published);
        self.changed.notify_waiters();
    }

    /// How many pushes came so far.
    pub fn count(&self) -> u64 {
        self.pushes.load(Ordering::Acquire)
    }

    /// Drops what was pushed for `uri` (a closed document: a reopened one starts again at
    /// version 1, and old pushes must not pass for it).
    pub fn forget(&self, uri: &str) {
        self.by_uri().remove(uri);
    }

    /// Wakes the waiters: the connection ended.
    pub fn ended(&self) {
        self.changed.notify_waiters();
    }

    /// Every document the server pushed diagnostics for.
    pub fn all(&self) -> HashMap<String, Published> {
        self.by_uri().clone()
    }

    fn one(&self, uri: &str) -> Option<Published> {
        self.by_uri().get(uri).cloned()
    }

    /// Waits until the server pushes diagnostics for `version` of `uri` (or, from a server
    /// that leaves versions out, any push after the `pushes`th), or `exchange` ends.
    pub async fn wait_for(
        &self,
        exchange: &Exchange,
        uri: &str,
        (version, pushes): (i32, u64),
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Reply {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let changed = self.changed.notified();
            let current = self.one(uri).filter(|published| {
                published
                    .version
                    .map_or(published.seq > pushes, |v| v >= i64::from(version))
            });
            if let Some(published) = current {
                return Ok(published.diagnostics);
            }
            if exchange.ended().is_some() {
                return Err(exchange.gone());
            }
            until_changed(changed, deadline, CallError::Timeout(timeout), cancel).await?;
        }
    }
}
