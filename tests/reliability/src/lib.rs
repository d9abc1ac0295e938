//! Shared helpers of Hearth's reliability suite (the tests live in `tests/*.rs`, one file per
//! item of the suite; see README.md).
//!
//! - [`long`] / [`scale`]: the bounded (CI) mode and the long mode (`HEARTH_RELIABILITY=long`);
//! - [`Rng`]: a small seeded generator whose seed is printed, so a failing run can be repeated
//!   with `HEARTH_RELIABILITY_SEED`;
//! - [`build_hearth`]: `target/debug/hearth`, built from the current sources;
//! - [`rss_kib`]: resident memory of a process from `/proc/<pid>/status`;
//! - [`mock`], [`config`], [`reset_mock`]: the scripted mock LLM and an engine config for it;
//! - [`fold`], [`check_replay`], [`tool_statuses`]: what the client saw live against what
//!   `session/load` replays;
//! - [`check_openai_context`], [`check_anthropic_context`]: a model request's conversation is
//!   one a provider accepts (every tool call answered by a tool result).

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hearth_mock_llm::{MockLlm, Script};
use serde_json::{Value, json};

/// Whether the long mode was asked for (`HEARTH_RELIABILITY=long`).
pub fn long() -> bool {
    std::env::var("HEARTH_RELIABILITY").is_ok_and(|v| v.trim().eq_ignore_ascii_case("long"))
}

/// `bounded` in the default (CI) mode, `long` in the long mode.
pub fn scale(bounded: usize, long: usize) -> usize {
    if self::long() { long } else { bounded }
}

/// A xorshift64* generator: enough randomness to vary kill points and scripts, and
/// reproducible from the printed seed.
pub struct Rng(u64);

impl Rng {
    /// Seeded from `HEARTH_RELIABILITY_SEED` when set, else from the clock; the seed is
    /// printed with `label` so a failure can be replayed.
    pub fn from_env(label: &str) -> Rng {
        let seed = std::env::var("HEARTH_RELIABILITY_SEED")
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .unwrap_or_else(|| {
                let nanos = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(1, |d| d.as_nanos() as u64);
                nanos ^ (u64::from(std::process::id()) << 32)
            });
        eprintln!("{label}: random seed {seed} (repeat with HEARTH_RELIABILITY_SEED={seed})");
        Rng::new(seed)
    }

    pub fn new(seed: u64) -> Rng {
        // Never zero: xorshift would stay there.
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// A number in `lo..=hi`.
    pub fn between(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// Resident memory of process `pid` (`None`: this process), in KiB: `(VmRSS, VmHWM)`, the
/// current and the peak resident set.
pub fn rss_kib(pid: Option<u32>) -> (u64, u64) {
    let path = match pid {
        Some(pid) => format!("/proc/{pid}/status"),
        None => "/proc/self/status".to_string(),
    };
    let status = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| {
                rest.trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .ok()
            })
            .unwrap_or_else(|| panic!("no {name} in {path}"))
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Builds `target/debug/hearth` (the binary the testkit's `Stdio` starts) once per test
/// process, so a crash or hostile-workspace run always drives the current sources — also
/// when the suite itself runs with `--release`. A no-op build takes a fraction of a second.
pub fn build_hearth() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
        let out = hearth_testkit::nested_cargo::command(cargo)
            .args(["build", "--quiet", "-p", "hearth-cli", "--bin", "hearth"])
            .current_dir(hearth_testkit::repo_root())
            .output()
            .expect("cargo runs");
        assert!(
            out.status.success(),
            "cargo build -p hearth-cli failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    });
}

/// The number of threads of this process (`Threads:` in `/proc/self/status`).
pub fn threads() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Threads:"))
                .and_then(|n| n.trim().parse().ok())
        })
        .unwrap_or(0)
}

/// A mock LLM serving `script` (`{"responses": [...]}`).
pub fn mock(script: Value) -> MockLlm {
    let script: Script = serde_json::from_value(script).expect("a valid mock script");
    MockLlm::start(script).expect("the mock LLM starts")
}

/// Appends `responses` to the mock's queue.
pub fn push(mock: &MockLlm, responses: &[Value]) {
    for response in responses {
        mock.push(serde_json::from_value(response.clone()).expect("a valid mock response"));
    }
}

/// Empties the mock's queue and its recorded requests (`POST /_mock/reset`), so a long run
/// does not keep every request it ever made in memory.
pub fn reset_mock(mock: &MockLlm) {
    let base = mock.base_url();
    let authority = base
        .trim_start_matches("http://")
        .split('/')
        .next()
        .expect("host:port");
    let mut stream = TcpStream::connect(authority).expect("the mock listens");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "POST /_mock/reset HTTP/1.1\r\nHost: {authority}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    assert!(
        answer.starts_with("HTTP/1.1 200"),
        "the mock refused the reset: {answer}"
    );
    assert_eq!(mock.remaining(), 0);
}

/// An engine config for `mock`, with a file store in `data_dir`, merged with `extra`.
pub fn config(mock: &MockLlm, data_dir: &Path, extra: Value) -> String {
    let mut config = json!({
        "dataDir": data_dir,
        "model": "mock-model",
        "providers": {"openai": {"baseUrl": mock.base_url(), "apiKey": "test-key-not-secret", "maxRetries": 0}},
        "streamIdleTimeoutSecs": 20,
    });
    merge(&mut config, extra);
    config.to_string()
}

/// Deep-merges `extra` into `target` (objects key by key, anything else replaced).
pub fn merge(target: &mut Value, extra: Value) {
    match (target, extra) {
        (Value::Object(target), Value::Object(extra)) => {
            for (key, value) in extra {
                merge(target.entry(key).or_insert(Value::Null), value);
            }
        }
        (target, extra) => *target = extra,
    }
}

/// A mock response streaming `texts` as separate deltas.
pub fn text_response(texts: &[&str]) -> Value {
    json!({"events": texts.iter().map(|t| json!({"text": t})).collect::<Vec<_>>()})
}

/// Whether an update is logged (and so replayed): everything except the live terminal
/// output deltas, which the final tool call update summarises, and the command list, which is
/// state (sent after each session response), not history.
pub fn is_logged(update: &Value) -> bool {
    update.pointer("/_meta/terminal_output").is_none()
        && update["sessionUpdate"] != "available_commands_update"
}

const CHUNKS: [&str; 2] = ["agent_message_chunk", "agent_thought_chunk"];

/// The logged updates with adjacent text chunks of one message folded into one, as the store
/// folds them for replay. The user's own prompt is left out (the client sent it; it is
/// replayed but never streamed live).
pub fn fold(updates: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for update in updates
        .iter()
        .filter(|u| is_logged(u) && u["sessionUpdate"] != "user_message_chunk")
    {
        if let Some(last) = out.last_mut()
            && CHUNKS.contains(&update["sessionUpdate"].as_str().unwrap_or(""))
            && last["sessionUpdate"] == update["sessionUpdate"]
            && last.get("messageId").is_some()
            && last["messageId"] == update["messageId"]
            && last["content"]["type"] == "text"
            && update["content"]["type"] == "text"
        {
            let more = update["content"]["text"].as_str().unwrap_or("").to_string();
            if let Some(Value::String(text)) = last.pointer_mut("/content/text") {
                text.push_str(&more);
                continue;
            }
        }
        out.push(update.clone());
    }
    out
}

/// Checks that everything the client saw live is in the replay, in the same order, nothing
/// duplicated: the folded live updates must be a prefix of the folded replay, except that
/// the last live text chunk may have grown (the rest of it was committed but its frame had
/// not reached the client). With `exact`, the replay may hold nothing more.
pub fn check_replay(live: &[Value], replay: &[Value], exact: bool) -> Result<(), String> {
    let live = fold(live);
    let replay = fold(replay);
    if live.len() > replay.len() {
        return Err(format!(
            "the replay has {} updates, the client saw {}\nlive:   {}\nreplay: {}",
            replay.len(),
            live.len(),
            brief(&live),
            brief(&replay)
        ));
    }
    for (i, (seen, replayed)) in live.iter().zip(&replay).enumerate() {
        if seen == replayed {
            continue;
        }
        let last = i + 1 == live.len();
        let grown = last
            && CHUNKS.contains(&seen["sessionUpdate"].as_str().unwrap_or(""))
            && seen["sessionUpdate"] == replayed["sessionUpdate"]
            && seen["messageId"] == replayed["messageId"]
            && replayed["content"]["text"]
                .as_str()
                .zip(seen["content"]["text"].as_str())
                .is_some_and(|(r, s)| r.starts_with(s));
        if !grown {
            return Err(format!(
                "update {i} differs\nlive:   {seen}\nreplay: {replayed}\nlive:   {}\nreplay: {}",
                brief(&live),
                brief(&replay)
            ));
        }
    }
    if exact && replay != live {
        return Err(format!(
            "the replay holds more than the client saw\nlive:   {}\nreplay: {}",
            brief(&live),
            brief(&replay)
        ));
    }
    Ok(())
}

/// One short line per update, for failure messages.
pub fn brief(updates: &[Value]) -> String {
    let items: Vec<String> = updates
        .iter()
        .map(|u| {
            let kind = u["sessionUpdate"].as_str().unwrap_or("?");
            match kind {
                "agent_message_chunk" | "agent_thought_chunk" => {
                    format!("{kind}({:?})", u["content"]["text"].as_str().unwrap_or(""))
                }
                "tool_call" | "tool_call_update" => format!(
                    "{kind}({} {})",
                    u["toolCallId"].as_str().unwrap_or("?"),
                    u["status"].as_str().unwrap_or("-")
                ),
                other => other.to_string(),
            }
        })
        .collect();
    format!("[{}]", items.join(", "))
}

/// The concatenated text per `(kind, messageId)` of the chunks in `updates`.
pub fn texts_by_message(updates: &[Value]) -> BTreeMap<(String, String), String> {
    let mut out: BTreeMap<(String, String), String> = BTreeMap::new();
    for u in updates {
        let kind = u["sessionUpdate"].as_str().unwrap_or("");
        if CHUNKS.contains(&kind) {
            let id = u["messageId"].as_str().unwrap_or("").to_string();
            out.entry((kind.to_string(), id))
                .or_default()
                .push_str(u["content"]["text"].as_str().unwrap_or(""));
        }
    }
    out
}

/// Each tool call's last status, in the order the calls first appear, and how many times
/// each was announced (`tool_call`).
pub fn tool_statuses(updates: &[Value]) -> (Vec<(String, String)>, BTreeMap<String, usize>) {
    let mut order: Vec<(String, String)> = Vec::new();
    let mut announced: BTreeMap<String, usize> = BTreeMap::new();
    for u in updates.iter().filter(|u| is_logged(u)) {
        let Some(id) = u["toolCallId"].as_str() else {
            continue;
        };
        if u["sessionUpdate"] == "tool_call" {
            *announced.entry(id.to_string()).or_default() += 1;
        }
        let status = u["status"].as_str();
        match order.iter_mut().find(|(known, _)| known == id) {
            Some(entry) => {
                if let Some(status) = status {
                    entry.1 = status.to_string();
                }
            }
            None => order.push((id.to_string(), status.unwrap_or("").to_string())),
        }
    }
    (order, announced)
}

/// The progress rank of a tool call status: pending < in_progress < completed | failed.
pub fn status_rank(status: &str) -> u8 {
    match status {
        "pending" => 0,
        "in_progress" => 1,
        "completed" | "failed" => 2,
        _ => 0,
    }
}

/// An OpenAI chat-completions conversation is valid for a provider: every assistant tool
/// call is answered by a `tool` message right after it, and every `tool` message answers a
/// call of the assistant message before it.
pub fn check_openai_context(messages: &[Value]) -> Result<(), String> {
    let mut open: Vec<String> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let role = m["role"].as_str().unwrap_or("");
        if role == "tool" {
            let id = m["tool_call_id"].as_str().unwrap_or("");
            match open.iter().position(|o| o == id) {
                Some(at) => {
                    open.remove(at);
                }
                None => return Err(format!("message {i}: a tool result for no open call: {m}")),
            }
            continue;
        }
        if !open.is_empty() {
            return Err(format!(
                "message {i} ({role}) follows tool calls {open:?} that have no result"
            ));
        }
        if role == "assistant" {
            for call in m["tool_calls"].as_array().into_iter().flatten() {
                let id = call["id"].as_str().unwrap_or("").to_string();
                if id.is_empty() {
                    return Err(format!("message {i}: a tool call without an id: {m}"));
                }
                if serde_json::from_str::<Value>(
                    call["function"]["arguments"].as_str().unwrap_or(""),
                )
                .is_err()
                {
                    return Err(format!(
                        "message {i}: tool call {id} has arguments that are not JSON: {m}"
                    ));
                }
                open.push(id);
            }
        }
    }
    if open.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the conversation ends with unanswered calls {open:?}"
        ))
    }
}

/// An Anthropic Messages conversation is valid: every `tool_use` block is answered by a
/// `tool_result` in the very next (user) message, and roles alternate.
pub fn check_anthropic_context(messages: &[Value]) -> Result<(), String> {
    let mut open: Vec<String> = Vec::new();
    let mut last_role = "";
    for (i, m) in messages.iter().enumerate() {
        let role = m["role"].as_str().unwrap_or("");
        if role == last_role {
            return Err(format!("message {i}: two {role} messages in a row"));
        }
        last_role = role;
        let blocks: Vec<Value> = match &m["content"] {
            Value::Array(blocks) => blocks.clone(),
            Value::String(text) => vec![json!({"type": "text", "text": text})],
            _ => Vec::new(),
        };
        let results: Vec<&str> = blocks
            .iter()
            .filter(|b| b["type"] == "tool_result")
            .filter_map(|b| b["tool_use_id"].as_str())
            .collect();
        if role == "user" {
            for id in &open {
                if !results.contains(&id.as_str()) {
                    return Err(format!("message {i}: no tool_result for {id}"));
                }
            }
            for id in &results {
                if !open.iter().any(|o| o == id) {
                    return Err(format!("message {i}: a tool_result for no open call {id}"));
                }
            }
            open.clear();
        } else if !open.is_empty() {
            return Err(format!("message {i}: calls {open:?} were never answered"));
        }
        if role == "assistant" {
            open = blocks
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .filter_map(|b| b["id"].as_str().map(str::to_string))
                .collect();
        }
    }
    if open.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the conversation ends with unanswered calls {open:?}"
        ))
    }
}
