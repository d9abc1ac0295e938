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

/// The calls running on one server.
#[derive(Debug, Default)]
pub struct Running {
    calls: Mutex<Vec<RunningCall>>,
}

/// A call running on a server, as a question of the server's is attributed to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunningCall {
    /// The client's `toolCallId`.
    pub id: String,
    /// Where a question within it is asked, when not on the session's own id: a
    /// subagent's session (`tools::User::asks_on`).
    pub asks_on: Option<String>,
}

/// A call running on the server, until this is dropped.
pub struct Entered {
    running: Arc<Running>,
    id: String,
}

impl Running {
    /// Counts the call `id` (whose questions are asked on `asks_on`) as running until the
    /// returned guard is dropped.
    pub fn enter(self: &Arc<Self>, id: &str, asks_on: Option<&str>) -> Entered {
        self.lock().push(RunningCall {
            id: id.to_string(),
            asks_on: asks_on.map(str::to_string),
        });
        Entered {
            running: self.clone(),
            id: id.to_string(),
        }
    }

    /// The call a question of the server's belongs to: the one running, when only one is.
    pub fn only(&self) -> Option<RunningCall> {
        match self.lock().as_slice() {
            [call] => Some(call.clone()),
            _ => None,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<RunningCall>> {
        self.calls.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Entered {
    fn drop(&mut self) {
        let mut calls = self.running.lock();
        if let Some(at) = calls.iter().position(|call| call.id == self.id) {
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
        let first = running.enter("tc_1", None);
        assert_eq!(running.only().map(|call| call.id).as_deref(), Some("tc_1"));
        let second = running.enter("tc_2", Some("sub_1"));
        assert_eq!(
            running.only(),
            None,
            "two calls: which one asked is unknown"
        );
        drop(first);
        let only = running.only().unwrap();
        assert_eq!(
            (only.id.as_str(), only.asks_on.as_deref()),
            ("tc_2", Some("sub_1"))
        );
        drop(second);
        assert_eq!(running.only(), None);
    }
}
