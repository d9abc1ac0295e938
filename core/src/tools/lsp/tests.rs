//! The servers' sharing, failures and life, against `tests/lsp/fake_server.py` (a stdlib
//! Python language server that can hang, crash or only push); the real servers, through the
//! whole engine, are in `core/tests/lsp.rs`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use super::tools;
use crate::config::Config;
use crate::lsp::{Lsp, Servers};
use crate::tools::testing::{call_any, context};
use crate::tools::{AnyTool, Context, ToolError};

fn fake_server() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/lsp/fake_server.py")
}

/// Servers whose `.fake` files go to the fake server in `mode`, its starts logged in `pids`.
fn servers(mode: &str, pids: &Path) -> Arc<Servers> {
    servers_on(
        crate::io::testing::launcher(),
        &[
            fake_server(),
            "--mode".into(),
            mode.into(),
            "--pidfile".into(),
            pids.into(),
        ],
    )
}

/// Servers whose `.fake` files go to the fake server started with `args`, by `launcher`.
fn servers_on(launcher: Arc<crate::io::process::Launcher>, args: &[PathBuf]) -> Arc<Servers> {
    servers_sandboxed(launcher, args, None)
}

/// `servers_on`, the fake entry's `sandbox` set to `sandbox` when given.
fn servers_sandboxed(
    launcher: Arc<crate::io::process::Launcher>,
    args: &[PathBuf],
    sandbox: Option<bool>,
) -> Arc<Servers> {
    let config = json!({"lsp": {
        "timeoutSecs": 1,
        "startupTimeoutSecs": 2,
        "servers": {"fake": {
            "extensions": ["fake"],
            "command": "python3",
            "args": args,
            "sandbox": sandbox,
        }},
    }});
    Arc::new(Servers::new(
        &Config::from_json(&config.to_string()).unwrap(),
        launcher,
        Default::default(),
    ))
}

struct Workspace {
    dir: tempfile::TempDir,
    pids: PathBuf,
}

impl Workspace {
    fn new(files: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let pids = dir.path().join("pids");
        Workspace { dir, pids }
    }

    fn session(&self, servers: &Arc<Servers>) -> Context {
        let mut ctx = context(self.dir.path());
        ctx.lsp = Arc::new(Lsp::new(servers.clone()));
        ctx
    }

    /// What the servers recorded (`--pidfile`): their pids as they started, and the
    /// `shutdown` and `exit` messages they received, in order.
    fn recorded(&self) -> Vec<String> {
        std::fs::read_to_string(&self.pids)
            .unwrap_or_default()
            .lines()
            .map(|l| l.trim().to_owned())
            .collect()
    }

    fn goodbyes(&self) -> Vec<String> {
        let mut lines = self.recorded();
        lines.retain(|l| l.parse::<u32>().is_err());
        lines
    }

    fn starts(&self) -> Vec<u32> {
        self.recorded()
            .iter()
            .filter_map(|l| l.parse().ok())
            .collect()
    }
}

/// The built-in tool `name` (not an LSP one).
fn builtin(name: &str) -> Arc<dyn AnyTool> {
    let deps = crate::tools::ToolDeps::create(
        &Config::default(),
        crate::io::testing::launcher(),
        Default::default(),
    );
    deps.builtin()
        .iter()
        .find(|t| t.spec().name == name)
        .unwrap()
        .clone()
}

fn tool(name: &str) -> Arc<dyn AnyTool> {
    tools().into_iter().find(|t| t.spec().name == name).unwrap()
}

async fn diagnostics(ctx: &Context, path: &str) -> Result<String, ToolError> {
    let input = json!({"path": path});
    call_any(&*tool("lsp_diagnostics"), input, ctx)
        .await
        .map(|o| o.for_model)
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| !stat.split(") ").nth(1).unwrap_or("").starts_with('Z'))
}

fn wait_gone(pids: &[u32]) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while pids.iter().any(|p| alive(*p)) {
        assert!(Instant::now() < deadline, "{pids:?} still running");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_on_one_root_share_a_server_that_the_last_one_stops() {
    let ws = Workspace::new(&[("a.fake", "ok\nan ERROR here\n")]);
    let servers = servers("pull", &ws.pids);
    let (first, second) = (ws.session(&servers), ws.session(&servers));
    let answer = diagnostics(&first, "a.fake").await.unwrap();
    assert!(answer.contains("a.fake: 1 error, 0 warnings"), "{answer}");
    assert!(answer.contains("2:4 error [fake]: ERROR found"), "{answer}");
    diagnostics(&second, "a.fake").await.unwrap();
    assert_eq!(
        (ws.starts().len(), servers.count()),
        (1, 1),
        "one server for both"
    );
    first.lsp.release();
    let pid = ws.starts()[0];
    assert!(alive(pid), "the other session still holds it");
    diagnostics(&second, "a.fake").await.unwrap();
    assert!(ws.goodbyes().is_empty(), "{:?}", ws.goodbyes());
    second.lsp.release();
    wait_gone(&[pid]);
    assert_eq!(servers.count(), 0);
    assert_eq!(
        ws.goodbyes(),
        ["shutdown", "exit"],
        "asked to leave, in LSP's order"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_keeps_crashing_is_restarted_once_then_reported() {
    let ws = Workspace::new(&[("a.fake", "x\n")]);
    let servers = servers("crash", &ws.pids);
    let ctx = ws.session(&servers);
    let first = diagnostics(&ctx, "a.fake").await.unwrap_err().0;
    assert!(first.contains("stopped"), "{first}");
    assert!(
        first.contains("crashing as asked"),
        "its last words: {first}"
    );
    assert!(first.contains("the next call starts it again"), "{first}");
    let second = diagnostics(&ctx, "a.fake").await.unwrap_err().0;
    assert!(
        second.contains("stopped again after its restart"),
        "{second}"
    );
    assert!(second.contains("not started again"), "{second}");
    assert_eq!(ws.starts().len(), 2, "restarted once");
    let third = diagnostics(&ctx, "a.fake").await.unwrap_err().0;
    assert!(third.starts_with("unavailable:"), "{third}");
    assert!(third.contains("after a restart"), "{third}");
    assert_eq!(ws.starts().len(), 2, "not restarted again");
}

#[tokio::test(flavor = "multi_thread")]
async fn waits_are_bounded_by_the_configured_timeouts() {
    let ws = Workspace::new(&[("a.fake", "x\n")]);
    let hangs = servers("silent", &ws.pids);
    let started = Instant::now();
    let error = diagnostics(&ws.session(&hangs), "a.fake")
        .await
        .unwrap_err()
        .0;
    assert!(error.contains("did not answer within 1 s"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(5));
    let never_starts = servers("no-init", &ws.pids);
    let error = diagnostics(&ws.session(&never_starts), "a.fake")
        .await
        .unwrap_err()
        .0;
    assert!(
        error.contains("did not finish starting within 2 s"),
        "{error}"
    );
    never_starts.close();
    hangs.close();
    wait_gone(&ws.starts());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_without_pull_diagnostics_is_waited_for_as_it_pushes() {
    let ws = Workspace::new(&[("a.fake", "ERROR\n"), ("b.fake", "fine\nERROR\n")]);
    let servers = servers("push", &ws.pids);
    let ctx = ws.session(&servers);
    assert!(
        diagnostics(&ctx, "b.fake")
            .await
            .unwrap()
            .contains("2:1 error")
    );
    let input = json!({"path": "a.fake", "all_files": true});
    let all = call_any(&*tool("lsp_diagnostics"), input, &ctx)
        .await
        .unwrap()
        .for_model;
    assert!(
        all.contains("a.fake: 1 error") && all.contains("b.fake: 1 error"),
        "{all}"
    );
    assert!(all.contains("2 errors and 0 warnings in 2 files"), "{all}");
}

#[tokio::test(flavor = "multi_thread")]
async fn definitions_and_references_answer_in_one_based_positions_with_context() {
    let ws = Workspace::new(&[
        ("a.fake", "def greet\n\ncall greet\n"),
        ("b.fake", "greet é greet\n"),
    ]);
    let servers = servers("pull", &ws.pids);
    let ctx = ws.session(&servers);
    diagnostics(&ctx, "b.fake").await.unwrap();
    let input = json!({"path": "a.fake", "line": 3, "column": 7});
    let definition = call_any(&*tool("lsp_definition"), input, &ctx)
        .await
        .unwrap()
        .for_model;
    assert!(
        definition.contains("1 definition of the symbol at a.fake:3:7"),
        "{definition}"
    );
    assert!(
        definition.contains("a.fake:1:5\n>    1\tdef greet\n     2\t\n     3\tcall greet"),
        "{definition}"
    );
    let input = json!({"path": "a.fake", "line": 1, "column": 5});
    let references = call_any(&*tool("lsp_references"), input, &ctx)
        .await
        .unwrap()
        .for_model;
    assert!(
        references.starts_with("4 references to the symbol at a.fake:1:5, in 2 files:"),
        "{references}"
    );
    assert!(
        references.contains("\na.fake\n  1:5: def greet\n  3:6: call greet\n"),
        "{references}"
    );
    assert!(
        references.contains("\nb.fake\n  1:1: greet é greet\n  1:9: greet é greet\n"),
        "{references}"
    );
    let input = json!({"path": "a.fake", "line": 9, "column": 1});
    let error = call_any(&*tool("lsp_references"), input, &ctx)
        .await
        .unwrap_err()
        .0;
    assert!(error.contains("past the end of the file"), "{error}");
}

#[tokio::test(flavor = "multi_thread")]
async fn files_without_a_server_and_missing_programs_are_clear_answers() {
    let ws = Workspace::new(&[("notes.txt", "x"), ("a.py", "x = 1\n")]);
    let ctx = ws.session(&servers("pull", &ws.pids));
    let error = diagnostics(&ctx, "notes.txt").await.unwrap_err().0;
    assert!(
        error.contains("no language server is configured for .txt files"),
        "{error}"
    );
    let config = r#"{"lsp": {"servers": {"python": {"extensions": ["py"], "command": "/nonexistent/bin/pyright-langserver", "args": ["--stdio"]}}}}"#;
    let missing = Arc::new(Servers::new(
        &Config::from_json(config).unwrap(),
        crate::io::testing::launcher(),
        Default::default(),
    ));
    let error = diagnostics(&ws.session(&missing), "a.py")
        .await
        .unwrap_err()
        .0;
    assert!(
        error.starts_with("unavailable: the python language server"),
        "{error}"
    );
    assert!(error.contains("command not found"), "{error}");
    assert!(error.contains("npm i -g pyright"), "{error}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edit_reports_the_errors_it_introduced_and_their_fix() {
    let ws = Workspace::new(&[("a.fake", "one ERROR\ntwo\n")]);
    let ctx = ws.session(&servers("pull", &ws.pids));
    let edit = builtin("edit");
    let input = json!({"path": "a.fake", "edits": [{"old_text": "two", "new_text": "ERROR two"}]});
    let broke = call_any(&*edit, input, &ctx).await.unwrap().for_model;
    assert!(broke.contains("reports 1 new error this change introduced in a.fake:\na.fake:2:1 error [fake]: ERROR found\n"), "{broke}");
    assert!(
        !broke.contains("a.fake:1:5"),
        "the old error is not new: {broke}"
    );
    let input = json!({"path": "a.fake", "edits": [{"old_text": "ERROR two", "new_text": "two"}]});
    let fixed = call_any(&*edit, input, &ctx).await.unwrap().for_model;
    assert!(
        fixed.contains(
            "No new errors in a.fake; the fake language server still reports 1 error from before."
        ),
        "{fixed}"
    );
    let input = json!({"path": "a.fake", "edits": [{"old_text": "one ERROR", "new_text": "one"}]});
    let clean = call_any(&*edit, input, &ctx).await.unwrap().for_model;
    assert!(
        clean.contains("The fake language server reports no errors in a.fake."),
        "{clean}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_session_keeps_at_most_32_documents_open_in_a_server() {
    let names: Vec<String> = (0..34).map(|i| format!("f{i:02}.fake")).collect();
    let files: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "word\n")).collect();
    let ws = Workspace::new(&files);
    let ctx = ws.session(&servers("pull", &ws.pids));
    for name in &names[..33] {
        diagnostics(&ctx, name).await.unwrap();
    }
    // The fake server answers references from its open documents only.
    let input = json!({"path": "f32.fake", "line": 1, "column": 1});
    let references = call_any(&*tool("lsp_references"), input, &ctx)
        .await
        .unwrap()
        .for_model;
    assert!(references.starts_with("32 references"), "{references}");
    assert!(
        !references.contains("f00.fake"),
        "the least recently used was closed"
    );
    assert!(references.contains("f01.fake") && references.contains("f32.fake"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_call_stops_waiting_for_a_slow_start_and_its_process() {
    let ws = Workspace::new(&[("a.fake", "x\n")]);
    let servers = servers("no-init", &ws.pids);
    let ctx = ws.session(&servers);
    let cancel = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    });
    let started = Instant::now();
    let error = diagnostics(&ctx, "a.fake").await.unwrap_err().0;
    assert!(error.contains("cancelled"), "{error}");
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "did not wait for the 2 s startup"
    );
    wait_gone(&ws.starts());
    let retry = ws.session(&servers);
    let error = diagnostics(&retry, "a.fake").await.unwrap_err().0;
    assert!(
        error.contains("did not finish starting"),
        "a cancelled start counts for nothing: {error}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_new_file_without_an_installed_server_gets_a_plain_result() {
    let ws = Workspace::new(&[]);
    let config = r#"{"lsp": {"servers": {"python": {"extensions": ["py"], "command": "/nonexistent/pyright-langserver"}}}}"#;
    let mut ctx = ws.session(&servers("pull", &ws.pids));
    ctx.lsp = Arc::new(Lsp::new(Arc::new(Servers::new(
        &Config::from_json(config).unwrap(),
        crate::io::testing::launcher(),
        Default::default(),
    ))));
    let write = builtin("write");
    let input = json!({"path": "new.py", "content": "x = 1\n"});
    let output = call_any(&*write, input, &ctx).await.unwrap().for_model;
    assert!(output.starts_with("Created new.py."), "{output}");
    assert!(
        !output.contains("diagnostics") && !output.contains("language server"),
        "{output}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reopened_document_waits_for_its_own_pushes() {
    let names: Vec<String> = (0..33).map(|i| format!("f{i:02}.fake")).collect();
    let files: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "word\n")).collect();
    let ws = Workspace::new(&files);
    std::fs::write(ws.dir.path().join("f00.fake"), "ERROR\n").unwrap();
    let ctx = ws.session(&servers("push", &ws.pids));
    assert!(
        diagnostics(&ctx, "f00.fake")
            .await
            .unwrap()
            .contains("f00.fake: 1 error")
    );
    for name in &names[1..] {
        diagnostics(&ctx, name).await.unwrap();
    }
    // f00 was closed as the least recently used; reopened, it is version 1 again.
    std::fs::write(ws.dir.path().join("f00.fake"), "fixed\n").unwrap();
    let again = diagnostics(&ctx, "f00.fake").await.unwrap();
    assert!(
        again.contains("f00.fake: 0 errors"),
        "not the old push: {again}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn closing_the_engine_during_a_start_stops_and_waits_for_the_server() {
    let ws = Workspace::new(&[("a.fake", "x\n")]);
    let servers = servers("no-init", &ws.pids);
    let ctx = ws.session(&servers);
    let call = tokio::spawn(async move { diagnostics(&ctx, "a.fake").await });
    let deadline = Instant::now() + Duration::from_secs(10);
    while ws.starts().is_empty() {
        assert!(Instant::now() < deadline, "the server never started");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let closing = servers.clone();
    tokio::task::spawn_blocking(move || closing.close())
        .await
        .unwrap();
    let pids = ws.starts();
    assert!(
        pids.iter().all(|p| !alive(*p)),
        "close returned with {pids:?} running"
    );
    let error = call.await.unwrap().unwrap_err().0;
    assert!(error.starts_with("unavailable"), "{error}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_language_server_sees_no_key_and_runs_wrapped() {
    let ws = Workspace::new(&[("a.fake", "fine\n")]);
    let report = ws.dir.path().join("env");
    let policy = Arc::new(crate::io::testing::Wrapped::default());
    let launcher = crate::io::testing::wrapping_launcher(&policy);
    let servers = servers_on(
        launcher,
        &[fake_server(), "--envfile".into(), report.clone()],
    );
    let ctx = ws.session(&servers);
    diagnostics(&ctx, "a.fake").await.unwrap();
    let seen = std::fs::read_to_string(&report).unwrap();
    assert_eq!(
        seen,
        "OPENAI_API_KEY unset\nANTHROPIC_API_KEY unset\nHEARTH_WRAPPED=1\n"
    );
    assert_eq!(
        policy.kinds(),
        [crate::io::process::ChildKind::LanguageServer]
    );
    servers.close();
}

/// A language server runs in the sandbox by default: the fake server, told to log its start
/// outside its workspace, cannot, dies, and the answer names the sandbox and the way out;
/// with its entry's `sandbox: false` the same server starts and the file is written.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread")]
async fn a_language_server_is_confined_unless_its_entry_says_not() {
    if !hearth_testkit::sandbox::landlock_here() {
        return;
    }
    let ws = Workspace::new(&[("a.fake", "fine\n")]);
    let outside = tempfile::tempdir().unwrap();
    let pids = outside.path().join("pids");
    let args = [fake_server(), "--pidfile".into(), pids.clone()];
    let launcher = crate::io::testing::launcher;
    let confined = servers_sandboxed(launcher(), &args, None);
    let error = diagnostics(&ws.session(&confined), "a.fake")
        .await
        .unwrap_err()
        .0;
    assert!(error.contains("Permission denied"), "{error}");
    assert!(
        error.contains("it ran in the sandbox: workspace-write, network off"),
        "{error}"
    );
    assert!(
        error.contains("if the sandbox stops it, `lsp.servers.fake.sandbox: false` or"),
        "{error}"
    );
    assert!(
        !pids.exists(),
        "a confined server wrote outside its workspace"
    );
    confined.close();

    let open = servers_sandboxed(launcher(), &args, Some(false));
    let answer = diagnostics(&ws.session(&open), "a.fake").await.unwrap();
    assert!(answer.starts_with("a.fake: 0 errors"), "{answer}");
    assert!(pids.exists(), "an unconfined server writes where it likes");
    open.close();
}
