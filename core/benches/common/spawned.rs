//! What the benches that spawn a program share (`startup`, `load`): the release builds they
//! spawn, a spawned program's pipes, and its memory read from /proc.

#![allow(dead_code)] // each bench uses a different part

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

/// Builds `hearth` and the spawn floor in release (a no-op when they are up to date), so a
/// bench never measures a stale binary; returns the release directory. `hearth` is built as
/// it ships (`scripts/lib/release-build.sh`): a build of `hearth-cli` alone unifies other
/// features, so its symbols miss `cli/startup-order.txt` and its start-up maps more code.
/// Under `benches/run.sh`, which has just made that build (`HEARTH_BENCH_BUILT`), it is not
/// asked again.
pub fn release_builds() -> PathBuf {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    if std::env::var_os("HEARTH_BENCH_BUILT").is_none() {
        let shipped = hearth_testkit::nested_cargo::command("bash")
            .arg("-c")
            .arg("source scripts/lib/common.sh && source scripts/lib/release-build.sh && release_build_native")
            .current_dir(&repo)
            .status()
            .expect("bash");
        assert!(shipped.success(), "cannot build hearth");
    }
    let status = hearth_testkit::nested_cargo::command(env!("CARGO"))
        .args([
            "build",
            "--release",
            "--locked",
            "-q",
            "-p",
            "hearth-spawn-floor",
        ])
        .status()
        .expect("cargo");
    assert!(status.success(), "cannot build spawn_floor");
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| repo.join("target"), PathBuf::from);
    target.join("release")
}

/// Another build's directory to measure beside this one, in the same run: benches/compare.sh
/// names it in `HEARTH_BENCH_BASE` (it holds that build's `hearth`); with its name.
pub fn base_build() -> Option<(String, PathBuf)> {
    let base = PathBuf::from(std::env::var_os("HEARTH_BENCH_BASE")?);
    let name = base.file_name()?.to_string_lossy().into_owned();
    Some((name, base))
}

/// A spawned program speaking one JSON-RPC frame per line on its stdin and stdout.
pub struct Spawned {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Spawned {
    pub fn start(program: &Path, args: &[String]) -> Spawned {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot spawn {}: {e}", program.display()));
        Spawned {
            stdin: child.stdin.take(),
            stdout: BufReader::new(child.stdout.take().expect("stdout")),
            child,
        }
    }

    pub fn send(&mut self, frame: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(frame.as_bytes()).expect("write");
        stdin.write_all(b"\n").expect("write");
    }

    /// Reads lines until the answer to request `id`; how many came before it.
    pub fn until_answer(&mut self, id: u64) -> usize {
        self.until_answer_paced(id, usize::MAX, Duration::ZERO)
    }

    /// Like `until_answer`, as a slow client reads: it pauses `pause` every `every` lines.
    pub fn until_answer_paced(&mut self, id: u64, every: usize, pause: Duration) -> usize {
        let wanted = format!(r#""id":{id},"#);
        let mut line = String::new();
        let mut before = 0;
        loop {
            if before % every == every - 1 {
                std::thread::sleep(pause);
            }
            line.clear();
            let read = self.stdout.read_line(&mut line).expect("read");
            assert!(read > 0, "the program ended before answering {id}");
            if line.contains(&wanted) && !line.contains(r#""method""#) {
                assert!(!line.contains(r#""error""#), "{line}");
                return before;
            }
            before += 1;
        }
    }

    /// A memory figure of /proc/PID/status (`VmRSS`, `VmHWM`), in KiB.
    pub fn memory_kib(&self, field: &str) -> u64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }

    /// Closes stdin (EOF: an agent exits) and waits for a clean exit.
    pub fn finish(mut self) {
        drop(self.stdin.take());
        assert!(self.child.wait().expect("wait").success(), "exit status");
    }
}

/// The config file of an engine on a file store in `dir/data` (no model is ever called).
pub fn file_store_config(dir: &Path) -> PathBuf {
    let config = dir.join("config.json");
    let data = dir.join("data");
    std::fs::write(
        &config,
        format!(
            r#"{{"dataDir":{data:?},"providers":{{"openai":{{"baseUrl":"http://127.0.0.1:9/v1","apiKey":"bench"}}}}}}"#
        ),
    )
    .expect("config");
    config
}

/// `acp --config CONFIG`.
pub fn acp_args(config: &Path) -> Vec<String> {
    vec![
        "acp".into(),
        "--config".into(),
        config.display().to_string(),
    ]
}

pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}"#;
