//! How a model request fails on its way: an attempt's [`Failure`] (the error, and whether
//! trying again may help), which the transport, the stream decoders and the retry loop all
//! speak, and the innermost cause of a transport error.

use std::time::Duration;

use super::LlmError;

/// Why an attempt failed, and whether trying again may help.
#[derive(Debug)]
pub struct Failure {
    pub error: LlmError,
    pub retryable: bool,
    /// The wait the server asked for.
    pub retry_after: Option<Duration>,
}

impl Failure {
    pub fn retryable(error: LlmError) -> Self {
        Failure {
            error,
            retryable: true,
            retry_after: None,
        }
    }
}

impl From<LlmError> for Failure {
    fn from(error: LlmError) -> Self {
        Failure {
            error,
            retryable: false,
            retry_after: None,
        }
    }
}
