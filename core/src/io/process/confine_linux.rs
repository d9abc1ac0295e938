//! The sandbox on Linux: a command's policy turned into its layers, in three steps around the
//! spawn. Before the command is built ([`prepare`]): the private temp dir made (owner only);
//! the bwrap layer chosen (`bwrap.rs`: where bwrap is installed and `sandbox.bwrap` is not
//! "off", the program is rewritten to run inside it, and bwrap does the filesystem) or else
//! Landlock; the proxy variables set under an allowlist; the rest prepared in the parent by
//! `hearth-linux-sandbox` (the network namespace, no-new-privs, seccomp, Landlock). Then
//! [`Confined::install`] puts those steps between fork and exec. Once the child started,
//! [`Pending::started`] takes the proxy's listener it made in its namespace and serves it
//! (`proxy.rs`), for as long as the process tree lives. Without Landlock and without bwrap
//! the command runs unconfined and its result says backend "none" — unless the sandbox is
//! required, and then it does not run.

use hearth_linux_sandbox::{Handoff, Prepared, Rules, prepare as prepare_rules};

use super::group::Group;
use super::launch::{Launch, UNAVAILABLE};
use super::os::private_dir;
use super::probe::{BWRAP_BACKEND, landlock_backend};
use super::{bwrap, proxy};
use crate::sandbox::{Bwrap, Policy};

/// The port the proxy listens on inside the command's namespace (its own: no other process
/// shares the namespace's loopback, so a fixed port is free).
const PROXY_PORT: u16 = 3128;

/// A command's confinement, prepared; `None` inside: it runs unconfined.
pub struct Confined {
    prepared: Option<Prepared>,
    backend: String,
    allowlist: Option<Vec<String>>,
}

/// A confinement installed on a command about to be spawned.
pub struct Pending {
    backend: String,
    proxy: Option<(Handoff, Vec<String>)>,
}

/// Prepares the confinement of `launch` under `policy`, rewriting it for the bwrap layer and
/// the proxy; why it must not start.
pub fn prepare(launch: &mut Launch, policy: &Policy) -> Result<Confined, String> {
    private_dir(&policy.temp_dir)?;
    let mut writable = policy.writable.clone();
    writable.push(policy.temp_dir.clone());
    let wrapper = match policy.bwrap {
        Bwrap::Auto => bwrap::find(&writable),
        Bwrap::Off => None,
    };
    let allowlist = policy.allowlist().map(<[String]>::to_vec);
    let rules = Rules {
        writable,
        network: policy.network_allowed(),
        proxy_port: allowlist.as_ref().map(|_| PROXY_PORT),
        landlock: wrapper.is_none(),
    };
    let Some(prepared) = prepare_rules(&rules)? else {
        return match policy.required {
            true => Err(UNAVAILABLE.into()),
            false => Ok(Confined {
                prepared: None,
                backend: "none".into(),
                allowlist: None,
            }),
        };
    };
    // Without Landlock in the rules there is no ABI: bwrap does the filesystem.
    let mut backend = prepared
        .abi()
        .map_or(BWRAP_BACKEND.to_owned(), landlock_backend);
    if let Some(bwrap) = wrapper {
        bwrap::wrap(launch, bwrap, &policy.roots, &rules.writable);
    }
    if allowlist.is_some() {
        for (name, value) in proxy::env(PROXY_PORT) {
            launch.env.retain(|(existing, _)| existing != name);
            launch.env.push((name.into(), value.into()));
        }
        backend.push_str(" + allowlist proxy");
    }
    Ok(Confined {
        prepared: Some(prepared),
        backend,
        allowlist,
    })
}

impl Confined {
    /// Installs the steps on `command`, just before it is spawned.
    pub fn install(self, command: &mut std::process::Command) -> Pending {
        let handoff = self.prepared.and_then(|prepared| prepared.install(command));
        Pending {
            backend: self.backend,
            proxy: handoff.zip(self.allowlist),
        }
    }
}

impl Pending {
    /// Once the command started: its proxy served for as long as `group` lives; the backend
    /// that confines it.
    pub fn started(self, group: Group) -> Result<(Group, String), String> {
        let Some((handoff, allowlist)) = self.proxy else {
            return Ok((group, self.backend));
        };
        let failed = |e: std::io::Error| format!("cannot serve the sandbox's proxy: {e}");
        match handoff.receive().map_err(failed)? {
            Some(listener) => {
                let proxy = proxy::serve(listener, allowlist).map_err(failed)?;
                Ok((group.serving(proxy), self.backend))
            }
            // No namespace could be made: the child fell back to the network off.
            None => Ok((
                group,
                self.backend.replace(
                    "allowlist proxy",
                    "no network namespace for the allowlist proxy, so the network is off",
                ),
            )),
        }
    }
}
