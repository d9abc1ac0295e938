//! The launcher: the environment a child gets, the confinement hook, and its refusals. What
//! MCP and language servers get is tested with them (`tools/mcp/tests.rs`,
//! `tools/lsp/tests.rs`) and through the engine (`core/tests/credentials.rs`).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc::unbounded_channel;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::io::testing::{Wrapped, with_keys, wrapping_launcher};
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

async fn run(io: &LocalIo, command: &str) -> Result<String, crate::io::IoError> {
    let spec = CommandSpec {
        command: command.to_owned(),
        cwd: std::env::temp_dir(),
        timeout: Duration::from_secs(30),
        output_limit: 4096,
    };
    let (tx, _rx) = unbounded_channel();
    let result = io.run_command(spec, tx, CancellationToken::new()).await?;
    Ok(result.output)
}

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
