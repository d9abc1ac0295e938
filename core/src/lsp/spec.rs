//! Which language server serves a file: the defaults (pyright, TypeScript 7's `tsc --lsp`,
//! rust-analyzer) merged with `lsp.servers` of the config, looked up by file extension.
//!
//! The defaults: `python` → `pyright-langserver --stdio`, `typescript` → `tsc --lsp --stdio`
//! for `.ts/.tsx/.mts/.cts/.js/.jsx/.mjs/.cjs`, `rust` → `rust-analyzer`. A config entry
//! replaces the default of its name and `null` turns one off; the user's entries are looked up
//! first (an extension they give a server of their own is theirs). rust-analyzer is
//! initialised without build scripts, proc macros or check on save: the tools are reads,
//! allowed in plan mode, and must not run the project's code.

use std::path::Path;

use serde_json::{Value, json};

use crate::config::{LspConfig, LspServerConfig};

/// A configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    /// Its name in the config (`python`), in messages and in the log.
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
    pub extensions: Vec<String>,
    pub language_id: Option<String>,
    /// `initializationOptions` of its `initialize`.
    pub initialization_options: Option<Value>,
    /// Whether it runs in the sandbox, as its entry says; `None` (the defaults, an entry that
    /// does not say): as `sandbox.languageServers` says.
    pub sandbox: Option<bool>,
}

impl ServerSpec {
    fn from_config(name: &str, config: &LspServerConfig) -> Self {
        ServerSpec {
            name: name.to_owned(),
            command: config.command.clone(),
            args: config.args.clone(),
            extensions: config
                .extensions
                .iter()
                .map(|e| e.trim_start_matches('.').to_ascii_lowercase())
                .collect(),
            language_id: config.language_id.clone(),
            initialization_options: None,
            sandbox: config.sandbox,
        }
    }

    /// The LSP language id of `path`'s document.
    pub fn language_id(&self, path: &Path) -> String {
        if let Some(id) = &self.language_id {
            return id.clone();
        }
        let extension = extension(path).unwrap_or_default();
        match extension.as_str() {
            "py" | "pyi" => "python",
            "ts" | "mts" | "cts" => "typescript",
            "tsx" => "typescriptreact",
            "js" | "mjs" | "cjs" => "javascript",
            "jsx" => "javascriptreact",
            "rs" => "rust",
            other => return other.to_owned(),
        }
        .to_owned()
    }

    /// How to get the default servers, for the "unavailable" answer.
    pub fn install_hint(&self) -> Option<&'static str> {
        let program = Path::new(&self.command).file_name()?.to_str()?;
        match program {
            "pyright-langserver" => Some("install it with `npm i -g pyright`"),
            "tsc" => Some("install TypeScript 7 with `npm i -g typescript@7`"),
            "rust-analyzer" => Some("install it with `rustup component add rust-analyzer`"),
            _ => None,
        }
    }
}

/// The servers of a config: the user's first (so an extension they give a server of their
/// own is theirs), then the defaults they did not replace or turn off by name.
pub fn servers(config: &LspConfig) -> Vec<ServerSpec> {
    let mut specs: Vec<ServerSpec> = config
        .servers
        .iter()
        .filter_map(|(name, server)| Some(ServerSpec::from_config(name, server.as_ref()?)))
        .collect();
    specs.extend(
        defaults()
            .into_iter()
            .filter(|spec| !config.servers.contains_key(&spec.name)),
    );
    specs
}

/// The server for `path`'s extension, if any serves it.
pub fn for_path<'a>(specs: &'a [ServerSpec], path: &Path) -> Option<&'a ServerSpec> {
    let extension = extension(path)?;
    specs
        .iter()
        .find(|spec| spec.extensions.contains(&extension))
}

fn extension(path: &Path) -> Option<String> {
    Some(path.extension()?.to_str()?.to_ascii_lowercase())
}

fn defaults() -> Vec<ServerSpec> {
    let spec = |name: &str, command: &str, args: &[&str], extensions: &[&str]| ServerSpec {
        name: name.to_owned(),
        command: command.to_owned(),
        args: args.iter().map(|a| a.to_string()).collect(),
        extensions: extensions.iter().map(|e| e.to_string()).collect(),
        language_id: None,
        initialization_options: None,
        sandbox: None,
    };
    vec![
        spec("python", "pyright-langserver", &["--stdio"], &["py", "pyi"]),
        spec(
            "typescript",
            "tsc",
            &["--lsp", "--stdio"],
            &["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"],
        ),
        ServerSpec {
            initialization_options: Some(rust_analyzer_settings()),
            ..spec("rust", "rust-analyzer", &[], &["rs"])
        },
    ]
}

/// rust-analyzer's settings: no build scripts, no proc macros, no `cargo check` on save. The
/// tools are reads, allowed in every mode (plan included); a language server must not run
/// the project's code behind them.
pub fn rust_analyzer_settings() -> Value {
    json!({
        "cargo": {"buildScripts": {"enable": false}},
        "procMacro": {"enable": false},
        "checkOnSave": false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(json: &str) -> LspConfig {
        crate::config::Config::from_json(json).unwrap().lsp
    }

    #[test]
    fn defaults_serve_python_typescript_and_rust() {
        let specs = servers(&LspConfig::default());
        let name = |p: &str| for_path(&specs, Path::new(p)).map(|s| s.name.clone());
        assert_eq!(name("/w/a.py").as_deref(), Some("python"));
        assert_eq!(name("/w/A.TSX").as_deref(), Some("typescript"));
        assert_eq!(name("/w/main.rs").as_deref(), Some("rust"));
        assert_eq!(name("/w/notes.txt"), None);
        assert_eq!(name("/w/Makefile"), None);
        let ts = for_path(&specs, Path::new("/w/a.tsx")).unwrap();
        assert_eq!(ts.language_id(Path::new("/w/a.tsx")), "typescriptreact");
        assert_eq!(ts.language_id(Path::new("/w/a.mjs")), "javascript");
    }

    #[test]
    fn the_config_adds_replaces_and_turns_off_servers() {
        let specs = servers(&config(
            r#"{"lsp": {"servers": {
                "python": {"extensions": ["py"], "command": "pylsp"},
                "rust": null,
                "go": {"extensions": [".go"], "command": "gopls", "args": ["serve"], "languageId": "go"}
            }}}"#,
        ));
        let find = |p: &str| for_path(&specs, Path::new(p)).cloned();
        assert_eq!(find("/a.py").unwrap().command, "pylsp");
        assert!(find("/a.rs").is_none(), "rust turned off");
        let go = find("/main.go").unwrap();
        assert_eq!(
            (go.args.as_slice(), go.install_hint()),
            (&["serve".to_string()][..], None)
        );
        assert_eq!(
            find("/a.ts").unwrap().command,
            "tsc",
            "the other defaults stay"
        );
        let specs = servers(&config(
            r#"{"lsp": {"servers": {"pylsp": {"extensions": ["py"], "command": "pylsp"}}}}"#,
        ));
        let python = for_path(&specs, Path::new("/a.py")).unwrap();
        assert_eq!(
            python.name, "pylsp",
            "the user's server for .py wins over the default"
        );
    }

    #[test]
    fn bad_server_entries_are_config_errors() {
        let error = crate::config::Config::from_json(
            r#"{"lsp": {"servers": {"x": {"extensions": [], "command": "x"}}}}"#,
        )
        .unwrap_err();
        assert!(error.0.contains("`lsp.servers.x`"), "{error}");
        let error = crate::config::Config::from_json(r#"{"lsp": {"timeoutSecs": 0}}"#).unwrap_err();
        assert!(error.0.contains("`lsp.timeoutSecs`"), "{error}");
    }
}
