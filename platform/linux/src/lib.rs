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
//! `AF_UNIX`, and to Landlock's TCP rules where the ABI has them. With a proxy port it then
//! listens on `127.0.0.1:<port>` inside that namespace and hands the listening socket to the
//! parent (`handoff.rs`), whose proxy serves it: the only way out of the namespace.
//!
//! Without `landlock` (a wrapper such as bwrap confines the filesystem, and a landlocked
//! process may not mount) the child gets the namespace, no-new-privs and seccomp only; the
//! filter is inherited by the wrapper and by the command it runs.
//!
//! On every other OS the crate is empty.

#![cfg(target_os = "linux")]

mod child;
mod filter;
mod handoff;
mod ruleset;

use std::os::unix::process::CommandExt;
use std::path::PathBuf;

pub use handoff::Handoff;

/// What a child may do.
#[derive(Debug, Clone)]
pub struct Rules {
    /// Trees it may write (everything else it may only read and execute).
    pub writable: Vec<PathBuf>,
    /// Whether it may reach the network.
    pub network: bool,
    /// With the network off: the port of a listener on 127.0.0.1 inside the child's network
    /// namespace, handed to the parent (an allowlist proxy serves it).
    pub proxy_port: Option<u16>,
    /// Whether Landlock confines its writes (false: a wrapper does, which must mount).
    pub landlock: bool,
}

/// The confinement of one child, ready to be installed on its command.
pub struct Prepared {
    steps: child::Steps,
    abi: Option<i32>,
    handoff: Option<Handoff>,
}

/// The Landlock ABI this kernel offers; `None` without Landlock.
pub fn landlock_abi() -> Option<i32> {
    let abi = ruleset::kernel_abi();
    (abi > 0).then_some(abi)
}

/// Prepares the confinement `rules` describe; `Ok(None)` when they ask for Landlock and this
/// kernel has none (then nothing would confine the child's writes, and the caller says so).
pub fn prepare(rules: &Rules) -> Result<Option<Prepared>, String> {
    // No Landlock, no sandbox — even where bwrap would do the filesystem: such a kernel is
    // old, or is an emulator's host (qemu-user hands the seccomp program, built for the
    // guest's architecture, to the host kernel, which then refuses qemu's own calls).
    let Some(abi) = landlock_abi() else {
        return Ok(None);
    };
    let variant = |deny_network: bool| -> Result<child::Variant, String> {
        Ok(child::Variant {
            ruleset: match rules.landlock {
                true => Some(ruleset::create(&rules.writable, deny_network)?),
                false => None,
            },
            filter: filter::program(deny_network)?,
        })
    };
    let fallback = if rules.network {
        None
    } else {
        Some(variant(true)?)
    };
    let (handoff, sender) = match rules.proxy_port.filter(|_| !rules.network) {
        Some(port) => {
            let (handoff, sender) = handoff::pair().map_err(|e| {
                format!("cannot make the socket pair for the proxy's listener: {e}")
            })?;
            (Some(handoff), Some((port, sender)))
        }
        None => (None, None),
    };
    Ok(Some(Prepared {
        steps: child::Steps::new(variant(false)?, fallback, sender),
        abi: Some(abi).filter(|_| rules.landlock),
        handoff,
    }))
}

impl Prepared {
    /// The Landlock ABI the child is confined with; `None` when Landlock is not used.
    pub fn abi(&self) -> Option<i32> {
        self.abi
    }

    /// Confines the child `command` starts, between its fork and its exec. A step that fails
    /// fails the spawn with its OS error: a child is never started half-confined. With a
    /// proxy port, the end on which the child's listener arrives once it has started.
    pub fn install(self, command: &mut std::process::Command) -> Option<Handoff> {
        let steps = self.steps;
        // SAFETY: `apply` only makes system calls (unshare, open, write, close, socket,
        // ioctl, bind, listen, sendmsg, prctl, landlock_restrict_self) on buffers and
        // descriptors built before the fork or on its own stack; it allocates nothing and
        // takes no lock, so it is async-signal-safe.
        unsafe {
            command.pre_exec(move || steps.apply());
        }
        self.handoff
    }
}
