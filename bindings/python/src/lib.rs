//! `hearth._hearth`: the native half of the `hearth` Python package.
//!
//! Thin glue over the engine's three calls (start, send, close). Frames cross as `str`;
//! there is no protocol logic here. The pure-Python half (`python/hearth/`) re-exports these
//! names and adds the asyncio transport.

mod engine;
mod errors;
mod host;
mod thread_state;

use pyo3::prelude::*;

#[pymodule]
#[pyo3(name = "_hearth")]
fn hearth_python(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<engine::Engine>()?;
    m.add("HearthError", py.get_type::<errors::HearthError>())?;
    m.add("ClosedError", py.get_type::<errors::ClosedError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
