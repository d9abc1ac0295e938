//! The engine's `Host` for a JVM: hands every frame to the Java `FrameListener`.
//!
//! Runs on the engine's one delivery thread. The Java side already wraps the user's listener so
//! that whatever it throws is logged through java.util.logging; what is caught here is the rest
//! (a failing string allocation, say), reported on stderr. Either way the exception is cleared
//! and the engine goes on delivering.

use jni::objects::{JObject, JValue};
use jni::refs::Global;
use jni::{Env, JavaVM, jni_sig, jni_str};

use hearth_core::Host;

use crate::daemon;

pub struct JvmHost {
    vm: JavaVM,
    /// A global reference: the listener must outlive the `create` call that handed it over.
    /// It is released on the delivery thread when the engine drops the host at close.
    listener: Global<JObject<'static>>,
}

impl JvmHost {
    pub fn new(env: &Env<'_>, listener: &JObject<'_>) -> jni::errors::Result<JvmHost> {
        Ok(JvmHost {
            vm: env.get_java_vm()?,
            listener: env.new_global_ref(listener)?,
        })
    }

    fn call_listener(&self, frame: &str) -> jni::errors::Result<()> {
        daemon::ensure_attached(&self.vm)?;
        // Finds the attachment made above and runs in a fresh local frame, so the frame's
        // Java string is freed on return instead of piling up on this long-lived thread.
        // A pending exception comes back as `Err(CaughtJavaException)`, already cleared.
        self.vm.attach_current_thread(|env| {
            let frame = env.new_string(frame)?;
            env.call_method(
                &self.listener,
                jni_str!("onFrame"),
                jni_sig!("(Ljava/lang/String;)V"),
                &[JValue::Object(&frame)],
            )?;
            Ok(())
        })
    }
}

impl Host for JvmHost {
    fn deliver(&self, frame: &str) {
        if let Err(e) = self.call_listener(frame) {
            eprintln!("hearth: the FrameListener failed; the frame was dropped: {e}");
        }
    }
}
