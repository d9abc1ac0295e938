//! Which backend serves a session's workspace on an ACP v1 connection: local when the client
//! advertised neither files nor a terminal, else the client's backend for what it advertised.
//!
//! Tests: `acp/client_io/tests.rs` (against a fake client), `core/tests/client_io.rs` (through
//! the whole engine).

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::{ClientIo, ClientPort, SessionClient};
use crate::io::{Io, LocalIo, Workspaces};

/// What the client said it can serve (from `initialize`'s `clientCapabilities`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientAbilities {
    pub read_text_file: bool,
    pub write_text_file: bool,
    pub terminal: bool,
}

/// The workspaces of one connection's sessions.
pub struct ClientWorkspaces {
    port: Arc<dyn ClientPort>,
    abilities: ClientAbilities,
    /// What serves the rest (its commands start through the engine's launcher).
    local: LocalIo,
}

impl ClientWorkspaces {
    pub fn new(port: Arc<dyn ClientPort>, abilities: ClientAbilities, local: LocalIo) -> Self {
        ClientWorkspaces {
            port,
            abilities,
            local,
        }
    }
}

impl Workspaces for ClientWorkspaces {
    fn workspace(&self, session_id: Arc<str>, turn: CancellationToken) -> Arc<dyn Io> {
        let abilities = self.abilities;
        if !(abilities.read_text_file || abilities.write_text_file || abilities.terminal) {
            return Arc::new(self.local.clone());
        }
        let client = SessionClient::new(self.port.clone(), session_id, turn);
        Arc::new(ClientIo::new(
            Arc::new(client),
            abilities,
            self.local.clone(),
        ))
    }
}
