//! The processes a test (or bench) started, found from outside: every live process descending
//! from this one, with its resident memory, read from `/proc`; on Windows, whether a process
//! (by pid) still runs.

use std::collections::HashMap;

/// Each live (not zombie) process descending from this one, with its RSS in KiB.
pub fn descendants() -> Vec<(u32, u64)> {
    let mut parents: HashMap<u32, u32> = HashMap::new();
    let mut rss: HashMap<u32, u64> = HashMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .map(|v| v.split_whitespace().next().unwrap_or("").to_owned())
        };
        if field("State:").is_some_and(|state| state == "Z") {
            continue;
        }
        if let Some(ppid) = field("PPid:").and_then(|p| p.parse().ok()) {
            parents.insert(pid, ppid);
            rss.insert(
                pid,
                field("VmRSS:").and_then(|v| v.parse().ok()).unwrap_or(0),
            );
        }
    }
    let mut found = vec![std::process::id()];
    let mut index = 0;
    while index < found.len() {
        let parent = found[index];
        found.extend(
            parents
                .iter()
                .filter(|(_, p)| **p == parent)
                .map(|(pid, _)| *pid),
        );
        index += 1;
    }
    let mut out: Vec<(u32, u64)> = found[1..].iter().map(|pid| (*pid, rss[pid])).collect();
    out.sort_unstable();
    out
}

/// Whether process `pid` still runs, asked of Windows itself (OpenProcess, then a zero wait on
/// it): a process that exited, or no process by that id, is not running.
#[cfg(windows)]
pub fn running(pid: u32) -> bool {
    use windows_sys::Win32::Foundation::{CloseHandle, WAIT_TIMEOUT};
    use windows_sys::Win32::System::Threading::{
        OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION, PROCESS_SYNCHRONIZE, WaitForSingleObject,
    };
    // SAFETY: plain values; a handle returned is closed below.
    let process = unsafe {
        OpenProcess(
            PROCESS_QUERY_LIMITED_INFORMATION | PROCESS_SYNCHRONIZE,
            0,
            pid,
        )
    };
    if process.is_null() {
        return false;
    }
    // SAFETY: the handle is open, with SYNCHRONIZE access.
    let waited = unsafe { WaitForSingleObject(process, 0) };
    // SAFETY: the handle is open and nobody else owns it.
    unsafe { CloseHandle(process) };
    waited == WAIT_TIMEOUT
}

/// Whether no process's command line contains `marker` (`pgrep -f`): how a test finds the
/// tree of a command it gave a unique marker, from outside the engine. Needs `pgrep` (the
/// suites that use it run Unix commands; under wine they are skipped).
pub fn marked_gone(marker: &str) -> bool {
    let out = std::process::Command::new("pgrep")
        .args(["-f", marker])
        .output()
        .expect("pgrep runs");
    out.stdout.is_empty()
}

/// Waits, up to `within`, for a process marked `marker` to be running; whether one is.
pub fn marked_started(marker: &str, within: std::time::Duration) -> bool {
    let deadline = std::time::Instant::now() + within;
    while marked_gone(marker) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    !marked_gone(marker)
}

/// Runs `program` with `args` to its end, its output discarded, and how long that took; `None`
/// when it cannot start (not installed). For the benches that time a reference tool
/// (ripgrep) beside Hearth's own.
pub fn time_run(program: &str, args: &[&str]) -> Option<std::time::Duration> {
    let started = std::time::Instant::now();
    let status = std::process::Command::new(program)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .ok()?;
    // `rg` exits 1 when nothing matched: a run all the same.
    (status.code().is_some()).then(|| started.elapsed())
}

/// Runs `command` with `input` on its stdin, then EOF, and collects its output. A command
/// that exits before it reads (one refusing its arguments) closes the pipe under the write:
/// that refusal is the caller's to assert on, from the exit status.
pub fn output_with_stdin(command: &mut std::process::Command, input: &str) -> std::process::Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let written = child.stdin.take().unwrap().write_all(input.as_bytes());
    if let Err(error) = written {
        assert_eq!(error.kind(), std::io::ErrorKind::BrokenPipe, "{error}");
    }
    child.wait_with_output().unwrap()
}
