//! `webSearch`: the backend of the `web_search` tool. Without one the tool is not offered, so
//! the model never promises a search it cannot do — except to a Claude model, which is offered
//! Anthropic's own server-side search instead (`anthropicWebSearch` tunes it or turns it off).

use serde::Deserialize;

use super::{ConfigError, Secret};

/// `webSearch: {provider, url?, apiKey?}`.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebSearchConfig {
    pub provider: SearchProvider,
    /// The backend's address: required for SearXNG (self-hosted; its JSON output must be
    /// enabled in `settings.yml`), else the provider's public API (`SearchProvider::api`).
    pub url: Option<String>,
    /// The key of Brave, Tavily or Exa (SearXNG takes none).
    pub api_key: Option<Secret>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SearchProvider {
    Searxng,
    Brave,
    Tavily,
    Exa,
}

impl SearchProvider {
    pub fn as_str(self) -> &'static str {
        match self {
            SearchProvider::Searxng => "searxng",
            SearchProvider::Brave => "brave",
            SearchProvider::Tavily => "tavily",
            SearchProvider::Exa => "exa",
        }
    }

    /// The public search endpoint of a keyed provider.
    fn api(self) -> Option<&'static str> {
        match self {
            SearchProvider::Searxng => None,
            SearchProvider::Brave => Some("https://api.search.brave.com/res/v1/web/search"),
            SearchProvider::Tavily => Some("https://api.tavily.com/search"),
            SearchProvider::Exa => Some("https://api.exa.ai/search"),
        }
    }
}

impl WebSearchConfig {
    /// The URL requests go to: SearXNG's `<url>/search`, a keyed provider's `url` or its API.
    pub fn endpoint(&self) -> String {
        match (self.provider, &self.url) {
            (SearchProvider::Searxng, Some(url)) => {
                format!("{}/search", url.trim_end_matches('/'))
            }
            (_, Some(url)) => url.clone(),
            (provider, None) => provider.api().unwrap_or_default().to_string(),
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |key: &str, why: &str| {
            Err(ConfigError(format!(
                "invalid config key `webSearch.{key}`: {why}"
            )))
        };
        if let Some(url) = &self.url
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            return invalid("url", &format!("`{url}` is not an http(s) URL"));
        }
        match self.provider {
            SearchProvider::Searxng if self.url.is_none() => {
                invalid("url", "SearXNG needs the address of its instance")
            }
            SearchProvider::Searxng => Ok(()),
            provider if self.api_key.as_ref().is_none_or(|k| k.expose().is_empty()) => {
                invalid("apiKey", &format!("{} needs an API key", provider.as_str()))
            }
            _ => Ok(()),
        }
    }
}

/// `anthropicWebSearch`: Anthropic's server-side search (`web_search_20250305`), which a
/// session whose model is Claude is offered when `webSearch` names no backend.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct AnthropicSearch {
    /// `false` offers no search to Claude models either. Default `true`.
    pub enabled: bool,
    /// Searches one request may run (Anthropic bills each). Default 5.
    pub max_uses: u32,
    /// Only results from these domains (Anthropic's `allowed_domains`).
    pub allowed_domains: Vec<String>,
    /// No results from these domains; not together with `allowedDomains`.
    pub blocked_domains: Vec<String>,
}

impl Default for AnthropicSearch {
    fn default() -> Self {
        AnthropicSearch {
            enabled: true,
            max_uses: 5,
            allowed_domains: Vec::new(),
            blocked_domains: Vec::new(),
        }
    }
}

impl AnthropicSearch {
    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |why: &str| {
            Err(ConfigError(format!(
                "invalid config key `anthropicWebSearch`: {why}"
            )))
        };
        if self.max_uses == 0 {
            return invalid("`maxUses` must be at least 1");
        }
        if !self.allowed_domains.is_empty() && !self.blocked_domains.is_empty() {
            return invalid("Anthropic takes `allowedDomains` or `blockedDomains`, not both");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;

    fn error(web_search: &str) -> String {
        let json = format!(r#"{{"webSearch": {web_search}}}"#);
        Config::from_json(&json).unwrap_err().to_string()
    }

    #[test]
    fn a_backend_needs_its_address_or_its_key() {
        assert_eq!(
            error(r#"{"provider": "tavily"}"#),
            "invalid config key `webSearch.apiKey`: tavily needs an API key"
        );
        assert_eq!(
            error(r#"{"provider": "searxng"}"#),
            "invalid config key `webSearch.url`: SearXNG needs the address of its instance"
        );
        assert_eq!(
            error(r#"{"provider": "exa", "apiKey": "k", "url": "ftp://x"}"#),
            "invalid config key `webSearch.url`: `ftp://x` is not an http(s) URL"
        );
        let both =
            r#"{"anthropicWebSearch": {"allowedDomains": ["a.org"], "blockedDomains": ["b.org"]}}"#;
        assert_eq!(
            Config::from_json(both).unwrap_err().to_string(),
            "invalid config key `anthropicWebSearch`: Anthropic takes `allowedDomains` or \
             `blockedDomains`, not both"
        );
        let brave = Config::from_json(r#"{"webSearch": {"provider": "brave", "apiKey": "k"}}"#);
        assert_eq!(
            brave.unwrap().web_search.unwrap().endpoint(),
            "https://api.search.brave.com/res/v1/web/search"
        );
    }
}
