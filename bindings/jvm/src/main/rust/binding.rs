//! One engine's lifetime, independent of JNI: what the Java handle points to.
//!
//! The Java side keeps no lock of its own, so every guarantee of `dev.hearth.Engine` is made
//! here: `send` and `close` may race from any threads, `close` is idempotent and returns only
//! once the engine has fully stopped, and `close` from inside the listener fails at once
//! instead of waiting for itself.

use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};
use std::thread::{self, ThreadId};

use hearth_core::{Config, Engine, EngineError, Host};

pub struct Binding {
    /// `None` once closed: closing drops the engine right away, so its store and threads are
    /// released at `close()` and not whenever the JVM gets round to freeing the handle.
    engine: RwLock<Option<Engine>>,
    /// Held for the whole of a close, so a second, concurrent `close()` returns only after the
    /// first has finished stopping the engine.
    closing: Mutex<()>,
    delivery_thread: Arc<OnceLock<ThreadId>>,
}

impl Binding {
    pub fn start(config_json: &str, host: impl Host) -> Result<Binding, EngineError> {
        let config = Config::from_json(config_json)?;
        let delivery_thread = Arc::new(OnceLock::new());
        let host = RecordDeliveryThread {
            inner: host,
            thread: delivery_thread.clone(),
        };
        let engine = Engine::start(config, Arc::new(host))?;
        Ok(Binding {
            engine: RwLock::new(Some(engine)),
            closing: Mutex::new(()),
            delivery_thread,
        })
    }

    /// Never blocks for long: the read lock is only contended by `close` taking the engine out.
    pub fn send(&self, frame: &str) -> Result<(), EngineError> {
        let engine = self.engine.read().unwrap_or_else(PoisonError::into_inner);
        match engine.as_ref() {
            Some(engine) => engine.send(frame),
            None => Err(EngineError::Closed),
        }
    }

    pub fn close(&self) -> Result<(), EngineError> {
        // Checked before taking `closing`: a listener must not queue behind a close that is
        // itself waiting for that listener to return.
        if self.delivery_thread.get() == Some(&thread::current().id()) {
            return Err(EngineError::CloseFromDeliver);
        }
        let _one_at_a_time = self.closing.lock().unwrap_or_else(PoisonError::into_inner);
        // Taken out under the write lock but closed outside it, so a listener's re-entrant
        // `send` during shutdown gets `Closed` instead of waiting on the lock.
        let engine = self
            .engine
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        match engine {
            Some(engine) => engine.close(),
            None => Ok(()),
        }
    }
}

/// Notes which thread delivers, so `close` can recognise a call from inside the listener.
/// Only the listener can call `close` on that thread, and it only runs after the first frame,
/// so recording it at the first delivery is early enough.
struct RecordDeliveryThread<H> {
    inner: H,
    thread: Arc<OnceLock<ThreadId>>,
}

impl<H: Host> Host for RecordDeliveryThread<H> {
    fn deliver(&self, frame: &str) {
        self.thread.get_or_init(|| thread::current().id());
        self.inner.deliver(frame);
    }
}
