//! A hostile workspace: symlinks pointing outside it, huge files, binary and non-UTF-8 files
//! (and file names), a directory of 100,000 files, a command that prints 1 GB. Each gets a
//! clear, bounded result: permission is asked (and a rejection holds) before anything outside
//! the workspace is read or changed, tool results and frames stay small, errors say what is
//! wrong, and the engine's memory stays bounded while a gigabyte goes through it.
//!
//! The same in both modes, except that the long mode prints 4 GB instead of 1 GB.
//!
//! Unix only: its symlinks need a privilege on Windows, Windows file names are never
//! non-UTF-8 bytes (they are UTF-16), and its commands are `sh` lines.
#![cfg(unix)]

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hearth_mock_llm::MockLlm;
use hearth_reliability::{config, mock, rss_kib, scale, text_response, tool_statuses};
use hearth_testkit::{AcpClient, InProcess, Stdio};
use serde_json::{Value, json};

/// No tool result the model reads may be larger than this: the tools' own caps are 256 KiB
/// for `read` and 64 KiB for command output, plus a little framing.
const MAX_RESULT_BYTES: usize = 300 * 1024;
/// No frame the client receives may be larger than this.
const MAX_FRAME_BYTES: usize = 1024 * 1024;

/// A workspace with a sibling directory outside it.
struct Place {
    mock: MockLlm,
    dir: tempfile::TempDir,
}

impl Place {
    fn new() -> Place {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ws")).unwrap();
        std::fs::create_dir_all(dir.path().join("outside")).unwrap();
        Place {
            mock: mock(json!({"responses": []})),
            dir,
        }
    }

    fn ws(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    fn outside(&self) -> PathBuf {
        self.dir.path().join("outside")
    }

    /// One turn in which the model makes `calls` (in one answer), then says "done". The
    /// client rejects every permission request and records it.
    fn turn(&self, mode: &str, calls: &[(&str, Value)]) -> Turn {
        let events: Vec<Value> = calls
            .iter()
            .enumerate()
            .map(|(i, (name, arguments))| {
                json!({"toolCall": {"id": format!("call_{i}"), "name": name, "arguments": arguments.to_string()}})
            })
            .collect();
        hearth_reliability::push(
            &self.mock,
            &[json!({"events": events}), text_response(&["done"])],
        );
        let before = self.mock.requests().len();
        let config = config(
            &self.mock,
            &self.dir.path().join("data"),
            json!({"permissionMode": mode}),
        );
        let mut client = AcpClient::new(InProcess::start(&config));
        client.initialize();
        let asked = Arc::new(Mutex::new(Vec::new()));
        let log = asked.clone();
        client.respond_with(move |method, params| {
            (method == "session/request_permission").then(|| {
                log.lock().unwrap().push(params.clone());
                json!({"outcome": {"outcome": "selected", "optionId": "reject_once"}})
            })
        });
        let session = client.new_session(self.ws().to_str().unwrap());
        let started = Instant::now();
        let answer = client.request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}),
        );
        let took = started.elapsed();
        assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
        let requests = self.mock.requests();
        assert_eq!(requests.len(), before + 2);
        let results: BTreeMap<String, String> = requests[before + 1].body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| {
                (
                    m["tool_call_id"].as_str().unwrap().to_string(),
                    m["content"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        assert_eq!(results.len(), calls.len(), "one result per call");
        let updates = client.updates(&session);
        let (statuses, _) = tool_statuses(&updates);
        let largest_frame = client
            .received
            .iter()
            .map(|f| f.to_string().len())
            .max()
            .unwrap_or(0);
        assert!(
            largest_frame < MAX_FRAME_BYTES,
            "a frame of {largest_frame} bytes"
        );
        for (id, result) in &results {
            assert!(
                result.len() < MAX_RESULT_BYTES,
                "{id}: a result of {} bytes",
                result.len()
            );
        }
        let model_saw: String = requests[before..]
            .iter()
            .map(|r| r.body.to_string())
            .collect();
        let asked = asked.lock().unwrap().clone();
        Turn {
            results,
            statuses: statuses.into_iter().map(|(_, s)| s).collect(),
            asked,
            model_saw,
            took,
        }
    }
}

struct Turn {
    /// The tool results the model got, by its call id (`call_0`, `call_1`, …).
    results: BTreeMap<String, String>,
    /// Each announced tool call's final status, in order.
    statuses: Vec<String>,
    /// The permission requests (all rejected).
    asked: Vec<Value>,
    /// Every model request of the turn, as text.
    model_saw: String,
    took: Duration,
}

impl Turn {
    fn result(&self, i: usize) -> &str {
        &self.results[&format!("call_{i}")]
    }
}

fn symlink(target: &Path, link: &Path) {
    std::os::unix::fs::symlink(target, link).unwrap();
}

const SECRET: &str = "TOP SECRET: the outside file";

#[test]
fn symlinks_out_of_the_workspace_ask_and_a_rejection_holds() {
    let place = Place::new();
    let (ws, outside) = (place.ws(), place.outside());
    std::fs::write(outside.join("secret.txt"), format!("{SECRET}\n")).unwrap();
    symlink(&outside.join("secret.txt"), &ws.join("link.txt"));
    symlink(&outside, &ws.join("outdir"));
    symlink(
        Path::new("../outside/relative.txt"),
        &ws.join("relative_link"),
    );
    symlink(&outside.join("new.txt"), &ws.join("dangling"));
    std::fs::write(outside.join("relative.txt"), "original\n").unwrap();

    // Ask mode: reads and edits through the links ask; the searches do not follow them.
    let turn = place.turn(
        "ask",
        &[
            ("read", json!({"path": "link.txt"})),
            ("read", json!({"path": "outdir/secret.txt"})),
            ("grep", json!({"pattern": "TOP SECRET"})),
            ("glob", json!({"pattern": "**/*.txt"})),
            ("list", json!({"depth": 3})),
            (
                "edit",
                json!({"path": "link.txt", "edits": [{"old_text": "TOP", "new_text": "NOT"}]}),
            ),
            (
                "write",
                json!({"path": "outdir/planted.txt", "content": "planted"}),
            ),
            (
                "write",
                json!({"path": "relative_link", "content": "overwritten"}),
            ),
            (
                "write",
                json!({"path": "dangling", "content": "created outside"}),
            ),
        ],
    );
    let titles: Vec<String> = turn
        .asked
        .iter()
        .map(|a| a["toolCall"]["title"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(
        turn.asked.len(),
        6,
        "the two reads and four edits through links asked: {titles:?}"
    );
    for request in &turn.asked {
        let kinds: Vec<&str> = request["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["allow_once", "reject_once"], "no 'always' outside");
    }
    for i in [0, 1, 5, 6, 7, 8] {
        assert!(
            turn.result(i).contains("rejected"),
            "call {i}: {}",
            turn.result(i)
        );
    }
    assert!(
        !turn.model_saw.contains(SECRET),
        "the outside file never reached the model"
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        format!("{SECRET}\n")
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("relative.txt")).unwrap(),
        "original\n"
    );
    assert!(!outside.join("planted.txt").exists() && !outside.join("new.txt").exists());
    assert!(
        !turn.result(4).contains("secret.txt"),
        "list does not descend into the linked directory: {}",
        turn.result(4)
    );
    assert!(
        turn.statuses
            .iter()
            .all(|s| s == "completed" || s == "failed"),
        "{:?}",
        turn.statuses
    );

    // Bypass mode never asks inside the workspace, but edits through links still ask.
    let turn = place.turn(
        "bypass",
        &[
            (
                "edit",
                json!({"path": "link.txt", "edits": [{"old_text": "TOP", "new_text": "NOT"}]}),
            ),
            (
                "write",
                json!({"path": "outdir/planted.txt", "content": "planted"}),
            ),
            (
                "write",
                json!({"path": "dangling", "content": "created outside"}),
            ),
            (
                "run_command",
                json!({"command": "echo inside > inside.txt"}),
            ),
        ],
    );
    assert_eq!(
        turn.asked.len(),
        3,
        "{:?}",
        turn.asked
            .iter()
            .map(|a| a["toolCall"]["title"].clone())
            .collect::<Vec<_>>()
    );
    assert!(!outside.join("planted.txt").exists() && !outside.join("new.txt").exists());
    assert!(
        std::fs::read_to_string(outside.join("secret.txt"))
            .unwrap()
            .starts_with("TOP")
    );
    assert!(ws.join("inside.txt").exists());
}

#[test]
fn huge_files_give_bounded_answers() {
    let place = Place::new();
    let ws = place.ws();
    // 200 MB, sparse: nothing on disk, but a size that must not be read into memory.
    let huge = std::fs::File::create(ws.join("huge.log")).unwrap();
    huge.set_len(200 * 1024 * 1024).unwrap();
    drop(huge);
    // 20 MB of short lines, and 8 MB on one line (minified).
    let lines: String = (0..1_000_000)
        .map(|i| format!("line {i:07} needle\n"))
        .collect();
    std::fs::write(ws.join("big.txt"), &lines).unwrap();
    std::fs::write(ws.join("minified.js"), "x".repeat(8 * 1024 * 1024)).unwrap();

    let turn = place.turn(
        "ask",
        &[
            ("read", json!({"path": "huge.log"})),
            ("read", json!({"path": "big.txt"})),
            (
                "read",
                json!({"path": "big.txt", "offset": 900_000, "limit": 5}),
            ),
            ("read", json!({"path": "minified.js"})),
            ("grep", json!({"pattern": "needle"})),
            ("grep", json!({"pattern": "needle", "path": "huge.log"})),
        ],
    );
    assert!(
        turn.result(0).contains("too large"),
        "the sparse 200 MB file is refused: {}",
        turn.result(0)
    );
    let first = turn.result(1);
    assert!(
        first.contains("line 0000000") && !first.contains("line 0999999"),
        "a window from the start"
    );
    assert!(
        first.contains("offset"),
        "it says how to read on: {first:.300}"
    );
    let window = turn.result(2);
    assert!(
        window.contains("line 0899999") && window.contains("line 0900003"),
        "{window}"
    );
    assert!(!window.contains("line 0900004"), "{window}");
    assert!(turn.result(3).len() < 64 * 1024, "the long line is cut");
    assert!(
        turn.result(4).lines().count() <= 260,
        "grep stops at its cap: {} lines",
        turn.result(4).lines().count()
    );
    eprintln!(
        "huge files: turn took {:?}; result sizes {:?}",
        turn.took,
        turn.results.values().map(String::len).collect::<Vec<_>>()
    );
    eprintln!("grep in the sparse file: {}", turn.result(5));
}

#[test]
fn binary_and_non_utf8_files_get_clear_errors_and_stay_untouched() {
    let place = Place::new();
    let ws = place.ws();
    let binary: Vec<u8> = (0..=255u8).cycle().take(64 * 1024).collect();
    std::fs::write(ws.join("image.png"), &binary).unwrap();
    let latin1 = b"caf\xe9 cr\xe8me br\xfbl\xe9e\nsecond line\n".to_vec();
    std::fs::write(ws.join("latin1.txt"), &latin1).unwrap();
    // A file name that is not UTF-8.
    let odd = ws.join(std::ffi::OsStr::from_bytes(b"odd-\xff-name.txt"));
    std::fs::write(&odd, "caf\u{e9} in a strange file\n").unwrap();

    let turn = place.turn(
        "accept_edits",
        &[
            ("read", json!({"path": "image.png"})),
            ("read", json!({"path": "latin1.txt"})),
            (
                "edit",
                json!({"path": "latin1.txt", "edits": [{"old_text": "second", "new_text": "2nd"}]}),
            ),
            ("write", json!({"path": "ok.txt", "content": "still works"})),
            ("grep", json!({"pattern": "caf"})),
            ("list", json!({})),
            ("glob", json!({"pattern": "*.txt"})),
            // The name as the listings show it (lossily): not the file's real name.
            ("read", json!({"path": "odd-\u{fffd}-name.txt"})),
        ],
    );
    assert!(
        turn.result(0).contains("binary"),
        "a clear error for a binary file: {}",
        turn.result(0)
    );
    assert!(
        turn.result(1).contains("UTF-8"),
        "a clear error for Latin-1: {}",
        turn.result(1)
    );
    assert!(
        turn.result(2).contains("UTF-8"),
        "an edit refuses what it cannot keep losslessly: {}",
        turn.result(2)
    );
    assert_eq!(
        std::fs::read(ws.join("latin1.txt")).unwrap(),
        latin1,
        "not rewritten"
    );
    assert_eq!(std::fs::read(ws.join("image.png")).unwrap(), binary);
    assert_eq!(
        std::fs::read_to_string(ws.join("ok.txt")).unwrap(),
        "still works"
    );
    assert!(
        turn.result(4).contains("latin1.txt"),
        "grep matches non-UTF-8 text lossily: {}",
        turn.result(4)
    );
    for i in [4, 5, 6] {
        assert!(
            turn.result(i).contains("odd-"),
            "call {i} shows the odd file name: {}",
            turn.result(i)
        );
    }
    assert!(
        turn.result(7).contains("does not exist"),
        "a clear error, not a wrong file: {}",
        turn.result(7)
    );
    assert!(
        turn.statuses
            .iter()
            .all(|s| s == "completed" || s == "failed")
    );
}

#[test]
fn a_directory_of_100k_files_stays_bounded() {
    let place = Place::new();
    let many = place.ws().join("many");
    std::fs::create_dir_all(&many).unwrap();
    let started = Instant::now();
    for i in 0..100_000 {
        std::fs::write(many.join(format!("f{i:06}.txt")), format!("needle {i}\n")).unwrap();
    }
    let created = started.elapsed();
    let turn = place.turn(
        "ask",
        &[
            ("list", json!({"path": "many"})),
            ("glob", json!({"pattern": "**/*.txt"})),
            ("grep", json!({"pattern": "needle 9999"})),
            ("grep", json!({"pattern": "needle"})),
        ],
    );
    for i in 0..4 {
        assert!(
            turn.result(i).lines().count() <= 260,
            "call {i}: {} lines",
            turn.result(i).lines().count()
        );
    }
    assert!(
        turn.result(0).contains("more"),
        "list says there is more: {:.200}",
        turn.result(0)
    );
    assert!(turn.result(1).contains("more"), "glob says there is more");
    assert!(
        turn.result(2).contains("f009999.txt") && turn.result(2).contains("f099999.txt"),
        "grep finds matches anywhere in the 100k files: {}",
        turn.result(2)
    );
    eprintln!(
        "100k files: created in {created:?}; the turn (list, glob, 2 greps) took {:?}",
        turn.took
    );
}

/// A command printing a gigabyte (4 in the long mode) through `hearth acp`: the engine's
/// resident memory, sampled while it runs, stays bounded; so do the live output it streams
/// and the result the model gets.
#[test]
fn a_command_printing_a_gigabyte_keeps_memory_bounded() {
    /// Why 160 MiB: the output is 1–4 GiB, so keeping it whole is far above; what the engine
    /// keeps is bounded (64 KiB for the result, 256 KiB of live deltas, 64 KiB read chunks)
    /// on top of the debug binary's own ~20–40 MiB.
    const RSS_BOUND_KIB: u64 = 160 * 1024;
    let gigabytes = scale(1, 4);
    let bytes = gigabytes * 1_000_000_000;
    let place = Place::new();
    let command = format!("yes | head -c {bytes}; echo; echo finished");
    hearth_reliability::push(
        &place.mock,
        &[
            json!({"events": [{"toolCall": {"id": "call_big", "name": "run_command", "arguments": json!({"command": command}).to_string()}}]}),
            text_response(&["printed"]),
        ],
    );
    let config = config(
        &place.mock,
        place.dir.path(),
        json!({"permissionMode": "bypass"}),
    );
    hearth_reliability::build_hearth();
    let mut client = AcpClient::new(Stdio::start(
        &config,
        place.dir.path(),
        &[("RUST_LOG", Some("error"))],
    ));
    client.initialize();
    let pid = client.transport.child.id();
    let (idle_rss, _) = rss_kib(Some(pid));
    let session = client.new_session(place.ws().to_str().unwrap());

    // Sample the engine's memory while the command runs.
    let peak = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (peak, done) = (peak.clone(), done.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::SeqCst) {
                if let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
                    let rss = status
                        .lines()
                        .find_map(|l| l.strip_prefix("VmRSS:"))
                        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                        .unwrap_or(0);
                    peak.fetch_max(rss, Ordering::SeqCst);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };
    let started = Instant::now();
    let id = client.start_request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "print a lot"}]}),
    );
    let mut streamed = 0usize;
    let mut largest_frame = 0usize;
    let answer = loop {
        let frame = client
            .next(Duration::from_secs(600))
            .expect("the command finishes at all");
        largest_frame = largest_frame.max(frame.to_string().len());
        if let Some(data) = frame
            .pointer("/params/update/_meta/terminal_output/data")
            .and_then(Value::as_str)
        {
            streamed += data.len();
        }
        if frame.get("id") == Some(&id) && frame.get("method").is_none() {
            break frame;
        }
    };
    let took = started.elapsed();
    done.store(true, Ordering::SeqCst);
    sampler.join().unwrap();
    let (end_rss, hwm) = rss_kib(Some(pid));
    let peak = peak.load(Ordering::SeqCst).max(hwm);

    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let last = client
        .updates(&session)
        .into_iter()
        .rfind(|u| u["sessionUpdate"] == "tool_call_update" && u.get("status").is_some())
        .unwrap();
    assert_eq!(last["status"], "completed", "{last}");
    assert_eq!(last["rawOutput"]["exitCode"], 0, "{last}");
    let result: String = place.mock.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(
        result.len() < 80 * 1024,
        "the model gets a bounded result ({} bytes)",
        result.len()
    );
    assert!(
        result.contains("bytes of output omitted") && result.contains("finished"),
        "the result keeps the head and the tail and says what was cut: {:.300}",
        result
    );
    assert!(
        streamed < 300 * 1024,
        "live output is capped ({streamed} bytes streamed)"
    );
    assert!(
        largest_frame < MAX_FRAME_BYTES,
        "a frame of {largest_frame} bytes"
    );
    eprintln!(
        "{gigabytes} GB command: took {took:?}; hearth acp VmRSS idle {idle_rss} KiB, peak {peak} KiB, \
         after {end_rss} KiB; {streamed} bytes streamed live; result {} bytes",
        result.len()
    );
    assert!(
        peak < RSS_BOUND_KIB,
        "hearth acp peaked at {peak} KiB while {gigabytes} GB went through it (bound {RSS_BOUND_KIB} KiB)"
    );
    let status = client.transport.hang_up();
    assert!(status.success());
}
