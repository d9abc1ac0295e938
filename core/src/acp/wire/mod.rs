//! What a connection's client is shown, chosen at `initialize` from the protocol version it
//! speaks and the capabilities it advertised: the wire (`v1.rs`: frames and the fallbacks for
//! what the client cannot show) and the backend of its sessions' workspaces
//! (`acp/client_io/`). A second protocol version is a second wire module chosen here.

mod v1;

use std::sync::Arc;

use agent_client_protocol_schema::v1::ClientCapabilities;

use self::v1::{Shows, V1Wire};
use super::client_io::{ClientAbilities, ClientPort, ClientWorkspaces};
use crate::context::Connection;
use crate::io::LocalIo;

/// The connection a client gets for `capabilities` (Hearth speaks v1 whatever was asked).
pub fn connection(
    capabilities: &ClientCapabilities,
    client: Arc<dyn ClientPort>,
    local: LocalIo,
) -> Connection {
    let session = capabilities.session.as_ref();
    let shows = Shows {
        notices: session.is_some_and(|s| s.notices.is_some()),
        compaction: session.is_some_and(|s| s.compaction.is_some()),
        terminal_output: capabilities
            .meta
            .as_ref()
            .and_then(|meta| meta.get("terminal_output"))
            == Some(&serde_json::Value::Bool(true)),
        subagents: capabilities.subagents.is_some(),
    };
    let abilities = ClientAbilities {
        read_text_file: capabilities.fs.read_text_file,
        write_text_file: capabilities.fs.write_text_file,
        terminal: capabilities.terminal,
    };
    Connection {
        wire: Arc::new(V1Wire::new(shows)),
        workspaces: Arc::new(ClientWorkspaces::new(client, abilities, local)),
    }
}

/// The connection before `initialize`: a v1 client that advertised nothing.
pub fn before_initialize(client: Arc<dyn ClientPort>, local: LocalIo) -> Connection {
    connection(&ClientCapabilities::default(), client, local)
}
