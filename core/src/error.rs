//! `EngineError`: why starting or using an engine failed — the one list every binding maps
//! to its language's errors, through `EngineError::code`.

use crate::config::ConfigError;

/// Why `Engine::start` or a call on a running engine failed.
///
/// Non-exhaustive so that a new kind of failure is an edit here alone: bindings never match
/// on the variants, they map `code()` and give codes they don't know their generic error.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EngineError {
    /// The configuration is invalid; the message names the key.
    Config(String),
    /// The store can't be opened (corrupt, read-only, newer schema…); nothing was written.
    Store(String),
    /// A thread or the runtime couldn't be started.
    Start(String),
    /// The engine is closed.
    Closed,
    /// `close` was called from inside `Host::deliver` (or `Host::deliver_here`), which would
    /// wait on itself.
    CloseFromDeliver,
}

impl EngineError {
    /// The kind of failure as a stable snake_case name, distinct per variant. It is part of
    /// every binding's contract (Node's `ERR_HEARTH_<CODE>`, the C status, the Python and
    /// Java exception class are chosen from it), so a code never changes once released.
    pub fn code(&self) -> &'static str {
        match self {
            EngineError::Config(_) => "config",
            EngineError::Store(_) => "store",
            EngineError::Start(_) => "start",
            EngineError::Closed => "closed",
            EngineError::CloseFromDeliver => "close_from_deliver",
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// One of each variant. The match has no wildcard on purpose: a new variant stops this
    /// compiling until it is added to the list, and so to the checks below.
    fn one_of_each() -> Vec<EngineError> {
        let all = vec![
            EngineError::Config("c".into()),
            EngineError::Store("s".into()),
            EngineError::Start("t".into()),
            EngineError::Closed,
            EngineError::CloseFromDeliver,
        ];
        for e in &all {
            match e {
                EngineError::Config(_)
                | EngineError::Store(_)
                | EngineError::Start(_)
                | EngineError::Closed
                | EngineError::CloseFromDeliver => {}
            }
        }
        all
    }

    #[test]
    fn codes_are_the_released_ones() {
        // Bindings' users branch on these (`ERR_HEARTH_CLOSED`, C statuses…): a changed
        // line here is a breaking change in every language.
        let codes: Vec<_> = one_of_each().iter().map(EngineError::code).collect();
        assert_eq!(
            codes,
            ["config", "store", "start", "closed", "close_from_deliver"]
        );
    }

    #[test]
    fn every_variant_has_its_own_snake_case_code() {
        let mut codes: Vec<_> = one_of_each().iter().map(EngineError::code).collect();
        let snake_case = |c: &str| {
            !c.is_empty()
                && !c.starts_with('_')
                && !c.ends_with('_')
                && !c.contains("__")
                && c.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
        };
        assert!(codes.iter().all(|c| snake_case(c)), "{codes:?}");
        let count = codes.len();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), count, "two variants share a code");
    }
}
