//! Language servers through the engine: the time from an `lsp_diagnostics` call starting (its
//! `tool_call` frame) to its answer (the `completed` update), cold (the call starts the server
//! on a fresh root) and warm (the same call again), for pyright and TypeScript 7's `tsc
//! --lsp`, median of 10 fresh sessions each; and each server's resident memory once warm (the
//! sum over its processes).
//!
//! Run: `bash tests/lsp/setup.sh && cargo bench -p hearth-core --bench lsp` (`-- --quick`: 2
//! sessions each). Numbers, not assertions: the machines are shared and noisy.

use std::time::{Duration, Instant};

use hearth_mock_llm::{MockLlm, Script};
use hearth_testkit::{AcpClient, InProcess, repo_root};
use serde_json::{Value, json};

struct Case {
    label: &'static str,
    file: &'static str,
    text: &'static str,
    /// The `lsp.servers` entry.
    server: Value,
}

fn cases() -> Vec<Case> {
    let bin = repo_root().join("tests/lsp/node_modules/.bin");
    assert!(
        bin.join("tsc").exists(),
        "run `bash tests/lsp/setup.sh` first"
    );
    vec![
        Case {
            label: "pyright 1.1.414",
            file: "b.py",
            text: "def greet(name: str) -> str:\n    return name\n\nn: int = greet(\"x\")\n",
            server: json!({"python": {"extensions": ["py"], "command": bin.join("pyright-langserver"), "args": ["--stdio"]}}),
        },
        Case {
            label: "tsc 7.0.2 (--lsp)",
            file: "b.ts",
            text: "function greet(name: string): string {\n  return name;\n}\nconst n: number = greet(\"x\");\nconsole.log(n);\n",
            server: json!({"typescript": {"extensions": ["ts"], "command": bin.join("tsc"), "args": ["--lsp", "--stdio"]}}),
        },
    ]
}

/// The `tool_call` → `completed` time of the next diagnostics call in `session`.
fn one_call(client: &mut AcpClient<InProcess>, session: &str) -> Duration {
    let prompt = client.start_request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "check"}]}),
    );
    let is_update = |frame: &Value, kind: &str| {
        frame["method"] == "session/update" && frame["params"]["update"]["sessionUpdate"] == kind
    };
    client
        .wait_for(Duration::from_secs(60), |f| is_update(f, "tool_call"))
        .expect("the call started");
    let started = Instant::now();
    let done = client
        .wait_for(Duration::from_secs(60), |f| {
            is_update(f, "tool_call_update")
                && f["params"]["update"]["status"]
                    .as_str()
                    .is_some_and(|s| s != "in_progress")
        })
        .expect("the call ended");
    let took = started.elapsed();
    assert_eq!(done["params"]["update"]["status"], "completed", "{done}");
    client.response(&prompt);
    took
}

/// The resident memory of every process descending from this one (the running servers).
fn servers_rss_kib() -> u64 {
    hearth_testkit::processes::descendants()
        .iter()
        .map(|(_, kib)| kib)
        .sum()
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1000.0)
}

fn measure(case: &Case, runs: usize) -> (Vec<Duration>, Vec<Duration>, Vec<u64>) {
    let call = json!({"events": [{"toolCall": {"id": "d", "name": "lsp_diagnostics", "arguments": json!({"path": case.file}).to_string()}}]});
    let responses: Vec<Value> = (0..2 * runs)
        .flat_map(|_| [call.clone(), json!({"events": [{"text": "ok"}]})])
        .collect();
    let mock =
        MockLlm::start(serde_json::from_value::<Script>(json!({"responses": responses})).unwrap())
            .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = json!({
        "dataDir": dir.path(),
        "configDir": dir.path().join("config"),
        "model": "mock-model",
        "providers": {"openai": {"baseUrl": mock.base_url(), "apiKey": "bench", "maxRetries": 0}},
        "lsp": {"servers": case.server},
    });
    let mut client = AcpClient::new(InProcess::start(&config.to_string()));
    client.initialize();
    let (mut cold, mut warm, mut rss) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..runs {
        let root = dir.path().join(format!("project-{run}"));
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join(case.file), case.text).unwrap();
        let session = client.new_session(&root.to_string_lossy());
        cold.push(one_call(&mut client, &session));
        warm.push(one_call(&mut client, &session));
        rss.push(servers_rss_kib());
        client.call("session/close", json!({"sessionId": session}));
        wait_for_no_servers();
    }
    (cold, warm, rss)
}

/// A closed session's server is stopping: let it go before the next cold start.
fn wait_for_no_servers() {
    let deadline = Instant::now() + Duration::from_secs(5);
    while servers_rss_kib() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let runs = if quick { 2 } else { 10 };
    println!(
        "| server | `lsp_diagnostics` cold (server start), median of {runs} | min–max | warm, median | min–max | server RSS, median |"
    );
    println!("|---|---|---|---|---|---|");
    for case in cases() {
        let (cold, warm, mut rss) = measure(&case, runs);
        rss.sort_unstable();
        let range = |t: &[Duration]| {
            format!(
                "{}–{}",
                ms(*t.iter().min().unwrap()),
                ms(*t.iter().max().unwrap())
            )
        };
        println!(
            "| {} | {} | {} | {} | {} | {:.0} MiB |",
            case.label,
            ms(median(cold.clone())),
            range(&cold),
            ms(median(warm.clone())),
            range(&warm),
            rss[rss.len() / 2] as f64 / 1024.0
        );
    }
}
