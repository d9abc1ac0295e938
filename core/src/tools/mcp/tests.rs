//! Against real servers, no mocks: `tests/mcp/server.py` (the official Python SDK) over stdio
//! and streamable HTTP, and `server-everything` from npm. `tests/mcp/setup.sh` installs both;
//! without them these tests fail and say so.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use super::*;
use crate::io::process::{ChildKind, Spawned, start_server};
use crate::io::testing::{group_is_gone, launcher, live_group_members};
use crate::mcp::*;
use crate::tools::testing::{call_any, context};
use crate::tools::{Access, AnyTool, Context, Kind, ToolError};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn installed(variable: &str, default: &str) -> PathBuf {
    let path = std::env::var_os(variable)
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join(default));
    assert!(
        path.exists(),
        "{} is missing: run `bash tests/mcp/setup.sh` (or set {variable})",
        path.display()
    );
    path
}

fn python() -> String {
    installed("MCP_TEST_PYTHON", "tests/mcp/.venv/bin/python")
        .to_string_lossy()
        .into_owned()
}

fn server_py() -> String {
    repo()
        .join("tests/mcp/server.py")
        .to_string_lossy()
        .into_owned()
}

/// `server.py` over stdio, as server `name` (also its `--name`), with `env` added.
fn test_server(name: &str, env: &[(&str, &str)]) -> McpServerSpec {
    McpServerSpec {
        name: name.into(),
        transport: Transport::Stdio {
            command: python(),
            args: vec![server_py(), "--name".into(), name.into()],
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            sandbox: false,
        },
    }
}

fn everything() -> McpServerSpec {
    let script = installed(
        "MCP_TEST_EVERYTHING",
        "tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    McpServerSpec {
        name: "everything".into(),
        transport: Transport::Stdio {
            command: "node".into(),
            args: vec![script.to_string_lossy().into_owned(), "stdio".into()],
            // Its gzip tool downloads from the internet unless told otherwise.
            env: vec![("GZIP_ALLOWED_DOMAINS".into(), "127.0.0.1".into())],
            sandbox: false,
        },
    }
}

/// The SDK takes 1–3 s to import here, more while cargo builds.
const STARTUP: Duration = Duration::from_secs(20);

fn connect(specs: Vec<McpServerSpec>, startup_timeout: Duration) -> McpServers {
    let options = Options {
        startup_timeout,
        http: Arc::new(http_client()),
        cwd: repo(),
        roots: vec![repo()],
        launcher: launcher(),
        sandbox: Default::default(),
        questions: None,
    };
    McpServers::connect(specs, options, &tokio::runtime::Handle::current())
}

async fn connected(specs: Vec<McpServerSpec>) -> McpServers {
    let servers = connect(specs, STARTUP);
    servers.ready().await;
    for server in servers.status() {
        assert!(
            matches!(server.state, ServerState::Connected { .. }),
            "{server:?}"
        );
    }
    servers
}

fn tool(servers: &McpServers, name: &str) -> Arc<dyn AnyTool> {
    tools(servers)
        .into_iter()
        .find(|tool| tool.spec().name == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

fn ctx() -> Context {
    context(&repo())
}

async fn text(servers: &McpServers, name: &str, input: Value) -> Result<String, ToolError> {
    call_any(&*tool(servers, name), input, &ctx())
        .await
        .map(|output| output.for_model)
}

/// Waits (bounded) until `check` holds for the status.
async fn status_until(servers: &McpServers, check: impl Fn(&[ServerStatus]) -> bool) {
    let mut status = servers.subscribe();
    let waited = tokio::time::timeout(Duration::from_secs(10), status.wait_for(|s| check(s))).await;
    assert!(
        waited.is_ok(),
        "status never matched: {:?}",
        servers.status()
    );
}

fn failure(servers: &McpServers, index: usize) -> String {
    match &servers.status()[index].state {
        ServerState::Failed { reason } => reason.clone(),
        other => panic!("server {index} is {other:?}"),
    }
}

/// Waits (bounded) until `path` has a line containing `needle`, and returns it.
async fn line_in(path: &Path, needle: &str) -> String {
    for _ in 0..100 {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if let Some(line) = text.lines().find(|line| line.contains(needle)) {
            return line.to_owned();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no `{needle}` in {}", path.display());
}

#[tokio::test]
async fn stdio_tools_carry_their_schemas_and_annotations() {
    let servers = connected(vec![test_server("files", &[])]).await;
    assert_eq!(
        servers.status()[0].state,
        ServerState::Connected { tools: 11 }
    );
    let names: Vec<String> = tools(&servers)
        .iter()
        .map(|t| t.spec().name.clone())
        .collect();
    for expected in ["mcp__files__echo", "mcp__files__add", "mcp__files__grow"] {
        assert!(names.iter().any(|n| n == expected), "{names:?}");
    }
    let echo = tool(&servers, "mcp__files__echo");
    let spec = echo.spec();
    assert_eq!(spec.description, "Echo the text back.");
    assert_eq!(spec.parameters["properties"]["text"]["type"], "string");
    assert_eq!(echo.kind(), Kind::Read);
    assert_eq!(tool(&servers, "mcp__files__add").kind(), Kind::Other);
    let prepared = echo
        .prepare(&json!({ "text": "hi" }), &ctx())
        .await
        .unwrap();
    assert_eq!(prepared.title, "files: echo");
    assert_eq!(
        prepared.access,
        Access::External {
            server: "files".into(),
            tool: "echo".into(),
            read_only: true
        }
    );
    assert!(echo.prepare(&json!([1]), &ctx()).await.is_err());
}

/// The log, as the fmt subscriber writes it.
#[derive(Clone, Default)]
struct Captured(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// On the test's one thread (the default runtime), where the stderr reader runs too.
#[tokio::test]
async fn a_stdio_servers_stderr_goes_to_the_log() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let _log = tracing::subscriber::set_default(subscriber);
    let _servers = connected(vec![test_server("noisy", &[])]).await;
    let mut log = String::new();
    for _ in 0..50 {
        log = String::from_utf8_lossy(&captured.0.lock().unwrap()).into_owned();
        if log.contains("[test-server] noisy: stdio") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let line = log
        .lines()
        .find(|line| line.contains("[test-server] noisy: stdio"))
        .unwrap_or_else(|| panic!("not in the log: {log}"));
    assert!(
        line.contains(LOG_TARGET) && line.contains("server=noisy"),
        "{line}"
    );
}

#[tokio::test]
async fn stdio_results_reach_the_model() {
    let servers = connected(vec![test_server("files", &[])]).await;
    let echo = text(&servers, "mcp__files__echo", json!({ "text": "hello" })).await;
    assert_eq!(echo.unwrap(), "hello");
    let add = text(&servers, "mcp__files__add", json!({ "a": 2, "b": 3 })).await;
    assert_eq!(add.unwrap(), "5");
    let fail = text(
        &servers,
        "mcp__files__fail",
        json!({ "message": "no luck" }),
    )
    .await;
    assert_eq!(fail.unwrap_err().0, "no luck");
    let image = text(&servers, "mcp__files__image", json!({}))
        .await
        .unwrap();
    assert!(image.starts_with("[image: image/png, "), "{image}");
    let resource = text(&servers, "mcp__files__resource", json!({}))
        .await
        .unwrap();
    assert!(
        !resource.is_empty() && !resource.starts_with('['),
        "{resource}"
    );
    let link = text(&servers, "mcp__files__link", json!({})).await.unwrap();
    assert!(
        link.starts_with('[') && link.contains("](test://"),
        "{link}"
    );
    let bad = text(&servers, "mcp__files__add", json!({ "a": "x" })).await;
    assert!(bad.is_err(), "{bad:?}");
}

/// An HTTP `server.py`, and its URL. The test starts it itself, as a remote server would be
/// running already: the `McpServers` under test only connect to it. Dropping the `Spawned`
/// (its stdin held open meanwhile: a silent server exits when it closes) ends its tree.
async fn http_server(name: &str) -> (Spawned, String) {
    http_server_with(name, &[]).await
}

async fn http_server_with(name: &str, env: &[(&str, &str)]) -> (Spawned, String) {
    let args: Vec<String> = [server_py().as_str(), "--name", name, "--http", "0"]
        .map(String::from)
        .to_vec();
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect();
    let launcher = launcher();
    let launch = launcher.launch(ChildKind::McpServer, &python(), &args, &repo(), &env);
    let mut server = start_server(&launcher, name, launch, |_, _| {}).unwrap();
    let mut line = String::new();
    let mut stdout = BufReader::new(&mut server.stdout);
    let read = stdout.read_line(&mut line);
    tokio::time::timeout(STARTUP, read).await.unwrap().unwrap();
    let url = line.trim().strip_prefix("listening ").unwrap().to_owned();
    (server, url)
}

#[tokio::test]
async fn http_servers_work_and_their_death_is_noticed() {
    let (mut process, url) = http_server("web").await;
    let spec = McpServerSpec {
        name: "web".into(),
        transport: Transport::Http {
            url,
            headers: vec![("X-Test".into(), "1".into())],
        },
    };
    let servers = connected(vec![spec]).await;
    let echo = text(&servers, "mcp__web__echo", json!({ "text": "over http" })).await;
    assert_eq!(echo.unwrap(), "over http");
    assert_eq!(
        text(&servers, "mcp__web__whoami", json!({})).await.unwrap(),
        "web"
    );
    process.group.kill();
    process.child.wait().await.unwrap();
    let after = text(&servers, "mcp__web__echo", json!({ "text": "x" })).await;
    assert!(after.unwrap_err().0.contains("not available"));
    let reason = failure(&servers, 0);
    assert!(
        reason.starts_with("the server stopped answering"),
        "{reason}"
    );
    assert!(reason.contains("Connection refused"), "{reason}");
}

/// Cancels `slow` of `servers`' server `s` mid-call: the call ends at once, and the server
/// logs the cancellation in `log`.
async fn cancel_slow(servers: &McpServers, log: &Path) {
    let slow = tool(servers, "mcp__s__slow");
    let ctx = ctx();
    let cancel = ctx.cancel.clone();
    let running =
        tokio::spawn(async move { call_any(&*slow, json!({ "seconds": 30 }), &ctx).await });
    line_in(log, "slow started").await;
    let cancelled_at = Instant::now();
    cancel.cancel();
    let result = running.await.unwrap();
    assert_eq!(result.unwrap_err().0, "cancelled");
    assert!(cancelled_at.elapsed() < Duration::from_secs(1));
    let seen = line_in(log, "notifications/cancelled").await;
    assert!(seen.contains("reason=cancelled by the user"), "{seen}");
    line_in(log, "slow interrupted").await;
}

#[tokio::test]
async fn a_cancelled_call_tells_the_server_and_ends_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("cancel.log");
    let log_text = log.to_string_lossy().into_owned();
    let env = [("MCP_TEST_CANCEL_LOG", log_text.as_str())];
    let servers = connected(vec![test_server("s", &env)]).await;
    cancel_slow(&servers, &log).await;
}

#[tokio::test]
async fn a_cancelled_http_call_tells_the_server_too() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("cancel.log");
    let log_text = log.to_string_lossy().into_owned();
    let (_process, url) = http_server_with("s", &[("MCP_TEST_CANCEL_LOG", &log_text)]).await;
    let spec = McpServerSpec {
        name: "s".into(),
        transport: Transport::Http {
            url,
            headers: Vec::new(),
        },
    };
    let servers = connected(vec![spec]).await;
    cancel_slow(&servers, &log).await;
}

#[tokio::test]
async fn a_server_that_exits_at_startup_says_why() {
    let spec = McpServerSpec {
        name: "broken".into(),
        transport: Transport::Stdio {
            command: python(),
            args: vec![
                "-c".into(),
                "import sys; sys.stderr.write('ImportError: no module x\\n'); sys.exit(2)".into(),
            ],
            env: Vec::new(),
            sandbox: false,
        },
    };
    let servers = connect(vec![spec], STARTUP);
    servers.ready().await;
    assert_eq!(
        failure(&servers, 0),
        "the server exited (exit status: 2): ImportError: no module x"
    );
}

#[tokio::test]
async fn the_tool_list_follows_list_changed() {
    let servers = connected(vec![test_server("g", &[])]).await;
    assert_eq!(
        text(&servers, "mcp__g__grow", json!({})).await.unwrap(),
        "grew: extra"
    );
    status_until(&servers, |s| {
        s[0].state == ServerState::Connected { tools: 12 }
    })
    .await;
    assert_eq!(
        text(&servers, "mcp__g__extra", json!({})).await.unwrap(),
        "extra"
    );
}

#[tokio::test]
async fn a_server_that_dies_is_reported_and_its_sibling_lives_on() {
    let servers = connected(vec![test_server("c", &[]), test_server("d", &[])]).await;
    assert!(text(&servers, "mcp__c__crash", json!({})).await.is_err());
    status_until(&servers, |s| {
        matches!(s[0].state, ServerState::Failed { .. })
    })
    .await;
    let reason = failure(&servers, 0);
    assert!(
        reason.starts_with("the server exited (exit status: 3)"),
        "{reason}"
    );
    assert!(
        tools(&servers)
            .iter()
            .all(|t| !t.spec().name.starts_with("mcp__c__"))
    );
    assert_eq!(
        text(&servers, "mcp__d__whoami", json!({})).await.unwrap(),
        "d"
    );
}

#[tokio::test]
async fn startup_failures_are_reported_with_their_reasons() {
    let missing = McpServerSpec {
        name: "missing".into(),
        transport: Transport::Stdio {
            command: "/nonexistent/mcp-server".into(),
            args: Vec::new(),
            env: Vec::new(),
            sandbox: false,
        },
    };
    let sse = McpServerSpec {
        name: "old".into(),
        transport: Transport::Unsupported { kind: "sse".into() },
    };
    let silent = test_server("silent", &[("MCP_TEST_SILENT", "1")]);
    let http = |name: &str, url: &str| McpServerSpec {
        name: name.into(),
        transport: Transport::Http {
            url: url.into(),
            headers: Vec::new(),
        },
    };
    let refused = http("refused", "http://127.0.0.1:1/mcp");
    let malformed = http("malformed", "not a url");
    let servers = connect(
        vec![
            missing,
            sse,
            silent,
            test_server("ok", &[]),
            refused,
            malformed,
        ],
        Duration::from_secs(8),
    );
    servers.ready().await;
    assert_eq!(
        failure(&servers, 0),
        "command not found: /nonexistent/mcp-server"
    );
    assert_eq!(
        failure(&servers, 1),
        "the `sse` transport is not supported; use stdio or http"
    );
    assert_eq!(
        failure(&servers, 2),
        "did not answer the MCP handshake within 8 s"
    );
    assert_eq!(
        servers.status()[3].state,
        ServerState::Connected { tools: 11 }
    );
    let refused = failure(&servers, 4);
    assert!(
        refused.starts_with("cannot reach the server: "),
        "{refused}"
    );
    assert!(refused.contains("Connection refused"), "{refused}");
    assert!(failure(&servers, 5).starts_with("`not a url` is not a valid URL"));
}

#[tokio::test]
async fn same_named_tools_of_two_servers_both_stay_callable() {
    let mut second = test_server("two", &[]);
    second.name = "one".into();
    let servers = connected(vec![test_server("one", &[]), second]).await;
    let first = text(&servers, "mcp__one__whoami", json!({})).await;
    let other = text(&servers, "mcp__one__whoami_2", json!({})).await;
    assert_eq!(
        (first.unwrap(), other.unwrap()),
        ("one".into(), "two".into())
    );
}

#[tokio::test]
async fn server_everything_answers() {
    let servers = connected(vec![everything()]).await;
    let echo = text(
        &servers,
        "mcp__everything__echo",
        json!({ "message": "hi" }),
    )
    .await;
    assert_eq!(echo.unwrap(), "Echo: hi");
    let sum = text(
        &servers,
        "mcp__everything__get-sum",
        json!({ "a": 2, "b": 3 }),
    )
    .await;
    assert_eq!(sum.unwrap(), "The sum of 2 and 3 is 5.");
}

/// A connected `server.py` that starts a grandchild (`env` added), with the pids of both,
/// and the directory of its pid file (kept for the test's length).
async fn with_grandchild(
    name: &str,
    env: &[(&str, &str)],
) -> (McpServers, i32, i32, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pids");
    let pidfile_text = pidfile.to_string_lossy().into_owned();
    let mut env = env.to_vec();
    env.extend([
        ("MCP_TEST_PIDFILE", pidfile_text.as_str()),
        ("MCP_TEST_GRANDCHILD", "1"),
    ]);
    let servers = connected(vec![test_server(name, &env)]).await;
    let pid = |line: String| line.split_whitespace().nth(1).unwrap().parse().unwrap();
    let leader = pid(line_in(&pidfile, "server ").await);
    let grandchild = pid(line_in(&pidfile, "grandchild ").await);
    (servers, leader, grandchild, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_leaves_no_process_of_the_group() {
    let stubborn = [("MCP_TEST_STUBBORN", "1")];
    let (servers, leader, grandchild, _dir) = with_grandchild("stubborn", &stubborn).await;
    assert!(live_group_members(leader).contains(&grandchild));
    let asked = Instant::now();
    let stopping = servers.shutdown();
    assert!(
        asked.elapsed() < Duration::from_millis(100),
        "shutdown blocked"
    );
    tokio::task::spawn_blocking(|| stopping.wait())
        .await
        .unwrap();
    assert!(
        group_is_gone(leader).await,
        "{:?}",
        live_group_members(leader)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_servers_stops_them_too() {
    let (servers, leader, _, _dir) = with_grandchild("dropped", &[]).await;
    drop(servers);
    assert!(
        group_is_gone(leader).await,
        "{:?}",
        live_group_members(leader)
    );
}

#[tokio::test]
async fn a_silent_http_server_times_out() {
    let (_process, url) = http_server_with("silent", &[("MCP_TEST_SILENT", "1")]).await;
    let spec = McpServerSpec {
        name: "silent".into(),
        transport: Transport::Http {
            url,
            headers: Vec::new(),
        },
    };
    let servers = connect(vec![spec], Duration::from_secs(2));
    servers.ready().await;
    assert_eq!(
        failure(&servers, 0),
        "did not answer the MCP handshake within 2 s"
    );
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Connect → tools listed, for a fresh session's server, `runs` times.
async fn startup_times(spec: &McpServerSpec, runs: usize) -> Vec<Duration> {
    let mut times = Vec::new();
    for _ in 0..runs {
        let started = Instant::now();
        let servers = connect(vec![spec.clone()], STARTUP);
        servers.ready().await;
        times.push(started.elapsed());
        assert!(!servers.tools().is_empty(), "{:?}", servers.status());
        servers.shutdown().wait();
    }
    times
}

/// The numbers of the closing note:
/// `cargo test -p hearth-core --release --lib -- --ignored --nocapture tools::mcp::tests::measure`
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement, not a check"]
async fn measure() {
    let python = median(startup_times(&test_server("files", &[]), 20).await);
    let node = median(startup_times(&everything(), 20).await);
    println!(
        "connect → tools, median of 20: server.py (stdio) {python:?}, server-everything {node:?}"
    );

    let servers = connected(vec![test_server("files", &[])]).await;
    let echo = tool(&servers, "mcp__files__echo");
    // Every tool of a server is called on the server's one connection.
    let peer = servers.tools().remove(0).peer;
    let ctx = ctx();
    let mut through_tool = Vec::new();
    let mut raw = Vec::new();
    for _ in 0..200 {
        let started = Instant::now();
        call_any(&*echo, json!({ "text": "x" }), &ctx)
            .await
            .unwrap();
        through_tool.push(started.elapsed());
        let params = rmcp::model::CallToolRequestParams::new("echo")
            .with_arguments(json!({ "text": "x" }).as_object().unwrap().clone());
        let started = Instant::now();
        peer.call_tool(params).await.unwrap();
        raw.push(started.elapsed());
    }
    let (tool, raw) = (median(through_tool), median(raw));
    println!(
        "echo, median of 200: McpTool {tool:?}, raw rmcp call_tool {raw:?}, overhead {:?}",
        tool.saturating_sub(raw)
    );
}

#[tokio::test]
async fn a_stdio_server_sees_no_key_unless_its_entry_names_it_and_runs_wrapped() {
    let env_server = |name: &str, env: &[(&str, &str)]| McpServerSpec {
        name: name.into(),
        transport: Transport::Stdio {
            command: python(),
            args: vec![
                repo()
                    .join("tests/mcp/env_server.py")
                    .to_string_lossy()
                    .into_owned(),
            ],
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            sandbox: false,
        },
    };
    let policy = Arc::new(crate::io::testing::Wrapped::default());
    let options = Options {
        startup_timeout: STARTUP,
        http: Arc::new(http_client()),
        cwd: repo(),
        roots: vec![repo()],
        launcher: crate::io::testing::wrapping_launcher(&policy),
        sandbox: Default::default(),
        questions: None,
    };
    let specs = vec![
        env_server("plain", &[]),
        env_server("keyed", &[("OPENAI_API_KEY", "sk-the-entrys-own")]),
    ];
    let servers = McpServers::connect(specs, options, &tokio::runtime::Handle::current());
    servers.ready().await;
    let env = |server: &'static str, name: &'static str| {
        let servers = &servers;
        async move {
            text(
                servers,
                &format!("mcp__{server}__env"),
                json!({ "name": name }),
            )
            .await
            .unwrap()
        }
    };
    assert_eq!(env("plain", "OPENAI_API_KEY").await, "(unset)");
    assert_eq!(env("plain", "ANTHROPIC_API_KEY").await, "(unset)");
    assert_eq!(env("keyed", "OPENAI_API_KEY").await, "sk-the-entrys-own");
    assert_eq!(env("keyed", "ANTHROPIC_API_KEY").await, "(unset)");
    assert_eq!(env("plain", "HEARTH_WRAPPED").await, "1");
    assert_eq!(
        policy.kinds(),
        [crate::io::process::ChildKind::McpServer; 2]
    );
    drop(servers.shutdown());
}

/// A stdio server runs unconfined unless its entry opts in; one that does may write its
/// session's roots (cwd and additional directories) but not outside them. The server writes `MCP_TEST_PIDFILE` as it starts
/// and dies when it cannot, so where the file lands (and whether the server came up) says
/// what the sandbox let it do.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_stdio_server_is_confined_only_when_its_entry_opts_in() {
    if !hearth_testkit::sandbox::landlock_here() {
        return;
    }
    let workspace = tempfile::tempdir().unwrap();
    let additional = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let pidfile = |dir: &Path, name: &str| dir.join(format!("{name}.pid"));
    let server = |name: &str, dir: &Path, sandbox: bool| {
        let file = pidfile(dir, name).to_string_lossy().into_owned();
        let mut spec = test_server(name, &[("MCP_TEST_PIDFILE", &file)]);
        if let Transport::Stdio { sandbox: asked, .. } = &mut spec.transport {
            *asked = sandbox;
        }
        spec
    };
    let specs = vec![
        server("open", outside.path(), false),
        server("confined_out", outside.path(), true),
        server("confined_in", workspace.path(), true),
        server("confined_additional", additional.path(), true),
    ];
    let options = Options {
        startup_timeout: STARTUP,
        http: Arc::new(http_client()),
        cwd: workspace.path().to_owned(),
        roots: vec![workspace.path().to_owned(), additional.path().to_owned()],
        launcher: launcher(),
        sandbox: Default::default(),
        questions: None,
    };
    let servers = McpServers::connect(specs, options, &tokio::runtime::Handle::current());
    servers.ready().await;
    let status = servers.status();
    assert!(
        matches!(status[0].state, ServerState::Connected { .. }),
        "{status:?}"
    );
    assert!(pidfile(outside.path(), "open").exists());

    let denied = failure(&servers, 1);
    assert!(denied.contains("Permission denied"), "{denied}");
    assert!(
        denied.contains("(it ran in the sandbox: workspace-write, network off, landlock ABI "),
        "{denied}"
    );
    assert!(
        denied.contains("if the sandbox stops it, its entry without `\"sandbox\": true`"),
        "{denied}"
    );
    assert!(!pidfile(outside.path(), "confined_out").exists());

    assert!(
        matches!(status[2].state, ServerState::Connected { .. }),
        "{status:?}"
    );
    assert!(pidfile(workspace.path(), "confined_in").exists());
    // The session's additional directories are writable too, as they are to its commands.
    assert!(
        matches!(status[3].state, ServerState::Connected { .. }),
        "{status:?}"
    );
    assert!(pidfile(additional.path(), "confined_additional").exists());
    drop(servers.shutdown());
}
