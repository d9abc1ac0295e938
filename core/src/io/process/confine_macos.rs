//! The sandbox on macOS: the command run as `/usr/bin/sandbox-exec -p <profile> -- <program>
//! <args>`, the profile generated from its policy (`crate::sandbox`'s `seatbelt.rs`: writes
//! only to the writable set, Hearth's own state denied, the network off unless on), which
//! every process the command starts inherits; and its private temp dir made (owner only).
//! The path is absolute so that no `sandbox-exec` earlier on `PATH` can stand in for it.
//!
//! Without `/usr/bin/sandbox-exec` the command runs unconfined and its result says backend
//! "none" — unless the sandbox is required, and then it does not run. Known gap: Hearth run
//! inside another sandbox (a nested `sandbox-exec`) cannot apply a profile; the command then
//! fails at its start (`sandbox_apply: Operation not permitted`) instead of being reported
//! as "unavailable" beforehand.

use std::ffi::OsString;
use std::path::Path;

use super::group::Group;
use super::launch::{Launch, UNAVAILABLE};
use super::os::private_dir;
use crate::sandbox::{Policy, seatbelt_profile};

const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The backend, as `_meta.hearth.sandbox.backend` names it.
pub const BACKEND: &str = "seatbelt (sandbox-exec)";

/// Whether `sandbox-exec` is where macOS keeps it.
pub fn available() -> bool {
    Path::new(SANDBOX_EXEC).exists()
}

/// A command's confinement, prepared: the backend its result names.
pub struct Confined {
    backend: &'static str,
}

/// A confinement installed on a command about to be spawned.
pub struct Pending {
    backend: &'static str,
}

/// Makes the private temp dir and wraps `launch` in `sandbox-exec` with `policy`'s profile;
/// why it must not start.
pub fn prepare(launch: &mut Launch, policy: &Policy) -> Result<Confined, String> {
    private_dir(&policy.temp_dir)?;
    if !available() {
        return if policy.required {
            Err(UNAVAILABLE.into())
        } else {
            Ok(Confined { backend: "none" })
        };
    }
    // No allowlist proxy on macOS yet: an allowlist means the network off.
    let profile = seatbelt_profile(policy, None);
    let program = std::mem::replace(&mut launch.program, SANDBOX_EXEC.into());
    let mut args: Vec<OsString> = vec!["-p".into(), profile.into(), "--".into(), program];
    args.append(&mut launch.args);
    launch.args = args;
    Ok(Confined { backend: BACKEND })
}

impl Confined {
    /// Nothing to do between fork and exec: `sandbox-exec` applies the profile itself.
    pub fn install(self, _command: &mut std::process::Command) -> Pending {
        Pending {
            backend: self.backend,
        }
    }
}

impl Pending {
    pub fn started(self, group: Group) -> Result<(Group, String), String> {
        Ok((group, self.backend.into()))
    }
}
