//! hearth-core — the Hearth engine. ACP JSON-RPC frames in (`Engine::send`), frames out
//! (`Host::deliver`), with sessions persisted in SQLite. No FFI and no `unsafe` here: the
//! bindings and the CLI are thin hosts over these three calls.

#![forbid(unsafe_code)]

mod access;
mod acp;
mod agent;
mod chat;
mod config;
mod context;
mod engine;
mod error;
mod front_matter;
mod ids;
mod images;
mod io;
mod json_path;
mod lineage;
mod llm;
mod lsp;
mod mcp;
mod net;
mod outbox;
mod permissions;
mod question;
mod rpc;
mod sandbox;
mod session;
mod store;
mod text;
mod tools;

pub use config::{Config, ConfigError, ProviderName, Secret, TerminalSignIn};
pub use engine::{Engine, HostPorts};
pub use error::EngineError;
pub use io::process::{ChildKind, Confinement, Launch};
pub use outbox::Host;
pub use permissions::Mode;

/// How the model providers turn a response body into server-sent events: the floor of a
/// streamed token in `benches/turn.rs` is a stream decoded by it alone.
#[doc(hidden)]
pub use llm::sse::events as sse_events;
/// The types the providers parse a streamed token's event into, for the second floor of
/// `benches/turn.rs`: the stream decoded and each event's JSON parsed, as any consumer must.
#[doc(hidden)]
pub use llm::{
    anthropic::TextDeltaEvent as AnthropicTextDelta, openai::TextChunk as OpenAiTextChunk,
};
