//! Windows: a running command's whole process tree — tests/cross/spawn-tree.exe, a child and
//! a grandchild below it — is gone once its session closes, once the engine closes, and once
//! the engine's process dies without closing anything (then only the Job Object's
//! kill-on-close can end it). Whether a process is gone is asked of Windows: OpenProcess on
//! the pids the tree prints. tests/cross/windows.sh builds spawn-tree.exe and names it in
//! HEARTH_SPAWN_TREE. (Unix trees: cancel.rs, and cli/tests/stdio.rs for SIGTERM.)
#![cfg(windows)]

mod common;

use std::io::BufRead;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::tools::{session, workspace};
use common::{Setup, call, start, text};
use hearth_testkit::processes::running;
use hearth_testkit::{AcpClient, InProcess};
use serde_json::{Value, json};

/// The processes of the tree: spawn-tree.exe at depths 2, 1 and 0.
const TREE_SIZE: usize = 3;
/// How long wine may take to start the tree (three processes, each a fresh wine process).
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the tree may take to go: the engine's polite stop has a 1 s grace before the
/// forced one, and wine tears processes down asynchronously.
const GONE_TIMEOUT: Duration = Duration::from_secs(5);
/// Set in the engine process that `a_dead_engines_tree_dies_with_it` starts (this very test
/// binary) and kills.
const CHILD_ENGINE: &str = "HEARTH_TEST_TREE_ENGINE";

/// A session running spawn-tree.exe as a command, and the pids of its tree once all run.
struct RunningTree {
    client: AcpClient<InProcess>,
    session: String,
    pids: Vec<u32>,
}

fn spawn_tree() -> PathBuf {
    let file = std::env::var_os("HEARTH_SPAWN_TREE")
        .expect("HEARTH_SPAWN_TREE is not set: run these tests through tests/cross/windows.sh");
    PathBuf::from(file)
}

/// Starts an engine on `setup` (whose model runs `spawn-tree.exe 2 <tag>`, copied into the
/// workspace), and waits until the three processes of the tree have printed their pids.
fn run_tree(setup: &Setup, tag: &str) -> RunningTree {
    let cwd = workspace(setup);
    std::fs::copy(spawn_tree(), cwd.join("spawn-tree.exe")).expect("spawn-tree.exe copied");
    let mut client = start(setup, json!({"permissionMode": "bypass"}));
    let session = session(&mut client, &cwd);
    client.start_request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}),
    );
    let mut output = String::new();
    let deadline = Instant::now() + START_TIMEOUT;
    while pids_in(&output, tag).len() < TREE_SIZE {
        let left = deadline.saturating_duration_since(Instant::now());
        let frame = client
            .next(left)
            .unwrap_or_else(|| panic!("the tree did not start; its output: {output:?}"));
        output.push_str(terminal_output(&frame));
    }
    let pids = pids_in(&output, tag);
    assert!(
        pids.iter().all(|pid| running(*pid)),
        "every process of the tree runs: {pids:?}"
    );
    RunningTree {
        client,
        session,
        pids,
    }
}

/// The live output a `session/update` carries (`_meta.terminal_output`), or "".
fn terminal_output(frame: &Value) -> &str {
    frame["params"]["update"]["_meta"]["terminal_output"]["data"]
        .as_str()
        .unwrap_or("")
}

/// The pids in spawn-tree's lines (`spawn-tree <depth> <tag> started, pid <pid>`).
fn pids_in(output: &str, tag: &str) -> Vec<u32> {
    output
        .lines()
        .filter(|line| line.contains(&format!(" {tag} started")))
        .filter_map(|line| line.rsplit_once("pid ")?.1.trim().parse().ok())
        .collect()
}

/// Asserts that none of `pids` runs within `GONE_TIMEOUT`.
fn assert_gone(pids: &[u32], after: &str) {
    let deadline = Instant::now() + GONE_TIMEOUT;
    while pids.iter().any(|pid| running(*pid)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left: Vec<&u32> = pids.iter().filter(|pid| running(**pid)).collect();
    assert!(
        left.is_empty(),
        "processes {left:?} of the tree survive {after}"
    );
}

/// A tag unique to this test run, in every command line of the tree.
fn tag(test: &str) -> String {
    format!("{test}-{}", std::process::id())
}

/// A mock model whose one tool call runs the tree tagged `tag`.
fn setup(tag: &str) -> Setup {
    let command = format!("spawn-tree.exe 2 {tag}");
    Setup::new(
        json!({"responses": [call("c", "run_command", json!({"command": command})), text(&["unused"])]}),
    )
}

#[test]
fn a_closed_sessions_tree_is_gone() {
    let tag = tag("session-close");
    let setup = setup(&tag);
    let mut tree = run_tree(&setup, &tag);
    let session = tree.session.clone();
    tree.client
        .call("session/close", json!({"sessionId": session}));
    assert_gone(&tree.pids, "session/close");
}

#[test]
fn a_closed_engines_tree_is_gone() {
    let tag = tag("engine-close");
    let setup = setup(&tag);
    let tree = run_tree(&setup, &tag);
    tree.client.transport.engine.close().unwrap();
    assert_gone(&tree.pids, "Engine::close");
}

/// The engine's process is killed (TerminateProcess): nothing of the engine runs to stop the
/// tree, so only the job's kill-on-close, as Windows closes the dead process's handles, does.
/// This test starts itself again as that engine process (`CHILD_ENGINE` set), which prints
/// the tree's pids and waits to be killed.
#[test]
fn a_dead_engines_tree_dies_with_it() {
    if std::env::var_os(CHILD_ENGINE).is_some() {
        let tag = tag("engine-killed");
        let setup = setup(&tag);
        let tree = run_tree(&setup, &tag);
        println!("pids {:?}", tree.pids);
        std::thread::sleep(Duration::from_secs(120));
        panic!("the engine process was not killed");
    }
    let mut engine = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "a_dead_engines_tree_dies_with_it", "--nocapture"])
        .env(CHILD_ENGINE, "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the engine process starts");
    let lines = std::io::BufReader::new(engine.stdout.take().unwrap()).lines();
    let pids: Vec<u32> = lines
        .map_while(Result::ok)
        .find_map(|line| line.strip_prefix("pids ").map(str::to_owned))
        .and_then(|list| serde_json::from_str(&list).ok())
        .expect("the engine process printed its tree's pids");
    assert_eq!(pids.len(), TREE_SIZE);
    engine.kill().unwrap();
    engine.wait().unwrap();
    assert_gone(&pids, "the engine's process killed");
}
