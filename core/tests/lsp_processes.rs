//! The language servers' processes, watched from outside: sessions on one root share one
//! server, a killed server starts again on the next call, and no process outlives the
//! sessions that used it. A test binary of its own, so that every process descending from
//! this one is a server this test started.

mod common;

use std::time::{Duration, Instant};

use common::{Setup, call, lsp_config, start, text, tool_results};
use serde_json::json;

/// The live processes descending from this test process.
fn descendants() -> Vec<u32> {
    hearth_testkit::processes::descendants()
        .into_iter()
        .map(|(pid, _)| pid)
        .collect()
}

/// Whether process `pid` runs under a seccomp filter with no new privileges: the marks the
/// sandbox (`hearth-linux-sandbox`) leaves on every child it confines.
#[cfg(target_os = "linux")]
fn sandboxed(pid: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .map(str::trim)
            .map(str::to_owned)
    };
    field("Seccomp:").as_deref() == Some("2") && field("NoNewPrivs:").as_deref() == Some("1")
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn sessions_share_servers_a_killed_one_restarts_and_none_outlives_its_sessions() {
    let check = |id: &str, path: &str| call(id, "lsp_diagnostics", json!({"path": path}));
    let setup = Setup::new(json!({"responses": [
        check("1", "b.py"), text(&["one"]),
        check("2", "b.py"), text(&["two"]),
        check("3", "b.py"), text(&["three"]),
        check("4", "b.ts"), text(&["four"]),
        check("5", "b.py"), text(&["five"]),
    ]}));
    let root = setup.dir.path().join("project");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("b.py"), "n: int = \"x\"\n").unwrap();
    std::fs::write(
        root.join("b.ts"),
        "const n: number = \"x\";\nconsole.log(n);\n",
    )
    .unwrap();
    let cwd = root.to_string_lossy().into_owned();
    let mut client = start(&setup, json!({"lsp": lsp_config()["lsp"]}));
    let (first, second) = (client.new_session(&cwd), client.new_session(&cwd));

    client.prompt(&first, "check");
    let pyright = descendants();
    assert!(
        !pyright.is_empty(),
        "pyright runs: {:?}",
        tool_results(&setup, 1)
    );
    // Language servers run in the sandbox by default (where this kernel has one).
    #[cfg(target_os = "linux")]
    if hearth_linux_sandbox::landlock_abi().is_some() {
        let open: Vec<&u32> = pyright.iter().filter(|&&pid| !sandboxed(pid)).collect();
        assert!(open.is_empty(), "unconfined server processes: {open:?}");
    }
    client.prompt(&second, "check");
    assert_eq!(
        descendants(),
        pyright,
        "the second session uses the same server"
    );
    assert!(
        tool_results(&setup, 3)
            .pop()
            .unwrap()
            .contains("b.py: 1 error")
    );

    for pid in &pyright {
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status();
    }
    // Gone from /proc: reaped, which Hearth does once it has seen the server's output end.
    wait_until("pyright reaped", || {
        pyright
            .iter()
            .all(|p| !std::path::Path::new(&format!("/proc/{p}")).exists())
    });
    client.prompt(&first, "check again");
    let again = tool_results(&setup, 5).pop().unwrap();
    assert!(again.contains("b.py: 1 error"), "started again: {again}");

    client.prompt(&second, "and typescript");
    assert!(
        tool_results(&setup, 7)
            .pop()
            .unwrap()
            .contains("b.ts: 1 error")
    );
    let running = descendants();
    assert!(running.len() > pyright.len(), "tsc joined: {running:?}");

    assert_eq!(
        client.call("session/close", json!({"sessionId": first})),
        json!({})
    );
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        descendants(),
        running,
        "the second session still holds them"
    );
    assert_eq!(
        client.call("session/close", json!({"sessionId": second})),
        json!({})
    );
    wait_until("the servers gone after the last close", || {
        descendants().is_empty()
    });

    // Engine::close stops what a live session still holds, and waits for it.
    let third = client.new_session(&cwd);
    client.prompt(&third, "check");
    assert!(!descendants().is_empty());
    drop(client);
    assert_eq!(
        descendants(),
        Vec::<u32>::new(),
        "Engine::close leaves no server"
    );
}
