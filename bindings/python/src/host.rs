//! The engine's `Host`: hands each outbound frame to the Python callback, on the engine's
//! delivery thread or, for an answer made inside `Engine.send`, on the thread calling it.

use hearth_core::Host;
use pyo3::prelude::*;

use crate::thread_state;

pub struct PythonHost {
    on_frame: Py<PyAny>,
}

impl Host for PythonHost {
    /// Runs on the engine's delivery thread, which attaches to the interpreter only for the
    /// length of the call, so the GIL is never held while the engine waits for work. The
    /// thread's Python thread state outlives the call (see `thread_state`).
    fn deliver(&self, frame: &str) {
        thread_state::keep();
        self.call(frame);
    }

    /// Runs inside `Engine.send`, on the thread that called it: attached already (`send`
    /// holds the GIL), so the call costs no GIL hand-off and no thread wake-up. Not for
    /// `thread_state::keep`, which is for threads that are not attached.
    fn deliver_here(&self, frame: &str) -> bool {
        self.call(frame);
        true
    }
}

impl PythonHost {
    pub fn new(on_frame: Py<PyAny>) -> Self {
        PythonHost { on_frame }
    }

    fn call(&self, frame: &str) {
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
