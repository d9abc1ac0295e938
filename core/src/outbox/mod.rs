//! The outbox: the engine's one delivery thread, which is also the store's one writer.
//!
//! Every outbound frame and every store write passes through one FIFO queue. The thread
//! drains what has accumulated, commits the batch's writes in one transaction, then calls
//! `Host::deliver` for each frame in order. Hence:
//! - frames reach the host in the order the engine produced them, never concurrently;
//! - a frame is delivered only after the events it announces are committed, so whatever
//!   the client saw survives a crash;
//! - async workers never wait on SQLite — they only push onto the queue.
//!
//! The queue is a mutex-guarded deque and a condition variable rather than a channel: the
//! thread takes a whole batch per lock, and a producer pays for a wake-up only when the
//! thread is actually asleep.
//!
//! The queue exists before its thread (`Outbox::new`, then `start` once the engine's store is
//! open: `Engine::ready`), so a prepared engine can answer its first frame with neither.
//!
//! One exception skips the thread: a frame produced on the thread calling `Engine::send`,
//! inside that call, with nothing queued ahead of it, is offered to the host right there
//! (`Host::deliver_here`, see `here.rs`) — the answer to a cheap request then costs no
//! thread hop at all.

mod here;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle, ThreadId};

use crate::store::{Store, StoreOp};

/// What the engine's embedder implements: receives every outbound frame, one at a time, in
/// order, never two at once. It may call `Engine::send` from inside either method, and must
/// not call `Engine::close` from inside them (that is an error, `CloseFromDeliver`).
pub trait Host: Send + Sync + 'static {
    /// A frame, on the engine's delivery thread, after the store writes it announces are
    /// committed.
    fn deliver(&self, frame: &str);

    /// A frame offered on the thread calling `Engine::send`, inside that call: produced
    /// there (the answer to a request served at once, such as `initialize` or most
    /// `session/list`s) with nothing ahead of it — no frame queued or being delivered, no
    /// write uncommitted. `true` takes it: it is the host's next frame, in order, as if
    /// `deliver` had run. `false` declines: it is queued and reaches `deliver` on the delivery
    /// thread like any other frame. While this runs the delivery thread hands over nothing,
    /// so frames still never overlap; `Engine::send` from inside it queues its own answers
    /// (it never nests a second hand-over). The default declines, so a host that does not
    /// implement it sees every frame on the delivery thread.
    fn deliver_here(&self, _frame: &str) -> bool {
        false
    }
}

/// The most items committed and delivered as one batch: bounds the latency a large
/// backlog adds to the first frame in it.
const MAX_BATCH: usize = 1024;

enum Item {
    Frame(String),
    Write(Box<StoreOp>, Option<String>),
    Barrier(tokio::sync::oneshot::Sender<()>),
    Shutdown,
}

#[derive(Clone)]
pub struct Outbox {
    queue: Arc<Queue>,
}

struct Queue {
    state: Mutex<State>,
    /// Signalled when an item arrives while the delivery thread sleeps.
    arrived: Condvar,
    /// Writes queued and not yet committed: when none are, a read sees every write queued
    /// before it without waiting for the thread. Counted under `state`'s lock as they are
    /// queued, released once their batch is committed (or failed, as a barrier would be).
    /// Writes dropped when the thread ends are never released; reads then wait on a barrier,
    /// which is dropped at once too.
    pending_writes: AtomicUsize,
    /// Of those, the writes of permission rules (`StoreOp::AddRule`): what a rules read
    /// waits for (`EngineContext::rules`).
    pending_rules: AtomicUsize,
}

struct State {
    items: VecDeque<Item>,
    /// The delivery thread is waiting on `arrived`.
    sleeping: bool,
    /// The delivery thread holds a batch it has not finished committing and delivering.
    busy: bool,
    /// The thread handing the host a frame inside `Engine::send` (`here.rs`), if any; the
    /// delivery thread takes no batch meanwhile.
    handing_here: Option<ThreadId>,
    /// The host, for hand-overs on the caller's thread; taken when the delivery thread ends,
    /// so that the host is dropped on that thread, after its last frame.
    host: Option<Arc<dyn Host>>,
    /// The delivery thread has ended: items pushed now are dropped at once (a barrier's
    /// sender with them, which tells its waiter that nothing more will be written).
    ended: bool,
}

impl Outbox {
    /// The queue, which takes frames and writes at once; they are delivered and committed
    /// once `start` has started its thread, except a frame handed over on the caller's thread
    /// (`here.rs`), which needs no thread.
    pub fn new(host: Arc<dyn Host>) -> Outbox {
        let queue = Arc::new(Queue {
            state: Mutex::new(State {
                items: VecDeque::new(),
                sleeping: false,
                busy: false,
                handing_here: None,
                host: Some(host),
                ended: false,
            }),
            arrived: Condvar::new(),
            pending_writes: AtomicUsize::new(0),
            pending_rules: AtomicUsize::new(0),
        });
        Outbox { queue }
    }

    /// Starts the delivery thread, which commits to `store`; called once.
    pub fn start(&self, store: Arc<Store>) -> std::io::Result<(JoinHandle<()>, ThreadId)> {
        let host = self.queue.lock().host.clone();
        let consumer = self.queue.clone();
        let handle = thread::Builder::new()
            .name("hearth-delivery".into())
            .spawn(move || {
                if let Some(host) = host {
                    run(&consumer, &store, &*host);
                }
            })?;
        let id = handle.thread().id();
        Ok((handle, id))
    }

    /// Sends a frame that carries nothing to persist: queued, or handed to the host at once
    /// when this thread is inside `Engine::send` and nothing is ahead of it (`here.rs`).
    pub fn frame(&self, frame: String) {
        if let Some(frame) = self.hand_here(frame) {
            self.push(Item::Frame(frame));
        }
    }

    /// Queues a store write, and the frame (if any) that must only be delivered once the
    /// write is committed.
    pub fn write(&self, op: StoreOp, frame: Option<String>) {
        self.push(Item::Write(Box::new(op), frame));
    }

    /// Resolves once every write queued before this call is committed.
    pub async fn flushed(&self) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.push(Item::Barrier(tx));
        // An error means the thread is gone (engine closed): nothing more will be written.
        let _ = rx.await;
    }

    /// Whether a write queued before this call may still be uncommitted.
    pub fn has_pending_writes(&self) -> bool {
        self.queue.pending_writes.load(Ordering::Acquire) > 0
    }

    /// Whether a permission rule queued before this call may still be uncommitted.
    pub fn has_pending_rules(&self) -> bool {
        self.queue.pending_rules.load(Ordering::Acquire) > 0
    }

    /// Asks the thread to finish what is queued and exit.
    pub fn shutdown(&self) {
        self.push(Item::Shutdown);
    }

    fn push(&self, item: Item) {
        let mut state = self.queue.lock();
        if state.ended {
            // After shutdown there is no one left to deliver to.
            drop(state);
            drop(item);
            return;
        }
        if let Item::Write(op, _) = &item {
            self.queue.pending_writes.fetch_add(1, Ordering::AcqRel);
            if op.is_rule() {
                self.queue.pending_rules.fetch_add(1, Ordering::AcqRel);
            }
        }
        state.items.push_back(item);
        let wake = state.sleeping;
        drop(state);
        // Notified after unlocking, so the woken thread does not block at once on our lock.
        if wake {
            self.queue.arrived.notify_one();
        }
    }
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Moves up to `MAX_BATCH` items into `batch`, sleeping until there is at least one and
    /// no frame is being handed over on a caller's thread.
    fn take(&self, batch: &mut Vec<Item>) {
        let mut state = self.lock();
        state.busy = false;
        while state.items.is_empty() || state.handing_here.is_some() {
            state.sleeping = true;
            state = self.arrived.wait(state).unwrap_or_else(|p| p.into_inner());
        }
        state.sleeping = false;
        state.busy = true;
        let n = state.items.len().min(MAX_BATCH);
        batch.extend(state.items.drain(..n));
    }
}

/// Marks the queue ended when the delivery thread stops, however it stops, and drops what
/// is left in it (waking any barrier's waiter).
struct EndOnExit<'a>(&'a Queue);

impl Drop for EndOnExit<'_> {
    fn drop(&mut self) {
        let left = {
            let mut state = self.0.lock();
            state.ended = true;
            (std::mem::take(&mut state.items), state.host.take())
        };
        drop(left);
    }
}

fn run(queue: &Queue, store: &Store, host: &dyn Host) {
    let _end = EndOnExit(queue);
    let mut batch = Vec::with_capacity(MAX_BATCH);
    loop {
        queue.take(&mut batch);
        if !flush(&mut batch, store, host, queue) {
            return;
        }
    }
}

/// Commits, then delivers, one batch. Returns false once shutdown was requested.
fn flush(batch: &mut Vec<Item>, store: &Store, host: &dyn Host, queue: &Queue) -> bool {
    let mut ops = Vec::new();
    let mut frames = Vec::with_capacity(batch.len());
    let mut barriers = Vec::new();
    let mut keep_running = true;
    for item in batch.drain(..) {
        match item {
            Item::Frame(frame) => frames.push(frame),
            Item::Write(op, frame) => {
                ops.push(*op);
                frames.extend(frame);
            }
            Item::Barrier(done) => barriers.push(done),
            Item::Shutdown => keep_running = false,
        }
    }
    let written = ops.len();
    let rules = ops.iter().filter(|op| op.is_rule()).count();
    if !ops.is_empty()
        && let Err(e) = store.apply(ops)
    {
        tracing::error!(error = %e, "committing events failed; delivering the frames anyway");
    }
    queue.pending_rules.fetch_sub(rules, Ordering::AcqRel);
    queue.pending_writes.fetch_sub(written, Ordering::AcqRel);
    for done in barriers {
        let _ = done.send(());
    }
    for frame in &frames {
        deliver(host, frame);
    }
    keep_running
}

fn deliver(host: &dyn Host, frame: &str) {
    deliver_with(|| host.deliver(frame));
}

/// Runs one of the host's callbacks: `None` if it panicked, which must not take the engine's
/// thread (or the caller's `send`) down with it; the frame is dropped.
fn deliver_with<T>(callback: impl FnOnce() -> T) -> Option<T> {
    let outcome = here::in_callback(|| catch_unwind(AssertUnwindSafe(callback)));
    if outcome.is_err() {
        tracing::error!("the host's deliver callback panicked; frame dropped");
    }
    outcome.ok()
}
