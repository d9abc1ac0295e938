//! The Linux confinement of the children Hearth starts (`core/src/io/process/confine_linux.rs`
//! is its one caller), behind a safe API: `hearth-core` forbids `unsafe`, so the system calls
//! live here, in a crate small enough to read whole.
//!
//! Everything is prepared in the parent, before the fork: the Landlock rulesets (`ruleset.rs`)
//! and the seccomp programs (`filter.rs`). Between fork and exec the child only makes system
//! calls on what was prepared (`child.rs`), because the host may be a multi-threaded JVM, Node
//! or Python process, where a forked child may not allocate or take a lock.
//!
//! With the network off the child first enters a new user and network namespace, where only
//! its own loopback exists (so a test server on 127.0.0.1 inside still works); where no
//! namespace can be made it falls back to a seccomp filter that refuses every socket but
//! `AF_UNIX`, and to Landlock's TCP rules where the ABI has them.
//!
//! On every other OS the crate is empty.

#![cfg(target_os = "linux")]

mod child;
mod filter;
mod ruleset;

use std::os::unix::process::CommandExt;
use std::path::PathBuf;

/// What a child may do.
#[derive(Debug, Clone)]
pub struct Rules {
    /// Trees it may write (everything else it may only read and execute).
    pub writable: Vec<PathBuf>,
    /// Whether it may reach the network.
    pub network: bool,
}

/// The confinement of one child, ready to be installed on its command.
pub struct Prepared {
    steps: child::Steps,
    abi: i32,
}

/// The Landlock ABI this kernel offers; `None` without Landlock.
pub fn landlock_abi() -> Option<i32> {
    let abi = ruleset::kernel_abi();
    (abi > 0).then_some(abi)
}

/// Prepares the confinement `rules` describe; `Ok(None)` when this kernel has no Landlock
/// (then nothing would confine the child's writes, and the caller says so).
pub fn prepare(rules: &Rules) -> Result<Option<Prepared>, String> {
    let Some(abi) = landlock_abi() else {
        return Ok(None);
    };
    let primary = child::Variant {
        ruleset: ruleset::create(&rules.writable, false)?,
        filter: filter::program(false)?,
    };
    let fallback = if rules.network {
        None
    } else {
        Some(child::Variant {
            ruleset: ruleset::create(&rules.writable, true)?,
            filter: filter::program(true)?,
        })
    };
    Ok(Some(Prepared {
        steps: child::Steps::new(primary, fallback),
        abi,
    }))
}

impl Prepared {
    /// The Landlock ABI the child is confined with.
    pub fn abi(&self) -> i32 {
        self.abi
    }

    /// Confines the child `command` starts, between its fork and its exec. A step that fails
    /// fails the spawn with its OS error: a child is never started half-confined.
    pub fn install(self, command: &mut std::process::Command) {
        let steps = self.steps;
        // SAFETY: `apply` only makes system calls (unshare, open, write, close, socket,
        // ioctl, prctl, landlock_restrict_self) on buffers and descriptors built before the
        // fork; it allocates nothing and takes no lock, so it is async-signal-safe.
        unsafe {
            command.pre_exec(move || steps.apply());
        }
    }
}
