//! The providers an engine talks to, by name.

use std::sync::Arc;

use super::Provider;
use super::anthropic::Anthropic;
use super::openai::OpenAi;
use std::time::Duration;

use crate::config::Resolved;

/// One instance of each provider, built from the resolved endpoints; their HTTP clients are built on
/// first use, so an unused provider costs nothing.
pub struct Providers {
    openai: Arc<dyn Provider>,
    anthropic: Arc<dyn Provider>,
}

impl Providers {
    pub fn new(resolved: &Resolved, idle_timeout: Duration) -> Self {
        Providers {
            openai: Arc::new(OpenAi::new(resolved.openai.clone(), idle_timeout)),
            anthropic: Arc::new(Anthropic::new(resolved.anthropic.clone(), idle_timeout)),
        }
    }

    /// The provider called `provider_name` (`"openai"` or `"anthropic"`). Any other name
    /// gets the OpenAI-compatible provider: it is the one every other server speaks.
    pub fn by_name(&self, provider_name: &str) -> Arc<dyn Provider> {
        match provider_name {
            "anthropic" => self.anthropic.clone(),
            _ => self.openai.clone(),
        }
    }

    /// How a user supplies the credential of the provider called `provider_name`.
    pub fn credential_hint(provider_name: &str) -> String {
        match provider_name {
            "anthropic" => super::anthropic::credential_hint(),
            _ => super::openai::credential_hint(),
        }
    }
}
