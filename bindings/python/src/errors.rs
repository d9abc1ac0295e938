//! The exceptions `hearth` raises, and how engine errors map onto them.

use hearth_core::EngineError;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;

create_exception!(
    hearth,
    HearthError,
    PyException,
    "An engine call failed (the store can't be opened, close() from inside on_frame, \
     use after fork, ...)."
);
create_exception!(
    hearth,
    ClosedError,
    HearthError,
    "The engine is closed; create a new one."
);

/// Bad configuration is a `ValueError` (the message names the key), the closed engine is
/// `ClosedError`, anything else a `HearthError`.
pub fn to_py(error: EngineError) -> PyErr {
    match error {
        EngineError::Config(message) => PyValueError::new_err(message),
        EngineError::Closed => ClosedError::new_err(error.to_string()),
        other => HearthError::new_err(other.to_string()),
    }
}
