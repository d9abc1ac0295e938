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

use crate::question::Waiting;

/// The calls running on one server.
#[derive(Default)]
pub struct Running {
    calls: Mutex<Vec<RunningCall>>,
}

/// A call running on a server, as a question of the server's is attributed to it.
#[derive(Clone)]
pub struct RunningCall {
    /// The client's `toolCallId`.
    pub id: String,
    /// Where a question within it is asked, when not on the session's own id: a
    /// subagent's session (`tools::User::asks_on`).
    pub asks_on: Option<String>,
    /// Who is told while such a question waits: the subagent that made the call
    /// (`tools::User::waits`).
    pub waits: Option<Arc<dyn Waiting>>,
}

/// A call running on the server, until this is dropped.
pub struct Entered {
    running: Arc<Running>,
    id: String,
}

impl Running {
    /// Counts `call` as running until the returned guard is dropped.
    pub fn enter(self: &Arc<Self>, call: RunningCall) -> Entered {
        let id = call.id.clone();
        self.lock().push(call);
        Entered {
            running: self.clone(),
            id,
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

    fn call(id: &str, asks_on: Option<&str>) -> RunningCall {
        RunningCall {
            id: id.to_string(),
            asks_on: asks_on.map(str::to_string),
            waits: None,
        }
    }

    fn only(running: &Running) -> Option<(String, Option<String>)> {
        running.only().map(|call| (call.id, call.asks_on))
    }

    #[test]
    fn only_a_lone_call_claims_the_question() {
        let running = Arc::new(Running::default());
        assert_eq!(only(&running), None);
        let first = running.enter(call("tc_1", None));
        assert_eq!(only(&running), Some(("tc_1".into(), None)));
        let second = running.enter(call("tc_2", Some("sub_1")));
        assert_eq!(
            only(&running),
            None,
            "two calls: which one asked is unknown"
        );
        drop(first);
        assert_eq!(only(&running), Some(("tc_2".into(), Some("sub_1".into()))));
        drop(second);
        assert_eq!(only(&running), None);
    }
}
