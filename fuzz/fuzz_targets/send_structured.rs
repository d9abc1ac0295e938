//! Valid JSON-RPC envelopes around the real ACP methods, with params built from each
//! method's shape and then mutated (fields dropped, replaced by arbitrary JSON, unknown keys
//! added), naming sessions that really exist — so the fuzzer gets past the envelope checks
//! into the handlers, the session actors and the (failing, offline) turns.
//!
//! Property: no panic, no hang, every request answered exactly once (ids are unique within
//! an input unless the input deliberately reuses one, which must then be answered once per
//! request too), notifications never answered.
#![no_main]

use std::collections::BTreeMap;
use std::sync::Mutex;

use arbitrary::{Arbitrary, Result, Unstructured};
use hearth_fuzz::{Harness, expect, offline_config, workspace};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value, json};

static HARNESS: Mutex<Option<Harness>> = Mutex::new(None);

/// Client → agent requests in ACP (stable and unstable), plus an extension and a stranger.
const REQUESTS: &[&str] = &[
    "initialize",
    "authenticate",
    "logout",
    "session/new",
    "session/load",
    "session/resume",
    "session/list",
    "session/prompt",
    "session/set_mode",
    "session/set_config_option",
    "session/close",
    "session/delete",
    "session/fork",
    "session/set_title",
    "session/status",
    "session/archive",
    "session/unarchive",
    "providers/list",
    "_hearth/unknown",
    "fs/read_text_file",
];
const NOTIFICATIONS: &[&str] = &["session/cancel", "$/cancel_request", "_hearth/note", "session/update"];

#[derive(Debug, Arbitrary)]
enum Op {
    Request { method: u8, params: Params, id: IdKind },
    Notification { method: u8, params: Params },
    /// A response to a request the agent never sent (or did: the ids are small integers).
    Response { id: u8, error: bool, value: Json },
    /// `session/new`, waited for, so later ops can name the new session.
    NewSession,
    Raw(String),
}

#[derive(Debug, Arbitrary)]
enum IdKind {
    Number,
    Text(String),
    Negative,
    Huge,
    /// The id of an earlier request in this input (a deliberate duplicate).
    Reuse(u8),
}

#[derive(Debug, Arbitrary)]
struct Params {
    session: SessionRef,
    text: String,
    choice: u8,
    flag: bool,
    extra: Json,
    mutations: Vec<Mutation>,
}

#[derive(Debug, Arbitrary)]
enum SessionRef {
    Known(u8),
    Unknown(String),
    Mangled(u8, u8),
}

#[derive(Debug, Arbitrary)]
enum Mutation {
    Drop(u8),
    Replace(u8, Json),
    AddUnknown(String, Json),
    ReplaceAll(Json),
}

/// An arbitrary JSON value of bounded depth.
#[derive(Debug)]
struct Json(Value);

impl<'a> Arbitrary<'a> for Json {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(Json(value(u, 3)?))
    }
}

fn value(u: &mut Unstructured<'_>, depth: u32) -> Result<Value> {
    let kind = if depth == 0 { u.int_in_range(0..=5)? } else { u.int_in_range(0..=7)? };
    Ok(match kind {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => json!(u.arbitrary::<i64>()?),
        3 => json!(u.arbitrary::<u64>()?),
        4 => serde_json::Number::from_f64(u.arbitrary()?).map_or(Value::Null, Value::Number),
        5 => Value::String(u.arbitrary()?),
        6 => {
            let n = u.int_in_range(0..=4)?;
            Value::Array((0..n).map(|_| value(u, depth - 1)).collect::<Result<_>>()?)
        }
        _ => {
            let n = u.int_in_range(0..=4)?;
            let mut map = Map::new();
            for _ in 0..n {
                let key = u.choose(&KEYS).map(|k| k.to_string()).or_else(|_| u.arbitrary())?;
                map.insert(key, value(u, depth - 1)?);
            }
            Value::Object(map)
        }
    })
}

/// Field names the handlers read, so arbitrary objects often have the right keys.
const KEYS: [&str; 16] = [
    "sessionId", "cwd", "prompt", "type", "text", "uri", "name", "mimeType", "data", "modeId",
    "configId", "value", "cursor", "methodId", "protocolVersion", "mcpServers",
];

#[derive(Debug, Arbitrary)]
struct Input {
    ops: Vec<Op>,
}

struct Run<'h> {
    harness: &'h Harness,
    sessions: Vec<String>,
    request_ids: Vec<Value>,
    frames: Vec<String>,
    expected: BTreeMap<String, u32>,
}

impl Run<'_> {
    fn session(&self, which: &SessionRef) -> Value {
        let known = |i: u8| self.sessions[i as usize % self.sessions.len()].clone();
        match which {
            SessionRef::Known(i) => json!(known(*i)),
            SessionRef::Unknown(s) => json!(s),
            SessionRef::Mangled(i, at) => {
                let mut id = known(*i);
                let at = *at as usize % (id.len() + 1);
                if id.is_char_boundary(at) {
                    id.truncate(at);
                }
                json!(id)
            }
        }
    }

    fn id(&mut self, kind: &IdKind) -> Value {
        let n = self.harness.fresh_number();
        let id = match kind {
            IdKind::Number => json!(n),
            IdKind::Text(s) => json!(format!("{s}#{n}")),
            IdKind::Negative => json!(-(n as i64)),
            IdKind::Huge => json!(u64::MAX - n),
            IdKind::Reuse(i) if !self.request_ids.is_empty() => {
                self.request_ids[*i as usize % self.request_ids.len()].clone()
            }
            IdKind::Reuse(_) => json!(n),
        };
        self.request_ids.push(id.clone());
        id
    }

    fn params(&self, method: &str, p: &Params) -> Value {
        let session = self.session(&p.session);
        let cwd = match p.choice % 6 {
            0 | 1 | 2 => json!(workspace()),
            3 => json!("relative/dir"),
            4 => json!("/nonexistent/hearth-fuzz"),
            _ => json!(p.text),
        };
        let pick = |options: &[Value]| options[p.choice as usize % options.len()].clone();
        let mut params = match method {
            "initialize" => json!({
                "protocolVersion": pick(&[json!(1), json!(0), json!(2), json!(u64::MAX), json!("1")]),
                "clientCapabilities": { "fs": { "readTextFile": p.flag, "writeTextFile": p.flag },
                                        "terminal": p.flag },
                "clientInfo": { "name": p.text, "version": "0" },
            }),
            "authenticate" => json!({ "methodId": pick(&[json!("openai"), json!("anthropic"), json!(p.text)]) }),
            "session/new" => json!({ "cwd": cwd, "mcpServers": [], "additionalDirectories": [p.text] }),
            "session/load" | "session/resume" | "session/fork" => {
                json!({ "sessionId": session, "cwd": cwd, "mcpServers": [] })
            }
            "session/list" => json!({ "cwd": cwd, "cursor": if p.flag { json!(p.text) } else { Value::Null } }),
            "session/prompt" => json!({ "sessionId": session, "prompt": [self.block(p), self.block_text(p)] }),
            "session/set_mode" => json!({
                "sessionId": session,
                "modeId": pick(&[json!("ask"), json!("plan"), json!("accept_edits"), json!("bypass"), json!(p.text)]),
            }),
            "session/set_config_option" => json!({
                "sessionId": session,
                "configId": pick(&[json!("model"), json!("mode"), json!("effort"), json!("thought_level"), json!(p.text)]),
                "value": pick(&[json!("gpt-4o-mini"), json!("plan"), json!("high"), json!(p.text), json!(p.flag)]),
            }),
            "session/set_title" => json!({ "sessionId": session, "title": p.text }),
            "$/cancel_request" => json!({
                "requestId": if self.request_ids.is_empty() { json!(p.text) }
                             else { self.request_ids[p.choice as usize % self.request_ids.len()].clone() }
            }),
            _ => json!({ "sessionId": session }),
        };
        if let (Some(map), Json(extra)) = (params.as_object_mut(), &p.extra)
            && !extra.is_null()
        {
            map.insert("_meta".into(), extra.clone());
        }
        for mutation in &p.mutations {
            mutate(&mut params, mutation);
        }
        params
    }

    fn block(&self, p: &Params) -> Value {
        match p.choice % 5 {
            0 => json!({ "type": "text", "text": p.text }),
            1 => json!({ "type": "image", "data": p.text, "mimeType": "image/png" }),
            2 => json!({ "type": "resource_link", "uri": format!("file://{}/{}", workspace().display(), p.text), "name": p.text }),
            3 => json!({ "type": "resource", "resource": { "uri": "file:///x.txt", "text": p.text, "mimeType": "text/plain" } }),
            _ => json!({ "type": "audio", "data": p.text, "mimeType": "audio/wav" }),
        }
    }

    fn block_text(&self, p: &Params) -> Value {
        json!({ "type": "text", "text": format!("{} {}", p.text, p.choice) })
    }

    fn send(&mut self, frame: String) {
        expect(&mut self.expected, frame.as_bytes());
        self.harness.send_text(&frame);
        self.frames.push(frame);
    }
}

fn mutate(params: &mut Value, mutation: &Mutation) {
    let Some(map) = params.as_object_mut() else {
        return;
    };
    let key_at = |map: &Map<String, Value>, i: u8| {
        (!map.is_empty()).then(|| map.keys().nth(i as usize % map.len()).cloned()).flatten()
    };
    match mutation {
        Mutation::Drop(i) => {
            if let Some(key) = key_at(map, *i) {
                map.remove(&key);
            }
        }
        Mutation::Replace(i, Json(v)) => {
            if let Some(key) = key_at(map, *i) {
                map.insert(key, v.clone());
            }
        }
        Mutation::AddUnknown(key, Json(v)) => {
            map.insert(key.clone(), v.clone());
        }
        Mutation::ReplaceAll(Json(v)) => *params = v.clone(),
    }
}

fuzz_target!(|input: Input| {
    let mut guard = HARNESS.lock().unwrap_or_else(|p| p.into_inner());
    let harness = guard.get_or_insert_with(|| Harness::new(&offline_config()));
    harness.begin_round();
    let harness: &Harness = harness;
    let mut run = Run {
        harness,
        sessions: vec![harness.session.clone()],
        request_ids: Vec::new(),
        frames: Vec::new(),
        expected: BTreeMap::new(),
    };
    for op in input.ops.iter().take(64) {
        match op {
            Op::Request { method, params, id } => {
                let method = REQUESTS[*method as usize % REQUESTS.len()];
                let id = run.id(id);
                let params = run.params(method, params);
                let frame = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
                run.send(frame.to_string());
            }
            Op::Notification { method, params } => {
                let method = NOTIFICATIONS[*method as usize % NOTIFICATIONS.len()];
                let params = run.params(method, params);
                run.send(json!({ "jsonrpc": "2.0", "method": method, "params": params }).to_string());
            }
            Op::Response { id, error, value: Json(v) } => {
                let frame = if *error {
                    json!({ "jsonrpc": "2.0", "id": *id, "error": v })
                } else {
                    json!({ "jsonrpc": "2.0", "id": *id, "result": v })
                };
                run.send(frame.to_string());
            }
            Op::NewSession => {
                let (id, session) = harness.new_session_with_id();
                *run.expected.entry(hearth_fuzz::id_key(&id)).or_default() += 1;
                run.sessions.extend(session);
            }
            Op::Raw(text) => run.send(text.clone()),
        }
    }
    let Run { frames, expected, .. } = run;
    harness.end_round(expected, &frames);
});
