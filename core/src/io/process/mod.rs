//! Every child process Hearth starts — `run_command`'s shells, MCP stdio servers, language
//! servers — goes through here.
//!
//! - `launch.rs`: the [`Launcher`], built once per engine: a child's explicit environment (the
//!   engine's without the provider credentials, plus its own), its stdio, and the
//!   [`Confinement`] hook through which a sandbox rewrites or refuses any child;
//! - `group.rs`: the [`Group`], the child's whole process tree: signalled, stopped politely
//!   then by force, waited for, killed when dropped;
//! - `server.rs`: a stdio server's start on top of the launcher, its stderr to the log, why it
//!   ended;
//! - `unix.rs`: everything OS-specific (process groups, signals, the merged output pipe).
//!   Another OS is one file beside it, with the same few items; nothing outside it names a
//!   Unix type.

mod group;
mod launch;
mod server;
#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as os;

pub use group::Group;
pub use launch::{ChildKind, Confinement, Launch, Launcher, StartError, Started, Stdio};
pub use os::exit_parts;
pub use server::{LastLine, Spawned, exit_reason, exit_status, start_server};

/// The read end of a child's merged stdout and stderr.
pub type OutputReader = Box<dyn tokio::io::AsyncRead + Send + Unpin>;

#[cfg(test)]
mod tests;
