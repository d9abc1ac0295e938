//! What every handler that opens a session shares — `session/new`, `load`, `resume`
//! (`session.rs`) and `session/fork` (`fork.rs`): checking the roots it names, connecting its
//! MCP servers, and what follows its response.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::mcp;
use crate::agent::commands;
use crate::mcp::{McpServerSpec, McpServers};
use crate::rpc::RpcError;
use crate::session;
use crate::session::actor::LiveSession;

/// Gives the session the config's servers and `requested`, started in its cwd (replacing
/// the ones it had); their failures are reported once the session's response is out.
pub fn connect_servers(
    live: &LiveSession,
    requested: Vec<McpServerSpec>,
) -> (Option<Arc<McpServers>>, CancellationToken) {
    let state = live.session.state();
    let (cwd, dirs) = (state.cwd.clone(), state.additional_dirs.clone());
    drop(state);
    let servers = mcp::connect(live.session.ctx(), &live.session.id, requested, &cwd, &dirs);
    let released = live.session.services().set_mcp(servers.clone());
    (servers, released)
}

/// What a session does once its response is out (never before: the client must know the
/// session first): report its servers' failures and their prompts' changes from now on, and
/// announce its current command list (the log holds no old lists).
pub fn after_answer(live: &LiveSession, servers: Option<&McpServers>, released: CancellationToken) {
    if let Some(servers) = servers {
        session::mcp::watch(live.session.clone(), servers, released);
    }
    commands::announce(&live.session, &*live.session);
}

/// Refuses a `cwd` or an additional directory that is not absolute, naming the field.
pub fn check_dirs(cwd: &Path, additional: &[PathBuf]) -> Result<(), RpcError> {
    if !cwd.is_absolute() {
        return Err(RpcError::invalid_params(format!(
            "`cwd` must be an absolute path, got `{}`",
            cwd.display()
        )));
    }
    match additional.iter().position(|d| !d.is_absolute()) {
        Some(i) => Err(RpcError::invalid_params(format!(
            "`additionalDirectories[{i}]` must be an absolute path, got `{}`",
            additional[i].display()
        ))),
        None => Ok(()),
    }
}

/// A path as the session row keeps it.
pub fn path_string(path: impl AsRef<Path>) -> String {
    path.as_ref().to_string_lossy().into_owned()
}

/// Paths as the session row keeps them.
pub fn path_strings(paths: &[PathBuf]) -> Vec<String> {
    paths.iter().map(path_string).collect()
}
