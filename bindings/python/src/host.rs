//! The engine's `Host`: hands each outbound frame to the Python callback.

use hearth_core::Host;
use pyo3::prelude::*;

use crate::thread_state;

pub struct PythonHost {
    on_frame: Py<PyAny>,
}

impl PythonHost {
    pub fn new(on_frame: Py<PyAny>) -> Self {
        PythonHost { on_frame }
    }
}

impl Host for PythonHost {
    /// Runs on the engine's delivery thread, which attaches to the interpreter only for the
    /// length of the call, so the GIL is never held while the engine waits for work. The
    /// thread's Python thread state outlives the call (see `thread_state`).
    fn deliver(&self, frame: &str) {
        thread_state::keep();
        // `try_attach` declines once the interpreter is shutting down: the frame has nowhere
        // to go then, and attaching would hang or kill this thread.
        Python::try_attach(|py| {
            if let Err(error) = self.on_frame.call1(py, (frame,)) {
                // The callback's exception is the host's bug, not the engine's: report it the
                // way Python reports errors nobody can catch, and go on delivering.
                error.write_unraisable(py, Some(self.on_frame.bind(py)));
            }
        });
    }
}
