//! `hearth.Engine`: start, send, close, plus the context-manager protocol.
//!
//! GIL rules (the engine's delivery thread attaches to call `on_frame`):
//! - every call that waits on engine threads (`close`, drop) detaches first, or the delivery
//!   thread could wait for the GIL while we wait for it;
//! - no Rust lock is held across a Python call or a detach: the engine is kept in the object
//!   as is and the core does its own locking.

use hearth_core::{Config, EngineError};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};

use crate::errors::{self, HearthError};
use crate::host::PythonHost;

/// A running Hearth engine: ACP JSON-RPC frames in through `send`, frames out through
/// `on_frame`, one at a time, in order: on the engine's delivery thread, or — for the answer
/// to a request served at once with nothing queued ahead of it — inside `send`, on the
/// calling thread, before `send` returns.
#[pyclass(frozen, module = "hearth")]
pub struct Engine {
    /// `Some` for the object's whole life; `Drop` takes it to choose how it goes away.
    engine: Option<hearth_core::Engine>,
    /// The process that started the engine. After `fork()` the child has a copy of this
    /// object but none of the engine's threads, so it must never touch it.
    pid: u32,
}

#[pymethods]
impl Engine {
    #[new]
    fn new(py: Python<'_>, config: &Bound<'_, PyAny>, on_frame: Py<PyAny>) -> PyResult<Self> {
        if !on_frame.bind(py).is_callable() {
            return Err(PyTypeError::new_err(
                "on_frame must be callable: on_frame(frame: str)",
            ));
        }
        let config = Config::from_json(&config_json(config)?)
            .map_err(|e| errors::to_py(EngineError::from(e)))?;
        let host = std::sync::Arc::new(PythonHost::new(on_frame));
        // Starting opens the store and spawns threads; nothing in it needs the GIL.
        let engine = py
            .detach(|| hearth_core::Engine::start(config, host))
            .map_err(errors::to_py)?;
        Ok(Engine {
            engine: Some(engine),
            pid: std::process::id(),
        })
    }

    /// Hands the engine one client → agent frame (a JSON-RPC message as text). Never blocks;
    /// may be called from any thread, including from inside any engine's `on_frame` (an
    /// answer made then is queued, never delivered inside the running `on_frame`). The answer to a request
    /// served at once may reach `on_frame` on this thread before `send` returns; the GIL
    /// stays held for it, so the answer crosses no thread.
    fn send(&self, frame: &str) -> PyResult<()> {
        self.engine()?.send(frame).map_err(errors::to_py)
    }

    /// Cancels running turns, flushes the store and joins the engine's threads; after it
    /// returns `on_frame` is never called again. Idempotent. Not allowed inside `on_frame`.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let engine = self.engine()?;
        py.detach(|| engine.close()).map_err(errors::to_py)
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Closes the engine; never swallows the exception that ended the `with` block.
    #[pyo3(signature = (*_exc_info))]
    fn __exit__(&self, py: Python<'_>, _exc_info: &Bound<'_, PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }
}

impl Engine {
    /// The engine, unless this is a forked child that inherited the object.
    fn engine(&self) -> PyResult<&hearth_core::Engine> {
        let here = std::process::id();
        if here != self.pid {
            return Err(HearthError::new_err(format!(
                "this Engine was started in process {} and cannot be used in the forked \
                 process {here}; start a new Engine in the child",
                self.pid
            )));
        }
        Ok(self
            .engine
            .as_ref()
            .expect("the engine is only taken by Drop"))
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let Some(engine) = self.engine.take() else {
            return;
        };
        if std::process::id() != self.pid {
            // A forked child: the engine's threads live only in the parent, and closing would
            // wait for them forever. Leak the copy instead.
            std::mem::forget(engine);
            return;
        }
        // Dropping closes, which waits for the delivery thread: detach, or that thread could
        // be waiting for the GIL we hold. Dropped on the delivery thread itself (the last
        // reference went away inside `on_frame`), the core hands the close to another thread.
        Python::attach(|py| py.detach(|| drop(engine)));
    }
}

/// The config as JSON text: a `str` is taken as is, anything else (a dict) goes through
/// `json.dumps`.
fn config_json(config: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(text) = config.cast::<PyString>() {
        return Ok(text.to_str()?.to_owned());
    }
    let dumps = config.py().import("json")?.getattr("dumps")?;
    dumps.call1((config,))?.extract()
}
