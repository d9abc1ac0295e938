//! Every child process Hearth starts — `run_command`'s shells, MCP stdio servers, language
//! servers — goes through here.
//!
//! - `launch.rs`: the [`Launcher`], built once per engine: a child's explicit environment (the
//!   engine's without the provider credentials, plus its own), its stdio, and the
//!   [`Confinement`] hook through which a sandbox rewrites or refuses any child;
//! - `group.rs`: the [`Group`], the child's whole process tree: signalled, stopped politely
//!   then by force, waited for, killed when dropped;
//! - `server.rs`: a stdio server's start on top of the launcher, its stderr to the log, why it
//!   ended; `server_sandbox.rs`: the sandbox of a server (a language server by default, an MCP
//!   server that opted in): its roots, a private temp dir and cache of its own;
//! - `unix.rs`, `windows.rs`: everything OS-specific (a process tree: a process group and its
//!   signals on Unix, a Job Object on Windows; the merged output pipe; the shell). Another OS is one file
//!   beside them, with the same few items; nothing outside them names an OS type;
//! - `confine_linux.rs`, `confine_macos.rs`, `confine_none.rs`: the sandbox of a child whose
//!   [`Launch`] carries a policy (`crate::sandbox`) — Landlock or the bwrap layer
//!   (`bwrap.rs`), seccomp and a network namespace on Linux (`platform/linux`), the
//!   allowlist proxy serving that namespace (`proxy.rs`); `sandbox-exec` with a generated
//!   Seatbelt profile on macOS; backend "none" elsewhere (Windows: unavailable). Each works
//!   in three steps around the spawn: `prepare` (rewrites what is run, before the command is
//!   built), `Confined::install` (between fork and exec), `Pending::started` (the backend's
//!   name, once the child runs).

#[cfg(target_os = "linux")]
mod bwrap;
#[cfg(target_os = "linux")]
mod confine_linux;
#[cfg(target_os = "linux")]
use confine_linux as confine;
#[cfg(target_os = "macos")]
mod confine_macos;
#[cfg(target_os = "macos")]
use confine_macos as confine;
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
mod confine_none;
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
use confine_none as confine;
mod group;
mod launch;
mod probe;
#[cfg(any(target_os = "linux", target_os = "macos"))]
mod proxy;
mod server;
mod server_sandbox;
#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as os;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as os;

pub use group::Group;
pub use launch::{ChildKind, Confinement, Launch, Launcher, StartError, Started, Stdio};
pub use os::{exit_parts, shell};
pub use probe::{BWRAP_BACKEND, sandbox_available, sandbox_backend};
pub use server::{LastLine, Spawned, exit_reason, exit_status, start_server};
pub use server_sandbox::ServerSandbox;

/// The read end of a child's merged stdout and stderr.
pub type OutputReader = Box<dyn tokio::io::AsyncRead + Send + Unpin>;

/// The shell `run_command` runs a command line with: its program and the arguments before
/// the command line.
#[derive(Debug)]
pub struct Shell {
    pub program: &'static str,
    pub flags: &'static [&'static str],
}

impl Shell {
    /// The arguments that run `command`.
    pub fn args(&self, command: &str) -> Vec<String> {
        let mut args: Vec<String> = self.flags.iter().map(|&flag| flag.to_owned()).collect();
        args.push(command.to_owned());
        args
    }

    /// How the model is told what runs its command lines, e.g. "`sh -c`".
    pub fn invocation(&self) -> String {
        format!("`{} {}`", self.program, self.flags.join(" "))
    }
}

#[cfg(test)]
mod tests;
