//! MCP servers per session, end to end through the engine: real servers (`tests/mcp/server.py`
//! on the official Python SDK, and `@modelcontextprotocol/server-everything`), the mock LLM
//! recording what the model was offered and sent back, and a schema-checking client.
//! `bash tests/mcp/setup.sh` installs the servers.

mod common;

use std::time::{Duration, Instant};

use common::{
    Setup, call, final_status, mcp_python as python, mcp_server as server, start, text,
    tool_results,
};
use hearth_testkit::{AcpClient, InProcess, repo_root};
use serde_json::{Value, json};

fn everything() -> Value {
    let entry = repo_root()
        .join("tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        entry.exists(),
        "no server-everything at {}: run `bash tests/mcp/setup.sh`",
        entry.display()
    );
    json!({"name": "everything", "command": "node", "args": [entry, "stdio"], "env": []})
}

fn new_session(client: &mut AcpClient<InProcess>, cwd: &str, servers: Value) -> (String, Value) {
    let result = client.call("session/new", json!({"cwd": cwd, "mcpServers": servers}));
    (result["sessionId"].as_str().unwrap().to_string(), result)
}

/// The names of the tools the model was offered in request `n`.
fn offered(setup: &Setup, n: usize) -> Vec<String> {
    setup.mock.requests()[n].body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn alive(pid: u32) -> bool {
    // A zombie is gone for our purposes: it runs nothing.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| !stat.split(") ").nth(1).unwrap_or("").starts_with('Z'))
}

/// The pids a server wrote to its `MCP_TEST_PIDFILE` (itself and, if asked, its child).
fn pids(file: &std::path::Path) -> Vec<u32> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().last()?.parse().ok())
        .collect()
}

#[test]
fn a_servers_tools_reach_the_model_and_their_results_come_back() {
    let setup = Setup::new(json!({"responses": [
        call("c1", "mcp__files__echo", json!({"text": "hello from mcp"})),
        text(&["It echoed."]),
    ]}));
    let mut client = start(&setup, json!({}));
    let (session, created) = new_session(&mut client, &setup.cwd(), json!([server("files", &[])]));
    assert_eq!(
        created["_meta"]["hearth"]["mcpServers"][0]["name"], "files",
        "the response tells the servers' state"
    );
    assert_eq!(
        client.prompt(&session, "echo something")["result"]["stopReason"],
        "end_turn"
    );
    let tools = offered(&setup, 0);
    for name in [
        "read",
        "mcp__files__echo",
        "mcp__files__add",
        "mcp__files__slow",
    ] {
        assert!(tools.contains(&name.to_string()), "{name} in {tools:?}");
    }
    let echo = &setup.mock.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "mcp__files__echo")
        .unwrap()["function"]
        .clone();
    assert_eq!(echo["parameters"]["properties"]["text"]["type"], "string");
    let started = client
        .updates(&session)
        .into_iter()
        .find(|u| u["sessionUpdate"] == "tool_call")
        .unwrap();
    assert_eq!(started["kind"], "read", "readOnlyHint makes it a read");
    assert!(
        client
            .agent_requests("session/request_permission")
            .is_empty(),
        "a read-only tool runs without asking"
    );
    assert_eq!(final_status(&client, &session), ["completed"]);
    assert!(tool_results(&setup, 1)[0].contains("hello from mcp"));
}

#[test]
fn errors_ask_and_structured_results_reach_the_model() {
    let setup = Setup::new(json!({"responses": [
        call("c1", "mcp__files__fail", json!({"message": "it broke"})),
        call("c2", "mcp__files__add", json!({"a": 2, "b": 3})),
        text(&["Done."]),
    ]}));
    let mut client = start(&setup, json!({}));
    client.respond_with(|method, _| {
        (method == "session/request_permission")
            .then(|| json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}}))
    });
    let (session, _) = new_session(&mut client, &setup.cwd(), json!([server("files", &[])]));
    client.prompt(&session, "fail, then add");
    let asked = client.agent_requests("session/request_permission");
    assert_eq!(asked.len(), 2, "tools not marked read-only ask in ask mode");
    let tool_call = &asked[0]["params"]["toolCall"];
    assert!(
        tool_call["title"].as_str().unwrap().contains("files"),
        "{tool_call}"
    );
    assert!(tool_call["title"].as_str().unwrap().contains("fail"));
    assert_eq!(tool_call["rawInput"], json!({"message": "it broke"}));
    assert_eq!(final_status(&client, &session), ["failed", "completed"]);
    let results = tool_results(&setup, 2);
    assert!(results[0].contains("it broke"), "{results:?}");
    assert!(results[1].contains('5'), "{results:?}");
}

#[test]
fn plan_mode_runs_read_only_tools_and_refuses_the_rest() {
    let setup = Setup::new(json!({"responses": [
        call("c1", "mcp__files__echo", json!({"text": "ok"})),
        call("c2", "mcp__files__add", json!({"a": 1, "b": 1})),
        text(&["Planned."]),
    ]}));
    let mut client = start(&setup, json!({"permissionMode": "plan"}));
    let (session, _) = new_session(&mut client, &setup.cwd(), json!([server("files", &[])]));
    client.prompt(&session, "plan");
    assert_eq!(final_status(&client, &session), ["completed", "failed"]);
    assert!(
        client
            .agent_requests("session/request_permission")
            .is_empty()
    );
    assert!(tool_results(&setup, 2)[1].contains("Plan mode"));
}

#[test]
fn always_allowing_a_servers_tool_survives_a_restart() {
    let setup = Setup::new(json!({"responses": [
        call("c1", "mcp__files__add", json!({"a": 1, "b": 2})), text(&["3"]),
        call("c2", "mcp__files__add", json!({"a": 2, "b": 2})), text(&["4"]),
    ]}));
    let cwd = setup.cwd();
    {
        let mut client = start(&setup, json!({}));
        client.respond_with(|method, _| {
            (method == "session/request_permission")
                .then(|| json!({"outcome": {"outcome": "selected", "optionId": "allow_always"}}))
        });
        let (session, _) = new_session(&mut client, &cwd, json!([server("files", &[])]));
        client.prompt(&session, "add");
        assert_eq!(client.agent_requests("session/request_permission").len(), 1);
    }
    let mut client = start(&setup, json!({}));
    let (session, _) = new_session(&mut client, &cwd, json!([server("files", &[])]));
    client.prompt(&session, "add again");
    assert!(
        client
            .agent_requests("session/request_permission")
            .is_empty(),
        "the stored rule allowed it"
    );
    assert_eq!(final_status(&client, &session), ["completed"]);
}

#[test]
fn cancelling_a_slow_call_tells_the_server_and_ends_the_turn() {
    let setup = Setup::new(json!({"responses": [
        call("c1", "mcp__files__slow", json!({"seconds": 30})),
        text(&["never"]),
    ]}));
    let log = setup.dir.path().join("cancel.log");
    let log_path = log.to_string_lossy().into_owned();
    let mut client = start(&setup, json!({"permissionMode": "bypass"}));
    let servers = json!([server("files", &[("MCP_TEST_CANCEL_LOG", &log_path)])]);
    let (session, _) = new_session(&mut client, &setup.cwd(), servers);
    let prompt = client.start_request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "wait"}]}),
    );
    wait_until("the slow call to start", || {
        std::fs::read_to_string(&log).is_ok_and(|l| l.contains("slow started"))
    });
    let cancelled_at = Instant::now();
    client.notify("session/cancel", json!({"sessionId": session}));
    assert_eq!(
        client.response(&prompt)["result"]["stopReason"],
        "cancelled"
    );
    assert!(cancelled_at.elapsed() < Duration::from_secs(5));
    assert_eq!(final_status(&client, &session), ["failed"]);
    wait_until("the server to see the cancellation", || {
        std::fs::read_to_string(&log).is_ok_and(|l| l.contains("notifications/cancelled"))
    });
}

/// Every way a server can fail is reported, and its healthy sibling still works.
#[test]
fn failing_servers_are_reported_and_their_siblings_work() {
    let setup = Setup::new(json!({"responses": [
        call("c1", "mcp__good__echo", json!({"text": "still here"})),
        text(&["ok"]),
    ]}));
    // Long enough for the good server to start on a loaded 2-core machine (3 s was not).
    let mut client = start(&setup, json!({"mcp": {"startupTimeoutSecs": 8}}));
    let servers = json!([
        server("good", &[]),
        {"name": "missing", "command": "/nonexistent/mcp-server", "args": [], "env": []},
        {"type": "sse", "name": "legacy", "url": "http://127.0.0.1:9/sse", "headers": []},
        server("silent", &[("MCP_TEST_SILENT", "1")]),
        {"name": "garbled", "command": 42},
    ]);
    let (session, _) = new_session(&mut client, &setup.cwd(), servers);
    assert_eq!(
        client.prompt(&session, "go")["result"]["stopReason"],
        "end_turn"
    );
    assert!(tool_results(&setup, 1)[0].contains("still here"));
    // Reports are failed tool calls for a client without notices, one per server.
    let reports: Vec<Value> = client
        .updates(&session)
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "tool_call" && u["kind"] == "other")
        .collect();
    let text_of = |name: &str| {
        reports
            .iter()
            .find(|r| r["title"].as_str().unwrap().contains(&format!("`{name}`")))
            .unwrap_or_else(|| panic!("no report for {name}: {reports:#?}"))["content"][0]
            ["content"]["text"]
            .as_str()
            .unwrap()
            .to_string()
    };
    for name in ["missing", "legacy", "silent", "garbled"] {
        assert_eq!(
            reports
                .iter()
                .filter(|r| r["title"].as_str().unwrap().contains(&format!("`{name}`")))
                .count(),
            1,
            "{name} reported once"
        );
    }
    assert!(reports.iter().all(|r| r["status"] == "failed"));
    assert!(text_of("legacy").contains("sse"), "{}", text_of("legacy"));
    assert!(text_of("silent").contains("8 s"), "{}", text_of("silent"));
    // The model is told which servers are missing.
    let system = setup.model_messages(0)[0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    for name in ["missing", "legacy", "silent", "garbled"] {
        assert!(system.contains(&format!("- {name}:")), "{system}");
    }
    assert!(!system.contains("- good:"));
}

#[test]
fn a_server_that_dies_mid_session_is_reported_as_a_notice() {
    let setup = Setup::new(json!({"responses": [
        call("c1", "mcp__fragile__crash", json!({})),
        text(&["It died."]),
        text(&["Still talking."]),
    ]}));
    let mut client = AcpClient::new(InProcess::start(&setup.config()));
    client.call(
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {"session": {"notices": {}}}}),
    );
    let (session, _) = new_session(&mut client, &setup.cwd(), json!([server("fragile", &[])]));
    client.respond_with(|method, _| {
        (method == "session/request_permission")
            .then(|| json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}}))
    });
    client.prompt(&session, "crash it");
    assert_eq!(final_status(&client, &session), ["failed"]);
    client.wait_for(Duration::from_secs(10), |f| {
        f["params"]["update"]["sessionUpdate"] == "notice"
    });
    let notice = client
        .updates(&session)
        .into_iter()
        .find(|u| u["sessionUpdate"] == "notice")
        .unwrap();
    assert_eq!(notice["severity"], "warning");
    assert!(notice["title"].as_str().unwrap().contains("fragile"));
    assert_eq!(
        client.prompt(&session, "and now?")["result"]["stopReason"],
        "end_turn",
        "the session is still usable"
    );
    assert!(
        !offered(&setup, 2)
            .iter()
            .any(|t| t.starts_with("mcp__fragile"))
    );
}

#[test]
fn servers_with_the_same_tools_get_distinct_names() {
    let setup = Setup::new(json!({"responses": [text(&["hi"])]}));
    let mut client = start(&setup, json!({}));
    let servers = json!([server("one", &[]), server("two", &[]), server("two", &[])]);
    let (session, _) = new_session(&mut client, &setup.cwd(), servers);
    client.prompt(&session, "list");
    let echoes: Vec<String> = offered(&setup, 0)
        .into_iter()
        .filter(|t| t.contains("__echo"))
        .collect();
    assert_eq!(echoes.len(), 3, "{echoes:?}");
    let mut unique = echoes.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 3, "{echoes:?}");
    assert!(echoes.contains(&"mcp__one__echo".to_string()));
    assert!(
        echoes.contains(&"mcp__two__echo_2".to_string()),
        "{echoes:?}"
    );
}

#[test]
fn server_everything_works_over_stdio() {
    let setup = Setup::new(json!({"responses": [
        call("c1", "mcp__everything__echo", json!({"message": "hi everything"})),
        text(&["ok"]),
    ]}));
    let mut client = start(&setup, json!({"permissionMode": "bypass"}));
    let (session, _) = new_session(&mut client, &setup.cwd(), json!([everything()]));
    client.prompt(&session, "echo");
    assert!(offered(&setup, 0).contains(&"mcp__everything__get-sum".to_string()));
    assert!(tool_results(&setup, 1)[0].contains("hi everything"));
}

#[test]
fn config_servers_join_every_session() {
    let setup = Setup::new(json!({"responses": [text(&["hi"])]}));
    let mut client = start(&setup, json!({"mcpServers": [server("own", &[])]}));
    let (session, _) = new_session(&mut client, &setup.cwd(), json!([]));
    client.prompt(&session, "tools?");
    assert!(offered(&setup, 0).contains(&"mcp__own__echo".to_string()));
}

/// No server process — nor a child it started — outlives close, delete or the engine.
#[test]
fn no_server_process_outlives_its_session() {
    let setup = Setup::new(json!({"responses": [text(&["a"]), text(&["b"]), text(&["c"])]}));
    let mut client = start(&setup, json!({}));
    let mut sessions = Vec::new();
    for end in ["close", "delete", "engine"] {
        let pidfile = setup.dir.path().join(format!("{end}.pids"));
        let pidfile_arg = pidfile.to_string_lossy().into_owned();
        let env = [
            ("MCP_TEST_PIDFILE", pidfile_arg.as_str()),
            ("MCP_TEST_GRANDCHILD", "1"),
        ];
        let (session, _) = new_session(&mut client, &setup.cwd(), json!([server(end, &env)]));
        client.prompt(&session, "hi");
        wait_until("the server and its child", || pids(&pidfile).len() == 2);
        sessions.push((end, session, pidfile));
    }
    for (end, session, pidfile) in &sessions {
        match *end {
            "close" => assert_eq!(
                client.call("session/close", json!({"sessionId": session})),
                json!({})
            ),
            "delete" => assert_eq!(
                client.call("session/delete", json!({"sessionId": session})),
                json!({})
            ),
            _ => continue,
        }
        let pids = pids(pidfile);
        wait_until(&format!("{end}: processes {pids:?} gone"), || {
            !pids.iter().any(|p| alive(*p))
        });
    }
    drop(client);
    let (_, _, pidfile) = &sessions[2];
    let pids = pids(pidfile);
    wait_until(&format!("engine close: processes {pids:?} gone"), || {
        !pids.iter().any(|p| alive(*p))
    });
}

/// A streamable-HTTP server of the test suite's, killed when dropped.
struct HttpServer {
    child: std::process::Child,
    url: String,
}

impl HttpServer {
    fn start(name: &str) -> HttpServer {
        use std::io::BufRead;
        let script = repo_root().join("tests/mcp/server.py");
        let mut child = std::process::Command::new(python())
            .arg(script)
            .args(["--name", name, "--http", "0"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line.trim().strip_prefix("listening ").unwrap().to_string();
        HttpServer { child, url }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_streamable_http_server_works_like_a_stdio_one() {
    let setup = Setup::new(json!({"responses": [
        call("c1", "mcp__web__echo", json!({"text": "over http"})),
        text(&["ok"]),
    ]}));
    let http = HttpServer::start("web");
    let mut client = start(&setup, json!({}));
    let servers = json!([{"type": "http", "name": "web", "url": http.url, "headers": []}]);
    let (session, _) = new_session(&mut client, &setup.cwd(), servers);
    client.prompt(&session, "echo");
    assert_eq!(final_status(&client, &session), ["completed"]);
    assert!(tool_results(&setup, 1)[0].contains("over http"));
}

#[test]
fn the_tool_list_refreshes_when_the_server_says_it_changed() {
    let setup = Setup::new(json!({"responses": [
        call("c1", "mcp__files__grow", json!({})),
        text(&["grown"]),
        text(&["next"]),
    ]}));
    let mut client = start(&setup, json!({"permissionMode": "bypass"}));
    let (session, _) = new_session(&mut client, &setup.cwd(), json!([server("files", &[])]));
    client.prompt(&session, "grow");
    assert!(!offered(&setup, 0).contains(&"mcp__files__extra".to_string()));
    wait_until("the new tool", || {
        client.prompt(&session, "again");
        let n = setup.mock.requests().len() - 1;
        offered(&setup, n).contains(&"mcp__files__extra".to_string())
    });
}

#[test]
fn a_restored_session_gets_the_servers_of_the_request_that_restored_it() {
    let setup = Setup::new(json!({"responses": [text(&["one"]), text(&["two"])]}));
    let cwd = setup.cwd();
    let session = {
        let mut client = start(&setup, json!({}));
        let (session, _) = new_session(&mut client, &cwd, json!([server("first", &[])]));
        client.prompt(&session, "hi");
        session
    };
    assert!(offered(&setup, 0).contains(&"mcp__first__echo".to_string()));
    let mut client = start(&setup, json!({}));
    let resumed = client.call(
        "session/resume",
        json!({"sessionId": session, "cwd": cwd, "mcpServers": [server("second", &[])]}),
    );
    assert_eq!(
        resumed["_meta"]["hearth"]["mcpServers"][0]["name"],
        "second"
    );
    client.prompt(&session, "again");
    let tools = offered(&setup, 1);
    assert!(
        tools.contains(&"mcp__second__echo".to_string()),
        "{tools:?}"
    );
    assert!(
        !tools.iter().any(|t| t.starts_with("mcp__first")),
        "{tools:?}"
    );
}
