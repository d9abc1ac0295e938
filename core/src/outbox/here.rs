//! Frames handed to the host on the thread calling `Engine::send`, with no thread hop.
//!
//! Through the delivery thread, the answer to a request served at once costs two cross-thread
//! wake-ups (the caller's thread wakes the delivery thread, whose host callback wakes the
//! caller), which on a VM are most of an in-process round trip. So a frame produced inside
//! `send`, on the caller's thread, is offered to the host right there (`Host::deliver_here`)
//! when that cannot change what the host sees:
//! - nothing is ahead of it: no item queued, no batch being committed or delivered, so it
//!   keeps the engine's order and commit-before-deliver (an uncommitted write is an item);
//! - no other hand-over is running: the delivery thread waits for this one to end before it
//!   takes a batch, so the host never gets two frames at once, and a `send` from inside the
//!   host's callback queues its answer behind the one being handed over;
//! - the thread is not inside any host's callback: a `send` from there, to this engine or
//!   another, queues its answer, so no callback ever runs nested in another.
//!
//! Only frames produced on the thread inside `send` qualify (`CallerScope`, a thread-local
//! that names the engine): a frame made on a runtime worker must not run host code there.
//! Why "delivered before `send` returns" rather than "returned from `send`": every host
//! already has the callback that takes a frame, so the contract stays one callback, and the
//! core, not each binding, decides when skipping the thread is safe. A host whose callback
//! cannot run on the caller's thread declines (`deliver_here` returns false; Node's takes
//! the frame and returns it from its `send` instead, see bindings/node/src/host.rs).

use std::cell::Cell;
use std::sync::Arc;
use std::thread;

use super::{Outbox, deliver_with};

thread_local! {
    /// The queue of the engine whose `send` runs on this thread (its address), or 0.
    static SENDING: Cell<usize> = const { Cell::new(0) };
    /// Whether this thread is running a host's callback, any engine's. A frame made there (a
    /// send from inside the callback, to its own engine or another) is queued: handed over,
    /// it would run a host's callback nested inside the running one.
    static IN_CALLBACK: Cell<bool> = const { Cell::new(false) };
}

/// Runs one of a host's callbacks with this thread marked as inside it.
pub(super) fn in_callback<T>(callback: impl FnOnce() -> T) -> T {
    let outer = IN_CALLBACK.with(|inside| inside.replace(true));
    let result = callback();
    IN_CALLBACK.with(|inside| inside.set(outer));
    result
}

/// While alive, frames this thread produces for the engine are offered to its host here.
/// Restores the previous scope when dropped (a host's callback may send to another engine).
pub struct CallerScope {
    previous: usize,
}

impl Drop for CallerScope {
    fn drop(&mut self) {
        SENDING.with(|sending| sending.set(self.previous));
    }
}

impl Outbox {
    /// Marks this thread as inside `Engine::send` of this engine until the scope drops.
    pub fn caller_scope(&self) -> CallerScope {
        let previous = SENDING.with(|sending| sending.replace(self.id()));
        CallerScope { previous }
    }

    /// Whether this thread is handing the host a frame right now: it is inside the host's
    /// callback, where `Engine::close` would wait for itself.
    pub fn is_handing_here(&self) -> bool {
        self.queue.lock().handing_here == Some(thread::current().id())
    }

    /// Offers `frame` to the host on this thread when that is allowed (see the module doc);
    /// gives it back when it must be queued instead.
    pub(super) fn hand_here(&self, frame: String) -> Option<String> {
        if SENDING.with(Cell::get) != self.id() || IN_CALLBACK.with(Cell::get) {
            return Some(frame);
        }
        let host = {
            let mut state = self.queue.lock();
            let clear = state.items.is_empty() && !state.busy && state.handing_here.is_none();
            match state.host.clone() {
                Some(host) if clear && !state.ended => {
                    state.handing_here = Some(thread::current().id());
                    host
                }
                _ => return Some(frame),
            }
        };
        let taken = deliver_with(|| host.deliver_here(&frame)).unwrap_or(true);
        // Dropped before the hand-over ends: the delivery thread, which may end right after,
        // must drop the host's last reference (the C host's `free_user_data` runs there).
        drop(host);
        self.end_hand_over();
        (!taken).then_some(frame)
    }

    fn end_hand_over(&self) {
        let mut state = self.queue.lock();
        state.handing_here = None;
        let wake = state.sleeping && !state.items.is_empty();
        drop(state);
        if wake {
            self.queue.arrived.notify_one();
        }
    }

    fn id(&self) -> usize {
        Arc::as_ptr(&self.queue) as usize
    }
}
