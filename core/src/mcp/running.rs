//! The calls of ours each server is running, so that a question the server asks (an
//! elicitation) can name the tool call it comes from. MCP itself ties a server's request to
//! none of the client's: over stdio nothing on the wire links them, and over HTTP only the
//! stream a request arrives on does, which rmcp does not hand the handler (its
//! `RequestContext` carries the server's request id, `_meta` and cancel token only). What is
//! certain is which calls were running when the question came: with exactly one call running
//! on that server, the question is asked within it (a server's own question outside any call,
//! arriving during one, would be shown within that call — the server's own, so nothing
//! misleading); with several, or none, it names no call.

use std::sync::{Arc, Mutex};

/// The ids (the client's `toolCallId`s) of the calls running on one server.
#[derive(Debug, Default)]
pub struct Running {
    calls: Mutex<Vec<String>>,
}

/// A call running on the server, until this is dropped.
pub struct Entered {
    running: Arc<Running>,
    id: String,
}

impl Running {
    /// Counts the call `id` as running until the returned guard is dropped.
    pub fn enter(self: &Arc<Self>, id: &str) -> Entered {
        self.lock().push(id.to_string());
        Entered {
            running: self.clone(),
            id: id.to_string(),
        }
    }

    /// The call a question of the server's belongs to: the one running, when only one is.
    pub fn only(&self) -> Option<String> {
        match self.lock().as_slice() {
            [id] => Some(id.clone()),
            _ => None,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<String>> {
        self.calls.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Entered {
    fn drop(&mut self) {
        let mut calls = self.running.lock();
        if let Some(at) = calls.iter().position(|id| *id == self.id) {
            calls.remove(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_lone_call_claims_the_question() {
        let running = Arc::new(Running::default());
        assert_eq!(running.only(), None);
        let first = running.enter("tc_1");
        assert_eq!(running.only().as_deref(), Some("tc_1"));
        let second = running.enter("tc_2");
        assert_eq!(
            running.only(),
            None,
            "two calls: which one asked is unknown"
        );
        drop(first);
        assert_eq!(running.only().as_deref(), Some("tc_2"));
        drop(second);
        assert_eq!(running.only(), None);
    }
}
