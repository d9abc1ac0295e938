//! The sandbox on macOS: the command run as `/usr/bin/sandbox-exec -p <profile> -- <program>
//! <args>`, the profile generated from its policy (`crate::sandbox`'s `seatbelt.rs`: writes
//! only to the writable set, Hearth's own state denied, the network off unless on), which
//! every process the command starts inherits; and its private temp dir made (owner only).
//! Under an allowlist, Hearth's proxy (`proxy.rs`) listens on a loopback port of its own and
//! the profile lets the command reach that port and nothing else: the same proxy and
//! refusals as on Linux, reached through the proxy variables.
//! The path is absolute so that no `sandbox-exec` earlier on `PATH` can stand in for it.
//!
//! Without `/usr/bin/sandbox-exec` the command runs unconfined and its result says backend
//! "none" — unless the sandbox is required, and then it does not run. Known gap: Hearth run
//! inside another sandbox (a nested `sandbox-exec`) cannot apply a profile; the command then
//! fails at its start (`sandbox_apply: Operation not permitted`) instead of being reported
//! as "unavailable" beforehand.

use std::ffi::OsString;
use std::net::TcpListener;
use std::os::fd::OwnedFd;
use std::path::Path;

use super::group::Group;
use super::launch::{Launch, UNAVAILABLE};
use super::os::private_dir;
use super::proxy;
use crate::sandbox::{Policy, seatbelt_profile};

const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The backend, as `_meta.hearth.sandbox.backend` names it.
pub const BACKEND: &str = "seatbelt (sandbox-exec)";
const BACKEND_PROXIED: &str = "seatbelt (sandbox-exec) + allowlist proxy";

/// Whether `sandbox-exec` is where macOS keeps it.
pub fn available() -> bool {
    Path::new(SANDBOX_EXEC).exists()
}

/// A command's confinement, prepared: the backend its result names, and under an allowlist
/// the proxy's listener and the hosts it lets through.
pub struct Confined {
    backend: &'static str,
    proxy: Option<(OwnedFd, Vec<String>)>,
}

/// A confinement installed on a command about to be spawned.
pub struct Pending {
    backend: &'static str,
    proxy: Option<(OwnedFd, Vec<String>)>,
}

/// Makes the private temp dir and wraps `launch` in `sandbox-exec` with `policy`'s profile;
/// under an allowlist, Hearth's proxy listens on a loopback port of its own, the one address
/// the profile lets the command reach; why it must not start.
pub fn prepare(launch: &mut Launch, policy: &Policy) -> Result<Confined, String> {
    private_dir(&policy.temp_dir)?;
    if !available() {
        return if policy.required {
            Err(UNAVAILABLE.into())
        } else {
            Ok(Confined {
                backend: "none",
                proxy: None,
            })
        };
    }
    let proxy = match policy.allowlist() {
        Some(hosts) => {
            let listener = TcpListener::bind("127.0.0.1:0")
                .map_err(|e| format!("cannot open the sandbox's proxy: {e}"))?;
            let port = listener.local_addr().map_err(|e| e.to_string())?.port();
            for (name, value) in proxy::env(port) {
                launch.env.retain(|(existing, _)| existing != name);
                launch.env.push((name.into(), value.into()));
            }
            Some((port, OwnedFd::from(listener), hosts.to_vec()))
        }
        None => None,
    };
    let profile = seatbelt_profile(policy, proxy.as_ref().map(|(port, ..)| *port));
    let program = std::mem::replace(&mut launch.program, SANDBOX_EXEC.into());
    let mut args: Vec<OsString> = vec!["-p".into(), profile.into(), "--".into(), program];
    args.append(&mut launch.args);
    launch.args = args;
    Ok(Confined {
        backend: if proxy.is_some() {
            BACKEND_PROXIED
        } else {
            BACKEND
        },
        proxy: proxy.map(|(_, listener, hosts)| (listener, hosts)),
    })
}

impl Confined {
    /// Nothing to do between fork and exec: `sandbox-exec` applies the profile itself.
    pub fn install(self, _command: &mut std::process::Command) -> Pending {
        Pending {
            backend: self.backend,
            proxy: self.proxy,
        }
    }
}

impl Pending {
    /// Once the command started: its proxy served for as long as `group` lives.
    pub fn started(self, group: Group) -> Result<(Group, String), String> {
        let Some((listener, hosts)) = self.proxy else {
            return Ok((group, self.backend.into()));
        };
        let served = proxy::serve(listener, hosts)
            .map_err(|e| format!("cannot serve the sandbox's proxy: {e}"))?;
        Ok((group.serving(served), self.backend.into()))
    }
}
