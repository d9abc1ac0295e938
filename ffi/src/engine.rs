//! The three calls: start an engine, send it a frame, free it.

use std::ffi::{c_char, c_int, c_void};
use std::ptr::{self, NonNull};
use std::sync::Arc;

use hearth_core::{Config, EngineError};

use crate::args::utf8;
use crate::error::{Failure, HEARTH_INTERNAL, guard};
use crate::host::{CallbackHost, FrameFn, FreeFn, UserData};

/// A running engine. Opaque: create it with hearth_engine_new, release it with
/// hearth_engine_free. hearth_engine_send may be called from several threads at once.
pub struct Engine {
    inner: hearth_core::Engine,
}

const FREE_FROM_ON_FRAME: &str = "hearth_engine_free was called from inside on_frame for the same engine, \
     which would wait for itself; nothing was freed: call it again from another thread";

/// Starts an engine.
///
/// - `config_json`/`config_len`: the configuration, `config_len` bytes of UTF-8 JSON (no NUL
///   needed), e.g. `{"dataDir":":memory:","providers":{"openai":{"baseUrl":"http://…/v1"}}}`.
///   An empty string (`""`, 0) means all defaults. Read during the call only.
/// - `on_frame`: receives every frame the engine sends to the client (see hearth_frame_fn).
/// - `user_data`: passed to `on_frame` and `free_user_data` as is; may be NULL.
/// - `free_user_data`: may be NULL.
/// - `out`: receives the engine on success, NULL on failure.
///
/// Ownership of `user_data` passes to Hearth on every call, successful or not:
/// `free_user_data` (when not NULL) is called exactly once — before this call returns if it
/// fails, otherwise on the engine's delivery thread during hearth_engine_free, after the last
/// on_frame.
///
/// Returns HEARTH_OK, HEARTH_NULL_ARGUMENT (`config_json`, `on_frame` or `out` is NULL),
/// HEARTH_INVALID_UTF8, HEARTH_BAD_CONFIG (hearth_last_error() names the key),
/// HEARTH_STORE_ERROR, HEARTH_INTERNAL or HEARTH_PANIC.
///
/// # Safety
/// `config_json` must point to `config_len` readable bytes; `out` must be writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hearth_engine_new(
    config_json: *const c_char,
    config_len: usize,
    on_frame: FrameFn,
    user_data: *mut c_void,
    free_user_data: FreeFn,
    out: *mut *mut Engine,
) -> c_int {
    // Owned from here on: however the body ends, dropping it frees it exactly once.
    let user_data = UserData::new(user_data, free_user_data);
    guard(move || {
        let out = NonNull::new(out).ok_or_else(|| Failure::null_argument("out"))?;
        // SAFETY: `out` is non-NULL and the caller guarantees it is writable.
        unsafe { out.write(ptr::null_mut()) };
        let on_frame = on_frame.ok_or_else(|| Failure::null_argument("on_frame"))?;
        // SAFETY: the caller guarantees `config_len` readable bytes, read only in this call.
        let json = unsafe { utf8(config_json, config_len, "config_json") }?;
        let config = Config::from_json(json).map_err(EngineError::from)?;
        let host = CallbackHost::new(on_frame, user_data);
        let inner = hearth_core::Engine::start(config, Arc::new(host))?;
        // SAFETY: as above; the caller now owns the engine until hearth_engine_free.
        unsafe { out.write(Box::into_raw(Box::new(Engine { inner }))) };
        Ok(())
    })
}

/// Hands the engine one frame from the client: `len` bytes of UTF-8 JSON (no NUL needed),
/// borrowed for the duration of the call only. Never blocks; the answer, if any, arrives
/// through on_frame: for a request served at once with nothing queued ahead of it, on this
/// thread before this call returns, otherwise on the delivery thread (see hearth_frame_fn).
/// May be called from any thread, including from inside on_frame (an answer made then is
/// queued, never delivered inside the running on_frame).
///
/// Returns HEARTH_OK (the frame was accepted; a malformed frame gets its JSON-RPC error
/// through on_frame), HEARTH_NULL_ARGUMENT, HEARTH_INVALID_UTF8 (nothing was sent),
/// HEARTH_CLOSED (hearth_engine_free has begun: only on_frame can still see this engine) or
/// HEARTH_PANIC.
///
/// # Safety
/// `engine` must come from hearth_engine_new and not have been freed; `frame` must point to
/// `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hearth_engine_send(
    engine: *mut Engine,
    frame: *const c_char,
    len: usize,
) -> c_int {
    guard(|| {
        // SAFETY: the caller guarantees a live engine; only shared access is needed.
        let engine = unsafe { engine.as_ref() }.ok_or_else(|| Failure::null_argument("engine"))?;
        // SAFETY: the caller guarantees `len` readable bytes, read only in this call.
        let frame = unsafe { utf8(frame, len, "frame") }?;
        Ok(engine.inner.send(frame)?)
    })
}

/// Stops the engine and releases it: cancels running prompts, flushes the session store and
/// joins the engine's threads. on_frame may still run while this call is in progress (for
/// instance with the answers to cancelled prompts; hearth_engine_send returns HEARTH_CLOSED
/// from there), never after it returns. free_user_data runs before it returns. NULL is fine
/// (nothing happens).
///
/// It must not be called from inside on_frame for the same engine: that would wait for
/// itself. Such a call does nothing — the engine stays valid and running — and sets
/// hearth_last_error(); free it again later from another thread. hearth_last_error() is
/// NULL after a successful call.
///
/// # Safety
/// `engine` must be NULL or come from hearth_engine_new and not have been freed, and no other
/// thread may use it during or after this call (on_frame excepted, as above).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hearth_engine_free(engine: *mut Engine) {
    // Returns void per the ABI contract: a failure (from inside on_frame, or a panic) is
    // reported through hearth_last_error, so the status is not needed here.
    let _status = guard(|| {
        let Some(engine) = NonNull::new(engine) else {
            return Ok(());
        };
        // Close through a shared reference first: until close has joined the delivery
        // thread, on_frame may still call hearth_engine_send on this engine.
        // SAFETY: the caller guarantees a live engine.
        unsafe { engine.as_ref() }
            .inner
            .close()
            .map_err(|e| match e.code() {
                // The core's message speaks of close(); a C host called hearth_engine_free.
                "close_from_deliver" => Failure::new(HEARTH_INTERNAL, FREE_FROM_ON_FRAME),
                _ => e.into(),
            })?;
        // SAFETY: closed, so no on_frame runs any more, and the caller hands the engine back;
        // it was made by Box::into_raw in hearth_engine_new.
        drop(unsafe { Box::from_raw(engine.as_ptr()) });
        Ok(())
    });
}
