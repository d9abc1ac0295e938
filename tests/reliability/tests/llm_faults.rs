//! LLM faults: 429 with Retry-After, 500s, connection resets (a proxy that answers requests
//! with a TCP RST), streams cut short, a stall past the idle timeout, a stream cut in the middle
//! of a tool call — over the OpenAI and the Anthropic dialects. Each fault is retried or
//! reported clearly (the error message is asserted), the session stays usable (the next
//! prompt succeeds), and its log stays consistent: a fresh engine replays exactly what the
//! client saw, no tool call is left without a final status, and every model request's
//! conversation is valid (every assistant tool call answered by a tool result).
//!
//! The faults are the same in both modes; the long mode repeats each scenario 5 times.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hearth_mock_llm::MockLlm;
use hearth_reliability::{
    check_anthropic_context, check_openai_context, check_replay, config, mock, push, scale,
    text_response, tool_statuses,
};
use hearth_testkit::{AcpClient, InProcess, agent_text};
use serde_json::{Value, json};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Dialect {
    OpenAi,
    Anthropic,
}

const BOTH: [Dialect; 2] = [Dialect::OpenAi, Dialect::Anthropic];

/// How many times each scenario runs.
fn repeats() -> usize {
    scale(1, 5)
}

/// One engine, one session, one mock (optionally behind a proxy), and what the client saw.
struct Fixture {
    dialect: Dialect,
    mock: MockLlm,
    _dir: tempfile::TempDir,
    cwd: PathBuf,
    config: String,
    client: AcpClient<InProcess>,
    session: String,
    /// Prompts that succeeded, failed.
    answered: usize,
}

impl Fixture {
    fn new(dialect: Dialect, extra: Value) -> Fixture {
        Fixture::with_base_url(dialect, extra, None)
    }

    /// `base_url`: where the provider is reached instead of the mock (a faulty proxy).
    fn with_base_url(dialect: Dialect, extra: Value, base_url: Option<String>) -> Fixture {
        let mock = mock(json!({"responses": []}));
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("ws");
        std::fs::create_dir_all(&cwd).unwrap();
        let url = base_url.unwrap_or_else(|| mock.base_url());
        let provider = json!({"baseUrl": url, "apiKey": "test-key-not-secret", "maxRetries": 0});
        let mut settings = match dialect {
            Dialect::OpenAi => json!({"providers": {"openai": provider}}),
            Dialect::Anthropic => {
                json!({"model": "claude-test", "providers": {"anthropic": provider}})
            }
        };
        settings["permissionMode"] = json!("bypass");
        hearth_reliability::merge(&mut settings, extra);
        let config = config(&mock, dir.path(), settings);
        let mut client = AcpClient::new(InProcess::start(&config));
        client.initialize();
        let session = client.new_session(cwd.to_str().unwrap());
        Fixture {
            dialect,
            mock,
            _dir: dir,
            cwd,
            config,
            client,
            session,
            answered: 0,
        }
    }

    fn prompt(&mut self, text: &str) -> Value {
        self.answered += 1;
        self.client.prompt(&self.session, text)
    }

    /// A prompt that must end the turn normally; returns the text it streamed.
    fn succeeds(&mut self, text: &str) -> String {
        let before = self.client.updates(&self.session).len();
        let answer = self.prompt(text);
        assert_eq!(
            answer["result"]["stopReason"], "end_turn",
            "{:?}: {answer}",
            self.dialect
        );
        agent_text(&self.client.updates(&self.session)[before..])
    }

    /// A prompt that must fail with an error whose message contains every one of `needles`.
    fn fails(&mut self, text: &str, needles: &[&str]) -> Value {
        let answer = self.prompt(text);
        let error = answer
            .get("error")
            .unwrap_or_else(|| panic!("{:?}: the prompt should fail: {answer}", self.dialect))
            .clone();
        let message = error["message"].as_str().unwrap_or("");
        for needle in needles {
            assert!(
                message.contains(needle),
                "{:?}: the error should say {needle:?}: {error}",
                self.dialect
            );
        }
        error
    }

    /// The log is consistent: every model request so far was a valid conversation, a fresh
    /// engine replays exactly what the client saw, and every tool call has a final status.
    fn consistent(&self) {
        for (n, request) in self.mock.requests().iter().enumerate() {
            let messages = request.body["messages"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let valid = match self.dialect {
                Dialect::OpenAi => check_openai_context(&messages),
                Dialect::Anthropic => check_anthropic_context(&messages),
            };
            if let Err(e) = valid {
                panic!("{:?}: model request {n} is invalid: {e}", self.dialect);
            }
        }
        let live = self.client.updates(&self.session);
        let mut fresh = AcpClient::new(InProcess::start(&self.config));
        fresh.initialize();
        let loaded = fresh.request(
            "session/load",
            json!({"sessionId": self.session, "cwd": self.cwd, "mcpServers": []}),
        );
        assert!(loaded.get("result").is_some(), "{loaded}");
        let replay = fresh.updates(&self.session);
        if let Err(e) = check_replay(&live, &replay, true) {
            panic!("{:?}: {e}", self.dialect);
        }
        let (calls, announced) = tool_statuses(&replay);
        for (id, status) in &calls {
            assert!(
                status == "completed" || status == "failed",
                "{:?}: tool call {id} is left {status:?}",
                self.dialect
            );
            assert_eq!(announced.get(id), Some(&1), "{:?}: {id}", self.dialect);
        }
        let prompts = replay
            .iter()
            .filter(|u| u["sessionUpdate"] == "user_message_chunk")
            .count();
        assert_eq!(prompts, self.answered, "every prompt is in the log once");
    }

    fn push(&self, responses: &[Value]) {
        push(&self.mock, responses);
    }
}

#[test]
fn rate_limits_are_retried_after_the_servers_wait_or_reported() {
    for _ in 0..repeats() {
        for dialect in BOTH {
            let retries = json!({"providers": {provider(dialect): {"maxRetries": 2}}});
            let mut f = Fixture::new(dialect, retries);
            f.push(&[
                json!({"status": 429, "headers": {"retry-after": "1"}, "error": "slow down"}),
                text_response(&["made ", "it"]),
            ]);
            let started = Instant::now();
            assert_eq!(f.succeeds("hi"), "made it");
            assert!(
                started.elapsed() >= Duration::from_millis(950),
                "{dialect:?}: Retry-After: 1 was honoured ({:?})",
                started.elapsed()
            );
            assert_eq!(f.mock.requests().len(), 2);

            // Past the retries: reported with the status and the provider's message.
            f.push(&[
                json!({"status": 429, "headers": {"retry-after": "0"}, "error": "slow down"}),
                json!({"status": 429, "headers": {"retry-after": "0"}, "error": "slow down"}),
                json!({"status": 429, "headers": {"retry-after": "0"}, "error": "still too fast"}),
            ]);
            let error = f.fails("again", &["HTTP 429", "still too fast"]);
            assert_eq!(error["data"]["status"], 429, "{error}");
            f.push(&[text_response(&["back"])]);
            assert_eq!(f.succeeds("and now?"), "back");
            f.consistent();
        }
    }
}

#[test]
fn server_errors_are_retried_then_reported() {
    for _ in 0..repeats() {
        for dialect in BOTH {
            let retries = json!({"providers": {provider(dialect): {"maxRetries": 2}}});
            let mut f = Fixture::new(dialect, retries);
            f.push(&[
                json!({"status": 500, "error": "boom"}),
                json!({"status": 503, "error": "unavailable"}),
                text_response(&["fine"]),
            ]);
            assert_eq!(f.succeeds("hi"), "fine");
            assert_eq!(f.mock.requests().len(), 3);
            f.push(&[
                json!({"status": 500, "error": "boom"}),
                json!({"status": 502, "error": "bad gateway"}),
                json!({"status": 500, "error": "the GPU caught fire"}),
            ]);
            let error = f.fails("again", &["HTTP 500", "the GPU caught fire"]);
            assert_eq!(error["data"]["status"], 500);
            // A 4xx that retrying cannot fix is reported at once.
            f.push(&[json!({"status": 400, "error": "bad request: context too long"})]);
            let before = f.mock.requests().len();
            f.fails("too long", &["HTTP 400", "context too long"]);
            assert_eq!(f.mock.requests().len(), before + 1, "a 400 is not retried");
            f.push(&[text_response(&["still here"])]);
            assert_eq!(f.succeeds("ok?"), "still here");
            f.consistent();
        }
    }
}

/// A TCP proxy to the mock that answers the next `resets` requests — on new or pooled
/// connections — with a connection reset (RST), and forwards everything else.
struct ResetProxy {
    addr: SocketAddr,
    resets: Arc<AtomicUsize>,
}

impl ResetProxy {
    fn start(upstream: &str) -> ResetProxy {
        let upstream: SocketAddr = upstream
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let resets = Arc::new(AtomicUsize::new(0));
        let shared = resets.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let resets = shared.clone();
                std::thread::spawn(move || relay(client, upstream, &resets));
            }
        });
        ResetProxy { addr, resets }
    }

    fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    fn reset_next(&self, n: usize) {
        self.resets.store(n, Ordering::SeqCst);
    }
}

fn take_one(resets: &AtomicUsize) -> bool {
    resets
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
}

/// Forwards one connection. Before forwarding what the client sent, it may reset instead:
/// closing a socket whose received data was never read makes the kernel send an RST.
fn relay(mut client: TcpStream, upstream: SocketAddr, resets: &AtomicUsize) {
    let Ok(mut server) = TcpStream::connect(upstream) else {
        return;
    };
    let reset = Arc::new(AtomicBool::new(false));
    let (mut to_client, mut from_server) =
        (client.try_clone().unwrap(), server.try_clone().unwrap());
    let reset_seen = reset.clone();
    let back = std::thread::spawn(move || {
        let _ = std::io::copy(&mut from_server, &mut to_client);
        if !reset_seen.load(Ordering::SeqCst) {
            let _ = to_client.shutdown(Shutdown::Write);
        }
    });
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match client.peek(&mut buf[..1]) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if take_one(resets) {
            reset.store(true, Ordering::SeqCst);
            let _ = server.shutdown(Shutdown::Both);
            let _ = back.join();
            drop(client); // unread request bytes: RST
            return;
        }
        let Ok(n) = client.read(&mut buf) else { break };
        if n == 0 || server.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = server.shutdown(Shutdown::Write);
    let _ = back.join();
}

#[test]
fn connection_resets_are_retried_then_reported() {
    for _ in 0..repeats() {
        for dialect in BOTH {
            let upstream = mock(json!({"responses": []}));
            let proxy = ResetProxy::start(&upstream.base_url());
            let retries = json!({"providers": {provider(dialect): {"maxRetries": 3}}});
            let mut f = Fixture::with_base_url(dialect, retries, Some(proxy.base_url()));
            // The fixture's own mock is not the one behind the proxy: serve from `upstream`.
            f.mock = upstream;
            proxy.reset_next(2);
            f.push(&[text_response(&["through ", "the ", "resets"])]);
            assert_eq!(f.succeeds("hi"), "through the resets");
            assert_eq!(
                proxy.resets.load(Ordering::SeqCst),
                0,
                "both resets happened"
            );
            assert_eq!(
                f.mock.requests().len(),
                1,
                "only the third attempt got through"
            );

            proxy.reset_next(4);
            let error = f.fails("again", &["The model provider failed"]);
            assert!(
                error["message"]
                    .as_str()
                    .unwrap()
                    .contains("cannot reach the model: Connection reset"),
                "{dialect:?}: the error names the reset: {error}"
            );
            proxy.reset_next(0);
            f.push(&[text_response(&["reconnected"])]);
            assert_eq!(f.succeeds("there?"), "reconnected");
            f.consistent();
        }
    }
}

#[test]
fn a_cut_stream_is_retried_before_output_and_reported_after() {
    for _ in 0..repeats() {
        for dialect in BOTH {
            let retries = json!({"providers": {provider(dialect): {"maxRetries": 2}}});
            let mut f = Fixture::new(dialect, retries);
            // Cut before the first event: nobody saw anything, so it is retried.
            f.push(&[
                json!({"events": [], "truncate": true}),
                text_response(&["second ", "try"]),
            ]);
            assert_eq!(f.succeeds("hi"), "second try");
            assert_eq!(f.mock.requests().len(), 2);
            // Cut after text reached the user: reported, never retried behind their back.
            f.push(&[json!({"events": [{"text": "half a sen"}], "truncate": true})]);
            let before = f.mock.requests().len();
            f.fails("again", CUT);
            assert_eq!(f.mock.requests().len(), before + 1, "not retried");
            let seen = agent_text(&f.client.updates(&f.session));
            // What streamed stays, and the failure is told after it.
            assert!(
                seen.contains("half a sen**The connection to the model provider failed:**"),
                "{seen:?}"
            );
            f.push(&[text_response(&["whole ", "sentence"])]);
            assert_eq!(f.succeeds("finish it"), "whole sentence");
            f.consistent();
        }
    }
}

#[test]
fn a_stall_past_the_idle_timeout_is_reported_and_the_session_goes_on() {
    for _ in 0..repeats() {
        for dialect in BOTH {
            let mut f = Fixture::new(dialect, json!({"streamIdleTimeoutSecs": 1}));
            // Silent mid-stream.
            f.push(&[json!({"events": [{"text": "a"}, {"stallMs": 4000}, {"text": "b"}]})]);
            f.fails("hi", &["stalled for 1s"]);
            // Silent before the headers.
            f.push(&[json!({"delayMs": 4000, "events": [{"text": "late"}]})]);
            f.fails("again", &["did not answer within 1s"]);
            // Silent after a complete tool call, before the answer's end: nothing runs.
            let write = json!({"path": "stalled.txt", "content": "x"}).to_string();
            f.push(&[json!({"events": [
                {"toolCall": {"id": "call_s", "name": "write", "arguments": write}},
                {"stallMs": 4000},
            ]})]);
            f.fails("write", &["stalled for 1s"]);
            assert!(!f.cwd.join("stalled.txt").exists(), "{dialect:?}");
            // A stall shorter than the timeout is fine.
            f.push(&[
                json!({"events": [{"text": "slow "}, {"stallMs": 300}, {"text": "but fine"}]}),
            ]);
            assert_eq!(f.succeeds("slowly"), "slow but fine");
            f.consistent();
        }
    }
}

#[test]
fn a_stream_cut_in_the_middle_of_a_tool_call_runs_nothing_and_stays_valid() {
    for _ in 0..repeats() {
        for dialect in BOTH {
            let mut f = Fixture::new(dialect, json!({}));
            // The arguments stop in the middle of a JSON string.
            let cut = r#"{"path": "cut.txt", "content": "hel"#;
            f.push(&[json!({"events": [
                {"text": "Writing it."},
                {"toolCall": {"id": "call_cut", "name": "write", "arguments": cut, "chunks": 3}},
            ], "truncate": true})]);
            f.fails("write it", CUT);
            assert!(!f.cwd.join("cut.txt").exists(), "{dialect:?}: nothing ran");

            // A complete first call, the second cut: the answer is incomplete, so neither
            // runs (and the log and the context stay valid).
            let whole = json!({"path": "whole.txt", "content": "x"}).to_string();
            f.push(&[json!({"events": [
                {"toolCall": {"id": "call_a", "name": "write", "arguments": whole}},
                {"toolCall": {"id": "call_b", "name": "write", "arguments": r#"{"path": "b.t"#}},
            ], "truncate": true})]);
            f.fails("write two", CUT);
            assert!(
                !f.cwd.join("whole.txt").exists() && !f.cwd.join("b.t").exists(),
                "{dialect:?}: no call of an incomplete answer runs"
            );
            let (calls, _) = tool_statuses(&f.client.updates(&f.session));
            assert!(
                calls.is_empty(),
                "{dialect:?}: nothing announced: {calls:?}"
            );

            f.push(&[text_response(&["recovered"])]);
            assert_eq!(f.succeeds("go on"), "recovered");
            f.consistent();
        }
    }
}

#[test]
fn a_fault_after_a_tool_ran_keeps_its_result_in_the_context() {
    for _ in 0..repeats() {
        for dialect in BOTH {
            let mut f = Fixture::new(dialect, json!({}));
            let arguments = json!({"command": "echo ran > ran.txt; echo done"});
            f.push(&[
                json!({"events": [{"text": "Running."}, {"toolCall": {"id": "call_run", "name": "run_command", "arguments": arguments.to_string()}}]}),
                json!({"status": 500, "error": "overloaded right after the tool"}),
            ]);
            f.fails("run it", &["HTTP 500", "overloaded right after the tool"]);
            assert!(f.cwd.join("ran.txt").exists(), "the tool ran");
            let (calls, _) = tool_statuses(&f.client.updates(&f.session));
            assert_eq!(calls.len(), 1);
            assert_eq!(calls[0].1, "completed", "{dialect:?}: {calls:?}");
            f.push(&[text_response(&["it ran"])]);
            assert_eq!(f.succeeds("did it run?"), "it ran");
            // The last request carries the call and its result.
            let last = f.mock.requests().last().unwrap().body.to_string();
            assert!(last.contains("call_run") && last.contains("done"), "{last}");
            f.consistent();
        }
    }
}

/// What a stream cut short is reported as: the body broke (the chunked encoding ended
/// early) or it ended without the provider's end marker.
const CUT: &[&str] = &["The model provider failed: the model stream"];

fn provider(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::OpenAi => "openai",
        Dialect::Anthropic => "anthropic",
    }
}
