//! hearth-ffi — the C ABI of the Hearth engine: `libhearth` and `include/hearth.h`.
//!
//! Three calls carry ACP JSON-RPC frames, as strings, in both directions:
//! `hearth_engine_new` starts an engine that hands every outbound frame to a callback,
//! `hearth_engine_send` gives it a frame from the client, `hearth_engine_free` stops it.
//! The header is generated from this crate by cbindgen (see `tests/header.rs`), so the
//! doc comments here are the C documentation.

use std::ffi::{CStr, c_char};

mod args;
mod engine;
mod error;
mod host;

pub use engine::{Engine, hearth_engine_free, hearth_engine_new, hearth_engine_send};
pub use error::{
    HEARTH_BAD_CONFIG, HEARTH_CLOSED, HEARTH_INTERNAL, HEARTH_INVALID_UTF8, HEARTH_NULL_ARGUMENT,
    HEARTH_OK, HEARTH_PANIC, HEARTH_STORE_ERROR, hearth_last_error,
};
pub use host::{FrameFn, FreeFn};

// Literals, not `env!`, because cbindgen copies them into the header as written; a unit test
// keeps them equal to the crate version.
/// Major version of the library this header belongs to.
pub const HEARTH_VERSION_MAJOR: u32 = 0;
/// Minor version of the library this header belongs to.
pub const HEARTH_VERSION_MINOR: u32 = 1;
/// Patch version of the library this header belongs to.
pub const HEARTH_VERSION_PATCH: u32 = 0;
/// Version of the C ABI this header describes. It changes whenever a function, a type or a
/// rule of this header changes incompatibly. Compare it with hearth_abi_version() at run
/// time to catch a header/library mismatch.
pub const HEARTH_ABI_VERSION: u32 = 1;

const VERSION: &CStr =
    match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
        Ok(version) => version,
        Err(_) => panic!("the crate version contains a NUL byte"),
    };

/// The ABI version of the loaded library; equal to HEARTH_ABI_VERSION when the header and
/// the library match. Never fails.
#[unsafe(no_mangle)]
pub extern "C" fn hearth_abi_version() -> u32 {
    // Returns a constant: nothing here can panic, so no unwind guard is needed.
    HEARTH_ABI_VERSION
}

/// The version of the loaded library, e.g. "0.1.0": a static NUL-terminated string, never
/// NULL, never to be freed.
#[unsafe(no_mangle)]
pub extern "C" fn hearth_version() -> *const c_char {
    // Returns a constant: nothing here can panic, so no unwind guard is needed.
    VERSION.as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_constants_follow_the_crate_version() {
        let parse = |s: &str| s.parse::<u32>().unwrap();
        assert_eq!(HEARTH_VERSION_MAJOR, parse(env!("CARGO_PKG_VERSION_MAJOR")));
        assert_eq!(HEARTH_VERSION_MINOR, parse(env!("CARGO_PKG_VERSION_MINOR")));
        assert_eq!(HEARTH_VERSION_PATCH, parse(env!("CARGO_PKG_VERSION_PATCH")));
        // SAFETY: hearth_version returns a pointer to a static NUL-terminated string.
        let version = unsafe { CStr::from_ptr(hearth_version()) };
        assert_eq!(version.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
        assert_eq!(hearth_abi_version(), HEARTH_ABI_VERSION);
    }
}
