//! The key a user stored with `hearth auth`, which only a host that offers that command can
//! read: the `TerminalSignIn` port. The CLI implements it over the OS credential store
//! (`cli/src/credentials.rs`), so no credential store is ever linked into the engine; hosts
//! that embed the engine pass none, and then only the host's config and the environment give
//! keys. A stored key fills a provider's key only where neither of those gave one, so a
//! host-passed key always wins.

use std::path::Path;

use super::{Config, ProviderName, Secret};

/// What a host that ships `hearth auth` offers the engine.
pub trait TerminalSignIn: Send + Sync {
    /// The executable a terminal runs with `auth` to sign in: the host's own binary, found
    /// once by the host (the legacy `_meta["terminal-auth"]` names it).
    fn program(&self) -> &Path;

    /// The key the user has stored for `provider`, read from the store now: the engine asks
    /// when a turn first needs a provider and again at each `authenticate`, so a sign-in
    /// needs no restart.
    fn stored_key(&self, provider: ProviderName) -> Option<Secret>;
}

impl Config {
    /// Whether the host passed a key for `provider` (config `apiKey` or its variable).
    pub fn host_passes_key(&self, provider: ProviderName) -> bool {
        self.resolve()
            .is_ok_and(|resolved| resolved.endpoint(provider).api_key.is_some())
    }
}
