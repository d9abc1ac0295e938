//! The engine's `Host` for C: calls the host's `on_frame`, and owns its `user_data`.

use std::ffi::{c_char, c_void};

use hearth_core::Host;

/// Receives one outbound frame: `frame` points to `len` bytes of UTF-8 JSON followed by a NUL
/// byte, borrowed for the duration of the call only (copy what you keep). One frame at a
/// time, in order, never concurrently, on one of two threads:
/// - the engine's delivery thread, for most frames (whatever a session streams, answers made
///   on the engine's own threads, any frame that announces a store write);
/// - the thread calling hearth_engine_send, inside that call, before it returns: the answer
///   to a request served at once (`initialize`, most `session/list`s, errors for malformed
///   frames) when no other frame is queued ahead of it. This saves the answer two thread
///   hand-offs. So do not hold a lock around hearth_engine_send that on_frame takes too.
///
/// It may call hearth_engine_send (on this or any engine); a frame that call answers is
/// queued, never delivered inside the running on_frame. It must not call hearth_engine_free
/// on its own engine (that call fails and does nothing, see hearth_engine_free). It must
/// return normally: no longjmp, no C++ exception escaping it.
pub type FrameFn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, frame: *const c_char, len: usize)>;

/// Releases the host's user_data. Called exactly once: after the last on_frame, or before
/// hearth_engine_new returns if that fails.
pub type FreeFn = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

/// The host's `user_data`, owned by Hearth from `hearth_engine_new` on: dropping it calls
/// `free_user_data`, so every path — success, failure, panic — frees it exactly once.
pub(crate) struct UserData {
    ptr: *mut c_void,
    free: FreeFn,
}

// SAFETY: the header requires user_data to be usable from the engine's delivery thread and
// from the threads that call hearth_engine_send (on_frame runs on those, free_user_data on
// the delivery thread), and the engine never uses it from two threads at once: on_frame
// calls are sequential, and free_user_data runs after the last of them.
unsafe impl Send for UserData {}
// SAFETY: as above; `&UserData` is used by one thread at a time.
unsafe impl Sync for UserData {}

impl UserData {
    pub(crate) fn new(ptr: *mut c_void, free: FreeFn) -> UserData {
        UserData { ptr, free }
    }
}

impl Drop for UserData {
    fn drop(&mut self) {
        if let Some(free) = self.free {
            // SAFETY: the host gave us `ptr` together with `free`; this is the one call.
            unsafe { free(self.ptr) }
        }
    }
}

/// Hands each frame to `on_frame`. Dropped (and so `user_data` freed) when the engine's
/// delivery thread ends, which is after its last `deliver`.
pub(crate) struct CallbackHost {
    on_frame: unsafe extern "C" fn(*mut c_void, *const c_char, usize),
    user_data: UserData,
}

impl CallbackHost {
    pub(crate) fn new(
        on_frame: unsafe extern "C" fn(*mut c_void, *const c_char, usize),
        user_data: UserData,
    ) -> CallbackHost {
        CallbackHost {
            on_frame,
            user_data,
        }
    }

    /// Calls on_frame with the frame and a NUL after it.
    fn call(&self, frame: &str) {
        // C hosts often want a terminated string as well as the length. JSON text never
        // contains a raw NUL (serde escapes control characters), so the NUL marks the end.
        let mut terminated = Vec::with_capacity(frame.len() + 1);
        terminated.extend_from_slice(frame.as_bytes());
        terminated.push(0);
        // SAFETY: on_frame is the host's callback for this user_data; the buffer holds
        // `frame.len()` bytes plus a NUL and outlives the call, as the header promises.
        unsafe { (self.on_frame)(self.user_data.ptr, terminated.as_ptr().cast(), frame.len()) }
    }
}

impl Host for CallbackHost {
    fn deliver(&self, frame: &str) {
        self.call(frame);
    }

    /// C hosts take the answers made inside hearth_engine_send on the calling thread: the
    /// round trip of a request answered at once then crosses no thread at all.
    fn deliver_here(&self, frame: &str) -> bool {
        self.call(frame);
        true
    }
}
