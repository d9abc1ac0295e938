//! Engine errors as JS `Error`s whose `code` says what went wrong, so JS code can branch on
//! `err.code` instead of matching messages.

use hearth_core::EngineError;
use napi::Status;

/// The `code` of an error thrown to JS (engine.d.ts lists them as `EngineErrorCode`).
pub enum ErrorCode {
    /// The configuration was rejected; the message names the key.
    Config,
    /// The data directory's store could not be opened.
    Store,
    /// The engine's threads or runtime could not start.
    Start,
    /// The engine is closed.
    Closed,
    /// An N-API failure while talking to JS (wrong argument types and the like).
    Napi(Status),
}

impl AsRef<str> for ErrorCode {
    fn as_ref(&self) -> &str {
        match self {
            ErrorCode::Config => "ERR_HEARTH_CONFIG",
            ErrorCode::Store => "ERR_HEARTH_STORE",
            ErrorCode::Start => "ERR_HEARTH_START",
            ErrorCode::Closed => "ERR_HEARTH_CLOSED",
            ErrorCode::Napi(status) => status.as_ref(),
        }
    }
}

// napi needs this to report its own failures (argument conversion) with our error type.
impl From<Status> for ErrorCode {
    fn from(status: Status) -> Self {
        ErrorCode::Napi(status)
    }
}

pub type Error = napi::Error<ErrorCode>;
pub type Result<T> = std::result::Result<T, Error>;

/// Maps the errors of `Engine::start` and `Engine::send`.
pub fn to_js(error: EngineError) -> Error {
    let code = match &error {
        EngineError::Config(_) => ErrorCode::Config,
        EngineError::Store(_) => ErrorCode::Store,
        EngineError::Start(_) => ErrorCode::Start,
        EngineError::Closed => ErrorCode::Closed,
        // Only `close` returns this, and close.rs never runs it on the delivery thread; the
        // match must still be total.
        EngineError::CloseFromDeliver => ErrorCode::Start,
    };
    Error::new(code, error.to_string())
}
