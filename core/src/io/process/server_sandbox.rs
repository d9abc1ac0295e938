//! The sandbox of a stdio server (a language server; an MCP server that opted in): the policy
//! of a `run_command` child, over the server's own roots, with a private temp dir of its own
//! (servers outlive commands and may be shared by sessions, so the session's temp dir would
//! be the wrong one), removed when the server is let go. `XDG_CACHE_HOME` points into that
//! dir: the caches servers write under `~/.cache` (TypeScript's typings, pyright's and
//! rust-analyzer's scratch files) are read-only under the sandbox, and a server that cannot
//! write its cache may fail to start; inside the workspace (rust-analyzer's `target/`) they
//! are writable anyway in workspace-write. With the network off, `CARGO_NET_OFFLINE` tells the
//! cargo a server runs (rust-analyzer's `cargo metadata` of the project and of the sysroot)
//! so: otherwise cargo spends about 11 s retrying each download it cannot make, twice at
//! rust-analyzer's start, before the server falls back to what is on disk. Servers run under
//! Landlock (and seccomp, the network namespace), never the bwrap layer (see `new`).

use std::path::{Path, PathBuf};

use super::launch::Launch;
use crate::ids::new_id;
use crate::sandbox::{Bwrap, Network, Policy, Setup};

/// A server's policy and its private temp dir; dropping it removes the dir.
pub struct ServerSandbox {
    policy: Policy,
}

impl ServerSandbox {
    /// The sandbox of a server of `kind` (`lsp`, `mcp`: it names the temp dir) writing
    /// `roots`; why it cannot be (a root holding Hearth's own state).
    pub fn new(setup: &Setup, roots: &[&Path], kind: &str) -> Result<Self, String> {
        let canonical_of = |root: &Path| dunce::canonicalize(root).unwrap_or_else(|_| root.into());
        let canonical: Vec<PathBuf> = roots.iter().map(|root| canonical_of(root)).collect();
        let system = std::env::temp_dir();
        let system = dunce::canonicalize(&system).unwrap_or(system);
        let temp_dir = system.join(new_id(&format!("hearth-{kind}")));
        let mut policy = Policy::new(&setup.resolved(canonical_of), &canonical, temp_dir)?;
        // Servers keep to Landlock: bwrap's private `/tmp` would hide the files outside the
        // roots a client opens in them (a scratch file in /tmp), and its pid namespace the
        // server's pid from whoever reads it (its own logs, crash reports, the tests).
        policy.bwrap = Bwrap::Off;
        Ok(ServerSandbox { policy })
    }

    /// Confines `launch` by this sandbox, its cache pointed inside the temp dir, cargo told
    /// when it has no network.
    pub fn apply(&self, launch: &mut Launch) {
        let cache = self.policy.temp_dir.join("cache");
        set_env(launch, "XDG_CACHE_HOME", cache.into());
        if self.offline() {
            set_env(launch, "CARGO_NET_OFFLINE", "true".into());
        }
        launch.sandbox = Some(self.policy.clone());
    }

    /// Whether the server can reach no network at all (an allowlist goes through the proxy).
    fn offline(&self) -> bool {
        self.policy.confines() && self.policy.network == Network::Off
    }

    /// What a failure reason of the server confined by `backend` adds: that it ran in the
    /// sandbox, which may be why, and `way_out`, the setting that runs it without. Nothing
    /// when no backend confined it ("none").
    pub fn failure_note(&self, backend: &str, way_out: &str) -> String {
        if backend == "none" {
            return String::new();
        }
        format!(
            " (it ran in the sandbox: {}, {backend}; if the sandbox stops it, {way_out} runs \
             it unconfined)",
            self.policy.describe()
        )
    }
}

/// Sets `name` in `launch`'s environment, replacing what the config gave it.
fn set_env(launch: &mut Launch, name: &str, value: std::ffi::OsString) {
    launch.env.retain(|(existing, _)| existing != name);
    launch.env.push((name.into(), value));
}

impl Drop for ServerSandbox {
    fn drop(&mut self) {
        // Made by the confinement at the server's start; nothing to remove when it never
        // started.
        let _ = std::fs::remove_dir_all(&self.policy.temp_dir);
    }
}
