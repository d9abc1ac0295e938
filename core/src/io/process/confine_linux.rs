//! The sandbox on Linux: a command's policy handed to `hearth-linux-sandbox` (Landlock,
//! seccomp, a network namespace, applied between fork and exec), and its private temp dir
//! made (owner only). Without Landlock the command runs unconfined and its result says
//! backend "none" — unless the sandbox is required, and then it does not run.

use std::os::unix::fs::DirBuilderExt;

use hearth_linux_sandbox::{Rules, prepare};

use super::launch::UNAVAILABLE;
use crate::sandbox::Policy;

/// Confines the child `command` will start; the backend that does it, or why it must not
/// start.
pub fn confine(command: &mut std::process::Command, policy: &Policy) -> Result<String, String> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&policy.temp_dir)
        .map_err(|e| {
            format!(
                "cannot make the private temp dir {}: {e}",
                policy.temp_dir.display()
            )
        })?;
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
