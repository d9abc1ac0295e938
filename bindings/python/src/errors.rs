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
/// `ClosedError`, anything else — including codes added later — a `HearthError`.
pub fn to_py(error: EngineError) -> PyErr {
    let message = error.to_string();
    match error.code() {
        "config" => PyValueError::new_err(message),
        "closed" => ClosedError::new_err(message),
        _ => HearthError::new_err(message),
    }
}
