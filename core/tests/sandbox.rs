//! The sandbox of `run_command`, with real processes through the engine: what a confined
//! command may write (its workspace, its private temp dir) and may not (`/etc`, a sibling
//! directory — by `mv`, `ln`, a symlink, a `setsid` grandchild, after `unshare`), that reads
//! stay open, that the network is off unless switched on (a loopback listener outside sees
//! the difference), the denial block and `_meta.hearth.sandbox`, the refusal of a root that
//! holds Hearth's own state, and cancel. Linux only: elsewhere the backend is "none".
//!
//! seccomp's always-refused calls (x32, io_uring, keyctl) fail with EPERM in a command and not
//! out of the sandbox.
//!
//! Without Landlock the suite skips, loudly — unless `HEARTH_REQUIRE_SANDBOX=1` (CI's
//! `cargo test` stage), and then it fails. It tests the bwrap layer where bwrap is installed,
//! Landlock alone with `HEARTH_TEST_BWRAP=off`; CI runs it both ways (`common/sandbox.rs`).
//! The allowlist proxy and what only bwrap adds: `sandbox_network.rs`.

#![cfg(target_os = "linux")]

mod common;

use std::io::ErrorKind;
use std::net::TcpListener;
use std::path::Path;
use std::time::Duration;

use common::sandbox::{backend_prefix, exit_code, run, sandboxed};
use common::tools::{session, workspace};
use common::{Setup, call, start, text, tool_results};
use hearth_testkit::processes::{marked_gone, marked_started};
use hearth_testkit::sandbox::landlock_here;
use serde_json::{Value, json};

#[test]
fn writes_inside_the_workspace_and_moves_within_it_land() {
    if !landlock_here() {
        return;
    }
    let ran = sandboxed(&[
        "mkdir a b && echo hi > a/f && mv a/f b/f && ln b/f b/hard && ln -s f b/soft".into(),
        "echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\" && test \"$TMPDIR\" = \"$TMP\"".into(),
    ]);
    assert_eq!(
        exit_code(&ran.results[0]),
        "Exit code: 0",
        "{}",
        ran.results[0]
    );
    assert_eq!(
        std::fs::read_to_string(ran.cwd.join("b/f")).unwrap(),
        "hi\n"
    );
    assert!(ran.cwd.join("b/hard").exists() && ran.cwd.join("b/soft").exists());
    assert_eq!(
        exit_code(&ran.results[1]),
        "Exit code: 0",
        "{}",
        ran.results[1]
    );
    let sandbox = &ran.finals[0]["_meta"]["hearth"]["sandbox"];
    assert!(
        sandbox["backend"]
            .as_str()
            .unwrap()
            .starts_with(backend_prefix()),
        "{sandbox}"
    );
    assert_eq!(sandbox["policy"]["mode"], "workspace-write");
    assert_eq!(sandbox["policy"]["network"], false);
    assert_eq!(sandbox["denied"], Value::Null);
}

#[test]
fn writes_outside_fail_every_way_and_leave_nothing() {
    if !landlock_here() {
        return;
    }
    let sibling = tempfile::tempdir().unwrap();
    let s = sibling.path().display();
    let probe = format!("/etc/hearth-probe-{}", std::process::id());
    let ran = sandboxed(&[
        format!("touch {probe}"),
        format!("echo x > {s}/direct"),
        format!("echo m > m && mv m {s}/moved"),
        format!("echo l > l && ln l {s}/linked; ln -s /etc/passwd {s}/symlinked"),
        format!("ln -s {s} out && echo y > out/through"),
        format!("setsid -w sh -c 'sh -c \"echo z > {s}/grandchild\"'"),
        format!("unshare -Urm sh -c 'echo u > {s}/unshared'"),
    ]);
    for (i, result) in ran.results.iter().enumerate() {
        assert_ne!(exit_code(result), "Exit code: 0", "command {i}: {result}");
    }
    assert!(!Path::new(&probe).exists(), "{probe} was written");
    let left: Vec<_> = std::fs::read_dir(sibling.path()).unwrap().collect();
    assert!(left.is_empty(), "the sibling holds {left:?}");
    // What stayed inside did land: only the way out was refused.
    assert!(ran.cwd.join("m").exists() && ran.cwd.join("out").is_symlink());
}

#[test]
fn reads_stay_open() {
    if !landlock_here() {
        return;
    }
    let ran = sandboxed(&["cat /etc/os-release && ls / >/dev/null".into()]);
    assert_eq!(
        exit_code(&ran.results[0]),
        "Exit code: 0",
        "{}",
        ran.results[0]
    );
    assert!(ran.results[0].contains("ID="), "{}", ran.results[0]);
}

/// A command connecting to 127.0.0.1:`port` (a listener outside the sandbox).
fn connect(port: u16) -> String {
    format!(
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 2); print('connected')\""
    )
}

/// Whether `listener` (non-blocking) has a connection waiting.
fn was_reached(listener: &TcpListener) -> bool {
    match listener.accept() {
        Ok(_) => true,
        Err(e) if e.kind() == ErrorKind::WouldBlock => false,
        Err(e) => panic!("accept failed: {e}"),
    }
}

#[test]
fn the_network_is_off_unless_switched_on() {
    if !landlock_here() {
        return;
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    // Inside its own namespace a command still has a loopback of its own.
    let own_loopback = "python3 -c \"import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); \
        s.listen(); socket.create_connection(s.getsockname(), 2); print('own loopback')\"";
    let off = sandboxed(&[connect(port), own_loopback.into()]);
    assert_ne!(
        exit_code(&off.results[0]),
        "Exit code: 0",
        "{}",
        off.results[0]
    );
    assert!(!was_reached(&listener), "a network-off command got out");
    assert_eq!(
        exit_code(&off.results[1]),
        "Exit code: 0",
        "{}",
        off.results[1]
    );

    let on = run(json!({ "network": true }), &[connect(port)]);
    assert_eq!(
        exit_code(&on.results[0]),
        "Exit code: 0",
        "{}",
        on.results[0]
    );
    assert!(
        was_reached(&listener),
        "the network-on command did not connect"
    );
    assert_eq!(
        on.finals[0]["_meta"]["hearth"]["sandbox"]["policy"]["network"],
        true
    );
}

#[test]
fn a_sandbox_denial_gets_a_block_and_a_plain_failure_does_not() {
    if !landlock_here() {
        return;
    }
    let ran = sandboxed(&["touch /etc/hearth-denied".into(), "false".into()]);
    let denied = &ran.results[0];
    // Landlock refuses with EACCES, bwrap's read-only mounts with EROFS.
    assert!(
        denied.contains("Permission denied") || denied.contains("Read-only file system"),
        "output kept: {denied}"
    );
    assert!(
        denied.contains(&format!(
            "[sandbox] Ran confined: workspace-write, network off ({}",
            backend_prefix()
        )),
        "{denied}"
    );
    assert!(
        denied.contains("writing /etc/hearth-denied was denied"),
        "{denied}"
    );
    assert!(denied.contains("GOCACHE"), "{denied}");
    let meta = &ran.finals[0]["_meta"]["hearth"]["sandbox"];
    assert_eq!(meta["denied"], json!({ "write": "/etc/hearth-denied" }));
    assert_eq!(
        ran.finals[0]["rawOutput"]["exitCode"], 1,
        "exit code unchanged"
    );

    assert_eq!(ran.results[1], "Exit code: 1\n(no output)");
    assert_eq!(
        ran.finals[1]["_meta"]["hearth"]["sandbox"]["denied"],
        Value::Null
    );
}

#[test]
fn off_leaves_commands_unconfined() {
    let sibling = tempfile::tempdir().unwrap();
    let target = sibling.path().join("written");
    let ran = run(
        json!({ "mode": "off" }),
        &[format!("echo x > {}", target.display())],
    );
    assert_eq!(
        exit_code(&ran.results[0]),
        "Exit code: 0",
        "{}",
        ran.results[0]
    );
    assert!(target.exists());
    assert_eq!(
        ran.finals[0]["_meta"]["hearth"]["sandbox"]["backend"],
        "off"
    );
}

#[test]
fn a_workspace_holding_hearths_state_is_refused() {
    let setup = Setup::new(json!({ "responses": [
        call("c", "run_command", json!({ "command": "true" })),
        text(&["done"]),
    ]}));
    let mut client = start(&setup, json!({ "permissionMode": "bypass" }));
    // The setup's dir is the data dir itself.
    let session = session(&mut client, setup.dir.path());
    client.prompt(&session, "run");
    let result = &tool_results(&setup, 1)[0];
    assert!(result.contains("the sandbox cannot make"), "{result}");
    assert!(result.contains("Hearth's own state"), "{result}");
}

#[test]
fn cancel_kills_the_whole_confined_tree() {
    if !landlock_here() {
        return;
    }
    let marker = format!("sleep 8{}", std::process::id() % 1000);
    let command = format!("sh -c '{marker}' & {marker}; echo never");
    let setup = Setup::new(json!({ "responses": [
        call("c", "run_command", json!({ "command": command })),
        text(&["unused"]),
    ]}));
    let cwd = workspace(&setup);
    let mut client = start(&setup, json!({ "permissionMode": "bypass" }));
    let session = session(&mut client, &cwd);
    let prompt = client.start_request(
        "session/prompt",
        json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "go" }] }),
    );
    assert!(
        marked_started(&marker, Duration::from_secs(10)),
        "the command started"
    );
    client.notify("session/cancel", json!({ "sessionId": session }));
    assert_eq!(
        client.response(&prompt)["result"]["stopReason"],
        "cancelled"
    );
    assert!(
        marked_gone(&marker),
        "no process of the confined tree survives"
    );
}

/// Makes three calls with python's ctypes and prints, for each, "ok" or the errno: an x32
/// io_uring_setup (425 with bit 30), io_uring_setup(1, NULL), and keyctl(GET_KEYRING_ID,
/// SESSION_KEYRING) (250). x86_64's numbers.
#[cfg(target_arch = "x86_64")]
const SYSCALL_PROBE: &str = "python3 -c \"import ctypes; libc = ctypes.CDLL(None, use_errno=True); \
    call = lambda *a: 'ok' if libc.syscall(*a) >= 0 else str(ctypes.get_errno()); \
    print(call(0x40000000 | 425, 1, 0), call(425, 1, 0), call(250, 0, -3, 0))\"";

#[cfg(target_arch = "x86_64")]
#[test]
fn x32_io_uring_and_keyring_calls_are_refused_and_only_in_the_sandbox() {
    if !landlock_here() {
        return;
    }
    // "Exit code: 0", a fence, the line printed.
    let printed =
        |ran: &common::sandbox::Ran| ran.results[0].lines().nth(2).unwrap_or_default().to_owned();
    let open = printed(&run(json!({ "mode": "off" }), &[SYSCALL_PROBE.into()]));
    let eperm = "1";
    // Unconfined, none is EPERM (x32: ENOSYS without that ABI, else ok; io_uring: EFAULT;
    // keyctl: ok), so the confined answer cannot come from the kernel alone.
    assert_eq!(open.split(' ').count(), 3, "{open}");
    assert!(open.split(' ').all(|answer| answer != eperm), "{open}");
    let confined = printed(&sandboxed(&[SYSCALL_PROBE.into()]));
    assert_eq!(confined, "1 1 1", "confined");
}
