//! `fetch` through a proxy named by the environment, end to end. The fetch client honours
//! `HTTP_PROXY` (reqwest does), and then connects to the proxy only, so its connection-time
//! address check never sees the target; the target's host is checked before the request
//! (`core/src/tools/fetch_guard.rs`). A name resolving to a loopback address never reaches the
//! proxy; a host the user listed goes through it.
//!
//! The engine must run with the proxy in its environment. Setting it in this process would
//! race with every other test thread (and needs `unsafe`), so the one visible test runs this
//! test binary again with it set, and the probe — ignored otherwise — runs there. The proxy is
//! a recorder in this process on 127.0.0.1 that answers every request itself; the model's
//! requests (to the mock, on 127.0.0.1) bypass it through `NO_PROXY`.

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::sync::{Arc, Mutex};

use common::tools::{always_answer, session, workspace};
use common::{Setup, call, start, text, tool_results};
use serde_json::json;

/// Set in the re-run only: the probe refuses to run without the proxy (it would pass
/// vacuously).
const PROBE: &str = "HEARTH_FETCH_PROXY_PROBE";

/// A name that resolves to loopback, as in the reviewer's reproduction.
const REFUSED: &str = "http://localhost:9/latest/meta-data/";
/// A listed host: the guard lets it through without resolving it, and only the proxy could
/// reach it (`.invalid` resolves nowhere).
const LISTED: &str = "http://docs.invalid/guide";

#[test]
fn a_proxy_from_the_environment_never_carries_a_refused_fetch() {
    let (proxy, requests) = recorder();
    let mut rerun = Command::new(std::env::current_exe().unwrap());
    rerun
        .args(["--ignored", "--exact", "probe_fetches_through_the_proxy"])
        .env(PROBE, "1");
    for name in ["HTTP_PROXY", "http_proxy"] {
        rerun.env(name, &proxy);
    }
    for name in ["NO_PROXY", "no_proxy"] {
        rerun.env(name, "127.0.0.1");
    }
    for name in ["HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"] {
        rerun.env_remove(name);
    }
    let probe = rerun.output().unwrap();
    let report = String::from_utf8_lossy(&probe.stdout);
    assert!(
        probe.status.success(),
        "{report}\n{}",
        String::from_utf8_lossy(&probe.stderr)
    );
    assert!(report.contains("1 passed"), "the probe ran: {report}");
    assert_eq!(
        *requests.lock().unwrap(),
        [format!("GET {LISTED} HTTP/1.1")],
        "what the proxy was asked"
    );
}

#[test]
#[ignore = "run by a_proxy_from_the_environment_never_carries_a_refused_fetch"]
fn probe_fetches_through_the_proxy() {
    assert_eq!(
        std::env::var(PROBE).as_deref(),
        Ok("1"),
        "run through a_proxy_from_the_environment_never_carries_a_refused_fetch"
    );
    let setup = Setup::new(json!({"responses": [
        call("refused", "fetch", json!({"url": REFUSED})),
        call("listed", "fetch", json!({"url": LISTED})),
        text(&["Done."]),
    ]}));
    let cwd = workspace(&setup);
    let mut client = start(
        &setup,
        json!({"tools": {"fetchAllowHosts": ["docs.invalid"]}}),
    );
    always_answer(&mut client, "allow_once");
    let session = session(&mut client, &cwd);
    assert_eq!(
        client.prompt(&session, "fetch")["result"]["stopReason"],
        "end_turn"
    );
    let results = tool_results(&setup, 2);
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(
        results[0].contains(&format!(
            "fetching {REFUSED} failed: fetch refuses localhost: it resolves to "
        )) && results[0].contains("a loopback address"),
        "{}",
        results[0]
    );
    assert!(results[1].ends_with("from the proxy"), "{}", results[1]);
}

/// A proxy that answers every request itself and records its request line; its URL.
fn recorder() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let requests = Arc::new(Mutex::new(Vec::new()));
    let seen = requests.clone();
    std::thread::spawn(move || {
        for mut socket in listener.incoming().flatten() {
            let mut request = Vec::new();
            let mut chunk = [0; 1024];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match socket.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&chunk[..n]),
                }
            }
            let request = String::from_utf8_lossy(&request);
            seen.lock()
                .unwrap()
                .push(request.lines().next().unwrap_or_default().to_owned());
            let _ = socket.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 14\r\n\
                  Connection: close\r\n\r\nfrom the proxy",
            );
        }
    });
    (url, requests)
}
