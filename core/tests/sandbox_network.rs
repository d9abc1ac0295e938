//! The allowlist proxy and the bwrap layer, with real processes through the engine. Two
//! loopback listeners stand for two hosts: 127.0.0.1 is on the allowlist, 127.0.0.2 is not.
//! A command reaches the first through the proxy (a CONNECT tunnel and a plain-HTTP request),
//! is refused the second with a 403 naming it, and cannot connect to either directly: the
//! listeners count every connection they get. The bwrap layer (where bwrap is installed, and
//! not under `HEARTH_TEST_BWRAP=off`): `.git/hooks` and `.git/config` read-only inside the
//! workspace, `~/.ssh` empty, a private `/tmp`. Linux only; skipped without Landlock unless
//! required (`common/sandbox.rs`).

#![cfg(target_os = "linux")]

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::sandbox::{backend_prefix, bwrap_layer, exit_code, run, run_with_home};
use hearth_testkit::sandbox::landlock_here;
use serde_json::json;

/// A loopback HTTP server on `ip` answering every request with `hello from <ip>`, and how
/// many connections it accepted.
struct Host {
    port: u16,
    connections: Arc<AtomicUsize>,
}

impl Host {
    fn start(ip: &str) -> Host {
        let listener = TcpListener::bind((ip, 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let connections = Arc::new(AtomicUsize::new(0));
        let counted = connections.clone();
        let body = format!("hello from {ip}");
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                counted.fetch_add(1, Ordering::SeqCst);
                let mut head = [0; 4096];
                let _ = stream.read(&mut head);
                let response = format!(
                    "HTTP/1.0 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(response.as_bytes());
            }
        });
        Host { port, connections }
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

#[test]
fn an_allowlisted_host_is_reached_through_the_proxy_and_nothing_else_is() {
    if !landlock_here() {
        return;
    }
    let (listed, other) = (Host::start("127.0.0.1"), Host::start("127.0.0.2"));
    let (a, b) = (listed.port, other.port);
    let ran = run(
        json!({ "network": ["127.0.0.1"] }),
        &[
            // A CONNECT tunnel (-p), then a plain request in absolute form.
            format!("curl -sS -p http://127.0.0.1:{a}/ && echo && curl -sS http://127.0.0.1:{a}/"),
            format!("curl -sS -v -p http://127.0.0.2:{b}/"),
            format!("curl -sS http://127.0.0.2:{b}/"),
            // Around the proxy: no route to either host.
            format!("curl -sS --noproxy '*' http://127.0.0.1:{a}/"),
            format!("curl -sS --noproxy '*' http://127.0.0.2:{b}/"),
            "env | grep -i _proxy= | sort".into(),
        ],
    );
    let results = &ran.results;
    assert_eq!(exit_code(&results[0]), "Exit code: 0", "{}", results[0]);
    assert_eq!(
        results[0].matches("hello from 127.0.0.1").count(),
        2,
        "{}",
        results[0]
    );

    for refused in &results[1..3] {
        assert!(!refused.contains("hello"), "{refused}");
        assert!(
            refused.contains(&format!("127.0.0.2:{b}"))
                && refused.contains("is not on the sandbox allowlist"),
            "the refusal names the host: {refused}"
        );
    }
    assert_eq!(
        ran.finals[1]["_meta"]["hearth"]["sandbox"]["denied"],
        json!({ "host": format!("127.0.0.2:{b}") })
    );
    assert!(
        results[1].contains(&format!("the allowlist proxy refused 127.0.0.2:{b}")),
        "the denial block names the host: {}",
        results[1]
    );
    assert!(
        results[2].contains("adding \"127.0.0.2\" to sandbox.network"),
        "the refusal says how to allow it: {}",
        results[2]
    );

    for direct in &results[3..5] {
        assert_ne!(exit_code(direct), "Exit code: 0", "{direct}");
        assert!(!direct.contains("hello"), "{direct}");
    }
    assert_eq!(listed.connections(), 2, "only the proxied requests arrived");
    assert_eq!(other.connections(), 0, "the unlisted host saw nothing");

    let env = &results[5];
    for name in ["HTTP_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"] {
        assert!(
            env.contains(&format!("{name}=http://127.0.0.1:")),
            "{name}: {env}"
        );
    }
    assert!(
        env.contains("NO_PROXY=\n") && env.contains("no_proxy=\n"),
        "{env}"
    );

    let sandbox = &ran.finals[0]["_meta"]["hearth"]["sandbox"];
    let backend = sandbox["backend"].as_str().unwrap();
    assert!(
        backend.starts_with(backend_prefix()) && backend.ends_with(" + allowlist proxy"),
        "{sandbox}"
    );
    assert_eq!(sandbox["policy"]["network"], json!(["127.0.0.1"]));
}

#[test]
fn the_bwrap_layer_protects_hooks_hides_secrets_and_keeps_tmp_private() {
    if !landlock_here() || !bwrap_layer() {
        eprintln!("SKIPPED: the bwrap layer is not tested in this run");
        return;
    }
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join(".ssh")).unwrap();
    std::fs::write(home.path().join(".ssh/id_ed25519"), "SECRET KEY").unwrap();
    let probe = format!("/tmp/hearth-bwrap-probe-{}", std::process::id());
    let ran = run_with_home(
        json!({}),
        &[
            // Made by one command, protected from the next (each command is wrapped anew).
            "mkdir -p .git/hooks && echo '[core]' > .git/config".into(),
            "echo evil > .git/hooks/pre-commit".into(),
            "echo '[alias] x = !evil' >> .git/config".into(),
            "ls -A \"$HOME/.ssh\"; cat \"$HOME/.ssh/id_ed25519\"; test -z \"$(ls -A \"$HOME/.ssh\")\"".into(),
            format!("echo p > {probe} && cat {probe}"),
            "echo w > landed".into(),
            // `.git` moved away with its read-only paths, a new one in its place.
            "mv .git .git-old && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit".into(),
        ],
        Some(home.path()),
    );
    let results = &ran.results;
    assert_eq!(exit_code(&results[0]), "Exit code: 0", "{}", results[0]);
    for protected in &results[1..3] {
        assert_ne!(exit_code(protected), "Exit code: 0", "{protected}");
        assert!(protected.contains("Read-only file system"), "{protected}");
    }
    assert!(!ran.cwd.join(".git/hooks/pre-commit").exists());
    assert_eq!(
        std::fs::read_to_string(ran.cwd.join(".git/config")).unwrap(),
        "[core]\n"
    );

    assert_eq!(exit_code(&results[3]), "Exit code: 0", "{}", results[3]);
    assert!(!results[3].contains("SECRET"), "{}", results[3]);

    assert_eq!(exit_code(&results[4]), "Exit code: 0", "{}", results[4]);
    assert!(
        !std::path::Path::new(&probe).exists(),
        "a write to the private /tmp reached the host's"
    );
    assert_eq!(
        std::fs::read_to_string(ran.cwd.join("landed")).unwrap(),
        "w\n"
    );
    assert_ne!(exit_code(&results[6]), "Exit code: 0", "{}", results[6]);
    assert!(!ran.cwd.join(".git-old").exists(), "{}", results[6]);
    assert!(
        !ran.cwd.join(".git/hooks/pre-commit").exists(),
        "{}",
        results[6]
    );
    assert!(
        ran.finals[0]["_meta"]["hearth"]["sandbox"]["backend"]
            .as_str()
            .unwrap()
            .starts_with("bwrap + seccomp"),
        "{}",
        ran.finals[0]
    );
}
