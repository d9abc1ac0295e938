//! Checking what C hands us: pointers that must not be NULL, and text that must be UTF-8.

use std::ffi::c_char;

use crate::error::{Failure, HEARTH_INVALID_UTF8};

/// Borrows the `len` bytes at `ptr` as UTF-8 text; `name` is the argument, for the message.
///
/// # Safety
/// A non-NULL `ptr` must point to `len` readable bytes that stay unchanged for `'a`.
pub(crate) unsafe fn utf8<'a>(
    ptr: *const c_char,
    len: usize,
    name: &str,
) -> Result<&'a str, Failure> {
    if ptr.is_null() {
        return Err(Failure::null_argument(name));
    }
    // SAFETY: non-NULL, and the caller guarantees `len` readable bytes that outlive 'a.
    let bytes = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) };
    std::str::from_utf8(bytes).map_err(|e| {
        Failure::new(
            HEARTH_INVALID_UTF8,
            format!("`{name}` is not valid UTF-8: {e}"),
        )
    })
}
