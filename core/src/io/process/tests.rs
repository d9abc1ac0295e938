//! The launcher: the environment a child gets, the confinement hook, and its refusals. What
//! MCP and language servers get is tested with them (`tools/mcp/tests.rs`,
//! `tools/lsp/tests.rs`) and through the engine (`core/tests/credentials.rs`).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc::unbounded_channel;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::io::testing::with_keys;
#[cfg(unix)]
use crate::io::testing::{Wrapped, wrapping_launcher};
use crate::io::{CommandSpec, Io, LocalIo};

const KEYS: [&str; 2] = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"];

fn value<'a>(launch: &'a Launch, name: &str) -> Option<&'a str> {
    launch
        .env
        .iter()
        .find(|(n, _)| n == name)
        .and_then(|(_, v)| v.to_str())
}

#[test]
fn a_childs_environment_is_the_engines_without_the_keys_plus_its_own() {
    let launcher = Launcher::with_env(with_keys(), &KEYS);
    let dir = std::path::Path::new("/");
    let plain = launcher.launch(ChildKind::McpServer, "srv", &[], dir, &[]);
    assert_eq!(value(&plain, "OPENAI_API_KEY"), None);
    assert_eq!(value(&plain, "ANTHROPIC_API_KEY"), None);
    assert!(value(&plain, "PATH").is_some(), "the rest is passed on");

    let own = [
        ("OPENAI_API_KEY".to_owned(), "sk-named".to_owned()),
        ("PATH".to_owned(), "/only/here".to_owned()),
    ];
    let keyed = launcher.launch(ChildKind::McpServer, "srv", &[], dir, &own);
    assert_eq!(value(&keyed, "OPENAI_API_KEY"), Some("sk-named"));
    assert_eq!(value(&keyed, "ANTHROPIC_API_KEY"), None);
    assert_eq!(value(&keyed, "PATH"), Some("/only/here"), "its own wins");
    let paths = keyed.env.iter().filter(|(n, _)| n == "PATH").count();
    assert_eq!(paths, 1);
}

/// A confined server's cache goes inside its temp dir, and with no network at all cargo is
/// told so (rust-analyzer's `cargo metadata` would otherwise retry each download for ~11 s).
#[test]
fn a_confined_server_gets_its_own_cache_and_cargo_offline_when_the_network_is_off() {
    use crate::sandbox::{Network, Setup};
    let launcher = Launcher::with_env(with_keys(), &KEYS);
    let root = std::env::temp_dir();
    let own = [("XDG_CACHE_HOME".to_owned(), "/home/u/.cache".to_owned())];
    let confined = |network: Network| {
        let mut setup = Setup::default();
        setup.settings.network = network;
        let sandbox = ServerSandbox::new(&setup, &[&root], "lsp").unwrap();
        let mut launch = launcher.launch(ChildKind::LanguageServer, "rust", &[], &root, &own);
        sandbox.apply(&mut launch);
        launch
    };

    let offline = confined(Network::Off);
    let cache = value(&offline, "XDG_CACHE_HOME").unwrap();
    assert!(
        cache.contains("hearth-lsp") && cache.ends_with("cache"),
        "{cache}"
    );
    let caches = offline.env.iter().filter(|(n, _)| n == "XDG_CACHE_HOME");
    assert_eq!(caches.count(), 1);
    assert_eq!(value(&offline, "CARGO_NET_OFFLINE"), Some("true"));
    assert!(offline.sandbox.is_some());

    assert_eq!(value(&confined(Network::On), "CARGO_NET_OFFLINE"), None);
    let allowed = confined(Network::Allow(vec!["index.crates.io".into()]));
    assert_eq!(
        value(&allowed, "CARGO_NET_OFFLINE"),
        None,
        "through the proxy"
    );
}

async fn run(io: &LocalIo, command: &str) -> Result<String, crate::io::IoError> {
    let spec = CommandSpec {
        command: command.to_owned(),
        cwd: std::env::temp_dir(),
        timeout: Duration::from_secs(30),
        output_limit: 4096,
        sandbox: None,
    };
    let (tx, _rx) = unbounded_channel();
    let result = io.run_command(spec, tx, CancellationToken::new()).await?;
    Ok(result.output)
}

// `sh` syntax; the Windows shells expand variables otherwise.
#[cfg(unix)]
#[tokio::test]
async fn a_command_sees_no_key_and_runs_wrapped() {
    let policy = Arc::new(Wrapped::default());
    let io = LocalIo::new(wrapping_launcher(&policy));
    let output = run(
        &io,
        "echo ${HEARTH_WRAPPED:-bare} ${OPENAI_API_KEY:-no-openai} ${ANTHROPIC_API_KEY:-no-ant}",
    )
    .await
    .unwrap();
    assert_eq!(output, "1 no-openai no-ant\n");
    let seen = policy.seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [(ChildKind::Command, "sh".into())],
        "before it wrapped it"
    );
}

/// Refuses every child, saying why.
struct Refuse;

impl Confinement for Refuse {
    fn confine(&self, _: &mut Launch) -> Result<(), String> {
        Err("not allowed by the sandbox".into())
    }
}

#[tokio::test]
async fn a_refused_child_is_not_started_and_says_why() {
    let launcher = Arc::new(Launcher::new(&KEYS).confined(Arc::new(Refuse)));
    let error = run(&LocalIo::new(launcher.clone()), "echo hi")
        .await
        .unwrap_err();
    assert_eq!(
        error.0,
        "cannot start `echo hi`: not allowed by the sandbox"
    );
    let launch = launcher.launch(
        ChildKind::LanguageServer,
        "pyright",
        &[],
        &std::env::temp_dir(),
        &[],
    );
    let refused = start_server(&launcher, "py", launch, |_, _| {}).err();
    assert_eq!(
        refused.as_deref(),
        Some("cannot start `pyright`: not allowed by the sandbox")
    );
}

/// A job ends the whole tree: the grandchild holding the output pipe goes with its parent, so
/// the pipe reaches its end (it would not for ten minutes if only the leader were killed).
#[cfg(windows)]
#[tokio::test]
async fn stopping_a_job_ends_the_grandchildren_too() {
    use tokio::io::AsyncReadExt;
    let launcher = Launcher::new(&KEYS);
    // `ping -n 600` is Windows' `sleep 600`; the inner cmd holds the pipe meanwhile.
    let inner = r#"cmd /d /c "echo started& ping -n 600 127.0.0.1 >NUL""#;
    let args = ["/d", "/s", "/c", inner].map(String::from);
    let launch = launcher.launch(
        ChildKind::McpServer,
        "cmd.exe",
        &args,
        &std::env::temp_dir(),
        &[],
    );
    let mut started = launcher.start(launch, Stdio::Piped).unwrap();
    let mut stdout = started.child.stdout.take().unwrap();
    let mut first = [0u8; 1];
    assert_eq!(
        stdout.read(&mut first).await.unwrap(),
        1,
        "the grandchild runs"
    );
    started.group.stop();
    started.group.wait();
    assert!(started.group.settled());
    let mut rest = Vec::new();
    let end = tokio::time::timeout(Duration::from_secs(20), stdout.read_to_end(&mut rest)).await;
    assert!(
        end.is_ok(),
        "the grandchild is gone, so is its end of the pipe"
    );
}

/// cmd.exe gets the command line as typed: its quotes are not std's `\"`.
#[cfg(windows)]
#[tokio::test]
async fn cmd_gets_the_command_line_as_typed() {
    use tokio::io::AsyncReadExt;
    let launcher = Launcher::new(&KEYS);
    let args = ["/d", "/s", "/c", r#"echo "two words" & echo second"#].map(String::from);
    let launch = launcher.launch(
        ChildKind::Command,
        "cmd.exe",
        &args,
        &std::env::temp_dir(),
        &[],
    );
    let mut started = launcher.start(launch, Stdio::Merged).unwrap();
    let mut output = String::new();
    started
        .output
        .take()
        .unwrap()
        .read_to_string(&mut output)
        .await
        .unwrap();
    assert_eq!(output, "\"two words\" \r\nsecond\r\n");
    assert!(started.child.wait().await.unwrap().success());
}
