//! Messages the user sends while a turn runs (`_session/steering`): held until the turn's
//! next model request, which carries them after the current tool results — never aborting a
//! tool mid-flight. What a turn did not get to send is handed back when it ends, so the
//! caller logs it and the next prompt's context has it: a steered message is never lost.
//!
//! The request that carries them logs each as a prompt of its own (replayed in place), after
//! the current tool results; one that arrives while the model writes its final answer gets one
//! more step, and one that arrives while a command runs, a step after it (`agent/mod.rs`). What a cancelled or failed turn did not send is logged when it
//! ends (`session/turns.rs`).
//!
//! Tests: end to end in `core/tests/steering.rs`.

use std::sync::Mutex;

use crate::chat::Prompt;

#[derive(Default)]
pub struct Steering {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    running: bool,
    pending: Vec<Prompt>,
}

impl Steering {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A turn of the session starts.
    pub fn begin(&self) {
        self.state().running = true;
    }

    /// The turn ended; returns what it did not send, oldest first.
    pub fn end(&self) -> Vec<Prompt> {
        let mut state = self.state();
        state.running = false;
        std::mem::take(&mut state.pending)
    }

    /// Hands `prompt` to the running turn, or back when no turn runs.
    pub fn offer(&self, prompt: Prompt) -> Result<(), Prompt> {
        let mut state = self.state();
        if !state.running {
            return Err(prompt);
        }
        state.pending.push(prompt);
        Ok(())
    }

    /// What arrived since the last look, oldest first.
    pub fn take(&self) -> Vec<Prompt> {
        std::mem::take(&mut self.state().pending)
    }

    pub fn has_pending(&self) -> bool {
        !self.state().pending.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt() -> Prompt {
        Prompt { blocks: Vec::new() }
    }

    #[test]
    fn only_a_running_turn_takes_messages_and_none_is_lost() {
        let steering = Steering::default();
        assert!(steering.offer(prompt()).is_err(), "no turn runs");
        steering.begin();
        assert!(steering.offer(prompt()).is_ok());
        assert!(steering.offer(prompt()).is_ok());
        assert!(steering.has_pending());
        assert_eq!(steering.take().len(), 2);
        assert!(steering.offer(prompt()).is_ok());
        assert_eq!(steering.end().len(), 1, "the unsent one comes back");
        assert!(steering.offer(prompt()).is_err());
    }
}
