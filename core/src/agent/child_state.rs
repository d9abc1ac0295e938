//! A subagent's state as a client that shows child sessions is told it
//! (`SessionEvent::SubagentState`): running from its start, `requires_action` while any
//! permission request or question of its calls waits for the user, idle with its stop reason
//! at its end. Its calls run in parallel, so the waits are counted: the state goes back to
//! running when the last one is answered. Owned and shared (`question::Waiting`), because a
//! wait may be held where the child's turn is not — an MCP server's question, which can
//! outlive the call it came in — and a wait that ends after the child's does is not reported.

use std::sync::{Arc, Mutex};

use crate::question::Waiting;
use crate::session::Session;
use crate::session::events::{ChildLink, ChildState, EventSink, SessionEvent, Visibility};

pub struct ChildStates {
    /// The delegating session, whose sink the child's events go through.
    parent: Arc<Session>,
    link: ChildLink,
    /// The `task` call's label.
    title: String,
    /// The waits open now; `None` once the child ended.
    waits: Mutex<Option<usize>>,
}

impl ChildStates {
    /// Tells the client that the child `link` runs.
    pub fn start(parent: Arc<Session>, link: ChildLink, title: String) -> Arc<ChildStates> {
        let states = Arc::new(ChildStates {
            parent,
            link,
            title,
            waits: Mutex::new(Some(0)),
        });
        states.report(ChildState::Running);
        states
    }

    /// Tells the client how the child ended; nothing is reported after.
    pub fn end(&self, state: ChildState) {
        let mut waits = self.waits();
        *waits = None;
        self.report(state);
    }

    fn waits(&self) -> std::sync::MutexGuard<'_, Option<usize>> {
        self.waits.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn report(&self, state: ChildState) {
        let update = SessionEvent::SubagentState {
            link: self.link.clone(),
            title: self.title.clone(),
            state,
        };
        self.parent.emit(update, Visibility::Transient);
    }
}

impl Waiting for ChildStates {
    fn waiting(&self, waiting: bool) {
        // Held while reporting, so that two waits ending and starting at once are reported
        // in the order they were counted.
        let mut waits = self.waits();
        let Some(open) = waits.as_mut() else {
            return;
        };
        let (now, changed) = counted(*open, waiting);
        *open = now;
        if let Some(state) = changed {
            self.report(state);
        }
    }
}

/// The waits open after one starts (`waiting`) or ends, with `open` open before, and the
/// state to report when it changes.
fn counted(open: usize, waiting: bool) -> (usize, Option<ChildState>) {
    match (open, waiting) {
        (0, true) => (1, Some(ChildState::RequiresAction)),
        (1, false) => (0, Some(ChildState::Running)),
        (open, true) => (open + 1, None),
        (open, false) => (open.saturating_sub(1), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_changes_with_the_first_wait_and_the_last_answer_only() {
        let mut open = 0;
        let mut reported = Vec::new();
        for waiting in [true, true, false, false, false, true] {
            let (now, state) = counted(open, waiting);
            open = now;
            reported.extend(state);
        }
        assert_eq!(
            reported,
            [
                ChildState::RequiresAction,
                ChildState::Running,
                ChildState::RequiresAction
            ]
        );
        assert_eq!(open, 1);
    }
}
