//! The ACP-client workspace backend (ACP v1's `fs/*` and `terminal/*`): each operation goes
//! through the client when it advertised the matching capability (so reads see unsaved editor
//! buffers, writes land in the editor, and commands run in its terminal unless the sandbox
//! confines them), and locally
//! otherwise. A method the client did not advertise is never called. What the client cannot
//! serve at all — stat, walks, canonicalization, deletes — is always local (ACP has no method
//! for them). `workspaces.rs` says which backend a connection's sessions get.
//!
//! Tests: `acp/client_io/tests.rs` (against a fake client), `core/tests/client_io.rs` (through
//! the whole engine).

mod terminal;
mod workspaces;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use self::terminal::run_in_terminal;
pub use self::workspaces::{ClientAbilities, ClientWorkspaces};
use crate::io::{CommandResult, CommandSpec, Io, IoError, LocalIo, Meta, WalkEntry, WalkSpec};

/// A request to the ACP client failed (or was withdrawn): what the client or the edge said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientError {
    pub message: String,
}

/// Requests to the ACP client (`acp::client::AcpClient` on the wire; a fake in the tests).
pub trait ClientPort: Send + Sync {
    /// Sends `method` with `params`. When `cancel` fires first the client is told
    /// (`$/cancel_request`) and the answer is an error.
    fn request<'a>(
        &'a self,
        method: &'a str,
        params: Value,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Value, ClientError>>;
}

/// One session's requests to the client, with the cancel rules `fs/*` and `terminal/*` need.
pub struct SessionClient {
    port: Arc<dyn ClientPort>,
    session_id: Arc<str>,
    /// The running turn's token: cancelling the turn withdraws pending file requests
    /// (`$/cancel_request`), whatever token the caller passed.
    turn: CancellationToken,
}

impl SessionClient {
    pub fn new(port: Arc<dyn ClientPort>, session_id: Arc<str>, turn: CancellationToken) -> Self {
        SessionClient {
            port,
            session_id,
            turn,
        }
    }
}

impl SessionClient {
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// Sends `method` with `params` (the caller adds `sessionId`), withdrawn when `cancel`
    /// fires — or, for file requests, when the turn is cancelled.
    pub fn request<'a>(
        &'a self,
        method: &'a str,
        params: Value,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Value, ClientError>> {
        Box::pin(async move {
            let token = match method {
                // File requests die with the turn, whatever the caller passed.
                m if m.starts_with("fs/") => self.turn.child_token(),
                // Never withdrawn: the client may already have started the command, and only
                // a terminal id we hold can be killed and released.
                "terminal/create" => {
                    let never = CancellationToken::new();
                    return self.port.request(method, params, &never).await;
                }
                // Other terminal requests (kill, release after a cancel) follow the caller.
                _ => CancellationToken::new(),
            };
            let request = self.port.request(method, params, &token);
            tokio::pin!(request);
            tokio::select! {
                answer = &mut request => answer,
                () = cancel.cancelled() => {
                    token.cancel();
                    request.await
                }
            }
        })
    }
}

pub struct ClientIo {
    client: Arc<SessionClient>,
    abilities: ClientAbilities,
    local: LocalIo,
}

impl ClientIo {
    pub fn new(client: Arc<SessionClient>, abilities: ClientAbilities, local: LocalIo) -> Self {
        ClientIo {
            client,
            abilities,
            local,
        }
    }

    async fn read_via_client(&self, path: &Path) -> Result<String, IoError> {
        // `Io` calls carry no cancel token: a cancelled turn drops this future instead.
        let never = CancellationToken::new();
        let answer = call(
            &self.client,
            "fs/read_text_file",
            json!({ "path": path }),
            &never,
        )
        .await
        .map_err(|e| failure(&format!("read {}", path.display()), e))?;
        match answer.get("content").and_then(Value::as_str) {
            Some(content) => Ok(content.to_owned()),
            None => Err(IoError(format!(
                "the editor answered fs/read_text_file for {} without text",
                path.display()
            ))),
        }
    }

    async fn write_via_client(&self, path: &Path, content: &str) -> Result<(), IoError> {
        let never = CancellationToken::new();
        call(
            &self.client,
            "fs/write_text_file",
            json!({ "path": path, "content": content }),
            &never,
        )
        .await
        .map_err(|e| failure(&format!("write {}", path.display()), e))?;
        Ok(())
    }
}

impl Io for ClientIo {
    fn read_text<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<String, IoError>> {
        if self.abilities.read_text_file {
            Box::pin(self.read_via_client(path))
        } else {
            self.local.read_text(path)
        }
    }

    fn read_bytes<'a>(
        &'a self,
        path: &'a Path,
        max: usize,
    ) -> BoxFuture<'a, Result<Vec<u8>, IoError>> {
        self.local.read_bytes(path, max)
    }

    fn write_text<'a>(
        &'a self,
        path: &'a Path,
        content: &'a str,
    ) -> BoxFuture<'a, Result<(), IoError>> {
        if self.abilities.write_text_file {
            Box::pin(self.write_via_client(path, content))
        } else {
            self.local.write_text(path, content)
        }
    }

    /// ACP has no `fs/*` method that deletes, so the file is removed from disk here; the
    /// editor learns of it as of any change on disk (an open buffer of it may stay open).
    fn remove_file<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<(), IoError>> {
        self.local.remove_file(path)
    }

    fn stat<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<Option<Meta>, IoError>> {
        self.local.stat(path)
    }

    fn canonicalize(&self, path: &Path) -> PathBuf {
        self.local.canonicalize(path)
    }

    fn walk(
        &self,
        spec: &WalkSpec,
        cancel: &CancellationToken,
        visit: &mut dyn FnMut(WalkEntry) -> bool,
    ) -> Result<(), IoError> {
        self.local.walk(spec, cancel, visit)
    }

    fn walk_parallel<'v>(
        &self,
        spec: &WalkSpec,
        cancel: &CancellationToken,
        visitor: &(dyn Fn() -> crate::io::Visit<'v> + Sync),
    ) -> Result<(), IoError> {
        self.local.walk_parallel(spec, cancel, visitor)
    }

    fn run_command<'a>(
        &'a self,
        spec: CommandSpec,
        output: UnboundedSender<String>,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<CommandResult, IoError>> {
        // Hearth cannot confine a process the client starts: while the sandbox confines
        // commands they run here, and the client is shown their output as a display terminal
        // (the tool call's `_meta.terminal_*`, `acp/wire/v1.rs`).
        let confined = spec
            .sandbox
            .as_ref()
            .is_some_and(|policy| policy.confines());
        if self.abilities.terminal && !confined {
            Box::pin(run_in_terminal(self.client.clone(), spec, output, cancel))
        } else {
            self.local.run_command(spec, output, cancel)
        }
    }
}

/// Sends `method` to the client with `fields` plus the session id.
pub(super) async fn call(
    client: &SessionClient,
    method: &str,
    mut fields: Value,
    cancel: &CancellationToken,
) -> Result<Value, ClientError> {
    fields["sessionId"] = json!(client.session_id());
    client.request(method, fields, cancel).await
}

/// A client error as a message for the model: what we tried, and what the editor said.
pub(super) fn failure(what: &str, error: ClientError) -> IoError {
    IoError(format!("the editor could not {what}: {}", error.message))
}

#[cfg(test)]
mod tests;
