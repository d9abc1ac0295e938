use std::path::{Path, PathBuf};

mod connection;
pub mod diagnostics;
mod documents;
mod exchange;
pub mod position;
mod pushed;
mod requests;
mod server;
mod servers;
mod session;
mod spec;
mod transport;

pub use exchange::CallError;
pub use servers::Servers;
pub use session::{Caller, Lsp, OpenError, Opened};

/// The `tracing` target of everything the language servers do.
pub const LOG_TARGET: &str = "hearth::lsp";

/// The `file:` URI of an absolute path.
fn uri(path: &Path) -> String {
    url::Url::from_file_path(path)
        .map(String::from)
        .unwrap_or_else(|()| format!("file://{}", path.display()))
}

/// The path of a `file:` URI.
pub fn path_of(uri: &str) -> Option<PathBuf> {
    url::Url::parse(uri).ok()?.to_file_path().ok()
}
