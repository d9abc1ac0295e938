//! Whether a server says it is done loading its project. rust-analyzer answers every request
//! from its first second, but until it has loaded the cargo workspace and indexed it, its
//! diagnostics describe an empty project ("0 errors"); it tells when it is ready through
//! `experimental/serverStatus` (`quiescent: true`), which Hearth asks for with the client
//! capability `experimental.serverStatusNotification` (the name rust-analyzer reads). Its
//! first status (`quiescent: false`) arrives before the answer to any request made after the
//! handshake, so a busy server is known to be busy by the time its first answer is read. A
//! server that never sends one is ready whenever it answers, as LSP has it.

use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::exchange::{CallError, Exchange, until_changed};

#[derive(Default)]
pub struct Readiness {
    /// The last status's `quiescent`; `None` until the server sends one.
    quiescent: Mutex<Option<bool>>,
    /// Woken by each status and by the end of the connection.
    changed: Notify,
}

impl Readiness {
    /// Keeps an `experimental/serverStatus` notification's news.
    pub fn record(&self, params: &Value) {
        // A status without `quiescent` says nothing about loading: taken as ready.
        let quiescent = params["quiescent"].as_bool().unwrap_or(true);
        *self.quiescent.lock().unwrap_or_else(|p| p.into_inner()) = Some(quiescent);
        self.changed.notify_waiters();
    }

    /// Whether the server last said it is still loading.
    pub fn busy(&self) -> bool {
        *self.quiescent.lock().unwrap_or_else(|p| p.into_inner()) == Some(false)
    }

    /// Wakes the waiters: the connection ended.
    pub fn ended(&self) {
        self.changed.notify_waiters();
    }

    /// Waits while the server says it is loading, until `deadline` (then `Loading`), the
    /// end of `exchange`, or `cancel`.
    pub async fn wait(
        &self,
        exchange: &Exchange,
        (deadline, limit): (Instant, Duration),
        cancel: &CancellationToken,
    ) -> Result<(), CallError> {
        loop {
            let changed = self.changed.notified();
            if !self.busy() {
                return Ok(());
            }
            if exchange.ended().is_some() {
                return Err(exchange.gone());
            }
            until_changed(changed, deadline, CallError::Loading(limit), cancel).await?;
        }
    }
}
