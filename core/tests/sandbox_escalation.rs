//! The sandbox against the permission modes, with real processes through the engine: a
//! confined command runs in `accept_edits` without asking; widening and escalating
//! (`run_command`'s `sandbox: "widen" | "escalate"`) ask in every mode — the request names the
//! justification and what would be granted — and plan mode refuses them (its commands run
//! read-only); an approved escalation writes outside the workspace, a rejected one writes
//! nothing; "always" is stored per command prefix and never offered for a compound command;
//! the session's `sandbox` config option turns the sandbox off for that session only; and
//! while the sandbox confines, commands never go to the client's `terminal/create` but show
//! as display terminals to a client that advertised `_meta.terminal_output`. The decisions
//! themselves are unit-tested in `core/src/permissions/execute.rs`; the headless refusal in
//! `cli/tests/run.rs`.
//!
//! Linux with Landlock only; without it the suite skips loudly, unless
//! `HEARTH_REQUIRE_SANDBOX=1` (CI), and then it fails.

#![cfg(target_os = "linux")]

mod common;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use common::sandbox::bwrap_installed;
use common::tools::{answer_by, session, tool_updates, workspace};
use common::{Setup, call, start, text, tool_results};
use hearth_testkit::sandbox::landlock_here;
use hearth_testkit::{AcpClient, InProcess};
use serde_json::{Value, json};

/// One engine, one session, `runs` (the arguments of `run_command` calls) scripted as the
/// model's, each permission request answered by `answer` and kept.
struct Turn {
    setup: Setup,
    client: AcpClient<InProcess>,
    session: String,
    cwd: PathBuf,
    asked: Arc<Mutex<Vec<Value>>>,
}

impl Turn {
    fn new(config: Value, runs: &[Value], answer: fn(&Value) -> &'static str) -> Turn {
        let setup = script(runs);
        let cwd = workspace(&setup);
        let mut client = start(&setup, config);
        let asked = answer_by(&mut client, answer);
        let session = session(&mut client, &cwd);
        Turn {
            setup,
            client,
            session,
            cwd,
            asked,
        }
    }

    /// Prompts once; the results the model read.
    fn run(&mut self, runs: usize) -> Vec<String> {
        let answer = self.client.prompt(&self.session, "go");
        assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
        tool_results(&self.setup, runs)
    }

    fn asked(&self) -> Vec<Value> {
        self.asked.lock().unwrap().clone()
    }

    fn finals(&self) -> Vec<Value> {
        tool_updates(&self.client, &self.session)
            .into_iter()
            .filter(|u| u["status"] == "completed" || u["status"] == "failed")
            .collect()
    }
}

/// The model calls `run_command` with each of `runs`, then says "done".
fn script(runs: &[Value]) -> Setup {
    let mut responses: Vec<Value> = runs
        .iter()
        .enumerate()
        .map(|(i, input)| call(&format!("c{i}"), "run_command", input.clone()))
        .collect();
    responses.push(text(&["done"]));
    Setup::new(json!({ "responses": responses }))
}

fn mode(mode: &str) -> Value {
    json!({ "permissionMode": mode })
}

fn first_line(result: &str) -> &str {
    result.lines().next().unwrap_or_default()
}

fn option_ids(request: &Value) -> Vec<&str> {
    request["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["optionId"].as_str().unwrap())
        .collect()
}

/// A directory outside the workspace (a sibling temp dir), and a file path in it.
fn outside(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    (dir, path)
}

fn escalate(command: &str, why: &str) -> Value {
    json!({ "command": command, "sandbox": "escalate", "justification": why })
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}

#[test]
fn accept_edits_runs_a_confined_command_without_asking_and_it_stays_confined() {
    if !landlock_here() {
        return;
    }
    let (_dir, target) = outside("escaped");
    let runs = [
        json!({ "command": "echo in > inside.txt" }),
        json!({ "command": format!("touch {}", shown(&target)) }),
    ];
    let mut turn = Turn::new(mode("accept_edits"), &runs, |_| "reject_once");
    let results = turn.run(runs.len());
    assert!(turn.asked().is_empty(), "asked: {:?}", turn.asked());
    assert_eq!(first_line(&results[0]), "Exit code: 0", "{}", results[0]);
    assert!(turn.cwd.join("inside.txt").exists());
    assert_ne!(first_line(&results[1]), "Exit code: 0", "{}", results[1]);
    assert!(!target.exists());
    assert!(results[1].contains("[sandbox]"), "{}", results[1]);
    assert!(
        results[1].contains("sandbox: \"escalate\""),
        "{}",
        results[1]
    );
}

#[test]
fn an_approved_escalation_writes_outside_and_the_request_says_why() {
    if !landlock_here() {
        return;
    }
    let (_dir, target) = outside("escalated");
    let runs = [escalate(
        &format!("touch {}", shown(&target)),
        "the build writes its cache beside the repo",
    )];
    // Bypass never asks for a plain command, and still asks for this.
    let mut turn = Turn::new(mode("bypass"), &runs, |_| "allow_once");
    let results = turn.run(1);
    let asked = turn.asked();
    assert_eq!(asked.len(), 1);
    let tool_call = &asked[0]["toolCall"];
    assert_eq!(tool_call["kind"], "execute");
    let title = tool_call["title"].as_str().unwrap();
    assert!(
        title.starts_with("Run outside the sandbox: `touch "),
        "{title}"
    );
    let description = tool_call["content"][0]["content"]["text"].as_str().unwrap();
    assert!(
        description.contains("the build writes its cache beside the repo"),
        "{description}"
    );
    assert!(description.contains("no sandbox"), "{description}");
    assert_eq!(first_line(&results[0]), "Exit code: 0", "{}", results[0]);
    assert!(target.exists(), "the escalated command wrote outside");
    let sandbox = &turn.finals()[0]["_meta"]["hearth"]["sandbox"];
    assert_eq!(sandbox["backend"], "off", "{sandbox}");
}

#[test]
fn a_widening_names_its_path_and_grants_only_it() {
    if !landlock_here() {
        return;
    }
    let granted = tempfile::tempdir().unwrap();
    let (_other, elsewhere) = outside("not-granted");
    let write_both = format!(
        "touch {}/made; touch {}",
        shown(granted.path()),
        shown(&elsewhere)
    );
    let runs = [json!({
        "command": write_both,
        "sandbox": "widen",
        "writable_paths": [granted.path()],
        "justification": "npm keeps its cache there",
    })];
    let mut turn = Turn::new(mode("accept_edits"), &runs, |_| "allow_once");
    turn.run(1);
    let asked = turn.asked();
    assert_eq!(asked.len(), 1);
    let granted_path = granted.path().canonicalize().unwrap();
    let text = asked[0]["toolCall"]["content"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(
        text.contains(&format!("write {}", shown(&granted_path))),
        "{text}"
    );
    assert!(text.contains("npm keeps its cache there"), "{text}");
    let title = asked[0]["toolCall"]["title"].as_str().unwrap();
    assert!(title.starts_with("Run with write "), "{title}");
    assert!(granted.path().join("made").exists());
    assert!(!elsewhere.exists(), "only the named path was widened");
}

#[test]
fn a_rejected_escalation_is_an_error_and_writes_nothing() {
    if !landlock_here() {
        return;
    }
    let (_dir, target) = outside("rejected");
    let runs = [escalate(
        &format!("touch {}", shown(&target)),
        "just because",
    )];
    let mut turn = Turn::new(mode("accept_edits"), &runs, |_| "reject_once");
    let results = turn.run(1);
    assert_eq!(turn.asked().len(), 1);
    assert!(results[0].contains("rejected"), "{}", results[0]);
    assert!(!target.exists());
    assert_eq!(turn.finals()[0]["status"], "failed");
}

#[test]
fn plan_runs_commands_read_only_and_refuses_to_escalate() {
    if !landlock_here() {
        return;
    }
    let (_dir, target) = outside("planned");
    let runs = [
        json!({ "command": "cat /etc/os-release > /dev/null && echo read" }),
        json!({ "command": "touch inside.txt" }),
        escalate(&format!("touch {}", shown(&target)), "plan it"),
    ];
    let mut turn = Turn::new(mode("plan"), &runs, |_| "allow_once");
    let results = turn.run(runs.len());
    assert!(turn.asked().is_empty(), "plan never asks to escalate");
    assert_eq!(first_line(&results[0]), "Exit code: 0", "{}", results[0]);
    assert_ne!(first_line(&results[1]), "Exit code: 0", "{}", results[1]);
    assert!(!turn.cwd.join("inside.txt").exists(), "read-only in plan");
    assert!(results[2].contains("Plan mode"), "{}", results[2]);
    assert!(!target.exists());
    let sandbox = &turn.finals()[0]["_meta"]["hearth"]["sandbox"];
    assert_eq!(sandbox["policy"]["mode"], "read-only", "{sandbox}");
    assert_eq!(sandbox["policy"]["network"], false, "{sandbox}");
}

#[test]
fn always_is_stored_per_prefix_and_never_offered_for_a_compound_command() {
    if !landlock_here() {
        return;
    }
    let (dir, target) = outside("always");
    let runs = [
        escalate(&format!("tee {}", shown(&target)), "first"),
        escalate(&format!("tee -a {}", shown(&target)), "second"),
        escalate(
            &format!("touch {0}/x && touch {0}/y", shown(dir.path())),
            "compound",
        ),
    ];
    let mut turn = Turn::new(mode("ask"), &runs, |params| {
        let always = params["options"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["optionId"] == "allow_always");
        if always { "allow_always" } else { "allow_once" }
    });
    let results = turn.run(runs.len());
    let asked = turn.asked();
    assert_eq!(asked.len(), 2, "the stored rule answered the second");
    assert_eq!(
        option_ids(&asked[0]),
        ["allow_once", "allow_always", "reject_once", "reject_always"]
    );
    assert_eq!(option_ids(&asked[1]), ["allow_once", "reject_once"]);
    assert!(
        asked[1]["toolCall"]["title"]
            .as_str()
            .unwrap()
            .contains("&&")
    );
    for result in &results {
        assert_eq!(first_line(result), "Exit code: 0", "{result}");
    }
    assert!(dir.path().join("x").exists() && dir.path().join("y").exists());
}

#[test]
fn the_sandbox_option_is_the_sessions_and_off_lets_a_command_write_outside() {
    if !landlock_here() {
        return;
    }
    let (_dir, target) = outside("unsandboxed");
    let runs = [json!({ "command": format!("touch {}", shown(&target)) })];
    let setup = script(&runs);
    let cwd = workspace(&setup);
    let mut client = start(&setup, mode("bypass"));
    let created = client.call(
        "session/new",
        json!({"cwd": cwd.to_str().unwrap(), "mcpServers": []}),
    );
    let option = |options: &Value| {
        options
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["id"] == "sandbox")
            .cloned()
            .unwrap()
    };
    let sandbox = option(&created["configOptions"]);
    assert_eq!(sandbox["currentValue"], "workspace-write");
    assert_eq!(sandbox["category"], "_sandbox");
    let values: Vec<&str> = sandbox["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["value"].as_str().unwrap())
        .collect();
    assert_eq!(values, ["read-only", "workspace-write", "off"]);
    let session = created["sessionId"].as_str().unwrap().to_string();
    let set = client.call(
        "session/set_config_option",
        json!({"sessionId": session, "configId": "sandbox", "value": "off"}),
    );
    assert_eq!(option(&set["configOptions"])["currentValue"], "off");
    let update = client
        .updates(&session)
        .into_iter()
        .find(|u| u["sessionUpdate"] == "config_option_update")
        .expect("a config_option_update");
    assert_eq!(option(&update["configOptions"])["currentValue"], "off");
    client.prompt(&session, "go");
    assert!(
        target.exists(),
        "with the sandbox off the command wrote outside"
    );
    let results = tool_results(&setup, 1);
    assert_eq!(first_line(&results[0]), "Exit code: 0", "{}", results[0]);
    // Another session keeps the configured sandbox.
    let other = client.call(
        "session/new",
        json!({"cwd": cwd.to_str().unwrap(), "mcpServers": []}),
    );
    assert_eq!(
        option(&other["configOptions"])["currentValue"],
        "workspace-write"
    );
    let wrong = client.call_err(
        "session/set_config_option",
        json!({"sessionId": session, "configId": "sandbox", "value": "danger"}),
    );
    assert_eq!(wrong["code"], -32602, "{wrong}");
}

#[test]
fn initialize_reports_the_backend_mode_and_network() {
    if !landlock_here() {
        return;
    }
    let setup = script(&[]);
    let mut client = AcpClient::new(InProcess::start(&setup.config()));
    let answer = client.initialize();
    let sandbox = &answer["_meta"]["hearth"]["sandbox"];
    let backend = sandbox["backend"].as_str().unwrap();
    // The default config: the bwrap layer wherever bwrap is installed.
    let expected = if bwrap_installed() {
        "bwrap + seccomp"
    } else {
        "landlock ABI "
    };
    assert!(backend.starts_with(expected), "{sandbox}");
    assert_eq!(sandbox["mode"], "workspace-write");
    assert_eq!(sandbox["network"], false);
}

/// A client with terminals (and, if `display`, display terminals), answering every
/// `terminal/*` it is sent and logging the methods.
fn with_terminals(display: bool) -> (Turn, Arc<Mutex<Vec<String>>>) {
    let runs = [json!({ "command": "echo one; echo two >&2; exit 3" })];
    let setup = script(&runs);
    let cwd = workspace(&setup);
    let mut config: Value = serde_json::from_str(&setup.config()).unwrap();
    config["permissionMode"] = json!("bypass");
    let mut client = AcpClient::new(InProcess::start(&config.to_string()));
    let mut capabilities = json!({ "terminal": true });
    if display {
        capabilities["_meta"] = json!({ "terminal_output": true });
    }
    client.call(
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": capabilities}),
    );
    let methods = Arc::new(Mutex::new(Vec::new()));
    let log = methods.clone();
    client.respond_with(move |method, _| {
        log.lock().unwrap().push(method.to_string());
        method
            .starts_with("terminal/")
            .then(|| json!({"terminalId": "client-term"}))
    });
    let session = session(&mut client, &cwd);
    let turn = Turn {
        setup,
        client,
        session,
        cwd,
        asked: Arc::default(),
    };
    (turn, methods)
}

#[test]
fn a_confined_command_runs_here_as_a_display_terminal_never_in_the_clients() {
    if !landlock_here() {
        return;
    }
    let (mut turn, methods) = with_terminals(true);
    let results = turn.run(1);
    assert!(methods.lock().unwrap().is_empty(), "{methods:?}");
    assert_eq!(first_line(&results[0]), "Exit code: 3", "{}", results[0]);
    let updates = turn.client.updates(&turn.session);
    let start = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call")
        .unwrap();
    let id = start["toolCallId"].as_str().unwrap();
    let terminal = json!([{"type": "terminal", "terminalId": id}]);
    assert_eq!(start["content"], terminal);
    assert_eq!(start["_meta"]["terminal_info"]["terminal_id"], id);
    let streamed: String = updates
        .iter()
        .filter_map(|u| u.pointer("/_meta/terminal_output"))
        .inspect(|out| assert_eq!(out["terminal_id"], id))
        .map(|out| out["data"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(streamed, "one\ntwo\n");
    let last = turn.finals().pop().unwrap();
    assert_eq!(last["status"], "completed");
    assert_eq!(last["content"], terminal);
    assert_eq!(
        last["_meta"]["terminal_exit"],
        json!({"terminal_id": id, "exit_code": 3, "signal": null})
    );
    assert!(last["_meta"]["hearth"]["sandbox"]["backend"].is_string());
}

#[test]
fn without_display_terminals_the_output_is_the_calls_text() {
    if !landlock_here() {
        return;
    }
    let (mut turn, methods) = with_terminals(false);
    turn.run(1);
    assert!(methods.lock().unwrap().is_empty(), "{methods:?}");
    let updates = turn.client.updates(&turn.session);
    assert!(
        updates
            .iter()
            .all(|u| u.pointer("/_meta/terminal_info").is_none()
                && u.pointer("/_meta/terminal_exit").is_none())
    );
    let last = turn.finals().pop().unwrap();
    assert_eq!(last["content"][0]["type"], "content");
    assert_eq!(last["content"][0]["content"]["text"], "```\none\ntwo\n```");
}
