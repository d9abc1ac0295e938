//! The Landlock rulesets, built in the parent: read and execute everywhere, every right on
//! the writable trees and the few devices any command writes. Rights are asked for at the
//! newest ABI the crate knows and the crate keeps what this kernel has (best effort), so
//! `Refer` (moves and links between directories, ABI 2) is handled wherever it exists and a
//! move inside the workspace works while one out of it is refused.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr,
};

/// The newest ABI asked for; the kernel's own bounds what is enforced.
const BEST: ABI = ABI::V10;

/// Devices a confined command may write (output thrown away, a terminal).
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/pts",
];

/// The kernel's Landlock ABI version (0 or less: none).
pub fn kernel_abi() -> i32 {
    // SAFETY: LANDLOCK_CREATE_RULESET_VERSION with a null attribute and size 0 only returns
    // the version; it reads and writes no memory.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32, // LANDLOCK_CREATE_RULESET_VERSION
        )
    };
    i32::try_from(version).unwrap_or(-1)
}

/// A ruleset fd for `writable`; with `deny_tcp`, TCP bind and connect are handled too, with
/// no port allowed (the fallback where no network namespace could be made).
pub fn create(writable: &[PathBuf], deny_tcp: bool) -> Result<OwnedFd, String> {
    let failed = |e: &dyn std::fmt::Display| format!("cannot build the Landlock ruleset: {e}");
    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(BEST))
        .map_err(|e| failed(&e))?;
    if deny_tcp {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(BEST))
            .map_err(|e| failed(&e))?;
    }
    let root = PathFd::new("/").map_err(|e| failed(&e))?;
    let mut created = ruleset
        .create()
        .map_err(|e| failed(&e))?
        .add_rule(PathBeneath::new(root, AccessFs::from_read(BEST)))
        .map_err(|e| failed(&e))?;
    let devices = DEVICES.iter().map(Path::new);
    for path in writable.iter().map(PathBuf::as_path).chain(devices) {
        // A tree that does not exist holds nothing to write to; the command's own attempt
        // fails with "No such file or directory", as it would unconfined.
        let Ok(fd) = PathFd::new(path) else { continue };
        let rights = if path.is_dir() {
            AccessFs::from_all(BEST)
        } else {
            AccessFs::from_file(BEST)
        };
        created = created
            .add_rule(PathBeneath::new(fd, rights))
            .map_err(|e| failed(&e))?;
    }
    Option::<OwnedFd>::from(created)
        .ok_or_else(|| "the kernel refused to create a Landlock ruleset".to_owned())
}
