//! What the engine tests share: a scripted mock LLM, a temp data dir, and an in-process
//! client that validates every frame against the ACP schema.

#![allow(dead_code)] // each test file uses a different part

#[cfg(target_os = "linux")]
pub mod sandbox;
pub mod tools;

use std::path::Path;

use hearth_mock_llm::{MockLlm, Script};
use hearth_testkit::{AcpClient, InProcess};
use serde_json::{Value, json};

pub struct Setup {
    pub mock: MockLlm,
    pub dir: tempfile::TempDir,
}

impl Setup {
    pub fn new(script: Value) -> Setup {
        let script: Script = serde_json::from_value(script).expect("valid mock script");
        Setup {
            mock: MockLlm::start(script).expect("mock LLM starts"),
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn config(&self) -> String {
        config_for(&self.mock, self.dir.path())
    }

    /// A fresh engine on this setup's data dir, initialized.
    pub fn client(&self) -> AcpClient<InProcess> {
        let mut client = AcpClient::new(InProcess::start(&self.config()));
        client.initialize();
        client
    }

    pub fn cwd(&self) -> String {
        self.dir.path().to_string_lossy().into_owned()
    }

    /// The `messages` the agent sent in its `n`th model request.
    pub fn model_messages(&self, n: usize) -> Vec<Value> {
        let requests = self.mock.requests();
        requests[n].body["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }
}

pub fn config_for(mock: &MockLlm, data_dir: &Path) -> String {
    json!({
        "dataDir": data_dir,
        // The user's own AGENTS.md is looked for here, never in the real config dir.
        "configDir": data_dir.join("user-config"),
        "model": "mock-model",
        // No retries by default: a scripted error reaches the test at once.
        "providers": {"openai": {"baseUrl": mock.base_url(), "apiKey": "test-key-not-secret", "maxRetries": 0}},
        "streamIdleTimeoutSecs": 5,
    })
    .to_string()
}

/// A response streaming `text` in pieces.
pub fn text(parts: &[&str]) -> Value {
    json!({"events": parts.iter().map(|p| json!({"text": p})).collect::<Vec<_>>()})
}

/// A response in which the model calls one tool.
pub fn call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"events": [{"toolCall": {"id": id, "name": name, "arguments": arguments.to_string(), "chunks": 2}}]})
}

/// A fresh engine with `extra` merged into this setup's config, initialized.
pub fn start(setup: &Setup, extra: Value) -> AcpClient<InProcess> {
    let mut client = AcpClient::new(InProcess::start(&config(setup, extra)));
    client.initialize();
    client
}

/// This setup's config with `extra` merged in, as JSON text.
pub fn config(setup: &Setup, extra: Value) -> String {
    let mut config: Value = serde_json::from_str(&setup.config()).unwrap();
    for (k, v) in extra.as_object().unwrap() {
        config[k] = v.clone();
    }
    config.to_string()
}

/// The tool results the model received in request `n` (OpenAI `tool` messages).
pub fn tool_results(setup: &Setup, n: usize) -> Vec<String> {
    setup
        .model_messages(n)
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// The Python of the MCP test servers' venv; fails with the fix when it is missing.
pub fn mcp_python() -> String {
    let path = std::env::var("MCP_TEST_PYTHON")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| hearth_testkit::repo_root().join("tests/mcp/.venv/bin/python"));
    assert!(
        path.exists(),
        "no MCP test venv at {}: run `bash tests/mcp/setup.sh`",
        path.display()
    );
    path.to_string_lossy().into_owned()
}

/// An ACP stdio entry for `tests/mcp/server.py`, named `name`, with extra environment.
pub fn mcp_server(name: &str, env: &[(&str, &str)]) -> Value {
    let script = hearth_testkit::repo_root().join("tests/mcp/server.py");
    let env: Vec<Value> = env
        .iter()
        .map(|(k, v)| json!({"name": k, "value": v}))
        .collect();
    json!({"name": name, "command": mcp_python(), "args": [script, "--name", name], "env": env})
}

/// The updates of `session` of one kind (`sessionUpdate`), in order.
pub fn updates_of(client: &AcpClient<InProcess>, session: &str, kind: &str) -> Vec<Value> {
    client
        .updates(session)
        .into_iter()
        .filter(|u| u["sessionUpdate"] == kind)
        .collect()
}

/// The final status of each tool call of `session`, in order: a call that failed before it
/// ran ends in its `tool_call`, the others in an update; a display terminal's updates, which
/// repeat no status, are skipped.
pub fn final_status(client: &AcpClient<InProcess>, session: &str) -> Vec<String> {
    tools::tool_updates(client, session)
        .iter()
        .filter_map(|u| u["status"].as_str())
        .filter(|s| *s == "completed" || *s == "failed")
        .map(str::to_string)
        .collect()
}

/// A pinned language server of `tests/lsp/` (its `node_modules/.bin` program `name`).
pub fn lsp_server(name: &str) -> String {
    let path = hearth_testkit::repo_root()
        .join("tests/lsp/node_modules/.bin")
        .join(name);
    assert!(
        path.exists(),
        "no {} : run `bash tests/lsp/setup.sh`",
        path.display()
    );
    path.to_string_lossy().into_owned()
}

/// The config that points Hearth at the test suite's pinned servers.
pub fn lsp_config() -> Value {
    json!({"lsp": {"servers": {
        "python": {"extensions": ["py"], "command": lsp_server("pyright-langserver"), "args": ["--stdio"]},
        "typescript": {"extensions": ["ts"], "command": lsp_server("tsc"), "args": ["--lsp", "--stdio"]},
    }}})
}
