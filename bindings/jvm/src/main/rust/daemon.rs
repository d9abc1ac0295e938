//! Attaches the engine's delivery thread to the JVM once, as a daemon thread, and detaches it
//! when that thread ends (inside `close`).
//!
//! Why not `JavaVM::attach_current_thread` alone: the jni crate attaches permanently but as a
//! *non-daemon* thread, and the JVM waits for non-daemon threads before it exits, so an engine
//! the host forgot to close would keep the IDE or the app from quitting. jni has no daemon
//! option, so the attachment itself is made here through the raw invocation interface; the jni
//! crate then finds the thread already attached and only borrows it.

use std::cell::RefCell;
use std::ffi::{CString, c_void};
use std::ptr;

use jni::errors::{Result, jni_error_code_to_result};
use jni::{JNIVersion, JavaVM, sys};

thread_local! {
    /// Present once this thread is attached; its destructor runs when the thread exits.
    static ATTACHMENT: RefCell<Option<DaemonAttachment>> = const { RefCell::new(None) };
}

struct DaemonAttachment {
    vm: JavaVM,
}

/// Attaches the calling thread as a daemon, named after the Rust thread, unless this function
/// already did so on it. Cheap after the first call: a thread-local check, no JNI call.
pub fn ensure_attached(vm: &JavaVM) -> Result<()> {
    ATTACHMENT.with(|slot| {
        let mut slot = slot.borrow_mut();
        if slot.is_none() {
            attach_as_daemon(vm)?;
            *slot = Some(DaemonAttachment { vm: vm.clone() });
        }
        Ok(())
    })
}

fn attach_as_daemon(vm: &JavaVM) -> Result<()> {
    // The name makes the thread recognisable in Java stack dumps (`hearth-delivery`).
    let name = thread_name();
    let mut args = sys::JavaVMAttachArgs {
        version: JNIVersion::V1_4.into(),
        name: name.as_ptr().cast_mut(),
        group: ptr::null_mut(),
    };
    let mut env = ptr::null_mut();
    let raw = vm.get_raw();
    // SAFETY: `raw` is the live JavaVM this library was loaded into; `env` and `args` outlive
    // the call, which copies the name.
    let status = unsafe {
        ((*(*raw)).v1_4.AttachCurrentThreadAsDaemon)(
            raw,
            &mut env,
            (&raw mut args).cast::<c_void>(),
        )
    };
    jni_error_code_to_result(status)
}

fn thread_name() -> CString {
    let name = std::thread::current().name().unwrap_or("hearth").to_owned();
    // A Rust thread name never contains NUL, so this can't fail; fall back rather than panic.
    CString::new(name).unwrap_or_else(|_| c"hearth".to_owned())
}

impl Drop for DaemonAttachment {
    fn drop(&mut self) {
        let raw = self.vm.get_raw();
        // SAFETY: this runs as the thread exits, after its last JNI call has returned, so no
        // `JNIEnv` of this thread is still in use.
        let status = unsafe { ((*(*raw)).v1_1.DetachCurrentThread)(raw) };
        if status != sys::JNI_OK {
            eprintln!(
                "hearth: detaching the delivery thread from the JVM failed (status {status})"
            );
        }
    }
}
