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

use super::launch::{Launch, UNAVAILABLE};
use super::os::private_dir;
use crate::sandbox::{Policy, seatbelt_profile};

const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The backend, as `_meta.hearth.sandbox.backend` names it.
const BACKEND: &str = "seatbelt (sandbox-exec)";

/// Wraps `launch` in `sandbox-exec` with `policy`'s profile; why it must not start.
pub fn wrap(launch: &mut Launch, policy: &Policy) -> Result<(), String> {
    if !Path::new(SANDBOX_EXEC).exists() {
        return if policy.required {
            Err(UNAVAILABLE.into())
        } else {
            Ok(())
        };
    }
    // The allowlist proxy is not built yet: an allowlist means the network off.
    let profile = seatbelt_profile(policy, None);
    let program = std::mem::replace(&mut launch.program, SANDBOX_EXEC.into());
    let mut args: Vec<OsString> = vec!["-p".into(), profile.into(), "--".into(), program];
    args.append(&mut launch.args);
    launch.args = args;
    Ok(())
}

/// Makes the private temp dir; the backend that confines the child `wrap` rewrote.
pub fn confine(_command: &mut std::process::Command, policy: &Policy) -> Result<String, String> {
    private_dir(&policy.temp_dir)?;
    let backend = if Path::new(SANDBOX_EXEC).exists() {
        BACKEND
    } else {
        "none"
    };
    Ok(backend.into())
}
