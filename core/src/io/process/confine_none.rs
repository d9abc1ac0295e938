//! The sandbox where Hearth has no mechanism for the OS: the command runs unconfined, and its
//! result says backend "none" — unless the sandbox is required, and then it does not run.
//! The private temp dir is still made, so `TMPDIR` points somewhere that exists. The same
//! three steps as `confine_linux.rs`, each doing nothing more.

use super::group::Group;
use super::launch::{Launch, UNAVAILABLE};
use crate::sandbox::Policy;

pub struct Confined;

pub struct Pending;

/// Leaves the command as it is, or says why it must not start.
pub fn prepare(_launch: &mut Launch, policy: &Policy) -> Result<Confined, String> {
    if policy.required {
        return Err(UNAVAILABLE.into());
    }
    std::fs::create_dir_all(&policy.temp_dir).map_err(|e| {
        format!(
            "cannot make the private temp dir {}: {e}",
            policy.temp_dir.display()
        )
    })?;
    Ok(Confined)
}

impl Confined {
    pub fn install(self, _command: &mut std::process::Command) -> Pending {
        Pending
    }
}

impl Pending {
    pub fn started(self, group: Group) -> Result<(Group, String), String> {
        Ok((group, "none".into()))
    }
}
