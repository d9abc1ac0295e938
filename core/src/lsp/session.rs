//! A session's use of the engine's language servers: the servers it holds (let go when it
//! closes), and what every LSP-backed answer begins with — the file's server, running, with
//! the file's current content as the agent sees it (through the workspace port, so an
//! editor's unsaved buffer is what gets analysed).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use super::connection::Connection;
use super::server::{Server, Timeouts};
use super::servers::Servers;
use super::spec::ServerSpec;
use crate::io::{Io, IoError};

/// A session's hold on the engine's language servers.
pub struct Lsp {
    servers: Arc<Servers>,
    held: Mutex<Vec<Arc<Server>>>,
    released: AtomicBool,
}

/// What opening a file needs of the call that asks: where the file is read (the workspace
/// port), the session's roots and working directory (which server root serves it), and the
/// turn's token (a wait for a start gives up with it). The tools build it from their call's
/// context.
pub struct Caller<'a> {
    pub io: &'a dyn Io,
    pub roots: &'a [PathBuf],
    pub cwd: &'a Path,
    pub cancel: &'a CancellationToken,
}

/// Why a file could not be opened in its server, written for the model.
#[derive(Debug)]
pub struct OpenError(pub String);

impl From<IoError> for OpenError {
    fn from(error: IoError) -> Self {
        OpenError(error.0)
    }
}

/// A file open in its running server.
pub struct Opened {
    pub connection: Arc<Connection>,
    pub server: String,
    pub uri: String,
    /// The content the server now has.
    pub text: String,
    /// What `Connection::sync` returned, to wait for pushed diagnostics of `text`.
    pub synced: (i32, u64),
    pub timeouts: Timeouts,
    /// Whether the server is started again if it ends during this call.
    pub may_restart: bool,
    /// This call's turn on the connection, until the answer is in (`Connection::take_turn`).
    _turn: tokio::sync::OwnedMutexGuard<()>,
}

impl Lsp {
    pub fn new(servers: Arc<Servers>) -> Self {
        Lsp {
            servers,
            held: Mutex::new(Vec::new()),
            released: AtomicBool::new(false),
        }
    }

    /// An `Lsp` that serves no file (tests of other tools).
    #[cfg(test)]
    pub fn none() -> Arc<Self> {
        let config = crate::config::Config::from_json(
            r#"{"lsp": {"servers": {"python": null, "typescript": null, "rust": null}}}"#,
        )
        .unwrap();
        let launcher = crate::io::testing::launcher();
        Arc::new(Lsp::new(Arc::new(Servers::new(
            &config,
            launcher,
            Default::default(),
        ))))
    }

    /// Whether a server is configured for `path`.
    pub fn serves(&self, path: &Path) -> bool {
        self.servers.spec_for(path).is_some()
    }

    /// Opens `path` with its current content in its server (started if needed).
    pub async fn open<'a>(
        &self,
        caller: impl Into<Caller<'a>>,
        path: &Path,
    ) -> Result<Opened, OpenError> {
        let caller = caller.into();
        let text = caller.io.read_text(path).await?;
        self.open_with(caller, path, &text).await
    }

    /// Opens `path` in its server with `text` as its content.
    pub async fn open_with<'a>(
        &self,
        caller: impl Into<Caller<'a>>,
        path: &Path,
        text: &str,
    ) -> Result<Opened, OpenError> {
        let ctx = caller.into();
        let spec = self.servers.spec_for(path).ok_or_else(|| no_server(path))?;
        let server = self
            .hold(spec, &root_of(&ctx, path))
            .ok_or_else(|| OpenError("unavailable: the engine is closing".into()))?;
        let running = server
            .connection(ctx.cancel)
            .await
            .map_err(|reason| unavailable(spec, &reason))?;
        let connection = running.connection;
        let uri = super::uri(path);
        let turn = tokio::select! {
            turn = connection.take_turn() => turn,
            _ = ctx.cancel.cancelled() => return Err(OpenError("cancelled".into())),
        };
        let synced = connection.sync(&uri, &spec.language_id(path), text).await;
        Ok(Opened {
            connection,
            server: spec.name.clone(),
            uri,
            text: text.to_owned(),
            synced,
            timeouts: server.timeouts,
            may_restart: running.may_restart,
            _turn: turn,
        })
    }

    /// The server `spec` on `root`, held by this session from now until it closes.
    fn hold(&self, spec: &ServerSpec, root: &Path) -> Option<Arc<Server>> {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        if self.released.load(Ordering::Acquire) {
            return None;
        }
        if let Some(server) = held
            .iter()
            .find(|s| s.spec.name == spec.name && s.root == root)
        {
            return Some(server.clone());
        }
        let server = self.servers.acquire(spec, root)?;
        held.push(server.clone());
        Some(server)
    }

    /// Lets every held server go (the session is closing); later calls do nothing.
    pub fn release(&self) {
        let held = {
            let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
            self.released.store(true, Ordering::Release);
            std::mem::take(&mut *held)
        };
        for server in &held {
            self.servers.release(server);
        }
    }
}

impl Drop for Lsp {
    fn drop(&mut self) {
        self.release();
    }
}

/// The session root `path` lies in (the innermost), else the working directory: one server
/// per root.
fn root_of(ctx: &Caller<'_>, path: &Path) -> PathBuf {
    ctx.roots
        .iter()
        .filter(|root| path.starts_with(root))
        .max_by_key(|root| root.components().count())
        .map_or(ctx.cwd, PathBuf::as_path)
        .to_path_buf()
}

fn no_server(path: &Path) -> OpenError {
    let what = match path.extension() {
        Some(extension) => format!(".{} files", extension.to_string_lossy()),
        None => format!("{} (it has no extension)", path.display()),
    };
    OpenError(format!(
        "unavailable: no language server is configured for {what} (config `lsp.servers`)"
    ))
}

fn unavailable(spec: &ServerSpec, reason: &str) -> OpenError {
    // A default that cannot start is most often missing or too old (TypeScript 5's `tsc` has
    // no `--lsp`): say how to install the right one. A server that kept crashing is not.
    let hint = spec
        .install_hint()
        .filter(|_| !reason.starts_with(super::server::CRASHED_AGAIN))
        .map(|hint| format!(" — {hint}"))
        .unwrap_or_default();
    OpenError(format!(
        "unavailable: the {} language server (`{}`) cannot be used: {reason}{hint}",
        spec.name, spec.command
    ))
}
