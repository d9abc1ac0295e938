//! The `native` methods of `dev.hearth.NativeEngine`.
//!
//! The handle is a `Box<hearth_core::Engine>` turned into a `jlong`. Ownership: `create` hands
//! it to the Java `Engine`, which keeps it in a final field and gives it back exactly once, to
//! `release`, from a `java.lang.ref.Cleaner` once the `Engine` is unreachable — so no `send` or
//! `close` can still be running with it. `close` does not free it: the core's close releases
//! the store, the threads and the listener, and is itself idempotent, safe from several
//! threads at once and refused on the delivery thread, so the Java side needs no lock. The
//! closed engine left behind answers later calls with `IllegalStateException`.
//!
//! Each method runs inside `EnvUnowned::with_env`, which catches panics; `ThrowJavaException`
//! turns errors and panics into Java exceptions.

use std::sync::Arc;

use hearth_core::{Config, Engine, EngineError};
use jni::EnvUnowned;
use jni::objects::{JClass, JObject, JString};
use jni::sys::jlong;

use crate::errors::{BindingError, ThrowJavaException};
use crate::listener::JvmHost;

/// `static native long create(String configJson, FrameListener listener)`
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_hearth_NativeEngine_create<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    config_json: JString<'local>,
    listener: JObject<'local>,
) -> jlong {
    unowned
        .with_env(|env| -> Result<jlong, BindingError> {
            let config_json = config_json.try_to_string(env)?;
            let host = JvmHost::new(env, &listener)?;
            let config = Config::from_json(&config_json).map_err(EngineError::from)?;
            let engine = Engine::start(config, Arc::new(host))?;
            Ok(Box::into_raw(Box::new(engine)) as jlong)
        })
        .resolve::<ThrowJavaException>()
}

/// `static native void send(long handle, String frame)`
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_hearth_NativeEngine_send<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    frame: JString<'local>,
) {
    unowned
        .with_env(|env| -> Result<(), BindingError> {
            // A Java string with lone surrogates has no UTF-8 form; it is converted lossily (U+FFFD).
            let frame = frame.try_to_string(env)?;
            Ok(engine(handle)?.send(&frame)?)
        })
        .resolve::<ThrowJavaException>()
}

/// `static native void close(long handle)`
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_hearth_NativeEngine_close<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    unowned
        .with_env(|_env| -> Result<(), BindingError> { Ok(engine(handle)?.close()?) })
        .resolve::<ThrowJavaException>()
}

/// `static native void release(long handle)` — called once, by the `Engine`'s cleaner.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_hearth_NativeEngine_release<'local>(
    mut unowned: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    unowned
        .with_env(|_env| -> Result<(), BindingError> {
            if handle != 0 {
                // SAFETY: `handle` came from `create` and the Java side releases it exactly
                // once, when nothing else can use it (see the module docs). Dropping an
                // engine that was never closed closes it here.
                drop(unsafe { Box::from_raw(handle as *mut Engine) });
            }
            Ok(())
        })
        .resolve::<ThrowJavaException>()
}

fn engine<'a>(handle: jlong) -> Result<&'a Engine, BindingError> {
    // SAFETY: a non-zero handle came from `create` and stays valid until `release`, which the
    // Java side only calls once the `Engine` object (and so every call through it) is gone.
    unsafe { (handle as *const Engine).as_ref() }.ok_or(BindingError::NullHandle)
}
