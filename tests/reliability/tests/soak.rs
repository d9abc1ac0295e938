//! Concurrency soak: S sessions × P prompts in ONE in-process engine against one mock LLM,
//! with text, tool calls (write, run_command, read, list, todo), stalls and cancels mixed in.
//!
//! Checked on every frame: per-session order (every update of a turn comes before its prompt
//! response; a tool call's updates come after its `tool_call` and nothing after its final
//! status; no update of an earlier turn turns up later), every prompt answered exactly once,
//! every tool call of a turn given a final status by the time the turn is answered (cancelled
//! turns included), no model text delivered twice or to the wrong session, and every model
//! request's conversation valid. Afterwards, a fresh engine on the same store replays each
//! session exactly as it was delivered live: every update delivered.
//!
//! Memory: VmRSS of this process (engine + mock + test client) and the live Rust heap (a
//! counting global allocator) are read after a warm-up round and after the last round; the
//! growth of each must stay under a generous bound (see `RSS_GROWTH_BOUND_KIB` and
//! `HEAP_GROWTH_BOUND_KIB`). A leak check, not a timing assertion.
//!
//! Bounded: 20 sessions × 3 prompts; `HEARTH_RELIABILITY=long`: 100 × 10.

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hearth_reliability::{
    Rng, check_openai_context, check_replay, config, fold, mock, push, reset_mock, rss_kib, scale,
    status_rank, threads,
};
use hearth_testkit::{AcpClient, InProcess};
use serde_json::{Value, json};

/// The most VmRSS may grow between the end of the warm-up round and the end of the run.
///
/// Why 64 MiB: VmRSS also counts what is not leaked. Measured (2 cores, debug build, long
/// mode): the live heap stays flat while VmRSS grows ~25 MiB over the nine rounds after
/// warm-up, for two reasons that are bounded by concurrency, not by the number of prompts:
/// tokio's blocking pool grows to about one thread per session reading the store at once
/// (~30 → ~85 threads for 100 sessions; each keeps the stack pages it touched, a few hundred
/// KiB in a debug build) and the C allocator keeps freed pages of its per-thread arenas.
/// 64 MiB leaves room for 100 such threads and the arenas. The precise leak check is
/// [`HEAP_GROWTH_BOUND_KIB`].
const RSS_GROWTH_BOUND_KIB: u64 = 64 * 1024;

/// The most the live Rust heap (engine + mock + test client, counted by [`Counting`]) may
/// grow between the warm-up round and the end.
///
/// Why 8 MiB: what legitimately grows is the test's own bookkeeping (a few hundred KiB for
/// 1,000 prompts) and what the engine caches up to a fixed size (idle pooled HTTP
/// connections to the mock with their buffers, hash map capacity); measured run-to-run noise
/// is about ±2 MiB. In the long mode (900 prompts after warm-up) a leak of 10 KiB per prompt
/// crosses it — one forgotten request, turn context or model answer is larger than that.
const HEAP_GROWTH_BOUND_KIB: usize = 8 * 1024;

/// How a prompt gets cancelled, if at all.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Cancel {
    No,
    /// `session/cancel` right behind the prompt (it may still be queued, or just started).
    AtOnce,
    /// `session/cancel` when the turn's first update arrives.
    AfterFirstUpdate,
}

/// What the test knows about one session.
struct Tracked {
    id: String,
    cwd: PathBuf,
    /// The live log of this session (folded, one update a line), kept on disk so the test's
    /// own memory does not grow with the run.
    live_file: PathBuf,
    /// Message and tool call ids of earlier turns: none may turn up again.
    earlier_ids: BTreeSet<String>,
    /// Prompts sent without a cancel.
    uncancelled: usize,
    // This round:
    cancel: Cancel,
    cancel_sent: bool,
    answered: Option<String>,
    updates: Vec<Value>,
    tool_status: HashMap<String, String>,
}

/// A round's scripted responses: every text token is unique (`[round.n.k]`), so a message
/// can be traced to the one response it came from.
fn responses(rng: &mut Rng, round: usize, count: usize) -> Vec<Value> {
    (0..count)
        .map(|n| {
            let mut events = Vec::new();
            for k in 0..rng.between(1, 5) {
                events.push(json!({"text": format!("[{round}.{n}.{k}]")}));
                if rng.chance(25) {
                    events.push(json!({"stallMs": rng.between(5, 120)}));
                }
            }
            let tool = match rng.below(100) {
                0..=44 => None,
                45..=59 => Some((
                    "write",
                    json!({"path": format!("notes/{round}_{n}.txt"), "content": format!("round {round}\n")}),
                )),
                60..=72 => Some((
                    "run_command",
                    json!({"command": format!("echo out {n}; sleep 0.{}", rng.below(3))}),
                )),
                73..=79 => Some(("read", json!({"path": "seed.txt"}))),
                80..=85 => Some(("list", json!({}))),
                86..=89 => Some((
                    "todo",
                    json!({"todos": [{"content": format!("task {n}"), "status": "pending"}]}),
                )),
                _ => {
                    // A long stall: what cancels like to land in.
                    events.push(json!({"stallMs": rng.between(200, 700)}));
                    events.push(json!({"text": format!("[{round}.{n}.z]")}));
                    None
                }
            };
            if let Some((name, arguments)) = tool {
                events.push(json!({"toolCall": {"id": format!("call_{round}_{n}"), "name": name, "arguments": arguments.to_string(), "chunks": 2}}));
            }
            if rng.chance(30) {
                events.push(json!({"usage": {"input": 50, "output": 5}}));
            }
            json!({"events": events})
        })
        .collect()
}

/// The `(round, n)` of the response a message came from, checking that its tokens are that
/// response's, in order, from the first.
fn message_origin(text: &str) -> Result<(String, String), String> {
    let mut origin: Option<(String, String)> = None;
    for (expected_k, token) in text
        .split('[')
        .filter(|t| !t.is_empty())
        .map(|t| t.trim_end_matches(']'))
        .enumerate()
    {
        let parts: Vec<&str> = token.split('.').collect();
        if parts.len() != 3 {
            return Err(format!("a foreign token {token:?} in {text:?}"));
        }
        let here = (parts[0].to_string(), parts[1].to_string());
        if origin.get_or_insert_with(|| here.clone()) != &here {
            return Err(format!("tokens of two responses in one message: {text:?}"));
        }
        if parts[2] != "z" && parts[2] != expected_k.to_string() {
            return Err(format!("tokens out of order or repeated: {text:?}"));
        }
    }
    origin.ok_or_else(|| format!("an empty message {text:?}"))
}

fn append_lines(path: &Path, updates: &[Value]) {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    for update in updates {
        writeln!(file, "{update}").unwrap();
    }
}

fn read_lines(path: &Path) -> Vec<Value> {
    let Ok(file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    std::io::BufReader::new(file)
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect()
}

/// Live bytes allocated through Rust's allocator in this process: the engine, the mock and
/// the test client. Unlike VmRSS it does not see freed memory the C allocator keeps, nor
/// thread stacks, so it tells a leak from a high-water mark.
static LIVE_BYTES: AtomicUsize = AtomicUsize::new(0);

struct Counting;

// SAFETY: every call is forwarded unchanged to the system allocator; only a counter is kept.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            LIVE_BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            LIVE_BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            LIVE_BYTES.fetch_add(new_size, Ordering::Relaxed);
            LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// A size from the environment (to explore, e.g. more rounds), else `default`.
fn override_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

#[test]
fn many_sessions_many_prompts_with_tools_and_cancels_in_one_engine() {
    let sessions = override_or("HEARTH_SOAK_SESSIONS", scale(20, 100));
    let prompts = override_or("HEARTH_SOAK_PROMPTS", scale(3, 10)).max(2);
    let mut rng = Rng::from_env("soak");
    let mock = mock(json!({"responses": []}));
    let dir = tempfile::tempdir().unwrap();
    let config = config(&mock, dir.path(), json!({"permissionMode": "bypass"}));
    let started = Instant::now();

    let mut client = AcpClient::new(InProcess::start(&config));
    client.initialize();
    let mut tracked: Vec<Tracked> = (0..sessions)
        .map(|s| {
            let cwd = dir.path().join(format!("ws{s}"));
            std::fs::create_dir_all(&cwd).unwrap();
            std::fs::write(cwd.join("seed.txt"), format!("session {s}\n")).unwrap();
            let id = client.new_session(cwd.to_str().unwrap());
            Tracked {
                live_file: dir.path().join(format!("live{s}.jsonl")),
                id,
                cwd,
                earlier_ids: BTreeSet::new(),
                uncancelled: 0,
                cancel: Cancel::No,
                cancel_sent: false,
                answered: None,
                updates: Vec::new(),
                tool_status: HashMap::new(),
            }
        })
        .collect();
    let index: HashMap<String, usize> = tracked
        .iter()
        .enumerate()
        .map(|(i, t)| (t.id.clone(), i))
        .collect();
    client.received.clear();

    let mut origins: BTreeMap<(String, String), String> = BTreeMap::new();
    let mut rss_rounds: Vec<u64> = Vec::new();
    let mut heap_rounds: Vec<usize> = Vec::new();
    let mut thread_rounds: Vec<u64> = Vec::new();
    let mut stop_reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut model_requests = 0;
    let mut frames = 0usize;
    for round in 0..prompts {
        reset_mock(&mock);
        push(&mock, &responses(&mut rng, round, sessions * 4));
        let mut by_prompt: HashMap<String, usize> = HashMap::new();
        for (s, t) in tracked.iter_mut().enumerate() {
            t.cancel = match rng.below(100) {
                0..=9 => Cancel::AtOnce,
                10..=24 => Cancel::AfterFirstUpdate,
                _ => Cancel::No,
            };
            t.uncancelled += usize::from(t.cancel == Cancel::No);
            t.cancel_sent = false;
            t.answered = None;
            t.updates.clear();
            t.tool_status.clear();
            let id = client.start_request(
                "session/prompt",
                json!({"sessionId": t.id, "prompt": [{"type": "text", "text": format!("round {round} for session {s}")}]}),
            );
            by_prompt.insert(id.to_string(), s);
            if t.cancel == Cancel::AtOnce {
                client.notify("session/cancel", json!({"sessionId": t.id}));
                t.cancel_sent = true;
            }
        }

        let mut unanswered = sessions;
        while unanswered > 0 {
            let frame = client.next(Duration::from_secs(60)).unwrap_or_else(|| {
                let waiting: Vec<usize> = (0..sessions)
                    .filter(|s| tracked[*s].answered.is_none())
                    .collect();
                panic!("round {round}: no frame for 60 s; sessions {waiting:?} unanswered")
            });
            frames += 1;
            if frame["method"] == "session/update" {
                let s = *index
                    .get(frame["params"]["sessionId"].as_str().unwrap_or(""))
                    .unwrap_or_else(|| panic!("an update for an unknown session: {frame}"));
                let update = frame["params"]["update"].clone();
                let t = &mut tracked[s];
                assert!(
                    t.answered.is_none(),
                    "round {round} session {s}: an update after the prompt response: {update}"
                );
                for key in ["messageId", "toolCallId"] {
                    if let Some(id) = update[key].as_str() {
                        assert!(
                            !t.earlier_ids.contains(id),
                            "round {round} session {s}: an update of an earlier turn: {update}"
                        );
                    }
                }
                if let Some(call) = update["toolCallId"].as_str() {
                    let known = t.tool_status.get(call).cloned();
                    match update["sessionUpdate"].as_str() {
                        Some("tool_call") => assert!(
                            known.is_none(),
                            "session {s}: tool call {call} announced twice"
                        ),
                        _ => {
                            let known = known.as_deref().unwrap_or_else(|| {
                                panic!("session {s}: an update before its tool_call: {update}")
                            });
                            assert!(
                                status_rank(known) < 2,
                                "session {s}: an update after the final status {known}: {update}"
                            );
                        }
                    }
                    let status = update["status"]
                        .as_str()
                        .map(str::to_string)
                        .or(known)
                        .unwrap_or_default();
                    t.tool_status.insert(call.to_string(), status);
                }
                t.updates.push(update);
                if t.cancel == Cancel::AfterFirstUpdate && !t.cancel_sent {
                    let id = t.id.clone();
                    t.cancel_sent = true;
                    client.notify("session/cancel", json!({"sessionId": id}));
                }
            } else if frame.get("method").is_none() {
                let s = *by_prompt
                    .get(&frame["id"].to_string())
                    .unwrap_or_else(|| panic!("a response to no prompt: {frame}"));
                let t = &mut tracked[s];
                assert!(
                    t.answered.is_none(),
                    "round {round} session {s}: a prompt answered twice: {frame}"
                );
                let stop = frame["result"]["stopReason"]
                    .as_str()
                    .unwrap_or_else(|| panic!("round {round} session {s}: {frame}"))
                    .to_string();
                let expected: &[&str] = match t.cancel {
                    Cancel::No => &["end_turn"],
                    _ => &["end_turn", "cancelled"],
                };
                assert!(
                    expected.contains(&stop.as_str()),
                    "round {round} session {s} ({:?}): stopReason {stop}",
                    t.cancel
                );
                for (call, status) in &t.tool_status {
                    assert!(
                        status_rank(status) == 2,
                        "round {round} session {s}: tool call {call} answered with status {status:?}"
                    );
                }
                *stop_reasons.entry(stop.clone()).or_default() += 1;
                t.answered = Some(stop);
                unanswered -= 1;
            } else {
                panic!("the agent asked the client something in bypass mode: {frame}");
            }
        }

        // The round's bookkeeping: texts traced to their responses, the live log on disk.
        for (s, t) in tracked.iter_mut().enumerate() {
            for update in fold(&t.updates) {
                if update["sessionUpdate"] == "agent_message_chunk" {
                    let text = update["content"]["text"].as_str().unwrap_or("");
                    let origin = message_origin(text)
                        .unwrap_or_else(|e| panic!("round {round} session {s}: {e}"));
                    if let Some(other) = origins.insert(origin.clone(), t.id.clone()) {
                        panic!(
                            "response {origin:?} delivered twice (sessions {other} and {})",
                            t.id
                        );
                    }
                }
                for key in ["messageId", "toolCallId"] {
                    if let Some(id) = update[key].as_str() {
                        t.earlier_ids.insert(id.to_string());
                    }
                }
            }
            append_lines(&t.live_file, &t.updates);
            t.updates = Vec::new();
        }
        for request in mock.requests() {
            let messages = request.body["messages"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if let Err(e) = check_openai_context(&messages) {
                panic!("round {round}: an invalid model request: {e}");
            }
            model_requests += 1;
        }
        reset_mock(&mock);
        client.received = Vec::new();
        let (rss, _) = rss_kib(None);
        rss_rounds.push(rss);
        heap_rounds.push(LIVE_BYTES.load(Ordering::Relaxed) / 1024);
        thread_rounds.push(threads());
    }
    // Nothing is left to arrive: every turn's updates came before its answer.
    let late = client.drain(Duration::from_millis(500));
    assert!(
        late.is_empty(),
        "frames after every prompt was answered: {late:?}"
    );
    let (rss_end, hwm) = rss_kib(None);
    let warm = rss_rounds[0];
    eprintln!(
        "soak: {sessions} sessions × {prompts} prompts in {:.1?}: {frames} frames, \
         {model_requests} model requests, stop reasons {stop_reasons:?}",
        started.elapsed()
    );
    eprintln!(
        "soak: VmRSS after each round (KiB): {rss_rounds:?}; warm-up {warm} KiB, end {rss_end} KiB, \
         growth {} KiB (bound {RSS_GROWTH_BOUND_KIB}), peak {hwm} KiB",
        rss_end as i64 - warm as i64
    );
    eprintln!(
        "soak: live Rust heap after each round (KiB): {heap_rounds:?} (bound on growth \
         {HEAP_GROWTH_BOUND_KIB}); threads after each round: {thread_rounds:?}"
    );
    drop(client);

    // Every update delivered: a fresh engine on the same store replays each session exactly
    // as the client saw it live.
    let mut fresh = AcpClient::new(InProcess::start(&config));
    fresh.initialize();
    for (s, t) in tracked.iter().enumerate() {
        let loaded = fresh.request(
            "session/load",
            json!({"sessionId": t.id, "cwd": t.cwd, "mcpServers": []}),
        );
        assert!(loaded.get("result").is_some(), "session {s}: {loaded}");
        let replay = fresh.updates(&t.id);
        let live = read_lines(&t.live_file);
        if let Err(e) = check_replay(&live, &replay, true) {
            panic!("session {s}: {e}");
        }
        let prompts_logged = replay
            .iter()
            .filter(|u| u["sessionUpdate"] == "user_message_chunk")
            .count();
        // A prompt cancelled before its turn started is answered without being logged.
        assert!(
            (t.uncancelled..=prompts).contains(&prompts_logged),
            "session {s}: {prompts_logged} prompts logged, {} never cancelled, {prompts} sent",
            t.uncancelled
        );
        fresh.received.clear();
    }
    let heap_end = *heap_rounds.last().unwrap();
    assert!(
        heap_end.saturating_sub(heap_rounds[0]) < HEAP_GROWTH_BOUND_KIB,
        "the live heap grew {} KiB between the warm-up round and the end (bound \
         {HEAP_GROWTH_BOUND_KIB} KiB): per round {heap_rounds:?}",
        heap_end - heap_rounds[0]
    );
    assert!(
        rss_end.saturating_sub(warm) < RSS_GROWTH_BOUND_KIB,
        "VmRSS grew {} KiB between the warm-up round and the end (bound {RSS_GROWTH_BOUND_KIB} KiB): \
         per round {rss_rounds:?}",
        rss_end - warm
    );
}
