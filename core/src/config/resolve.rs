//! The configuration resolved once, when the engine starts: the default model and mode, the
//! model catalog with every default filled in (the vision and thinking heuristics included),
//! the provider endpoints and the user's config dir — the config first, then the environment. The engine holds the result
//! (`EngineContext::resolved`), so nothing reads the environment per session or per turn.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::StoreLocation;
use super::{Config, ConfigError, ModelConfig, ProviderConfig, ProviderName, Secret};
use crate::permissions::Mode;
use crate::sandbox::Setup;

/// The model used when neither the config nor `HEARTH_MODEL` names one.
pub const DEFAULT_MODEL: &str = "gpt-4o-mini";
/// The OpenAI-compatible endpoint used when neither the config nor `OPENAI_BASE_URL` names one.
pub const DEFAULT_OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
/// The environment variable that carries the OpenAI-compatible API key.
pub const OPENAI_API_KEY_ENV: &str = "OPENAI_API_KEY";
/// Environment variables holding provider credentials, kept away from every child process the
/// engine starts (commands, MCP and language servers) unless an MCP entry names one.
pub const CREDENTIAL_ENV: [&str; 2] = [OPENAI_API_KEY_ENV, ANTHROPIC_API_KEY_ENV];
/// The Anthropic Messages endpoint used when neither the config nor `ANTHROPIC_BASE_URL` names one.
pub const DEFAULT_ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com/v1";
/// The environment variable that carries the Anthropic API key.
pub const ANTHROPIC_API_KEY_ENV: &str = "ANTHROPIC_API_KEY";

/// What the engine runs with, resolved from the config and the environment at start.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The default model of new sessions: the config, else `HEARTH_MODEL`, else
    /// [`DEFAULT_MODEL`].
    pub default_model: String,
    /// The permission mode of new sessions.
    pub default_mode: Mode,
    /// The models users can pick; the default model is always among them.
    pub catalog: Vec<ModelInfo>,
    /// The OpenAI-compatible endpoint: the config first, then `OPENAI_BASE_URL` /
    /// `OPENAI_API_KEY`.
    pub openai: Endpoint,
    /// The Anthropic endpoint: the config first, then `ANTHROPIC_BASE_URL` /
    /// `ANTHROPIC_API_KEY`.
    pub anthropic: Endpoint,
    /// Where the user's own files live (`configDir`, else the platform config dir's
    /// `hearth`); `None` when the platform has no config dir.
    pub user_config_dir: Option<PathBuf>,
    /// The sandbox of the commands: the user's settings (`required` also set by
    /// `HEARTH_REQUIRE_SANDBOX=1`), and Hearth's own directories, which no command may write.
    pub sandbox: Arc<Setup>,
}

impl Config {
    /// Resolves the config against the environment; the engine does it once, at start. An
    /// error names a variable whose value cannot be used (the config's own keys were checked
    /// when it was read).
    pub fn resolve(&self) -> Result<Resolved, ConfigError> {
        let default_model = self
            .model
            .clone()
            .or_else(|| non_empty_env("HEARTH_MODEL"))
            .unwrap_or_else(|| DEFAULT_MODEL.to_string());
        let user_config_dir = self.user_config_dir();
        Ok(Resolved {
            sandbox: Arc::new(sandbox_setup(self, user_config_dir.as_deref())),
            user_config_dir,
            catalog: catalog(self, &default_model),
            default_model,
            default_mode: self.permission_mode.unwrap_or_default(),
            openai: endpoint(
                self.providers.openai.as_ref(),
                ("OPENAI_BASE_URL", DEFAULT_OPENAI_BASE_URL),
                OPENAI_API_KEY_ENV,
            )?,
            anthropic: endpoint(
                self.providers.anthropic.as_ref(),
                ("ANTHROPIC_BASE_URL", DEFAULT_ANTHROPIC_BASE_URL),
                ANTHROPIC_API_KEY_ENV,
            )?,
        })
    }

    /// Where the user's own files live: `configDir`, else the platform config dir's
    /// `hearth`; `None` when the platform has none. Alone, for a host that needs only this
    /// (the `hearth` command's stored keys) and not the whole resolution.
    pub fn user_config_dir(&self) -> Option<PathBuf> {
        match self.config_dir.as_deref() {
            Some(dir) => Some(PathBuf::from(dir)),
            None => dirs::config_dir().map(|d| d.join("hearth")),
        }
    }
}

impl Resolved {
    pub fn endpoint(&self, provider: ProviderName) -> &Endpoint {
        match provider {
            ProviderName::Openai => &self.openai,
            ProviderName::Anthropic => &self.anthropic,
        }
    }
}

/// A catalog entry with every default filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelInfo {
    pub id: String,
    pub provider: ProviderName,
    pub name: String,
    pub thinking: bool,
    pub context_window: u64,
    pub vision: bool,
    pub price: Option<super::Price>,
}

impl ModelInfo {
    fn from_config(model: &ModelConfig) -> ModelInfo {
        let claude = model.id.starts_with("claude");
        let reasoning = ["o1", "o3", "o4", "gpt-5"]
            .iter()
            .any(|p| model.id.starts_with(p));
        ModelInfo {
            id: model.id.clone(),
            provider: model.provider.unwrap_or(if claude {
                ProviderName::Anthropic
            } else {
                ProviderName::Openai
            }),
            name: model.name.clone().unwrap_or_else(|| model.id.clone()),
            thinking: model.thinking.unwrap_or(claude || reasoning),
            context_window: model
                .context_window
                .unwrap_or(if claude { 200_000 } else { 128_000 }),
            vision: model.vision.unwrap_or_else(|| sees_by_default(&model.id)),
            price: model.price.clone(),
        }
    }
}

/// The model catalog: the configured one, else the default model alone. The default model
/// is always in it.
fn catalog(config: &Config, default: &str) -> Vec<ModelInfo> {
    let mut catalog: Vec<ModelInfo> = config
        .models
        .iter()
        .flatten()
        .map(ModelInfo::from_config)
        .collect();
    if !catalog.iter().any(|m| m.id == default) {
        let entry = ModelConfig {
            id: default.to_string(),
            provider: None,
            name: None,
            thinking: None,
            context_window: None,
            vision: None,
            price: None,
        };
        catalog.insert(0, ModelInfo::from_config(&entry));
    }
    catalog
}

/// A provider endpoint, once resolved against the environment.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub base_url: String,
    pub api_key: Option<Secret>,
    /// Whether `base_url` is the provider's own default (a custom one may need no key).
    pub default_base_url: bool,
    pub max_retries: u32,
}

fn endpoint(
    configured: Option<&ProviderConfig>,
    (url_env, default_url): (&str, &str),
    key_env: &str,
) -> Result<Endpoint, ConfigError> {
    let configured = configured.cloned().unwrap_or_default();
    let from_env = || {
        let url = non_empty_env(url_env)?;
        Some(
            match url.starts_with("http://") || url.starts_with("https://") {
                true => Ok(url),
                false => Err(ConfigError(format!(
                    "the environment variable `{url_env}` is `{url}`, not an http(s) URL"
                ))),
            },
        )
    };
    let base_url = match configured.base_url {
        Some(url) => url,
        None => from_env()
            .transpose()?
            .unwrap_or_else(|| default_url.to_string()),
    };
    Ok(Endpoint {
        default_base_url: base_url.trim_end_matches('/') == default_url,
        base_url,
        api_key: configured
            .api_key
            .or_else(|| non_empty_env(key_env).map(Secret)),
        max_retries: configured.max_retries.unwrap_or(3),
    })
}

pub(super) fn non_empty_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The sandbox as configured, `required` also from `HEARTH_REQUIRE_SANDBOX=1`, and the
/// directories no command may write: the data dir (the store, with its "always" rules) and
/// the user's config dir, as canonical paths where they exist (the roots they are compared
/// with are canonical too).
fn sandbox_setup(config: &Config, user_config_dir: Option<&Path>) -> Setup {
    let mut settings = config.sandbox.clone();
    settings.required |= non_empty_env("HEARTH_REQUIRE_SANDBOX").as_deref() == Some("1");
    let data_dir = match config.store_location() {
        Ok(StoreLocation::File(db)) => db.parent().map(Path::to_path_buf),
        _ => None,
    };
    let protected = data_dir
        .into_iter()
        .chain(user_config_dir.map(Path::to_path_buf))
        .map(|dir| dunce::canonicalize(&dir).unwrap_or(dir))
        .collect();
    Setup {
        settings,
        protected,
    }
}

/// Whether `model` takes a thinking level.
pub fn model_thinks(catalog: &[ModelInfo], model: &str) -> bool {
    catalog.iter().any(|m| m.id == model && m.thinking)
}

/// Whether `model` takes images: as its catalog entry says, else by its id.
pub fn model_sees(catalog: &[ModelInfo], model: &str) -> bool {
    catalog
        .iter()
        .find(|m| m.id == model)
        .map_or_else(|| sees_by_default(model), |m| m.vision)
}

/// The families known to take images: GPT-4o, GPT-4.1, GPT-5, the o-series and Claude.
/// Any other model (a local one behind an OpenAI-compatible server, say) is assumed not to
/// until its catalog entry says `vision: true`.
fn sees_by_default(id: &str) -> bool {
    ["gpt-4o", "gpt-4.1", "gpt-5", "o1", "o3", "o4", "claude"]
        .iter()
        .any(|family| id.starts_with(family))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_print() {
        let c = Config::from_json(r#"{"providers":{"openai":{"apiKey":"sk-live-123"}}}"#).unwrap();
        let printed = format!("{c:?} {:?}", c.resolve().unwrap().openai);
        assert!(!printed.contains("sk-live-123"), "{printed}");
        assert_eq!(
            c.resolve().unwrap().openai.api_key.unwrap().expose(),
            "sk-live-123"
        );
    }

    #[test]
    fn catalog_defaults() {
        let c = Config::from_json(r#"{"model":"claude-sonnet-4-5","models":[{"id":"gpt-4.1"},{"id":"o3","name":"o3 (reasoning)"}]}"#).unwrap();
        let catalog = c.resolve().unwrap().catalog;
        assert_eq!(
            catalog.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(),
            ["claude-sonnet-4-5", "gpt-4.1", "o3"]
        );
        assert_eq!(
            (catalog[0].provider, catalog[0].thinking),
            (ProviderName::Anthropic, true)
        );
        assert_eq!(
            (catalog[1].provider, catalog[1].thinking),
            (ProviderName::Openai, false)
        );
        assert!(catalog[2].thinking);
        assert!(
            catalog.iter().all(|m| m.vision),
            "Claude, GPT-4.1 and o3 see"
        );
        let err = Config::from_json(r#"{"permissionMode":"yolo"}"#).unwrap_err();
        assert!(err.0.contains("permissionMode"), "{err}");
    }

    #[test]
    fn the_user_config_dir_can_be_moved() {
        let c = Config::from_json(r#"{"configDir":"/tmp/hearth-user"}"#).unwrap();
        assert_eq!(
            c.resolve().unwrap().user_config_dir,
            Some(PathBuf::from("/tmp/hearth-user"))
        );
        let default = Config::from_json("{}")
            .unwrap()
            .resolve()
            .unwrap()
            .user_config_dir;
        assert_eq!(default, dirs::config_dir().map(|d| d.join("hearth")));
        let err = Config::from_json(r#"{"configDir":""}"#).unwrap_err();
        assert_eq!(err.0, "invalid config key `configDir`: must not be empty");
    }

    #[test]
    fn vision_is_known_for_the_families_that_have_it_and_configurable() {
        let c = Config::from_json(
            r#"{"model":"llama3","models":[{"id":"gpt-4o-mini"},{"id":"qwen-vl","vision":true},{"id":"gpt-4o","vision":false}]}"#,
        )
        .unwrap();
        let catalog = c.resolve().unwrap().catalog;
        let sees = |id| model_sees(&catalog, id);
        assert!(!sees("llama3"));
        assert!(sees("gpt-4o-mini"));
        assert!(sees("qwen-vl"));
        assert!(!sees("gpt-4o"));
        // Not in the catalog: known by its id.
        assert!(sees("claude-opus-4") && sees("gpt-5-mini") && !sees("mistral-large"));
    }
}
