//! `grep`, `glob` and `list` on a repository of real size, as a client sees each tool call —
//! the `tool_call` frame to its `completed` update, through the engine and the scripted mock
//! LLM — beside ripgrep on the same tree in the same run, interleaved: `rg -l PATTERN` for
//! `grep` (a pattern a few files hold, so both read every file) and `rg --files -g GLOB` for
//! `glob`; and `list` of a directory of 50,000 entries (its output bounded as always). Each
//! call must complete, count every match or entry, and show a bounded result.
//!
//! The tree is generated under `target/bench-tree/` (100,000 files of about 1 KB in 1,000
//! directories, a `.gitignore`; `--quick`: 10,000) and kept for the next run.
//!
//! Run: `cargo bench -p hearth-core --bench search` (`-- --quick` for a smoke run). Needs `rg`
//! on PATH for the reference rows (`apt-get install ripgrep`); without it they say so.
//! Numbers, not assertions: the machines are shared and noisy.

mod common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::{Client, median};
use hearth_mock_llm::{MockLlm, Response, Script};
use hearth_testkit::processes::time_run;
use serde_json::{Value, json};

/// The pattern `grep` looks for: in one file of 2,000.
const PATTERN: &str = "needle_[0-9]+";
const GLOB: &str = "**/*_7.rs";
/// Above what a result of 200 lines, the tools' bound, can take.
const MAX_RESULT_BYTES: usize = 64 * 1024;

/// A tree of `files` files, in directories of 100, made once and kept.
fn tree(files: usize) -> PathBuf {
    let root = hearth_testkit::repo_root().join(format!("target/bench-tree/{files}"));
    let done = root.join(".complete");
    if done.exists() {
        return root;
    }
    let _ = std::fs::remove_dir_all(&root);
    let line = "    let value = compute(input, &settings).map_err(Error::from)?;\n";
    for n in 0..files {
        let dir = root.join(format!("src/m{:02}/d{:03}", n / 10_000, (n / 100) % 100));
        if n % 100 == 0 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        let mut text = format!("// file {n}\nfn f_{n}() {{\n");
        for _ in 0..14 {
            text.push_str(line);
        }
        if n % 2_000 == 0 {
            text.push_str(&format!("    needle_{n}();\n"));
        }
        text.push_str("}\n");
        std::fs::write(dir.join(format!("f{n}_{}.rs", n % 10)), text).unwrap();
    }
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    std::fs::write(&done, "").unwrap();
    root
}

/// A directory of `entries` empty files, made once and kept.
fn wide(entries: usize) -> PathBuf {
    let root = hearth_testkit::repo_root().join(format!("target/bench-tree/wide-{entries}"));
    let done = root.join(".complete");
    if !done.exists() {
        std::fs::create_dir_all(&root).unwrap();
        for n in 0..entries {
            std::fs::write(root.join(format!("entry{n:05}.txt")), "").unwrap();
        }
        std::fs::write(&done, "").unwrap();
    }
    root
}

fn tool_call(name: &str, arguments: Value) -> Response {
    let call = json!({"toolCall": {"id": "c", "name": name, "arguments": arguments.to_string()}});
    serde_json::from_value(json!({"events": [call]})).unwrap()
}

fn text(reply: &str) -> Response {
    serde_json::from_value(json!({"events": [{"text": reply}]})).unwrap()
}

/// One prompt whose model calls `name` once: the time from its `tool_call` frame to its
/// `completed` update, and that update as the client got it. A call that failed stops the
/// bench: its time would say nothing about the tool.
fn timed_call(client: &mut Client, session: &Value, name: &str) -> (Duration, String) {
    client.send(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": name}]}),
    );
    client.until(|f| f.contains(r#""sessionUpdate":"tool_call""#));
    let started = Instant::now();
    let finished = client
        .first(|f| f.contains(r#""status":"completed""#) || f.contains(r#""status":"failed""#));
    let elapsed = started.elapsed();
    assert!(
        finished.contains(r#""status":"completed""#),
        "`{name}` failed: {finished}"
    );
    client.until(|f| f.contains(r#""stopReason""#));
    (elapsed, finished)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (files, entries, runs) = if quick {
        (10_000, 5_000, 2)
    } else {
        (100_000, 50_000, 7)
    };
    let made = Instant::now();
    let root = tree(files);
    let wide = wide(entries);
    eprintln!("trees ready in {:.1} s", made.elapsed().as_secs_f64());
    let root_str = root.to_str().unwrap();
    // Each call with what its result must count (its `rawOutput`): every match or entry was
    // found, though the model is shown the first 200 only.
    let calls = [
        (
            "grep",
            json!({"pattern": PATTERN}),
            format!(r#""matches":{}"#, files / 2_000),
        ),
        (
            "glob",
            json!({"pattern": GLOB}),
            format!(r#""files":{}"#, files / 10),
        ),
        (
            "list",
            json!({"path": wide, "depth": 1}),
            // And the file that marks the directory complete.
            format!(r#""entries":{}"#, entries + 1),
        ),
    ];
    let mut responses = Vec::new();
    for _ in 0..runs + 1 {
        for (name, arguments, _) in &calls {
            responses.push(tool_call(name, arguments.clone()));
            responses.push(text("done"));
        }
    }
    let mock = MockLlm::start(Script { responses }).unwrap();
    let data = tempfile::tempdir().unwrap();
    let mut client = Client::start(&mock, data.path());
    // The wide directory is a root of its own, so the searches of the tree do not walk it.
    let new = json!({"cwd": root_str, "additionalDirectories": [wide], "mcpServers": []});
    let session = client.call("session/new", new)["result"]["sessionId"].clone();
    let rg_grep = ["-l", PATTERN, root_str];
    let rg_glob = ["--files", "-g", GLOB, root_str];
    let mut times: [Vec<f64>; 5] = Default::default();
    let mut have_rg = true;
    // The first round warms the page cache for both and is not counted.
    for round in 0..=runs {
        let mut row = Vec::new();
        for (name, _, counted) in &calls {
            let (elapsed, result) = timed_call(&mut client, &session, name);
            assert!(
                result.contains(counted),
                "`{name}` did not find {counted}: {result}"
            );
            assert!(
                result.len() < MAX_RESULT_BYTES,
                "`{name}`'s result is not bounded"
            );
            row.push(ms(elapsed));
        }
        let rg = [time_run("rg", &rg_grep), time_run("rg", &rg_glob)];
        have_rg &= rg.iter().all(Option::is_some);
        row.extend(rg.iter().map(|t| t.map_or(f64::NAN, ms)));
        if round > 0 {
            for (all, t) in times.iter_mut().zip(row) {
                all.push(t);
            }
        }
    }
    client.engine.close().unwrap();
    let [grep, glob, list, rg_l, rg_files] = times.map(median);
    println!(
        "| search on a generated tree of {files} files ({runs} interleaved runs, medians) | Hearth ms | ripgrep ms | ratio |"
    );
    println!("|---|---|---|---|");
    let row = |what: &str, ours: f64, theirs: f64| match have_rg {
        true => println!(
            "| {what} | {ours:.1} | {theirs:.1} | {:.2}× |",
            ours / theirs
        ),
        false => println!("| {what} | {ours:.1} | (rg not installed) | |"),
    };
    row(&format!("`grep {PATTERN}` / `rg -l`"), grep, rg_l);
    row(&format!("`glob {GLOB}` / `rg --files -g`"), glob, rg_files);
    println!("| `list` of a directory of {entries} entries | {list:.1} | | |");
}
