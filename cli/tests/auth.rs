//! `hearth auth` as a real child process, on its file fallback: the test points `configDir`
//! at a temp dir and hides every D-Bus session bus (as CI has none), so no OS store answers.
//! The key it stores must reach the mock LLM as the bearer token, from a fresh `hearth acp`
//! and from one that was already running when the user signed in (after `authenticate`).

use std::path::Path;
use std::process::{Command, Output};

use hearth_mock_llm::{MockLlm, Script};
use hearth_testkit::processes::output_with_stdin;
use hearth_testkit::{AcpClient, Stdio, absolute, cargo_bin};
use serde_json::{Value, json};

/// No session bus: unset, and its default socket under XDG_RUNTIME_DIR (the temp dir) absent.
fn no_keyring(dir: &Path) -> [(&'static str, Option<String>); 4] {
    let runtime = dir.to_string_lossy().into_owned();
    [
        ("DBUS_SESSION_BUS_ADDRESS", None),
        ("XDG_RUNTIME_DIR", Some(runtime)),
        ("OPENAI_API_KEY", None),
        ("OPENAI_BASE_URL", None),
    ]
}

fn write_config(dir: &Path, config: Value) -> std::path::PathBuf {
    let path = dir.join("auth-config.json");
    std::fs::write(&path, config.to_string()).unwrap();
    path
}

/// Runs `hearth auth --config <config> <args>` with `stdin` piped in.
fn auth(dir: &Path, config: &Path, args: &[&str], stdin: &str) -> Output {
    let mut command = Command::new(cargo_bin("hearth"));
    command.arg("auth").arg("--config").arg(config).args(args);
    run(command, dir, stdin)
}

/// Runs what a client runs for ACP's terminal sign-in: the agent's invocation, `hearth acp
/// --config <config>`, with the method's `args` (`auth`) appended, then `args`.
fn acp_auth(dir: &Path, config: &Path, args: &[&str], stdin: &str) -> Output {
    let mut command = Command::new(cargo_bin("hearth"));
    command
        .arg("acp")
        .arg("--config")
        .arg(config)
        .arg("auth")
        .args(args);
    run(command, dir, stdin)
}

/// Runs `command` with no keyring and `stdin` piped in.
fn run(mut command: Command, dir: &Path, stdin: &str) -> Output {
    for (key, value) in no_keyring(dir) {
        match value {
            Some(v) => command.env(key, v),
            None => command.env_remove(key),
        };
    }
    output_with_stdin(&mut command, stdin)
}

/// `hearth auth --key-stdin --provider openai`, which must succeed.
fn store_openai_key(dir: &Path, config: &Path, key: &str) {
    let stored = auth(dir, config, &["--key-stdin", "--provider", "openai"], key);
    assert!(stored.status.success(), "{stored:?}");
}

fn acp(dir: &Path, config: &Value) -> AcpClient<Stdio> {
    let env = no_keyring(dir);
    let env: Vec<(&str, Option<&str>)> = env.iter().map(|(k, v)| (*k, v.as_deref())).collect();
    AcpClient::new(Stdio::start(&config.to_string(), dir, &env))
}

fn mock() -> MockLlm {
    let script = json!({"responses": [{"events": [{"text": "ok"}]}, {"events": [{"text": "ok"}]}]});
    MockLlm::start(serde_json::from_value::<Script>(script).unwrap()).unwrap()
}

/// The config both commands share: the store in memory, the user's files in `dir`.
fn base_config(dir: &Path, mock: &MockLlm) -> Value {
    json!({"dataDir": ":memory:", "configDir": dir, "model": "mock-model",
           "providers": {"openai": {"baseUrl": mock.base_url()}}})
}

fn prompt_and_bearer(client: &mut AcpClient<Stdio>, mock: &MockLlm) -> Option<String> {
    let session = client.new_session(&absolute("/tmp"));
    client.prompt(&session, "hi");
    let requests = mock.requests();
    let last = requests.last().expect("the model was called");
    last.headers.get("authorization").cloned()
}

#[test]
fn a_stored_key_reaches_the_model_and_logout_removes_it() {
    let dir = tempfile::tempdir().unwrap();
    let mock = mock();
    let config = base_config(dir.path(), &mock);
    let path = write_config(dir.path(), config.clone());

    store_openai_key(dir.path(), &path, "sk-stored\n");
    let file = dir.path().join("credentials.json");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "owner-only");
    }

    let mut client = acp(dir.path(), &config);
    let init = client.call(
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {"auth": {"terminal": true}}}),
    );
    assert_eq!(
        client.call("authenticate", json!({"methodId": "hearth-auth"})),
        json!({})
    );
    assert_eq!(
        prompt_and_bearer(&mut client, &mock).as_deref(),
        Some("Bearer sk-stored")
    );
    let methods = init["authMethods"].as_array().unwrap();
    // Stable Zed's legacy form: an agent-type method that runs this very binary.
    let legacy = &methods[0]["_meta"]["terminal-auth"];
    assert_eq!(legacy["args"], json!(["auth", "--provider", "openai"]));
    assert!(
        legacy["command"].as_str().unwrap().contains("hearth"),
        "{legacy}"
    );
    assert_eq!(methods[2]["type"], "terminal");
    assert_eq!(methods[2]["args"], json!(["auth"]));

    let status = auth(dir.path(), &path, &["status"], "");
    let shown = String::from_utf8_lossy(&status.stdout);
    assert!(shown.contains("openai: signed in"), "{shown}");

    let out = auth(dir.path(), &path, &["logout"], "");
    assert!(out.status.success(), "{out:?}");
    let left: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(left, json!({}));
    let status = auth(dir.path(), &path, &["status"], "");
    let shown = String::from_utf8_lossy(&status.stdout);
    assert!(shown.contains("openai: not signed in"), "{shown}");
    // The mock's own URL needs no key, so the turn still runs: without one.
    let mut client = acp(dir.path(), &config);
    client.initialize();
    assert_eq!(prompt_and_bearer(&mut client, &mock), None);
}

/// The sign-in a client runs for ACP's terminal method (`hearth acp --config F auth`) counts
/// at the next `authenticate` of an agent already running.
#[test]
fn a_sign_in_while_the_agent_runs_counts_at_the_next_authenticate() {
    let dir = tempfile::tempdir().unwrap();
    let mock = mock();
    let config = base_config(dir.path(), &mock);
    let path = write_config(dir.path(), config.clone());
    let mut client = acp(dir.path(), &config);
    client.initialize();
    let error = client.call_err("authenticate", json!({"methodId": "hearth-auth"}));
    assert_eq!(error["code"], -32000, "{error}");
    let detail = error["data"]["detail"].as_str().unwrap();
    assert!(detail.contains("run `hearth auth`"), "{detail}");
    // Opened before the sign-in: it must use the key too.
    let session = client.new_session("/tmp");

    // As a client signs in through the terminal method: `auth` after the agent's invocation.
    let args = ["--key-stdin", "--provider", "openai"];
    let stored = acp_auth(dir.path(), &path, &args, "sk-signed-in-later\n");
    assert!(stored.status.success(), "{stored:?}");
    assert_eq!(
        client.call("authenticate", json!({"methodId": "hearth-auth"})),
        json!({})
    );
    client.prompt(&session, "hi");
    let requests = mock.requests();
    let sent = requests.last().expect("the model was called");
    assert_eq!(
        sent.headers.get("authorization").map(String::as_str),
        Some("Bearer sk-signed-in-later")
    );
}

#[test]
fn a_key_the_host_passes_wins_over_the_stored_one() {
    let dir = tempfile::tempdir().unwrap();
    let mock = mock();
    let mut config = base_config(dir.path(), &mock);
    let path = write_config(dir.path(), config.clone());
    store_openai_key(dir.path(), &path, "sk-stored");
    config["providers"]["openai"]["apiKey"] = json!("sk-host");
    let mut client = acp(dir.path(), &config);
    client.initialize();
    // Re-reading the store changes nothing for a provider the host passed a key for.
    assert_eq!(
        client.call("authenticate", json!({"methodId": "hearth-auth"})),
        json!({})
    );
    assert_eq!(
        prompt_and_bearer(&mut client, &mock).as_deref(),
        Some("Bearer sk-host")
    );
}

#[test]
fn bad_input_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let mock = mock();
    let path = write_config(dir.path(), base_config(dir.path(), &mock));
    let cases: [(&[&str], &str, &str); 3] = [
        (&["--key-stdin", "--provider", "openai"], "  \n", "empty"),
        (
            &["--key-stdin", "--provider", "nope"],
            "sk-x",
            "unknown provider",
        ),
        (&["--key-stdin"], "sk-x", "needs --provider"),
    ];
    for (args, stdin, message) in cases {
        let out = auth(dir.path(), &path, args, stdin);
        assert!(!out.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
    assert!(!dir.path().join("credentials.json").exists());
}
