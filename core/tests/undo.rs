//! Checkpoints and undo of the agent's file changes: `/undo` one turn at a time, across a
//! restart, around files the user changed, created and removed again; and
//! `_hearth/session/rewind`, dry and for real. Every check is on the files on disk.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use common::{Setup, call, start, text};
use hearth_testkit::{AcpClient, InProcess};
use serde_json::{Value, json};

/// A workspace inside the setup's temp dir (the store lives beside it).
fn workspace(setup: &Setup) -> PathBuf {
    let dir = setup.dir.path().join("project");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// An engine whose edits need no permission.
fn engine(setup: &Setup) -> AcpClient<InProcess> {
    start(setup, json!({"permissionMode": "bypass"}))
}

fn write(id: &str, path: &str, content: &str) -> Value {
    call(id, "write", json!({"path": path, "content": content}))
}

fn edit(id: &str, path: &str, old: &str, new: &str) -> Value {
    call(
        id,
        "edit",
        json!({"path": path, "edits": [{"old_text": old, "new_text": new}]}),
    )
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

fn prompt(client: &mut AcpClient<InProcess>, session: &str, text: &str) {
    let response = client.prompt(session, text);
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
}

/// Sends `/undo` and returns its report: the agent message it sent.
fn undo(client: &mut AcpClient<InProcess>, session: &str) -> String {
    let before = client.updates(session).len();
    prompt(client, session, "/undo");
    let text = client.updates(session)[before..]
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str())
        .collect::<String>();
    assert!(!text.is_empty(), "no report");
    text
}

fn load(client: &mut AcpClient<InProcess>, session: &str, cwd: &Path) {
    client.call(
        "session/load",
        json!({"sessionId": session, "cwd": cwd, "mcpServers": []}),
    );
}

#[test]
fn each_undo_goes_one_turn_further_back() {
    let setup = Setup::new(json!({"responses": [
        edit("e1", "a.txt", "alpha", "beta"), write("w1", "b.txt", "new\n"), text(&["one"]),
        write("w2", "a.txt", "gamma\n"), text(&["two"]),
        text(&["three"]),
    ]}));
    let cwd = workspace(&setup);
    let (a, b) = (cwd.join("a.txt"), cwd.join("b.txt"));
    std::fs::write(&a, "alpha\n").unwrap();
    let mut client = engine(&setup);
    let session = client.new_session(cwd.to_str().unwrap());
    prompt(&mut client, &session, "change a, make b");
    prompt(&mut client, &session, "rewrite a");
    assert_eq!(read(&a).as_deref(), Some("gamma\n"));

    let report = undo(&mut client, &session);
    assert_eq!(read(&a).as_deref(), Some("beta\n"), "turn 2 undone");
    assert_eq!(read(&b).as_deref(), Some("new\n"), "turn 1 stays");
    assert!(report.contains("- a.txt: restored"), "{report}");
    assert!(!report.contains("b.txt"), "{report}");
    assert!(
        report.contains("`run_command`) are not tracked"),
        "{report}"
    );
    assert!(report.contains("One earlier turn"), "{report}");

    let report = undo(&mut client, &session);
    assert_eq!(read(&a).as_deref(), Some("alpha\n"), "turn 1 undone");
    assert_eq!(read(&b), None, "the file the agent created is gone");
    assert!(
        report.contains("- b.txt: deleted (the agent created it)"),
        "{report}"
    );

    let report = undo(&mut client, &session);
    assert!(report.starts_with("Nothing to undo"), "{report}");
    assert_eq!(read(&a).as_deref(), Some("alpha\n"));

    // The model is told that its edits are gone; it never reads the command itself.
    prompt(&mut client, &session, "what now?");
    let context = serde_json::to_string(&setup.model_messages(5)).unwrap();
    assert!(context.contains("The user ran /undo"), "{context}");
    assert!(!context.contains("\"/undo\""), "{context}");
}

#[test]
fn a_file_edited_twice_in_a_turn_goes_back_to_the_turns_start() {
    let setup = Setup::new(json!({"responses": [
        write("w1", "a.txt", "two\n"), edit("e1", "a.txt", "two", "three"), text(&["done"]),
    ]}));
    let cwd = workspace(&setup);
    let a = cwd.join("a.txt");
    std::fs::write(&a, "one\n").unwrap();
    let mut client = engine(&setup);
    let session = client.new_session(cwd.to_str().unwrap());
    prompt(&mut client, &session, "edit a twice");
    assert_eq!(read(&a).as_deref(), Some("three\n"));
    let report = undo(&mut client, &session);
    assert_eq!(read(&a).as_deref(), Some("one\n"));
    assert!(report.contains("- a.txt: restored"), "{report}");
}

#[test]
fn undo_survives_a_restart_and_its_report_is_replayed() {
    let setup = Setup::new(json!({"responses": [write("w1", "a.txt", "new\n"), text(&["done"])]}));
    let cwd = workspace(&setup);
    let a = cwd.join("a.txt");
    std::fs::write(&a, "old\n").unwrap();
    let session = {
        let mut client = engine(&setup);
        let session = client.new_session(cwd.to_str().unwrap());
        prompt(&mut client, &session, "rewrite a");
        session
    };
    assert_eq!(read(&a).as_deref(), Some("new\n"));
    let report = {
        let mut client = engine(&setup);
        load(&mut client, &session, &cwd);
        undo(&mut client, &session)
    };
    assert_eq!(read(&a).as_deref(), Some("old\n"));

    let mut client = engine(&setup);
    load(&mut client, &session, &cwd);
    let replayed = client.updates(&session);
    assert!(
        replayed
            .iter()
            .any(|u| u["sessionUpdate"] == "agent_message_chunk" && u["content"]["text"] == report),
        "the report is replayed: {replayed:?}"
    );
    // The checkpoint is marked undone in the store: nothing is left to undo.
    let again = undo(&mut client, &session);
    assert!(again.starts_with("Nothing to undo"), "{again}");
    assert_eq!(read(&a).as_deref(), Some("old\n"));
}

#[test]
fn a_file_the_user_changed_since_is_left_and_the_rest_restored() {
    let setup = Setup::new(json!({"responses": [
        write("w1", "a.txt", "agent a\n"), write("w2", "b.txt", "agent b\n"), text(&["done"]),
    ]}));
    let cwd = workspace(&setup);
    let (a, b) = (cwd.join("a.txt"), cwd.join("b.txt"));
    std::fs::write(&a, "a\n").unwrap();
    std::fs::write(&b, "b\n").unwrap();
    let untouched = cwd.join("other.txt");
    std::fs::write(&untouched, "not the agent's\n").unwrap();
    let mut client = engine(&setup);
    let session = client.new_session(cwd.to_str().unwrap());
    prompt(&mut client, &session, "rewrite both");
    std::fs::write(&b, "mine\n").unwrap();

    let report = undo(&mut client, &session);
    assert_eq!(read(&a).as_deref(), Some("a\n"));
    assert_eq!(read(&b).as_deref(), Some("mine\n"), "the user's work stays");
    assert_eq!(read(&untouched).as_deref(), Some("not the agent's\n"));
    assert!(report.contains("- a.txt: restored"), "{report}");
    assert!(
        report.contains("Not restored:\n- b.txt: it changed after the agent's edit; left as it is"),
        "{report}"
    );
    // And a notice says so (an agent message line for a client without notices).
    let told = hearth_testkit::agent_text(&client.updates(&session));
    assert!(
        told.contains("**Undo left files alone:** 1 file(s) changed after the agent's edit"),
        "{told}"
    );
}

/// An edit that failed because the user changed the file while its permission request was
/// open leaves no checkpoint: the turn's next edit records the file as the user left it, and
/// `/undo` goes back to that (before: to the text the failed edit had found, over the
/// user's change).
#[test]
fn undo_keeps_what_the_user_wrote_while_a_failed_edit_waited() {
    let setup = Setup::new(json!({"responses": [
        edit("e1", "a.txt", "v1", "agent one"),
        edit("e2", "a.txt", "user v2", "user v2 + agent"),
        text(&["done"]),
    ]}));
    let cwd = workspace(&setup);
    let a = cwd.join("a.txt");
    std::fs::write(&a, "v1\n").unwrap();
    let mut client = start(&setup, json!({}));
    let mut first = true;
    let file = a.clone();
    client.respond_with(move |method, _| {
        (method == "session/request_permission").then(|| {
            if std::mem::take(&mut first) {
                std::fs::write(&file, "user v2\n").unwrap();
            }
            json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}})
        })
    });
    let session = client.new_session(cwd.to_str().unwrap());
    prompt(&mut client, &session, "edit twice");
    assert_eq!(read(&a).as_deref(), Some("user v2 + agent\n"));

    let report = undo(&mut client, &session);
    assert_eq!(read(&a).as_deref(), Some("user v2\n"), "{report}");
}

#[test]
fn a_removed_file_created_again_is_deleted_then_recreated() {
    let setup = Setup::new(json!({"responses": [
        edit("e1", "f.txt", "A", "B"), text(&["one"]),
        write("w1", "f.txt", "C\n"), text(&["two"]),
    ]}));
    let cwd = workspace(&setup);
    let f = cwd.join("f.txt");
    std::fs::write(&f, "A\n").unwrap();
    let mut client = engine(&setup);
    let session = client.new_session(cwd.to_str().unwrap());
    prompt(&mut client, &session, "edit f");
    std::fs::remove_file(&f).unwrap();
    prompt(&mut client, &session, "f is gone, make it again");
    assert_eq!(read(&f).as_deref(), Some("C\n"));

    let report = undo(&mut client, &session);
    assert_eq!(read(&f), None, "turn 2 created it");
    assert!(report.contains("- f.txt: deleted"), "{report}");
    let report = undo(&mut client, &session);
    assert_eq!(read(&f).as_deref(), Some("A\n"), "as before turn 1");
    assert!(report.contains("- f.txt: recreated"), "{report}");
}

#[test]
fn nothing_to_undo_in_a_session_without_edits() {
    let setup = Setup::new(json!({"responses": [text(&["hello"])]}));
    let cwd = workspace(&setup);
    let mut client = engine(&setup);
    let session = client.new_session(cwd.to_str().unwrap());
    prompt(&mut client, &session, "hi");
    let report = undo(&mut client, &session);
    assert!(report.starts_with("Nothing to undo"), "{report}");
    assert!(
        report.contains("`run_command`) are not tracked"),
        "{report}"
    );
}

#[test]
fn undo_restores_the_editors_buffer_through_the_client() {
    let setup =
        Setup::new(json!({"responses": [write("w1", "a.txt", "agent\n"), text(&["done"])]}));
    let cwd = workspace(&setup);
    let a = cwd.join("a.txt");
    std::fs::write(&a, "on disk\n").unwrap();
    let mut config: Value = serde_json::from_str(&setup.config()).unwrap();
    config["permissionMode"] = json!("bypass");
    let mut client = AcpClient::new(InProcess::start(&config.to_string()));
    client.call(
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": true, "writeTextFile": true}}}),
    );
    // The editor holds an unsaved buffer of a.txt; its writes go to the buffer too.
    let buffers = Arc::new(Mutex::new(HashMap::from([(
        a.to_str().unwrap().to_string(),
        "unsaved\n".to_string(),
    )])));
    let editor = buffers.clone();
    client.respond_with(move |method, params| {
        let path = params["path"].as_str()?.to_string();
        let mut buffers = editor.lock().unwrap();
        match method {
            "fs/read_text_file" => Some(json!({"content": buffers.get(&path)?})),
            "fs/write_text_file" => {
                buffers.insert(path, params["content"].as_str()?.to_string());
                Some(json!({}))
            }
            _ => None,
        }
    });
    let session = client.new_session(cwd.to_str().unwrap());
    prompt(&mut client, &session, "rewrite a");
    let buffer = |buffers: &Mutex<HashMap<String, String>>| {
        buffers.lock().unwrap()[a.to_str().unwrap()].clone()
    };
    assert_eq!(buffer(&buffers), "agent\n");
    let report = undo(&mut client, &session);
    assert!(report.contains("- a.txt: restored"), "{report}");
    assert_eq!(
        buffer(&buffers),
        "unsaved\n",
        "the buffer as the agent found it"
    );
    assert_eq!(
        read(&a).as_deref(),
        Some("on disk\n"),
        "the editor writes, not Hearth"
    );
}

/// The user message ids of the session's prompts, as a `session/load` replays them.
fn prompt_ids(client: &mut AcpClient<InProcess>, session: &str, cwd: &Path) -> Vec<String> {
    let before = client.updates(session).len();
    load(client, session, cwd);
    let mut ids: Vec<String> = Vec::new();
    for update in &client.updates(session)[before..] {
        if update["sessionUpdate"] == "user_message_chunk" {
            let id = update["messageId"].as_str().unwrap().to_string();
            if ids.last() != Some(&id) {
                ids.push(id);
            }
        }
    }
    ids
}

#[test]
fn rewind_reports_dry_then_puts_files_back_to_before_a_prompt() {
    let setup = Setup::new(json!({"responses": [
        write("w1", "x.txt", "1\n"), text(&["one"]),
        edit("e1", "x.txt", "1", "2"), write("w2", "y.txt", "y\n"), text(&["two"]),
        text(&["three"]),
    ]}));
    let cwd = workspace(&setup);
    let (x, y) = (cwd.join("x.txt"), cwd.join("y.txt"));
    let mut client = engine(&setup);
    let session = client.new_session(cwd.to_str().unwrap());
    prompt(&mut client, &session, "make x");
    prompt(&mut client, &session, "change x, make y");
    prompt(&mut client, &session, "just talk");
    let ids = prompt_ids(&mut client, &session, &cwd);
    assert_eq!(ids.len(), 3);
    let rewind =
        |to: &str, dry: bool| json!({"sessionId": session, "toMessageId": to, "dryRun": dry});

    let dry = client.call("_hearth/session/rewind", rewind(&ids[1], true));
    assert_eq!(dry["rewound"], false);
    assert_eq!(
        dry["filesRestored"],
        json!([x.to_str().unwrap(), y.to_str().unwrap()])
    );
    assert_eq!(dry["conflicts"], json!([]));
    assert_eq!(
        read(&x).as_deref(),
        Some("2\n"),
        "a dry run touches nothing"
    );
    assert_eq!(read(&y).as_deref(), Some("y\n"));

    std::fs::write(&y, "mine\n").unwrap();
    let done = client.call("_hearth/session/rewind", rewind(&ids[0], false));
    assert_eq!(done["rewound"], true);
    assert_eq!(done["filesRestored"], json!([x.to_str().unwrap()]));
    assert_eq!(done["conflicts"][0]["path"], y.to_str().unwrap());
    assert!(
        done["conflicts"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("changed after the agent's edit")
    );
    assert_eq!(read(&x), None, "x did not exist before the first prompt");
    assert_eq!(read(&y).as_deref(), Some("mine\n"));

    // Rewound turns are undone: nothing is left for /undo.
    let report = undo(&mut client, &session);
    assert!(report.starts_with("Nothing to undo"), "{report}");
}

#[test]
fn rewind_to_an_unknown_message_or_session_fails() {
    let setup = Setup::new(json!({"responses": [text(&["hello"])]}));
    let cwd = workspace(&setup);
    let mut client = engine(&setup);
    let session = client.new_session(cwd.to_str().unwrap());
    prompt(&mut client, &session, "hi");
    let error = client.call_err(
        "_hearth/session/rewind",
        json!({"sessionId": session, "toMessageId": "msg_nope"}),
    );
    assert_eq!(error["code"], -32602, "{error}");
    assert_eq!(error["data"]["messageId"], "msg_nope");
    let error = client.call_err(
        "_hearth/session/rewind",
        json!({"sessionId": "sess_nope", "toMessageId": "msg_nope"}),
    );
    assert_eq!(error["code"], -32002, "{error}");
    let error = client.call_err("_hearth/session/rewind", json!({"sessionId": session}));
    assert_eq!(error["code"], -32602, "{error}");
}
