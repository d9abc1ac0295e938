//! What a connection's client is shown, chosen at `initialize` from the protocol version it
//! speaks and the capabilities it advertised: the wire (`v1.rs`: frames and the fallbacks for
//! what the client cannot show), how it is asked questions (forms or not), and the backend of its sessions' workspaces
//! (`acp/client_io/`). A second protocol version is a second wire module chosen here.

mod v1;

use std::sync::Arc;

use agent_client_protocol_schema::v1::ClientCapabilities;
use serde_json::Value;

use self::v1::{Shows, V1Wire};
use super::client::{AcpAsker, AcpClient};
use super::client_io::{ClientAbilities, ClientWorkspaces};
use crate::context::Connection;
use crate::io::LocalIo;

/// The connection a client gets for `capabilities` (Hearth speaks v1 whatever was asked).
pub fn connection(
    capabilities: &ClientCapabilities,
    client: Arc<AcpClient>,
    local: LocalIo,
) -> Connection {
    let session = capabilities.session.as_ref();
    let meta = capabilities.meta.as_ref();
    let shows = Shows {
        notices: session.is_some_and(|s| s.notices.is_some()),
        compaction: session.is_some_and(|s| s.compaction.is_some()),
        terminal_output: meta.and_then(|meta| meta.get("terminal_output"))
            == Some(&serde_json::Value::Bool(true)),
        session_failure: air_declares(meta, "sessionFailure"),
        subagents: capabilities.subagents.is_some(),
    };
    let abilities = ClientAbilities {
        read_text_file: capabilities.fs.read_text_file,
        write_text_file: capabilities.fs.write_text_file,
        terminal: capabilities.terminal,
    };
    let forms = capabilities
        .elicitation
        .as_ref()
        .is_some_and(|e| e.form.is_some());
    Connection {
        wire: Arc::new(V1Wire::new(shows)),
        asker: Arc::new(AcpAsker {
            client: client.clone(),
            forms,
        }),
        workspaces: Arc::new(ClientWorkspaces::new(client, abilities, local)),
    }
}

/// Whether the client declared the JetBrains AIR extension `name`:
/// `_meta.jetbrains.air = {version: integer ≥ 1, capabilities: [names]}`; a malformed
/// declaration enables nothing (as JetBrains' own agents read it).
fn air_declares(meta: Option<&serde_json::Map<String, Value>>, name: &str) -> bool {
    let Some(air) = meta
        .and_then(|m| m.get("jetbrains"))
        .and_then(|j| j.get("air"))
    else {
        return false;
    };
    let versioned = air
        .get("version")
        .and_then(Value::as_u64)
        .is_some_and(|v| v >= 1);
    let listed = air
        .get("capabilities")
        .and_then(Value::as_array)
        .is_some_and(|names| names.iter().any(|n| n == name));
    versioned && listed
}

/// The connection before `initialize`: a v1 client that advertised nothing.
pub fn before_initialize(client: Arc<AcpClient>, local: LocalIo) -> Connection {
    connection(&ClientCapabilities::default(), client, local)
}
