//! The providers an engine talks to, by name, and the keys they use.

use std::sync::Arc;
use std::time::Duration;

use super::Provider;
use super::anthropic::Anthropic;
use super::api_key::ApiKey;
use super::openai::OpenAi;
use crate::config::{ProviderName, Resolved, Secret};

/// One instance of each provider, built from the resolved endpoints; their HTTP clients are built on
/// first use, so an unused provider costs nothing.
pub struct Providers {
    openai: Arc<dyn Provider>,
    anthropic: Arc<dyn Provider>,
    /// The keys the providers read at each request: `[openai, anthropic]`.
    keys: [Arc<ApiKey>; 2],
}

impl Providers {
    pub fn new(resolved: &Resolved, idle_timeout: Duration) -> Self {
        let openai = OpenAi::new(resolved.openai.clone(), idle_timeout);
        let anthropic = Anthropic::new(resolved.anthropic.clone(), idle_timeout);
        Providers {
            keys: [openai.key(), anthropic.key()],
            openai: Arc::new(openai),
            anthropic: Arc::new(anthropic),
        }
    }

    pub fn by_name(&self, provider: ProviderName) -> Arc<dyn Provider> {
        match provider {
            ProviderName::Openai => self.openai.clone(),
            ProviderName::Anthropic => self.anthropic.clone(),
        }
    }

    fn key(&self, provider: ProviderName) -> &ApiKey {
        match provider {
            ProviderName::Openai => &self.keys[0],
            ProviderName::Anthropic => &self.keys[1],
        }
    }

    /// Whether `provider` has a key in effect (the host's or the user's stored one).
    pub fn has_key(&self, provider: ProviderName) -> bool {
        self.key(provider).current().is_some()
    }

    /// Puts what the user's store holds now (`read`) into effect for every session's next
    /// request, for each provider the host passed no key for (the store is not asked about
    /// the others: their key wins anyway).
    pub fn refresh_stored_keys(&self, read: impl Fn(ProviderName) -> Option<Secret>) {
        for provider in ProviderName::ALL {
            let key = self.key(provider);
            if !key.host_passed() {
                key.set_stored(read(provider));
            }
        }
    }

    /// How a user supplies the credential of `provider`.
    pub fn credential_hint(provider: ProviderName) -> String {
        match provider {
            ProviderName::Anthropic => super::anthropic::credential_hint(),
            ProviderName::Openai => super::openai::credential_hint(),
        }
    }
}
