//! The Win32 calls behind Hearth's Windows process trees (`core/src/io/process/windows.rs`),
//! each behind a safe function: `hearth-core` forbids `unsafe`, so the FFI lives here, in a
//! crate small enough to read whole.
//!
//! - `job.rs`: a Job Object that kills every process in it when its last handle closes, and
//!   the start of a child inside it (assigned while suspended, then resumed);
//! - `console.rs`: Ctrl+Break to a console process group (the polite stop), and the creation
//!   flags a child gets.
//!
//! On every other OS the crate is empty.

#![cfg(windows)]

mod console;
mod job;

pub use console::{creation_flags, ctrl_break};
pub use job::Job;
