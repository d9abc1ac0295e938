//! The engine's `Host`: hands every outbound frame to JS through a threadsafe function, except
//! an answer made inside `send`, which `send` returns.
//!
//! `deliver` runs on the engine's one delivery thread. It must never wait for the JS thread:
//! the JS thread may itself be waiting for the delivery thread to finish (a `close` in
//! progress). So calls are `NonBlocking` into an unbounded queue; they never fail with
//! `QueueFull`, and N-API runs queued calls in FIFO order, which keeps the engine's frame
//! order intact on the JS side.
//!
//! `deliver_here` runs on the JS thread, inside `NativeEngine::send`, where JS cannot be called
//! (there is no `Env` in the engine's callback). So it keeps the frame for `send` to return,
//! and the JS wrapper (`engine.js`) hands it to `onFrame` in a microtask: the answer skips the
//! delivery thread, the threadsafe function and the event loop's wake-up. It must not
//! overtake a frame the delivery thread has already posted and JS has not yet received: those
//! are counted (`posted`), and while any is, the answer is declined and goes the slow way,
//! behind them. Nothing can be posted while `deliver_here` runs (the engine's delivery
//! thread waits for it), and the count only falls on the JS thread, so the check is exact.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use hearth_core::Host;
use napi::Status;
use napi::bindgen_prelude::Function;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};

/// `(frame: string | null) => void` on the JS thread. `null` is the end marker: the engine
/// has closed and no frame follows it.
///
/// Strong (`Weak = false`): while the engine is open, the process stays alive to receive its
/// frames, like an open socket. Releasing it (when the host is dropped) lets Node exit.
type FrameFn = ThreadsafeFunction<Option<String>, (), Option<String>, Status, false>;

pub struct JsHost {
    frames: FrameFn,
    /// Frames posted to `frames` whose JS call has not begun yet.
    posted: Arc<AtomicUsize>,
    answer: Arc<Answer>,
}

/// The answer `deliver_here` took during the `send` running now, for `send` to return.
/// Shared with `NativeEngine` rather than the whole host: the engine must stay the host's
/// only owner, so that dropping it queues the end marker when the engine closes.
#[derive(Default)]
pub struct Answer(Mutex<Option<String>>);

impl Answer {
    /// The answer taken on this thread during the last `Engine::send`, if any.
    pub fn take(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

impl JsHost {
    /// The host, and where it leaves the answers `send` returns.
    pub fn new(on_frame: Function<Option<String>, ()>) -> napi::Result<(Self, Arc<Answer>)> {
        let posted = Arc::new(AtomicUsize::new(0));
        let received = posted.clone();
        let frames = on_frame
            .build_threadsafe_function::<Option<String>>()
            .weak::<false>()
            .callee_handled::<false>()
            .build_callback(move |call| {
                // On the JS thread, right before the call into JS.
                received.fetch_sub(1, Ordering::AcqRel);
                Ok(call.value)
            })?;
        let answer = Arc::new(Answer::default());
        let host = JsHost {
            frames,
            posted,
            answer: answer.clone(),
        };
        Ok((host, answer))
    }
}

impl Host for JsHost {
    fn deliver(&self, frame: &str) {
        self.posted.fetch_add(1, Ordering::AcqRel);
        let status = self.frames.call(
            Some(frame.to_owned()),
            ThreadsafeFunctionCallMode::NonBlocking,
        );
        // Fails only when Node is tearing the environment down; then nobody is left to
        // receive the frame.
        if status != Status::Ok {
            self.posted.fetch_sub(1, Ordering::AcqRel);
        }
    }

    fn deliver_here(&self, frame: &str) -> bool {
        if self.posted.load(Ordering::Acquire) > 0 {
            return false;
        }
        let mut answer = self.answer.0.lock().unwrap_or_else(|p| p.into_inner());
        // One answer per `send`; a second one (there is none today) goes the slow way, after
        // the first, which JS receives before any frame of the threadsafe function.
        if answer.is_some() {
            return false;
        }
        *answer = Some(frame.to_owned());
        true
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
