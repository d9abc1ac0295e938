//! The sandbox where Hearth has no mechanism for the OS (or the kernel lacks one): the
//! command runs unconfined, and its result says backend "none" — unless the sandbox is
//! required, and then it does not run. The private temp dir is still made, so `TMPDIR`
//! points somewhere that exists.

use super::launch::{Launch, UNAVAILABLE};
use crate::sandbox::Policy;

/// Leaves the command as it is; "none", or why it must not start.
pub fn confine(_command: &mut std::process::Command, policy: &Policy) -> Result<String, String> {
    if policy.required {
        return Err(UNAVAILABLE.into());
    }
    std::fs::create_dir_all(&policy.temp_dir).map_err(|e| {
        format!(
            "cannot make the private temp dir {}: {e}",
            policy.temp_dir.display()
        )
    })?;
    Ok("none".into())
}

/// Nothing wraps the program: there is no sandbox to run it in.
pub fn wrap(_launch: &mut Launch, _policy: &Policy) -> Result<(), String> {
    Ok(())
}
