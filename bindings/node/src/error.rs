//! Engine errors as JS `Error`s whose `code` says what went wrong, so JS code can branch on
//! `err.code` instead of matching messages.

use hearth_core::EngineError;
use napi::Status;

/// The `code` of an error thrown to JS (engine.d.ts lists the engine's as `EngineErrorCode`).
pub enum ErrorCode {
    /// `ERR_HEARTH_` and the engine's own code in capitals, e.g. `ERR_HEARTH_CLOSED`.
    Engine(String),
    /// An N-API failure while talking to JS (wrong argument types and the like).
    Napi(Status),
}

impl AsRef<str> for ErrorCode {
    fn as_ref(&self) -> &str {
        match self {
            ErrorCode::Engine(code) => code,
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
    // Node's convention for `code`: an `ERR_` prefix, upper snake case.
    let code = format!("ERR_HEARTH_{}", error.code().to_ascii_uppercase());
    Error::new(ErrorCode::Engine(code), error.to_string())
}
