//! The sandbox on Linux: a command's policy handed to `hearth-linux-sandbox` (Landlock,
//! seccomp, a network namespace, applied between fork and exec), and its private temp dir
//! made (owner only). Without Landlock the command runs unconfined and its result says
//! backend "none" — unless the sandbox is required, and then it does not run.

use hearth_linux_sandbox::{Rules, prepare};

use super::launch::{Launch, UNAVAILABLE};
use super::os::private_dir;
use crate::sandbox::Policy;

/// Confines the child `command` will start; the backend that does it, or why it must not
/// start.
pub fn confine(command: &mut std::process::Command, policy: &Policy) -> Result<String, String> {
    private_dir(&policy.temp_dir)?;
    let mut writable = policy.writable.clone();
    writable.push(policy.temp_dir.clone());
    let rules = Rules {
        writable,
        network: policy.network_allowed(),
    };
    match prepare(&rules)? {
        Some(prepared) => {
            let backend = format!("landlock ABI {} + seccomp", prepared.abi());
            prepared.install(command);
            Ok(backend)
        }
        None if policy.required => Err(UNAVAILABLE.into()),
        None => Ok("none".into()),
    }
}

/// Nothing wraps the program: Landlock and seccomp are applied in the child (`confine`).
pub fn wrap(_launch: &mut Launch, _policy: &Policy) -> Result<(), String> {
    Ok(())
}
