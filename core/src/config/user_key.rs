//! A key the user stored with `hearth auth`, handed in by the host that read it (the CLI):
//! the only credential source besides the host's config and the environment. It fills a
//! provider's key only where neither of those gave one, so a host-passed key always wins.

use super::resolve::non_empty_env;
use super::{ANTHROPIC_API_KEY_ENV, Config, OPENAI_API_KEY_ENV, ProviderConfig, Secret};

/// The providers a user can sign in to, each with the variable a host's key arrives in.
pub const SIGN_IN_PROVIDERS: [(&str, &str); 2] = [
    ("openai", OPENAI_API_KEY_ENV),
    ("anthropic", ANTHROPIC_API_KEY_ENV),
];

impl Config {
    /// Whether the host passed a key for `provider` (config `apiKey` or its variable).
    pub fn host_passes_key(&self, provider: &str) -> bool {
        let configured = self.provider(provider).is_some_and(|p| p.api_key.is_some());
        let env = SIGN_IN_PROVIDERS
            .iter()
            .find(|(name, _)| *name == provider)
            .and_then(|(_, var)| non_empty_env(var));
        configured || env.is_some()
    }

    /// Uses the user's stored `key` for `provider` unless the host passed one.
    pub fn use_stored_key(&mut self, provider: &str, key: String) {
        if self.host_passes_key(provider) {
            return;
        }
        let slot = self.provider_slot(provider);
        slot.get_or_insert_with(ProviderConfig::default).api_key = Some(Secret::new(key));
    }

    fn provider(&self, provider: &str) -> Option<&ProviderConfig> {
        match provider {
            "anthropic" => self.providers.anthropic.as_ref(),
            _ => self.providers.openai.as_ref(),
        }
    }

    fn provider_slot(&mut self, provider: &str) -> &mut Option<ProviderConfig> {
        match provider {
            "anthropic" => &mut self.providers.anthropic,
            _ => &mut self.providers.openai,
        }
    }
}
