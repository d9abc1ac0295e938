//! The one configuration object every host passes (JSON, camelCase keys).
//!
//! Unknown keys and wrong types are errors that name the offending key, so a typo never
//! silently falls back to a default. Credentials live only in memory: [`Secret`] never
//! prints its value, and nothing in here is written to the store.

use std::fmt;
use std::path::PathBuf;

use serde::Deserialize;

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

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Config {
    /// Directory holding `hearth.db`, or `":memory:"` for a store that lives and dies with
    /// the engine. Default: the platform data dir (`~/.local/share/hearth` on Linux).
    pub data_dir: Option<String>,
    /// Directory of the user's own files: `AGENTS.md`, instructions for every session.
    /// Default: the platform config dir's `hearth` (`~/.config/hearth` on Linux). A host or a
    /// test points it elsewhere to keep the user's instructions out.
    pub config_dir: Option<String>,
    /// Threads of the engine's tokio runtime. Default 2.
    pub worker_threads: Option<usize>,
    /// The default model id. Default: `HEARTH_MODEL`, else [`DEFAULT_MODEL`].
    pub model: Option<String>,
    #[serde(default)]
    pub providers: Providers,
    /// Longest silence tolerated inside a model stream before the turn fails, in seconds.
    pub stream_idle_timeout_secs: Option<u64>,
    /// The models users can pick (the `model` config option). Default: just `model`.
    pub models: Option<Vec<ModelConfig>>,
    /// The permission mode of new sessions: `ask` (default), `accept_edits`, `plan`, `bypass`.
    pub permission_mode: Option<crate::permissions::Mode>,
    /// Model requests one prompt may make before it stops with `max_turn_requests`. Default 50.
    pub max_turn_requests: Option<u32>,
    #[serde(default)]
    pub tools: ToolsConfig,
    #[serde(default)]
    pub mcp: McpConfig,
    #[serde(default)]
    pub compaction: CompactionConfig,
    #[serde(default)]
    pub lsp: LspConfig,
    /// MCP servers connected for every session, besides the ones the client passes: entries
    /// in ACP's `McpServer` shape (`{name, command, args, env}` or `{type: "http", name, url,
    /// headers}`). One that cannot be used is reported in each session, like a client's.
    #[serde(default)]
    pub mcp_servers: Vec<serde_json::Value>,
}

/// How sessions connect their MCP servers.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpConfig {
    /// How long a server has to start, answer the MCP handshake and list its tools (default
    /// 30 s).
    pub startup_timeout_secs: Option<u64>,
}

/// When a session's context is compacted.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompactionConfig {
    /// The share of the model's context window past which a turn compacts the context before
    /// its next request, in (0, 1] (default 0.8).
    pub threshold: Option<f64>,
}

/// The language servers behind the `lsp_*` tools and the diagnostics of edits.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LspConfig {
    /// Servers by name, added to the defaults (`python`, `typescript`, `rust`); an entry with
    /// a default's name replaces it, and `null` turns that default off.
    #[serde(default)]
    pub servers: std::collections::BTreeMap<String, Option<LspServerConfig>>,
    /// How long a server has to start and answer `initialize` (default 30 s).
    pub startup_timeout_secs: Option<u64>,
    /// How long a tool waits for one answer of a running server, diagnostics included
    /// (default 10 s).
    pub timeout_secs: Option<u64>,
}

/// One language server: the files it serves and how to start it.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LspServerConfig {
    /// File extensions without the dot (`py`, `ts`).
    pub extensions: Vec<String>,
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// The LSP language id of its documents. Default: derived from each extension.
    pub language_id: Option<String>,
}

/// One entry of the model catalog.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelConfig {
    pub id: String,
    /// `openai` or `anthropic`. Default: `anthropic` for `claude-*` ids, else `openai`.
    pub provider: Option<ProviderName>,
    /// Display name. Default: the id.
    pub name: Option<String>,
    /// Whether the model takes a thinking level (Anthropic thinking budget, OpenAI
    /// `reasoning_effort`). Default: Claude models, and OpenAI o-series / gpt-5.
    pub thinking: Option<bool>,
    /// Tokens of context, for `usage_update`. Default: 200000 for Claude, else 128000.
    pub context_window: Option<u64>,
    /// Whether the model takes images (prompt images, `read` of an image file). Default:
    /// see [`sees_by_default`].
    pub vision: Option<bool>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ProviderName {
    Openai,
    Anthropic,
}

impl ProviderName {
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderName::Openai => "openai",
            ProviderName::Anthropic => "anthropic",
        }
    }
}

/// A catalog entry with every default filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelInfo {
    pub id: String,
    pub provider: ProviderName,
    pub name: String,
    pub thinking: bool,
    pub context_window: u64,
    pub vision: bool,
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
        }
    }
}

/// Bounds on the tools.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolsConfig {
    /// Default timeout of `run_command`, in seconds (default 120).
    pub command_timeout_secs: Option<u64>,
    /// Bytes of command output kept for the model and the log (default 65536).
    pub output_limit_bytes: Option<usize>,
    /// Lines `read` returns at most (default 2000).
    pub read_max_lines: Option<usize>,
    /// Bytes `fetch` downloads at most (default 524288).
    pub fetch_max_bytes: Option<usize>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Providers {
    pub openai: Option<ProviderConfig>,
    pub anthropic: Option<ProviderConfig>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProviderConfig {
    pub base_url: Option<String>,
    /// A credential handed over by the embedding host. Never persisted, never logged.
    pub api_key: Option<Secret>,
    /// Retries on 429, 5xx and connection errors before any output streamed. Default 3.
    pub max_retries: Option<u32>,
}

/// A credential. `Debug` and `Display` print `***`, so it can't leak into logs by accident.
#[derive(Clone, Deserialize, PartialEq, Eq)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// Where the store lives, once resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreLocation {
    Memory,
    File(PathBuf),
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

/// A config error; the message names the key at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    /// Parses a config JSON object. An empty string means "all defaults".
    pub fn from_json(json: &str) -> Result<Config, ConfigError> {
        if json.trim().is_empty() {
            return Ok(Config::default());
        }
        let config: Config = crate::json_path::from_str(json).map_err(|e| match &e.path {
            Some(path) => ConfigError(format!("invalid config key `{path}`: {}", e.message)),
            None => ConfigError(format!("invalid config: {}", e.message)),
        })?;
        config.validate()?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        if self.worker_threads == Some(0) {
            return Err(ConfigError(
                "invalid config key `workerThreads`: must be at least 1".into(),
            ));
        }
        if self.model.as_deref().is_some_and(|m| m.trim().is_empty()) {
            return Err(ConfigError(
                "invalid config key `model`: must not be empty".into(),
            ));
        }
        if let Some(threshold) = self.compaction.threshold
            && !(threshold > 0.0 && threshold <= 1.0)
        {
            return Err(ConfigError(format!(
                "invalid config key `compaction.threshold`: {threshold} is not in (0, 1]"
            )));
        }
        for (key, secs) in [
            ("lsp.startupTimeoutSecs", self.lsp.startup_timeout_secs),
            ("lsp.timeoutSecs", self.lsp.timeout_secs),
        ] {
            if secs == Some(0) {
                return Err(ConfigError(format!(
                    "invalid config key `{key}`: must be at least 1"
                )));
            }
        }
        for (name, server) in &self.lsp.servers {
            if let Some(server) = server
                && (server.command.trim().is_empty() || server.extensions.is_empty())
            {
                return Err(ConfigError(format!(
                    "invalid config key `lsp.servers.{name}`: needs a `command` and at least \
                     one extension"
                )));
            }
        }
        if self.stream_idle_timeout_secs == Some(0) {
            return Err(ConfigError(
                "invalid config key `streamIdleTimeoutSecs`: must be at least 1".into(),
            ));
        }
        for (name, provider) in [
            ("openai", &self.providers.openai),
            ("anthropic", &self.providers.anthropic),
        ] {
            if let Some(url) = provider.as_ref().and_then(|p| p.base_url.as_deref())
                && !(url.starts_with("http://") || url.starts_with("https://"))
            {
                return Err(ConfigError(format!(
                    "invalid config key `providers.{name}.baseUrl`: `{url}` is not an http(s) URL"
                )));
            }
        }
        let tools = &self.tools;
        for (key, value) in [
            (
                "tools.commandTimeoutSecs",
                tools.command_timeout_secs.map(|v| v as usize),
            ),
            ("tools.outputLimitBytes", tools.output_limit_bytes),
            ("tools.readMaxLines", tools.read_max_lines),
            ("tools.fetchMaxBytes", tools.fetch_max_bytes),
        ] {
            if value == Some(0) {
                return Err(ConfigError(format!(
                    "invalid config key `{key}`: must be at least 1"
                )));
            }
        }
        if self.max_turn_requests == Some(0) {
            return Err(ConfigError(
                "invalid config key `maxTurnRequests`: must be at least 1".into(),
            ));
        }
        if let Some(i) = self
            .models
            .iter()
            .flatten()
            .position(|m| m.id.trim().is_empty())
        {
            return Err(ConfigError(format!(
                "invalid config key `models[{i}].id`: must not be empty"
            )));
        }
        if self.data_dir.as_deref() == Some("") {
            return Err(ConfigError(
                "invalid config key `dataDir`: must not be empty".into(),
            ));
        }
        if self.config_dir.as_deref() == Some("") {
            return Err(ConfigError(
                "invalid config key `configDir`: must not be empty".into(),
            ));
        }
        Ok(())
    }

    /// The model catalog: the configured one, else the default model alone. The default
    /// model is always in it.
    pub fn catalog(&self) -> Vec<ModelInfo> {
        let default = self.default_model();
        let mut catalog: Vec<ModelInfo> = self
            .models
            .iter()
            .flatten()
            .map(ModelInfo::from_config)
            .collect();
        if !catalog.iter().any(|m| m.id == default) {
            let entry = ModelConfig {
                id: default,
                provider: None,
                name: None,
                thinking: None,
                context_window: None,
                vision: None,
            };
            catalog.insert(0, ModelInfo::from_config(&entry));
        }
        catalog
    }

    pub fn max_turn_requests(&self) -> u32 {
        self.max_turn_requests.unwrap_or(50)
    }

    pub fn tool_limits(&self) -> crate::tools::Limits {
        let mut limits = crate::tools::Limits::default();
        let t = &self.tools;
        if let Some(secs) = t.command_timeout_secs {
            limits.command_timeout = std::time::Duration::from_secs(secs);
        }
        if let Some(bytes) = t.output_limit_bytes {
            limits.output_limit = bytes;
        }
        if let Some(lines) = t.read_max_lines {
            limits.read_max_lines = lines;
        }
        if let Some(bytes) = t.fetch_max_bytes {
            limits.fetch_max_bytes = bytes;
        }
        limits
    }

    pub fn worker_threads(&self) -> usize {
        self.worker_threads.unwrap_or(2)
    }

    pub fn compaction_threshold(&self) -> f64 {
        self.compaction.threshold.unwrap_or(0.8)
    }

    pub fn mcp_startup_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.mcp.startup_timeout_secs.unwrap_or(30))
    }

    pub fn lsp_startup_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.lsp.startup_timeout_secs.unwrap_or(30))
    }

    pub fn lsp_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.lsp.timeout_secs.unwrap_or(10))
    }

    pub fn stream_idle_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.stream_idle_timeout_secs.unwrap_or(120))
    }

    pub fn store_location(&self) -> Result<StoreLocation, ConfigError> {
        match self.data_dir.as_deref() {
            Some(":memory:") => Ok(StoreLocation::Memory),
            Some(dir) => Ok(StoreLocation::File(PathBuf::from(dir).join("hearth.db"))),
            None => dirs::data_dir()
                .map(|d| StoreLocation::File(d.join("hearth").join("hearth.db")))
                .ok_or_else(|| {
                    ConfigError("no platform data directory; set `dataDir` in the config".into())
                }),
        }
    }

    /// Where the user's own files live (`configDir`, else the platform config dir's
    /// `hearth`); `None` when the platform has no config dir.
    pub fn user_config_dir(&self) -> Option<PathBuf> {
        match self.config_dir.as_deref() {
            Some(dir) => Some(PathBuf::from(dir)),
            None => dirs::config_dir().map(|d| d.join("hearth")),
        }
    }

    /// The default model: config, else `HEARTH_MODEL`, else [`DEFAULT_MODEL`].
    pub fn default_model(&self) -> String {
        self.model
            .clone()
            .or_else(|| non_empty_env("HEARTH_MODEL"))
            .unwrap_or_else(|| DEFAULT_MODEL.to_string())
    }

    /// The OpenAI-compatible endpoint: config first, then `OPENAI_BASE_URL` / `OPENAI_API_KEY`.
    pub fn openai_endpoint(&self) -> Endpoint {
        endpoint(
            self.providers.openai.as_ref(),
            ("OPENAI_BASE_URL", DEFAULT_OPENAI_BASE_URL),
            OPENAI_API_KEY_ENV,
        )
    }

    /// The Anthropic endpoint: config first, then `ANTHROPIC_BASE_URL` / `ANTHROPIC_API_KEY`.
    pub fn anthropic_endpoint(&self) -> Endpoint {
        endpoint(
            self.providers.anthropic.as_ref(),
            ("ANTHROPIC_BASE_URL", DEFAULT_ANTHROPIC_BASE_URL),
            ANTHROPIC_API_KEY_ENV,
        )
    }
}

fn endpoint(
    configured: Option<&ProviderConfig>,
    (url_env, default_url): (&str, &str),
    key_env: &str,
) -> Endpoint {
    let configured = configured.cloned().unwrap_or_default();
    let base_url = configured
        .base_url
        .or_else(|| non_empty_env(url_env))
        .unwrap_or_else(|| default_url.to_string());
    Endpoint {
        default_base_url: base_url.trim_end_matches('/') == default_url,
        base_url,
        api_key: configured
            .api_key
            .or_else(|| non_empty_env(key_env).map(Secret)),
        max_retries: configured.max_retries.unwrap_or(3),
    }
}

fn non_empty_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
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
    fn empty_means_defaults() {
        let c = Config::from_json("").unwrap();
        assert_eq!(c.worker_threads(), 2);
        assert!(
            matches!(c.store_location().unwrap(), StoreLocation::File(p) if p.ends_with("hearth/hearth.db"))
        );
    }

    #[test]
    fn unknown_key_is_named() {
        let err = Config::from_json(r#"{"dataDir":":memory:","wokerThreads":3}"#).unwrap_err();
        assert!(err.0.contains("wokerThreads"), "{err}");
    }

    #[test]
    fn nested_bad_value_is_named() {
        let err = Config::from_json(r#"{"providers":{"openai":{"baseUrl":5}}}"#).unwrap_err();
        assert!(err.0.contains("providers.openai.baseUrl"), "{err}");
        let err =
            Config::from_json(r#"{"providers":{"openai":{"baseUrl":"ftp://x"}}}"#).unwrap_err();
        assert!(err.0.contains("providers.openai.baseUrl"), "{err}");
        let err = Config::from_json(r#"{"workerThreads":0}"#).unwrap_err();
        assert!(err.0.contains("workerThreads"), "{err}");
    }

    #[test]
    fn secrets_never_print() {
        let c = Config::from_json(r#"{"providers":{"openai":{"apiKey":"sk-live-123"}}}"#).unwrap();
        let printed = format!("{c:?} {:?}", c.openai_endpoint());
        assert!(!printed.contains("sk-live-123"), "{printed}");
        assert_eq!(c.openai_endpoint().api_key.unwrap().expose(), "sk-live-123");
    }

    #[test]
    fn catalog_defaults() {
        let c = Config::from_json(r#"{"model":"claude-sonnet-4-5","models":[{"id":"gpt-4.1"},{"id":"o3","name":"o3 (reasoning)"}]}"#).unwrap();
        let catalog = c.catalog();
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
        assert_eq!(c.user_config_dir(), Some(PathBuf::from("/tmp/hearth-user")));
        let default = Config::from_json("{}").unwrap().user_config_dir();
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
        let catalog = c.catalog();
        let sees = |id| model_sees(&catalog, id);
        assert!(!sees("llama3"));
        assert!(sees("gpt-4o-mini"));
        assert!(sees("qwen-vl"));
        assert!(!sees("gpt-4o"));
        // Not in the catalog: known by its id.
        assert!(sees("claude-opus-4") && sees("gpt-5-mini") && !sees("mistral-large"));
    }

    #[test]
    fn memory_store() {
        let c = Config::from_json(r#"{"dataDir":":memory:"}"#).unwrap();
        assert_eq!(c.store_location().unwrap(), StoreLocation::Memory);
    }
}
