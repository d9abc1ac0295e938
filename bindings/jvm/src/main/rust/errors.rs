//! How a failure in a native method reaches Java.
//!
//! - the engine refusing to start (bad config — the message names the key —, store, threads)
//!   → `dev.hearth.HearthException`;
//! - using a closed engine, or closing it from inside its own listener
//!   → `java.lang.IllegalStateException`;
//! - a Rust panic → `dev.hearth.HearthException` (never an unwind across the JNI boundary);
//! - a JNI failure that already left a Java exception pending → that exception, untouched.

use std::any::Any;

use jni::Env;
use jni::errors::ErrorPolicy;
use jni::jni_str;
use jni::strings::{JNIStr, JNIString};

use hearth_core::EngineError;

pub enum BindingError {
    Engine(EngineError),
    Jni(jni::errors::Error),
    /// The Java side passed a handle of 0; it never does, but a bad handle must not crash.
    NullHandle,
}

impl From<EngineError> for BindingError {
    fn from(e: EngineError) -> Self {
        BindingError::Engine(e)
    }
}

impl From<jni::errors::Error> for BindingError {
    fn from(e: jni::errors::Error) -> Self {
        BindingError::Jni(e)
    }
}

const HEARTH_EXCEPTION: &JNIStr = jni_str!("dev/hearth/HearthException");
const ILLEGAL_STATE: &JNIStr = jni_str!("java/lang/IllegalStateException");

/// The `ErrorPolicy` every native method resolves with: throw, and return 0 / void.
pub struct ThrowJavaException;

impl<T: Default> ErrorPolicy<T, BindingError> for ThrowJavaException {
    type Captures<'local: 'native_method, 'native_method> = ();

    fn on_error<'local: 'native_method, 'native_method>(
        env: &mut Env<'local>,
        _captures: &mut (),
        error: BindingError,
    ) -> jni::errors::Result<T> {
        if env.exception_check() {
            // A Java exception (from a JNI call) is already on its way; it says more.
            return Ok(T::default());
        }
        let (class, message) = match error {
            BindingError::Engine(e) => (engine_exception(&e), e.to_string()),
            BindingError::Jni(e) => (HEARTH_EXCEPTION, format!("JNI call failed: {e}")),
            BindingError::NullHandle => (ILLEGAL_STATE, "the engine handle is null".to_owned()),
        };
        throw(env, class, &message);
        Ok(T::default())
    }

    fn on_panic<'local: 'native_method, 'native_method>(
        env: &mut Env<'local>,
        _captures: &mut (),
        payload: Box<dyn Any + Send + 'static>,
    ) -> jni::errors::Result<T> {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a non-string panic".to_owned());
        throw(
            env,
            HEARTH_EXCEPTION,
            &format!("internal error in the Hearth library: {what}"),
        );
        Ok(T::default())
    }
}

/// Misusing the engine's state is Java's `IllegalStateException`; every other engine failure,
/// including codes added later, is a `HearthException`.
fn engine_exception(error: &EngineError) -> &'static JNIStr {
    match error.code() {
        "closed" | "close_from_deliver" => ILLEGAL_STATE,
        _ => HEARTH_EXCEPTION,
    }
}

fn throw(env: &mut Env<'_>, class: &JNIStr, message: &str) {
    // On success this returns `Err(JavaException)` by design (the exception is now pending);
    // on failure the JVM has thrown something else (e.g. NoClassDefFoundError). Either way a
    // Java exception is pending when the native method returns, which is all we need.
    let _ = env.throw_new(class, JNIString::from(message));
}
