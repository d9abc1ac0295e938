//! What every handler that opens a session shares — `session/new`, `load`, `resume`
//! (`session.rs`) and `session/fork` (`fork.rs`): checking the roots it names and spelling
//! them as the session row keeps them (which `session/list`'s `cwd` filter shares),
//! connecting its MCP servers, and what follows its response.

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
    check_cwd(cwd)?;
    match additional.iter().position(|d| !d.is_absolute()) {
        Some(i) => Err(RpcError::invalid_params(format!(
            "`additionalDirectories[{i}]` must be an absolute path, got `{}`",
            additional[i].display()
        ))),
        None => Ok(()),
    }
}

/// Refuses a `cwd` that is not absolute, naming the field.
pub fn check_cwd(cwd: &Path) -> Result<(), RpcError> {
    if cwd.is_absolute() {
        return Ok(());
    }
    Err(RpcError::invalid_params(format!(
        "`cwd` must be an absolute path, got `{}`",
        cwd.display()
    )))
}

/// A path as the session row keeps it, and as `session/list` compares it: its components
/// joined again, so that a trailing separator, a `.` component or a doubled separator spell
/// no other path (`/x/cwd/`, `/x/./cwd` and `/x//cwd` are all `/x/cwd`; on Windows the
/// separators become `\`). A `..` stays: where it leads depends on links. Rows stored before
/// this spelling keep theirs until a load or resume re-sends the roots.
pub fn path_string(path: impl AsRef<Path>) -> String {
    let joined: PathBuf = path.as_ref().components().collect();
    joined.to_string_lossy().into_owned()
}

/// Paths as the session row keeps them.
pub fn path_strings(paths: &[PathBuf]) -> Vec<String> {
    paths.iter().map(path_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_path_is_kept_without_trailing_separators_or_dot_components() {
        for spelled in ["/x/cwd", "/x/cwd/", "/x/cwd//", "/x/./cwd", "/x//cwd/."] {
            assert_eq!(path_string(spelled), "/x/cwd", "{spelled}");
        }
        assert_eq!(path_string("/"), "/");
        assert_eq!(path_string("/x/../cwd/"), "/x/../cwd");
    }

    #[cfg(windows)]
    #[test]
    fn a_path_is_kept_without_trailing_separators_or_dot_components() {
        for spelled in [r"C:\x\cwd", r"C:\x\cwd\", "C:/x/cwd/", r"C:\x\.\cwd"] {
            assert_eq!(path_string(spelled), r"C:\x\cwd", "{spelled}");
        }
        assert_eq!(path_string(r"C:\"), r"C:\");
    }
}
