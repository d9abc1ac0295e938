//! `EngineError`: why starting or using an engine failed — the one list every binding maps
//! to its language's errors.

use crate::config::ConfigError;

/// Why `Engine::start` or a call on a running engine failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineError {
    /// The configuration is invalid; the message names the key.
    Config(String),
    /// The store can't be opened (corrupt, read-only, newer schema…); nothing was written.
    Store(String),
    /// A thread or the runtime couldn't be started.
    Start(String),
    /// The engine is closed.
    Closed,
    /// `close` was called from inside `Host::deliver`, which would wait on itself.
    CloseFromDeliver,
}

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EngineError::Config(m) | EngineError::Store(m) | EngineError::Start(m) => {
                f.write_str(m)
            }
            EngineError::Closed => f.write_str("the engine is closed"),
            EngineError::CloseFromDeliver => {
                f.write_str("close() was called from inside deliver(); call it from another thread")
            }
        }
    }
}

impl std::error::Error for EngineError {}

impl From<ConfigError> for EngineError {
    fn from(e: ConfigError) -> Self {
        EngineError::Config(e.0)
    }
}
