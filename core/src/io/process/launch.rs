//! The launcher: how every child Hearth starts is started. A child gets an explicit
//! environment — the engine's own, minus the provider credentials, plus what the child's
//! configuration gives it (an MCP entry's `env` may name a credential, and then it is passed)
//! — leads a process tree of its own, is killed if its handle is dropped, and passes through
//! the confinement policy, which may rewrite what is run or refuse it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::process::{Child, Command};

use super::group::Group;
use super::{OutputReader, confine, os};
use crate::sandbox::Policy;

/// Why a required sandbox refused to run a command where no backend confines it.
pub(super) const UNAVAILABLE: &str = "the sandbox is required (sandbox.required or \
    HEARTH_REQUIRE_SANDBOX=1) but this system has none (Landlock on Linux or \
    /usr/bin/sandbox-exec on macOS is needed)";

/// What a child is, for a confinement policy to decide by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildKind {
    /// A `run_command` shell.
    Command,
    /// An MCP stdio server.
    McpServer,
    /// A language server.
    LanguageServer,
}

/// One child about to be started: what a confinement policy sees and may rewrite. Not
/// `Debug`: its environment may hold a key an MCP entry named, which must not reach the log.
#[derive(Clone)]
pub struct Launch {
    pub kind: ChildKind,
    pub program: OsString,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    /// The child's whole environment (nothing else is inherited).
    pub env: Vec<(OsString, OsString)>,
    /// The sandbox it runs in (a `run_command` shell); `None`: unconfined.
    pub sandbox: Option<Policy>,
}

/// A confinement policy (a sandbox), applied to every child the launcher starts.
pub trait Confinement: Send + Sync {
    /// Rewrites what is started (a wrapper such as `bwrap` or `sandbox-exec` in front of the
    /// program, variables added or removed), or refuses it with a reason.
    fn confine(&self, launch: &mut Launch) -> Result<(), String>;

    /// Adjusts the command just before it is spawned (a crate allowed `unsafe` may install a
    /// pre-exec step here). Nothing by default.
    fn adjust(&self, _kind: ChildKind, _command: &mut Command) {}
}

/// Where a child's stdio goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stdio {
    /// stdin, stdout and stderr each piped (a stdio server).
    Piped,
    /// No stdin (a command waiting for input would hang until its timeout); stdout and stderr
    /// on one pipe, read through `Started::output`.
    Merged,
}

/// A started child.
pub struct Started {
    /// Its pipes are in it, for `Stdio::Piped`.
    pub child: Child,
    /// Its process tree.
    pub group: Group,
    /// Its merged output, for `Stdio::Merged`.
    pub output: Option<OutputReader>,
    /// The sandbox backend that confines it ("none" where the system has none); `None`
    /// when its launch asked for no sandbox.
    pub sandbox: Option<String>,
}

/// Why a child did not start.
#[derive(Debug)]
pub enum StartError {
    /// The confinement policy refused it.
    Refused(String),
    /// The OS could not start it.
    Io(std::io::Error),
}

pub struct Launcher {
    /// The environment every child starts from: the engine's, minus the credentials.
    base_env: Vec<(OsString, OsString)>,
    confinement: Option<Arc<dyn Confinement>>,
}

impl Launcher {
    /// A launcher passing on the engine's environment without the variables `credentials`.
    pub fn new(credentials: &[&str]) -> Self {
        Launcher::with_env(std::env::vars_os(), credentials)
    }

    /// A launcher passing on `env` (the engine's, in tests) without `credentials`.
    pub fn with_env(
        env: impl IntoIterator<Item = (OsString, OsString)>,
        credentials: &[&str],
    ) -> Self {
        let base_env = env
            .into_iter()
            .filter(|(name, _)| !credentials.iter().any(|secret| name == secret))
            .collect();
        Launcher {
            base_env,
            confinement: None,
        }
    }

    /// This launcher with every child it starts confined by `policy`.
    pub fn confined(self, policy: Arc<dyn Confinement>) -> Self {
        Launcher {
            confinement: Some(policy),
            ..self
        }
    }

    /// What starting `program` with `args` in `cwd` means, `own_env` added to (or replacing
    /// in) the base environment, before confinement.
    pub fn launch(
        &self,
        kind: ChildKind,
        program: &str,
        args: &[String],
        cwd: &Path,
        own_env: &[(String, String)],
    ) -> Launch {
        let mut env = self.base_env.clone();
        for (name, value) in own_env {
            env.retain(|(existing, _)| existing != name.as_str());
            env.push((name.into(), value.into()));
        }
        Launch {
            kind,
            program: program.into(),
            args: args.iter().map(OsString::from).collect(),
            cwd: cwd.to_owned(),
            env,
            sandbox: None,
        }
    }

    /// Starts `launch`, confined, with `stdio`, as the leader of a new process tree.
    pub fn start(&self, mut launch: Launch, stdio: Stdio) -> Result<Started, StartError> {
        if let Some(policy) = &self.confinement {
            policy.confine(&mut launch).map_err(StartError::Refused)?;
        }
        let sandbox = launch.sandbox.take().filter(Policy::confines);
        let confined = match &sandbox {
            Some(policy) => {
                for (name, dir) in policy.temp_env() {
                    launch.env.retain(|(existing, _)| existing != name);
                    launch.env.push((name.into(), dir.into()));
                }
                Some(confine::prepare(&mut launch, policy).map_err(StartError::Refused)?)
            }
            None => None,
        };
        let mut command = Command::new(&launch.program);
        os::pass_args(&mut command, &launch.program, &launch.args);
        command
            .env_clear()
            .envs(launch.env.iter().map(|(name, value)| (name, value)))
            .current_dir(&launch.cwd)
            .kill_on_drop(true);
        os::lead_a_tree(&mut command);
        let output = wire(&mut command, stdio).map_err(StartError::Io)?;
        if let Some(policy) = &self.confinement {
            policy.adjust(launch.kind, &mut command);
        }
        let pending = confined.map(|confined| confined.install(command.as_std_mut()));
        let child = command.spawn().map_err(StartError::Io)?;
        // `command` still holds copies of a merged pipe's write end; its end of file only
        // comes once they are closed.
        drop(command);
        let group = Group::led_by(&child).map_err(StartError::Io)?;
        let (group, backend) = match pending {
            Some(pending) => {
                let (group, backend) = pending.started(group).map_err(StartError::Refused)?;
                (group, Some(backend))
            }
            None => (group, None),
        };
        Ok(Started {
            child,
            group,
            output,
            sandbox: backend,
        })
    }
}

/// Sets `command`'s stdio as `stdio` says; the read end of a merged output.
fn wire(command: &mut Command, stdio: Stdio) -> std::io::Result<Option<OutputReader>> {
    match stdio {
        Stdio::Piped => {
            command
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            Ok(None)
        }
        Stdio::Merged => {
            let (stdout, stderr, reader) = os::merged_output()?;
            command
                .stdin(std::process::Stdio::null())
                .stdout(stdout)
                .stderr(stderr);
            Ok(Some(reader))
        }
    }
}
