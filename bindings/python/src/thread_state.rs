//! Keeps the engine's delivery thread known to the interpreter between frames.
//!
//! The delivery thread is not a Python thread. Attaching it (`Python::attach`, i.e.
//! `PyGILState_Ensure`) when it has no Python thread state creates one, and detaching deletes
//! it again once nothing else holds it. Per frame that is a thread state built and torn down,
//! including its frame stack (an mmap and munmap, with the TLB shootdown that follows): a
//! `perf` profile of a 100,000-frame `session/load` showed it as most of the delivery
//! thread's time, capping a Python host at ~45,000 frames/s.
//!
//! So the first frame on a thread takes one more hold on its thread state and releases only
//! the GIL; every later attach finds the state there and costs a GIL hand-off alone. The hold
//! is let go when the thread ends (the engine's close joins it).

use std::cell::RefCell;

use pyo3::ffi;

/// The extra hold on this thread's Python thread state; released when the thread exits.
struct Held {
    state: ffi::PyGILState_STATE,
    detached: *mut ffi::PyThreadState,
}

impl Drop for Held {
    fn drop(&mut self) {
        // Once the interpreter starts finalizing it reports itself uninitialized and frees
        // every thread state on its own; taking the GIL then would stop this thread. The
        // check and the use can race with the start of finalization, as they do in pyo3's
        // own attach.
        // SAFETY: `Py_IsInitialized` is callable from any thread. `detached` is the state
        // `PyEval_SaveThread` returned on this thread, still alive because of our hold; it
        // takes the GIL back so that the matching `PyGILState_Release` can drop the hold,
        // which deletes the state and releases the GIL.
        unsafe {
            if ffi::Py_IsInitialized() != 0 {
                ffi::PyEval_RestoreThread(self.detached);
                ffi::PyGILState_Release(self.state);
            }
        }
    }
}

thread_local! {
    static HELD: RefCell<Option<Held>> = const { RefCell::new(None) };
}

/// Makes sure this thread keeps a Python thread state until it exits. Cheap after the
/// first call on a thread. Does nothing while the interpreter is not running (the attach
/// that follows declines then too). Only for threads that are not attached when they call
/// it, such as the engine's delivery thread.
pub fn keep() {
    // `try_with` fails only while this thread's locals are being destroyed, at its exit.
    let _ = HELD.try_with(|held| {
        let mut held = held.borrow_mut();
        if held.is_some() {
            return;
        }
        // SAFETY: the interpreter is initialized (checked first) and this thread is not
        // attached (see above). Ensure creates this thread's state and takes the GIL;
        // SaveThread gives the GIL back but leaves the state, and our hold on it, in place.
        *held = unsafe {
            (ffi::Py_IsInitialized() != 0).then(|| {
                let state = ffi::PyGILState_Ensure();
                Held {
                    state,
                    detached: ffi::PyEval_SaveThread(),
                }
            })
        };
    });
}
