//! The engine's `Host`: hands every outbound frame to JS through a threadsafe function.
//!
//! `deliver` runs on the engine's one delivery thread. It must never wait for the JS thread:
//! the JS thread may itself be waiting for the delivery thread to finish (a `close` in
//! progress). So calls are `NonBlocking` into an unbounded queue; they never fail with
//! `QueueFull`, and N-API runs queued calls in FIFO order, which keeps the engine's frame
//! order intact on the JS side.

use hearth_core::Host;
use napi::Status;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};

/// `(frame: string | null) => void` on the JS thread. `null` is the end marker: the engine
/// has closed and no frame follows it.
///
/// Strong (`Weak = false`): while the engine is open, the process stays alive to receive its
/// frames, like an open socket. Releasing it (when the host is dropped) lets Node exit.
pub type FrameFn = ThreadsafeFunction<Option<String>, (), Option<String>, Status, false>;

pub struct JsHost {
    frames: FrameFn,
}

impl JsHost {
    pub fn new(frames: FrameFn) -> Self {
        JsHost { frames }
    }
}

impl Host for JsHost {
    fn deliver(&self, frame: &str) {
        // Fails only when Node is tearing the environment down; then nobody is left to
        // receive the frame.
        let _ = self.frames.call(
            Some(frame.to_owned()),
            ThreadsafeFunctionCallMode::NonBlocking,
        );
    }
}

/// The engine drops its host once its delivery thread has ended, i.e. after the last
/// `deliver`. Queueing the end marker here puts it behind every frame, so JS learns that the
/// engine is closed only after it has received everything. Dropping `frames` right after
/// releases the threadsafe function: once the queue drains, it no longer holds Node open.
impl Drop for JsHost {
    fn drop(&mut self) {
        let _ = self
            .frames
            .call(None, ThreadsafeFunctionCallMode::NonBlocking);
    }
}
