//! Status codes, the thread-local last error, and the guard every fallible entry point
//! runs in (last error cleared, panics caught, failures turned into a status).

use std::any::Any;
use std::cell::RefCell;
use std::ffi::{CString, c_char, c_int};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;

use hearth_core::EngineError;

/// Success.
pub const HEARTH_OK: c_int = 0;
/// A pointer argument that must not be NULL was NULL; hearth_last_error() names it.
pub const HEARTH_NULL_ARGUMENT: c_int = 1;
/// The config or the frame is not valid UTF-8. Nothing was sent to the engine.
pub const HEARTH_INVALID_UTF8: c_int = 2;
/// The config JSON is invalid: not JSON, an unknown key, a value of the wrong type or out of
/// range. hearth_last_error() names the offending key, e.g. "invalid config key
/// `workerThreads`: must be at least 1".
pub const HEARTH_BAD_CONFIG: c_int = 3;
/// The session store can't be opened: the data directory can't be created or written, or
/// the database file is not a Hearth database (or one from a newer version). Nothing was
/// written.
pub const HEARTH_STORE_ERROR: c_int = 4;
/// The engine is closed. This is what hearth_engine_send returns when on_frame calls it
/// while hearth_engine_free is shutting the engine down.
pub const HEARTH_CLOSED: c_int = 5;
/// A bug in Hearth: the call panicked. The panic was contained; hearth_last_error() has its
/// message. Free the engine.
pub const HEARTH_PANIC: c_int = 6;
/// Any other failure, e.g. the engine could not start its runtime or a thread (out of
/// resources). hearth_last_error() says what.
pub const HEARTH_INTERNAL: c_int = 7;

/// Why a call failed: the status it returns and the message hearth_last_error() shows.
#[derive(Debug)]
pub(crate) struct Failure {
    status: c_int,
    message: String,
}

impl Failure {
    pub(crate) fn new(status: c_int, message: impl Into<String>) -> Failure {
        Failure {
            status,
            message: message.into(),
        }
    }

    pub(crate) fn null_argument(name: &str) -> Failure {
        Failure::new(HEARTH_NULL_ARGUMENT, format!("`{name}` is NULL"))
    }
}

impl From<EngineError> for Failure {
    fn from(e: EngineError) -> Failure {
        let status = match e.code() {
            "config" => HEARTH_BAD_CONFIG,
            "store" => HEARTH_STORE_ERROR,
            "closed" => HEARTH_CLOSED,
            // "start": no runtime or thread. "close_from_deliver": only hearth_engine_free
            // meets it, and that call reports through hearth_last_error alone. A code added
            // later lands here too, so the ABI's statuses stay as released.
            _ => HEARTH_INTERNAL,
        };
        Failure::new(status, e.to_string())
    }
}

thread_local! {
    static LAST_ERROR: RefCell<Option<CString>> = const { RefCell::new(None) };
}

/// The message of the last failed call on this thread, or NULL when the last call
/// succeeded. Every hearth_engine_* call clears it on entry, so check it right after the
/// call that failed. The string is owned by the library and stays valid until the next
/// hearth_engine_* call on the same thread; copy it to keep it. Never fails.
#[unsafe(no_mangle)]
pub extern "C" fn hearth_last_error() -> *const c_char {
    // `try_with` fails only while this thread's locals are being destroyed: nothing to show.
    LAST_ERROR
        .try_with(|last| {
            last.borrow()
                .as_ref()
                .map_or(ptr::null(), |message| message.as_ptr())
        })
        .unwrap_or(ptr::null())
}

fn set_last_error(message: Option<&str>) {
    // A C string can't hold NUL bytes; a message never needs one.
    let message = message.map(|m| CString::new(m.replace('\0', "\u{FFFD}")).unwrap_or_default());
    // Ignored failure: see hearth_last_error.
    let _ = LAST_ERROR.try_with(|last| *last.borrow_mut() = message);
}

/// Runs the body of a fallible entry point: clears the last error, contains any panic, and
/// turns the outcome into a status, recording a failure's message for hearth_last_error.
pub(crate) fn guard(body: impl FnOnce() -> Result<(), Failure>) -> c_int {
    set_last_error(None);
    // AssertUnwindSafe: a panic may leave the engine half-updated; that is why HEARTH_PANIC
    // tells the host to free it rather than go on using it.
    let outcome = catch_unwind(AssertUnwindSafe(body))
        .unwrap_or_else(|payload| Err(Failure::new(HEARTH_PANIC, panic_message(&*payload))));
    match outcome {
        Ok(()) => HEARTH_OK,
        Err(failure) => {
            set_last_error(Some(&failure.message));
            failure.status
        }
    }
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    let detail = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("no message");
    format!("Hearth panicked (a bug, please report it): {detail}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn last_error() -> Option<String> {
        let message = hearth_last_error();
        // SAFETY: a non-NULL last error is a NUL-terminated string valid until the next call.
        (!message.is_null()).then(|| {
            unsafe { CStr::from_ptr(message) }
                .to_string_lossy()
                .into_owned()
        })
    }

    #[test]
    fn success_clears_the_last_error() {
        assert_eq!(
            guard(|| Err(Failure::null_argument("frame"))),
            HEARTH_NULL_ARGUMENT
        );
        assert_eq!(last_error().as_deref(), Some("`frame` is NULL"));
        assert_eq!(guard(|| Ok(())), HEARTH_OK);
        assert_eq!(last_error(), None);
    }

    #[test]
    fn a_panic_becomes_a_status_and_a_message() {
        assert_eq!(guard(|| panic!("boom")), HEARTH_PANIC);
        assert!(last_error().unwrap().ends_with("boom"));
    }

    #[test]
    fn engine_errors_keep_their_released_statuses() {
        let status = |e: EngineError| Failure::from(e).status;
        assert_eq!(status(EngineError::Config("k".into())), HEARTH_BAD_CONFIG);
        assert_eq!(status(EngineError::Store("s".into())), HEARTH_STORE_ERROR);
        assert_eq!(status(EngineError::Closed), HEARTH_CLOSED);
        assert_eq!(status(EngineError::Start("t".into())), HEARTH_INTERNAL);
        assert_eq!(status(EngineError::CloseFromDeliver), HEARTH_INTERNAL);
    }

    #[test]
    fn the_last_error_is_per_thread() {
        assert_eq!(
            guard(|| Err(Failure::new(HEARTH_CLOSED, "closed"))),
            HEARTH_CLOSED
        );
        std::thread::spawn(|| assert_eq!(last_error(), None))
            .join()
            .unwrap();
        assert_eq!(last_error().as_deref(), Some("closed"));
    }
}
