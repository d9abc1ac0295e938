//! No child Hearth starts sees the engine's provider credentials (`OPENAI_API_KEY`,
//! `ANTHROPIC_API_KEY`) unless an MCP entry's own `env` names one: an MCP stdio server and a
//! language server report what they were given, through the whole engine.
//!
//! The engine must run with the keys in its environment. Setting them in this process would
//! race with every other test thread (and needs `unsafe`), so the one visible test runs this
//! test binary again with the keys set, and the probes — ignored otherwise — run there.

mod common;

use std::path::Path;
use std::process::Command;

use common::{Setup, call, mcp_python, start, text, tool_results};
use hearth_testkit::{AcpClient, InProcess, repo_root};
use serde_json::{Value, json};

/// The values the probes run with: provider keys that must not leak.
const OPENAI_KEY: &str = "sk-openai-must-not-leak";
const ANTHROPIC_KEY: &str = "sk-ant-must-not-leak";
/// Set in the re-run only: the probes refuse to run without the keys (they would pass
/// vacuously).
const PROBE: &str = "HEARTH_CREDENTIALS_PROBE";

#[test]
fn no_child_sees_the_provider_keys() {
    let probes = Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--test-threads=1", "probe_"])
        .env(PROBE, "1")
        .env("OPENAI_API_KEY", OPENAI_KEY)
        .env("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&probes.stdout);
    assert!(
        probes.status.success(),
        "{report}\n{}",
        String::from_utf8_lossy(&probes.stderr)
    );
    assert!(report.contains("3 passed"), "every probe ran: {report}");
}

/// Panics unless this is the re-run with the keys set.
fn in_probe_run() {
    assert_eq!(
        std::env::var(PROBE).as_deref(),
        Ok("1"),
        "run through no_child_sees_the_provider_keys"
    );
    assert_eq!(std::env::var("OPENAI_API_KEY").as_deref(), Ok(OPENAI_KEY));
}

/// An MCP stdio entry for `tests/mcp/env_server.py` with its own `env`.
fn env_server(name: &str, env: &[(&str, &str)]) -> Value {
    let script = repo_root().join("tests/mcp/env_server.py");
    let env: Vec<Value> = env
        .iter()
        .map(|(name, value)| json!({"name": name, "value": value}))
        .collect();
    json!({"name": name, "command": mcp_python(), "args": [script], "env": env})
}

/// What each MCP `env` call of the model got back, in order.
fn mcp_answers(servers: Value, calls: &[(&str, &str)]) -> Vec<String> {
    let mut script: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(n, (tool, variable))| call(&format!("c{n}"), tool, json!({"name": variable})))
        .collect();
    script.push(text(&["Seen."]));
    let setup = Setup::new(json!({ "responses": script }));
    let mut client: AcpClient<InProcess> = start(&setup, json!({}));
    let session = client.call(
        "session/new",
        json!({"cwd": setup.cwd(), "mcpServers": servers}),
    )["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    client.prompt(&session, "look");
    tool_results(&setup, calls.len())
}

#[test]
#[ignore = "run by no_child_sees_the_provider_keys, with the keys set"]
fn probe_an_mcp_server_sees_no_provider_key() {
    in_probe_run();
    let answers = mcp_answers(
        json!([env_server("plain", &[])]),
        &[
            ("mcp__plain__env", "OPENAI_API_KEY"),
            ("mcp__plain__env", "ANTHROPIC_API_KEY"),
            ("mcp__plain__env", "PATH"),
        ],
    );
    assert!(answers[0].contains("(unset)"), "{answers:?}");
    assert!(answers[1].contains("(unset)"), "{answers:?}");
    assert!(
        !answers[2].contains("(unset)"),
        "the rest of the environment is passed: {answers:?}"
    );
}

#[test]
#[ignore = "run by no_child_sees_the_provider_keys, with the keys set"]
fn probe_an_mcp_entry_that_names_a_key_passes_it() {
    in_probe_run();
    let answers = mcp_answers(
        json!([env_server(
            "keyed",
            &[("OPENAI_API_KEY", "sk-the-entrys-own")]
        )]),
        &[
            ("mcp__keyed__env", "OPENAI_API_KEY"),
            ("mcp__keyed__env", "ANTHROPIC_API_KEY"),
        ],
    );
    assert!(answers[0].contains("sk-the-entrys-own"), "{answers:?}");
    assert!(
        answers[1].contains("(unset)"),
        "only the key it names: {answers:?}"
    );
}

#[test]
#[ignore = "run by no_child_sees_the_provider_keys, with the keys set"]
fn probe_a_language_server_sees_no_provider_key() {
    in_probe_run();
    let setup = Setup::new(json!({"responses": [
        call("c1", "lsp_diagnostics", json!({"path": "a.fake"})),
        text(&["Checked."]),
    ]}));
    let root = setup.dir.path().join("project");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("a.fake"), "fine\n").unwrap();
    // Inside the root: the server runs in the sandbox, which lets it write nowhere else.
    let report = root.join("env.txt");
    let server = repo_root().join("tests/lsp/fake_server.py");
    let mut client = start(
        &setup,
        json!({"lsp": {"servers": {"fake": {
            "extensions": ["fake"],
            "command": "python3",
            "args": [server, "--envfile", report],
        }}}}),
    );
    let session = client.new_session(&root.to_string_lossy());
    client.prompt(&session, "check");
    let seen = read(&report);
    assert!(
        seen.contains("OPENAI_API_KEY unset") && seen.contains("ANTHROPIC_API_KEY unset"),
        "{seen}\n{:?}",
        tool_results(&setup, 1)
    );
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}
