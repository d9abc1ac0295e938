//! The one configuration object every host passes (JSON, camelCase keys), and its validation.
//! What it means once the environment is read — the default model, the catalog, the
//! endpoints — is `resolve.rs`, resolved once when the engine starts.
//!
//! Unknown keys and wrong types are errors that name the offending key, so a typo never
//! silently falls back to a default. Credentials live only in memory: [`Secret`] never
//! prints its value, and nothing in here is written to the store.

use std::fmt;
use std::path::PathBuf;

use serde::Deserialize;

mod price;
mod resolve;
mod user_key;
mod web_search;

pub use price::Price;
pub use resolve::{
    ANTHROPIC_API_KEY_ENV, CREDENTIAL_ENV, Endpoint, ModelInfo, OPENAI_API_KEY_ENV, Resolved,
    model_sees, model_thinks,
};
pub use user_key::TerminalSignIn;
pub use web_search::{AnthropicSearch, SearchProvider, WebSearchConfig};

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
    /// The default model id. Default: `HEARTH_MODEL`, else `resolve::DEFAULT_MODEL`.
    pub model: Option<String>,
    #[serde(default)]
    pub providers: ProvidersConfig,
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
    #[serde(default)]
    pub subagents: SubagentsConfig,
    /// MCP servers connected for every session, besides the ones the client passes: entries
    /// in ACP's `McpServer` shape (`{name, command, args, env}` or `{type: "http", name, url,
    /// headers}`). One that cannot be used is reported in each session, like a client's.
    #[serde(default)]
    pub mcp_servers: Vec<serde_json::Value>,
    /// What the commands `run_command` starts may touch (`crate::sandbox::Settings`):
    /// workspace-write with the network off unless the user says otherwise.
    #[serde(default)]
    pub sandbox: crate::sandbox::Settings,
    /// The backend of the `web_search` tool (`web_search.rs`); none, no tool (but Claude
    /// models get Anthropic's own search).
    pub web_search: Option<WebSearchConfig>,
    /// Anthropic's server-side search, for Claude models when `webSearch` is not set.
    #[serde(default)]
    pub anthropic_web_search: AnthropicSearch,
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

/// The children the `task` tool runs (`agent/child.rs`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubagentsConfig {
    /// How deep children may nest: 1 (default) lets the session's own turn delegate and no
    /// child delegate further; 0 turns the `task` tool off.
    pub max_depth: Option<u32>,
    /// Children of one session running at once (default 4); the other calls wait their turn.
    pub max_concurrent: Option<usize>,
    /// Model requests one child may make (default 30); an agent file may lower it.
    pub max_turns: Option<u32>,
    /// How long one child may run, in seconds (default 600).
    pub timeout_secs: Option<u64>,
}

/// [`SubagentsConfig`] with its defaults applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubagentLimits {
    pub max_depth: u32,
    pub max_concurrent: usize,
    pub max_turns: u32,
    pub timeout: std::time::Duration,
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
    /// Whether it runs in the sandbox (default: `sandbox.languageServers`, true unless
    /// turned off); `false` for a server that cannot work confined.
    pub sandbox: Option<bool>,
}

/// One entry of the model catalog.
#[derive(Debug, Clone, Deserialize, PartialEq)]
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
    /// see `resolve.rs` `sees_by_default`.
    pub vision: Option<bool>,
    /// Its prices per million tokens, for a `cost` in `usage_update` (`price.rs`). Default:
    /// none, and no cost is reported.
    pub price: Option<Price>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ProviderName {
    Openai,
    Anthropic,
}

impl ProviderName {
    /// Every provider, in the order users are offered them.
    pub const ALL: [ProviderName; 2] = [ProviderName::Openai, ProviderName::Anthropic];

    pub fn as_str(self) -> &'static str {
        match self {
            ProviderName::Openai => "openai",
            ProviderName::Anthropic => "anthropic",
        }
    }

    /// The environment variable a host's key for this provider arrives in.
    pub fn key_env(self) -> &'static str {
        match self {
            ProviderName::Openai => OPENAI_API_KEY_ENV,
            ProviderName::Anthropic => ANTHROPIC_API_KEY_ENV,
        }
    }
}

/// A provider named by a user (`hearth auth --provider`): an unknown name is an error that
/// lists the known ones, never a fallback to some provider.
impl std::str::FromStr for ProviderName {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, String> {
        ProviderName::ALL
            .into_iter()
            .find(|p| p.as_str() == name)
            .ok_or_else(|| {
                let known: Vec<&str> = ProviderName::ALL.map(ProviderName::as_str).to_vec();
                format!("unknown provider `{name}` (known: {})", known.join(", "))
            })
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
    /// Hosts `fetch` may reach even on a loopback, private, link-local or metadata address
    /// (names, `*.domain`, addresses with IPv6 in brackets; no port).
    #[serde(default)]
    pub fetch_allow_hosts: Vec<String>,
    /// How often a running tool call that prints nothing is reported alive to the client,
    /// in seconds (default 30): clients end turns that stay silent too long.
    pub liveness_secs: Option<u64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProvidersConfig {
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

    /// Checks every value; `from_json` does, and a host that changes the config after it
    /// (the `hearth` command's flags) does again.
    pub fn validate(&self) -> Result<(), ConfigError> {
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
            ("mcp.startupTimeoutSecs", self.mcp.startup_timeout_secs),
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
            (
                "tools.livenessSecs",
                tools.liveness_secs.map(|v| v as usize),
            ),
        ] {
            if value == Some(0) {
                return Err(ConfigError(format!(
                    "invalid config key `{key}`: must be at least 1"
                )));
            }
        }
        // No port: the address check, after DNS resolution, cannot see one.
        if let Some(host) =
            tools
                .fetch_allow_hosts
                .iter()
                .find(|host| match host.strip_prefix('[') {
                    Some(rest) => rest
                        .split_once(']')
                        .is_none_or(|(_, after)| !after.is_empty()),
                    None => host.contains(':') || host.is_empty(),
                })
        {
            return Err(ConfigError(format!(
                "invalid config key `tools.fetchAllowHosts`: `{host}` is not a host name or \
                 address (IPv6 in brackets) without a port"
            )));
        }
        if let Some(search) = &self.web_search {
            search.validate()?;
        }
        self.anthropic_web_search.validate()?;
        if self.max_turn_requests == Some(0) {
            return Err(ConfigError(
                "invalid config key `maxTurnRequests`: must be at least 1".into(),
            ));
        }
        let subagents = &self.subagents;
        if subagents.max_concurrent == Some(0)
            || subagents.max_turns == Some(0)
            || subagents.timeout_secs == Some(0)
        {
            return Err(ConfigError(
                "invalid config key `subagents`: `maxConcurrent`, `maxTurns` and `timeoutSecs` \
                 must be at least 1"
                    .into(),
            ));
        }
        if let Some(i) = self
            .models
            .iter()
            .flatten()
            .position(|m| m.price.as_ref().is_some_and(|p| !p.is_valid()))
        {
            return Err(ConfigError(format!(
                "invalid config key `models[{i}].price`: prices must be finite and not negative"
            )));
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
        if let Some(i) = self
            .sandbox
            .writable_roots
            .iter()
            .position(|root| !root.is_absolute())
        {
            return Err(ConfigError(format!(
                "invalid config key `sandbox.writableRoots[{i}]`: must be an absolute path"
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

    pub fn max_turn_requests(&self) -> u32 {
        self.max_turn_requests.unwrap_or(50)
    }

    /// Anthropic's server-side search, when a Claude model is to be offered it: no backend of
    /// the user's own (`webSearch`) and not turned off.
    pub fn hosted_search(&self) -> Option<&AnthropicSearch> {
        let search = &self.anthropic_web_search;
        (self.web_search.is_none() && search.enabled).then_some(search)
    }

    /// The limits of the `task` tool's children.
    pub fn subagent_limits(&self) -> SubagentLimits {
        let config = &self.subagents;
        SubagentLimits {
            max_depth: config.max_depth.unwrap_or(1),
            max_concurrent: config.max_concurrent.unwrap_or(4),
            max_turns: config.max_turns.unwrap_or(30),
            timeout: std::time::Duration::from_secs(config.timeout_secs.unwrap_or(600)),
        }
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
            // The local data dir: the same as the data dir on Linux and macOS; on Windows
            // `AppData\Local`, not `Roaming` — a roaming profile is copied to a server at every
            // sign-out, which a growing SQLite file (and its -wal) must not be.
            None => dirs::data_local_dir()
                .map(|d| StoreLocation::File(d.join("hearth").join("hearth.db")))
                .ok_or_else(|| {
                    ConfigError("no platform data directory; set `dataDir` in the config".into())
                }),
        }
    }
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
    fn fetch_allow_hosts_are_hosts_without_ports() {
        let config = |hosts: &str| {
            Config::from_json(&format!(r#"{{"tools": {{"fetchAllowHosts": {hosts}}}}}"#))
        };
        let ok = config(r#"["localhost", "10.0.0.2", "[::1]", "*.corp.example"]"#).unwrap();
        assert_eq!(ok.tools.fetch_allow_hosts.len(), 4);
        for bad in [
            r#"["localhost:8080"]"#,
            r#"["[::1]:80"]"#,
            r#"["::1"]"#,
            r#"[""]"#,
        ] {
            let error = config(bad).unwrap_err();
            assert!(
                error.0.contains("`tools.fetchAllowHosts`"),
                "{bad}: {error}"
            );
        }
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
    fn memory_store() {
        let c = Config::from_json(r#"{"dataDir":":memory:"}"#).unwrap();
        assert_eq!(c.store_location().unwrap(), StoreLocation::Memory);
    }
}
