//! Golden transcripts: `tests/transcripts/*.jsonl`, one JSON object per line:
//!
//! - `{"script": {...}}` — the mock LLM's script (first line, optional);
//! - `{"send": FRAME}` — a frame the client sends; `"$name"` strings are replaced by values
//!   captured earlier;
//! - `{"sendRaw": "text"}` — a line sent verbatim (for malformed input);
//! - `{"expect": PATTERN}` — the next frame the agent emits must match PATTERN: the same JSON,
//!   where a string `"$name"` captures the value the first time and must equal it after,
//!   `"<any>"` matches anything and `"<time>"` an RFC 3339 timestamp;
//! - `{"comment": "..."}` — ignored.
//!
//! After the last line, nothing more may arrive. The same files run in-process and through
//! `hearth acp`, so both hosts are held to the same frames.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::{AcpClient, PATIENCE, Transport};

pub enum Step {
    Send(Value),
    SendRaw(String),
    Expect(Value),
}

pub struct Transcript {
    pub name: String,
    pub script: Value,
    pub steps: Vec<Step>,
}

pub fn all() -> Vec<Transcript> {
    let dir = crate::repo_root().join("tests/transcripts");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no transcripts in {}", dir.display());
    paths.iter().map(|p| load(p)).collect()
}

fn load(path: &Path) -> Transcript {
    let text = std::fs::read_to_string(path).unwrap();
    let mut transcript = Transcript {
        name: path.file_stem().unwrap().to_string_lossy().into_owned(),
        script: json!({"responses": []}),
        steps: Vec::new(),
    };
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let entry: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), n + 1));
        let (key, value) = entry
            .as_object()
            .and_then(|o| o.iter().next())
            .unwrap_or_else(|| panic!("{}:{}: expected one key", path.display(), n + 1));
        match key.as_str() {
            "script" => transcript.script = value.clone(),
            "send" => transcript.steps.push(Step::Send(portable_cwd(value))),
            "sendRaw" => transcript
                .steps
                .push(Step::SendRaw(value.as_str().unwrap().to_string())),
            "expect" => transcript.steps.push(Step::Expect(portable_cwd(value))),
            "comment" => {}
            other => panic!("{}:{}: unknown key `{other}`", path.display(), n + 1),
        }
    }
    transcript
}

/// `value` with every `"cwd"` string in this OS's form ([`crate::absolute`]): the files write
/// Unix paths, which are not absolute on Windows.
fn portable_cwd(value: &Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(portable_cwd).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| match v.as_str() {
                    Some(path) if k == "cwd" && path.starts_with('/') => {
                        (k.clone(), json!(crate::absolute(path)))
                    }
                    _ => (k.clone(), portable_cwd(v)),
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Plays every transcript on a fresh agent made by `start(config_json, data_dir)`, each
/// with its own mock LLM and data dir.
pub fn run_all<T: Transport>(start: impl Fn(&str, &Path) -> T) {
    for transcript in all() {
        let script = serde_json::from_value(transcript.script.clone())
            .unwrap_or_else(|e| panic!("{}: bad script: {e}", transcript.name));
        let mock = hearth_mock_llm::MockLlm::start(script).unwrap();
        let dir = std::env::temp_dir().join(format!(
            "hearth-transcript-{}-{}",
            transcript.name,
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let config = json!({
            "dataDir": dir,
            // Never the developer's own config dir: its AGENTS.md and command files would
            // change the frames.
            "configDir": dir.join("user-config"),
            "model": "mock-model",
            "providers": {"openai": {"baseUrl": mock.base_url(), "apiKey": "transcript-key"}},
        });
        let mut client = AcpClient::new(start(&config.to_string(), &dir));
        play(&transcript, &mut client);
        drop(client);
        let _ = std::fs::remove_dir_all(&dir);
        eprintln!("transcript {}: ok", transcript.name);
    }
}

/// Plays a transcript against a client; panics with the first mismatch.
pub fn play<T: Transport>(transcript: &Transcript, client: &mut AcpClient<T>) {
    let mut captured = HashMap::new();
    for (i, step) in transcript.steps.iter().enumerate() {
        match step {
            Step::Send(frame) => client.send_frame(&substitute(frame, &captured)),
            Step::SendRaw(text) => client.send_raw(text),
            Step::Expect(pattern) => {
                let frame = client.next(PATIENCE).unwrap_or_else(|| {
                    panic!(
                        "{} step {}: nothing arrived, expected {pattern}",
                        transcript.name,
                        i + 1
                    )
                });
                if let Err(why) = matches(pattern, &frame, &mut captured) {
                    panic!(
                        "{} step {}: {why}\nexpected {pattern}\n     got {frame}",
                        transcript.name,
                        i + 1
                    );
                }
            }
        }
    }
    let extra = client.drain(Duration::from_millis(300));
    assert!(
        extra.is_empty(),
        "{}: unexpected frames after the end: {extra:?}",
        transcript.name
    );
}

fn substitute(value: &Value, captured: &HashMap<String, Value>) -> Value {
    match value {
        Value::String(s) if s.starts_with('$') => captured
            .get(s)
            .cloned()
            .unwrap_or_else(|| panic!("`{s}` used before it was captured")),
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| substitute(v, captured)).collect())
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), substitute(v, captured)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn matches(
    pattern: &Value,
    actual: &Value,
    captured: &mut HashMap<String, Value>,
) -> Result<(), String> {
    match (pattern, actual) {
        (Value::String(p), _) if p == "<any>" => Ok(()),
        (Value::String(p), Value::String(a)) if p == "<time>" => {
            if looks_like_rfc3339(a) {
                Ok(())
            } else {
                Err(format!("`{a}` is not an RFC 3339 time"))
            }
        }
        (Value::String(p), _) if p.starts_with('$') => match captured.get(p) {
            Some(seen) if seen == actual => Ok(()),
            Some(seen) => Err(format!("{p} was {seen}, now {actual}")),
            None => {
                captured.insert(p.clone(), actual.clone());
                Ok(())
            }
        },
        (Value::Object(p), Value::Object(a)) => {
            let (mut pk, mut ak): (Vec<_>, Vec<_>) = (p.keys().collect(), a.keys().collect());
            pk.sort();
            ak.sort();
            if pk != ak {
                return Err(format!("keys differ: expected {pk:?}, got {ak:?}"));
            }
            p.iter()
                .try_for_each(|(k, v)| matches(v, &a[k], captured).map_err(|e| format!("{k}: {e}")))
        }
        (Value::Array(p), Value::Array(a)) if p.len() == a.len() => {
            p.iter().zip(a).enumerate().try_for_each(|(i, (p, a))| {
                matches(p, a, captured).map_err(|e| format!("[{i}]: {e}"))
            })
        }
        _ if pattern == actual => Ok(()),
        _ => Err(format!("expected {pattern}, got {actual}")),
    }
}

fn looks_like_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 20 && b[4] == b'-' && b[7] == b'-' && b[10] == b'T' && s.ends_with('Z')
}
