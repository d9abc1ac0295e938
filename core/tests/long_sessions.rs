//! Long sessions: requests that only grow (each one the previous with messages appended, so
//! provider caches hit), and compaction — automatic at the threshold, `/compact`, on a
//! provider's context-length error — with cancel, failure, restart, and both notification
//! styles, on both providers.

mod common;

use std::path::PathBuf;
use std::time::Duration;

use common::{Setup, call, text};
use hearth_testkit::{AcpClient, InProcess};
use serde_json::{Value, json};

#[derive(Clone, Copy, PartialEq)]
enum Api {
    OpenAi,
    Anthropic,
}

impl Api {
    fn model(self) -> &'static str {
        match self {
            Api::OpenAi => "mock-model",
            Api::Anthropic => "claude-test",
        }
    }
}

/// An engine on `setup` with `api`'s model of `window` tokens; `native` clients advertise
/// `session.compaction`.
fn engine(setup: &Setup, api: Api, window: u64, native: bool) -> AcpClient<InProcess> {
    let mut config: Value = serde_json::from_str(&setup.config()).unwrap();
    config["model"] = json!(api.model());
    // Both models, so that a session may switch (the default is `api`'s).
    config["models"] = json!(
        [Api::OpenAi, Api::Anthropic]
            .map(|api| { json!({"id": api.model(), "contextWindow": window}) })
    );
    config["providers"]["anthropic"] =
        json!({"baseUrl": setup.mock.base_url(), "apiKey": "anthropic-test-key", "maxRetries": 0});
    let mut client = AcpClient::new(InProcess::start(&config.to_string()));
    let session_caps = if native {
        json!({"compaction": {}})
    } else {
        json!({})
    };
    client.call(
        "initialize",
        json!({"protocolVersion": 1, "clientInfo": {"name": "long-sessions", "version": "0"},
               "clientCapabilities": {"session": session_caps}}),
    );
    client
}

fn workspace(setup: &Setup) -> PathBuf {
    let dir = setup.dir.path().join("project");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn new_session(client: &mut AcpClient<InProcess>, cwd: &std::path::Path) -> String {
    client.new_session(cwd.to_str().unwrap())
}

fn stop_reason(response: &Value) -> &str {
    response["result"]["stopReason"]
        .as_str()
        .unwrap_or_else(|| panic!("{response}"))
}

/// A response with a usage report: the provider's count of the prompt calibrates the
/// engine's estimate.
fn with_usage(mut response: Value, input: u64) -> Value {
    response["events"]
        .as_array_mut()
        .unwrap()
        .push(json!({"usage": {"input": input, "output": 10}}));
    response
}

/// The body as the previous request would prefix it: without the closing `]}` of its
/// `messages` (the last member).
fn open_body(raw: &str) -> &str {
    raw.strip_suffix("]}")
        .unwrap_or_else(|| panic!("the body ends with its messages: {raw}"))
}

/// A body without its cache breakpoints (which move to the newest turn by design).
fn without_breakpoints(raw: &str) -> String {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.remove("cache_control");
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut body: Value = serde_json::from_str(raw).unwrap();
    strip(&mut body);
    body.to_string()
}

/// The text of every message of a recorded request, in order (system prompt included on
/// OpenAI), with its role.
fn transcript(body: &Value) -> Vec<(String, String)> {
    let text_of = |content: &Value| match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .map(|b| {
                b["text"]
                    .as_str()
                    .or(b["content"].as_str())
                    .unwrap_or_default()
                    .to_string()
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_string(),
                text_of(&m["content"]),
            )
        })
        .collect()
}

// ---- append-only requests --------------------------------------------------------------

/// Thirty model steps of tool calls, then a second prompt: every request is the previous
/// one with messages appended, byte for byte (OpenAI: the whole body; Anthropic: all but
/// the cache breakpoints, which roll forward and never number more than four).
#[test]
fn thirty_tool_steps_only_ever_append_on_both_providers() {
    for api in [Api::OpenAi, Api::Anthropic] {
        let mut responses: Vec<Value> = (0..30)
            .map(|i| call(&format!("call_{i}"), "read", json!({"path": "notes.txt"})))
            .collect();
        responses.push(text(&["All read."]));
        responses.push(text(&["Again."]));
        let setup = Setup::new(json!({ "responses": responses }));
        let cwd = workspace(&setup);
        std::fs::write(cwd.join("notes.txt"), "line one\nline two\n").unwrap();
        let mut client = engine(&setup, api, 200_000, false);
        let session = new_session(&mut client, &cwd);
        assert_eq!(
            stop_reason(&client.prompt(&session, "read it 30 times")),
            "end_turn"
        );
        assert_eq!(
            stop_reason(&client.prompt(&session, "once more")),
            "end_turn"
        );

        let requests = setup.mock.requests();
        assert_eq!(requests.len(), 32);
        for pair in requests.windows(2) {
            let (previous, next) = match api {
                Api::OpenAi => (pair[0].raw.clone(), pair[1].raw.clone()),
                Api::Anthropic => (
                    without_breakpoints(&pair[0].raw),
                    without_breakpoints(&pair[1].raw),
                ),
            };
            let prefix = open_body(&previous);
            assert!(
                next.starts_with(prefix) && next[prefix.len()..].starts_with(','),
                "request is not the previous one with messages appended:\n{previous}\n---\n{next}"
            );
        }
        if api == Api::Anthropic {
            for (n, request) in requests.iter().enumerate() {
                let marks = request.raw.matches("cache_control").count();
                let expected = if n == 0 { 2 } else { 3 };
                assert_eq!(marks, expected, "request {n}: {}", request.raw);
            }
        }
    }
}

/// A live session lets go of the messages its requests encoded and reads them back from
/// its log when another provider needs them: its requests are those of a fork of it (whose
/// context is rebuilt from the copied log, as a restart's is), on the same provider and
/// after a switch to the other, byte for byte.
#[test]
fn requests_after_a_switch_of_provider_are_what_a_rebuilt_context_sends() {
    let mut responses: Vec<Value> = (0..5)
        .map(|i| call(&format!("call_{i}"), "read", json!({"path": "notes.txt"})))
        .collect();
    responses.extend([text(&["Read."]), text(&["Again."]), text(&["Again."])]);
    responses.extend([text(&["Now."]), text(&["Now."])]);
    let setup = Setup::new(json!({ "responses": responses }));
    let cwd = workspace(&setup);
    std::fs::write(cwd.join("notes.txt"), "line one\nline two\n").unwrap();
    let mut client = engine(&setup, Api::OpenAi, 200_000, false);
    let parent = new_session(&mut client, &cwd);
    assert_eq!(stop_reason(&client.prompt(&parent, "read it")), "end_turn");
    let fork = client.call(
        "session/fork",
        json!({"sessionId": parent, "cwd": cwd, "mcpServers": []}),
    )["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let last_two = |client: &mut AcpClient<InProcess>, prompt: &str| {
        for session in [&parent, &fork] {
            assert_eq!(stop_reason(&client.prompt(session, prompt)), "end_turn");
        }
        let requests = setup.mock.requests();
        let [.., live, rebuilt] = &requests[..] else {
            panic!("two requests")
        };
        (live.raw.clone(), rebuilt.raw.clone())
    };
    let (live, rebuilt) = last_two(&mut client, "again");
    assert_eq!(live, rebuilt, "the same provider");
    assert!(live.contains("call_0"), "{live}");
    for session in [&parent, &fork] {
        client.call(
            "session/set_config_option",
            json!({"sessionId": session, "configId": "model", "value": Api::Anthropic.model()}),
        );
    }
    let (live, rebuilt) = last_two(&mut client, "and now?");
    assert_eq!(live, rebuilt, "after a switch to Anthropic");
    let body: Value = serde_json::from_str(&live).unwrap();
    assert!(
        body["messages"][0].to_string().contains("read it"),
        "{live}"
    );
    assert!(
        live.contains("call_4") && live.contains("and now?"),
        "{live}"
    );
}

// ---- compaction ----------------------------------------------------------------------------

/// About 8,000 bytes of file: 100 lines of 79 `c`s (the `read` tool cuts long lines).
fn lines(c: char) -> String {
    format!("{}\n", c.to_string().repeat(79)).repeat(100)
}

/// The instructions of a summary request.
const SUMMARY_ASK: &str = "The conversation so far is about to be compacted";

fn compaction_calls(client: &AcpClient<InProcess>, session: &str) -> Vec<Value> {
    client
        .updates(session)
        .into_iter()
        .filter(|u| {
            u["toolCallId"]
                .as_str()
                .is_some_and(|id| id.starts_with("cmp_"))
        })
        .collect()
}

fn compaction_updates(client: &AcpClient<InProcess>, session: &str) -> Vec<Value> {
    client
        .updates(session)
        .into_iter()
        .filter(|u| {
            matches!(
                u["sessionUpdate"].as_str(),
                Some("compaction_update" | "compaction_summary_chunk")
            )
        })
        .collect()
}

/// Past the threshold mid-turn, the context is summarised and the turn goes on from the
/// summary, the turn's prompt and its newest calls; the client sees a `think` tool call. A
/// restart replays the whole history and resumes from the compacted context.
#[test]
fn a_turn_past_the_threshold_compacts_and_goes_on_and_a_restart_keeps_it() {
    // 10,000-token window, threshold 0.8: the first step reports 7,000 prompt tokens, and a
    // read of 8,000 bytes (~2,000 tokens) takes the next request past 8,000.
    let setup = Setup::new(json!({"responses": [
        with_usage(call("c1", "read", json!({"path": "big.txt"})), 7000),
        text(&["SUMMARY: the user wants big.txt read."]),
        text(&["big.txt is all x."]),
        text(&["Still here."]),
    ]}));
    let cwd = workspace(&setup);
    std::fs::write(cwd.join("big.txt"), lines('x')).unwrap();
    let mut client = engine(&setup, Api::OpenAi, 10_000, false);
    let session = new_session(&mut client, &cwd);
    assert_eq!(
        stop_reason(&client.prompt(&session, "what is in big.txt?")),
        "end_turn"
    );

    let requests = setup.mock.requests();
    assert_eq!(requests.len(), 3, "a step, the summary, the step again");
    let summary_request = transcript(&requests[1].body);
    let (role, ask) = summary_request.last().unwrap();
    assert_eq!(role, "user");
    assert!(ask.starts_with(SUMMARY_ASK), "{ask}");
    // The summary request is the step's context with the ask appended (cache-friendly).
    let open = open_body(&requests[0].raw);
    assert!(requests[1].raw.starts_with(open), "{}", requests[1].raw);

    let after = transcript(&requests[2].body);
    let roles: Vec<&str> = after.iter().map(|(role, _)| role.as_str()).collect();
    assert_eq!(
        roles,
        ["system", "user", "user", "assistant", "tool"],
        "{after:?}"
    );
    assert!(after[1].1.contains("SUMMARY: the user wants big.txt read."));
    assert_eq!(
        after[2].1, "what is in big.txt?",
        "the turn's prompt is kept"
    );
    assert!(after[4].1.contains("xxxx"), "the newest result is kept");

    let shown = compaction_calls(&client, &session);
    assert_eq!(shown[0]["sessionUpdate"], "tool_call");
    assert_eq!(shown[0]["kind"], "think");
    assert_eq!(shown[0]["title"], "Compacting conversation");
    let done = shown.last().unwrap();
    assert_eq!(done["status"], "completed");
    assert_eq!(done["rawOutput"]["trigger"], "automatic");
    assert!(
        done["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("SUMMARY")
    );
    assert!(
        compaction_updates(&client, &session).is_empty(),
        "not advertised"
    );

    // A fresh engine: the replay is the whole history, the context the compacted one.
    let mut fresh = engine(&setup, Api::OpenAi, 10_000, false);
    fresh.call(
        "session/load",
        json!({"sessionId": session, "cwd": cwd, "mcpServers": []}),
    );
    let replay = fresh.updates(&session);
    let kinds: Vec<&str> = replay
        .iter()
        .filter_map(|u| u["sessionUpdate"].as_str())
        .collect();
    assert!(kinds.contains(&"user_message_chunk"));
    assert_eq!(compaction_calls(&fresh, &session).len(), shown.len());
    assert!(
        replay
            .iter()
            .any(|u| u["toolCallId"] == shown[0]["toolCallId"])
    );
    assert_eq!(
        stop_reason(&fresh.prompt(&session, "still there?")),
        "end_turn"
    );
    let resumed = transcript(&setup.mock.requests()[3].body);
    assert_eq!(
        resumed[1..5],
        after[1..5],
        "the compacted context, after a restart"
    );
    assert_eq!(resumed.last().unwrap().1, "still there?");
}

/// `/compact [focus]` on a client that shows compactions: `compaction_update`s and the
/// summary streamed as chunks; the command never reaches the model; the next prompt starts
/// from the summary. On both providers.
#[test]
fn compact_on_request_streams_the_summary_to_a_native_client() {
    for api in [Api::OpenAi, Api::Anthropic] {
        let setup = Setup::new(json!({"responses": [
            text(&["Hello!"]),
            text(&["## Goal\n", "greet"]),
            text(&["Hi again."]),
        ]}));
        let cwd = workspace(&setup);
        let mut client = engine(&setup, api, 200_000, true);
        let session = new_session(&mut client, &cwd);
        client.prompt(&session, "hello");
        assert_eq!(
            stop_reason(&client.prompt(&session, "/compact the greeting")),
            "end_turn"
        );
        let requests = setup.mock.requests();
        let ask = transcript(&requests[1].body);
        let (_, last) = ask.last().unwrap();
        assert!(last.contains(SUMMARY_ASK), "{last}");
        assert!(last.contains("focus on: the greeting"), "{last}");
        assert!(
            !ask.iter().any(|(_, text)| text.contains("/compact")),
            "the command is not the model's: {ask:?}"
        );

        let updates = compaction_updates(&client, &session);
        let statuses: Vec<&str> = updates
            .iter()
            .filter_map(|u| u["status"].as_str())
            .collect();
        assert_eq!(statuses, ["in_progress", "completed"]);
        let chunks: String = updates
            .iter()
            .filter(|u| u["sessionUpdate"] == "compaction_summary_chunk")
            .map(|u| u["content"]["text"].as_str().unwrap())
            .collect();
        assert_eq!(chunks, "## Goal\ngreet");
        let completed = updates.last().unwrap();
        assert_eq!(completed["_meta"]["hearth"]["trigger"], "manual");
        assert!(compaction_calls(&client, &session).is_empty());

        client.prompt(&session, "and now?");
        let next = transcript(&setup.mock.requests()[2].body);
        let joined: String = next.iter().map(|(_, t)| t.as_str()).collect();
        assert!(joined.contains("## Goal\ngreet"), "{next:?}");
        assert!(
            !joined.contains("Hello!"),
            "the summary replaced the turn: {next:?}"
        );
        assert!(joined.ends_with("and now?"), "{next:?}");
    }
}

/// A provider's "context length exceeded" compacts once and retries, on both providers.
#[test]
fn a_context_length_error_compacts_and_retries() {
    let errors = [
        (
            Api::OpenAi,
            "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
        ),
        (
            Api::Anthropic,
            "prompt is too long: 210000 tokens > 200000 maximum",
        ),
    ];
    for (api, error) in errors {
        let setup = Setup::new(json!({"responses": [
            text(&["First answer."]),
            {"status": 400, "error": error},
            text(&["SUMMARY of the first exchange."]),
            text(&["Second answer."]),
        ]}));
        let cwd = workspace(&setup);
        let mut client = engine(&setup, api, 200_000, false);
        let session = new_session(&mut client, &cwd);
        client.prompt(&session, "first");
        assert_eq!(stop_reason(&client.prompt(&session, "second")), "end_turn");
        let requests = setup.mock.requests();
        assert_eq!(requests.len(), 4);
        let retried: String = transcript(&requests[3].body)
            .iter()
            .map(|(_, t)| t.clone())
            .collect();
        assert!(
            retried.contains("SUMMARY of the first exchange."),
            "{retried}"
        );
        assert!(
            retried.ends_with("second"),
            "the prompt survives: {retried}"
        );
        let shown = compaction_calls(&client, &session);
        assert_eq!(shown.last().unwrap()["rawOutput"]["trigger"], "overflow");
    }
}

/// Cancel while the summary streams: the turn answers `cancelled`, the client hears the
/// compaction was cancelled, and the next request carries the whole context.
#[test]
fn cancel_during_compaction_leaves_the_context_as_it_was() {
    let setup = Setup::new(json!({"responses": [
        text(&["Hello!"]),
        {"events": [{"text": "## Goal"}, {"stallMs": 10000}, {"text": " never"}]},
        text(&["Still whole."]),
    ]}));
    let cwd = workspace(&setup);
    let mut client = engine(&setup, Api::OpenAi, 200_000, true);
    let session = new_session(&mut client, &cwd);
    client.prompt(&session, "hello");
    let pending = client.start_request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "/compact"}]}),
    );
    client
        .wait_for(Duration::from_secs(10), |f| {
            f["params"]["update"]["sessionUpdate"] == "compaction_summary_chunk"
        })
        .expect("the summary starts streaming");
    client.notify("session/cancel", json!({"sessionId": session}));
    let response = client.response(&pending);
    assert_eq!(stop_reason(&response), "cancelled");
    let last = compaction_updates(&client, &session).pop().unwrap();
    assert_eq!(last["status"], "cancelled");

    client.prompt(&session, "are you whole?");
    let next = transcript(&setup.mock.requests()[2].body);
    let texts: Vec<&str> = next.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(texts[1..], ["hello", "Hello!", "are you whole?"]);
}

/// A summary request that fails is reported; the session stays whole and usable.
#[test]
fn a_failing_summary_is_reported_and_the_session_goes_on() {
    let setup = Setup::new(json!({"responses": [
        text(&["Hello!"]),
        {"status": 500, "error": "upstream exploded"},
        text(&["Fine."]),
    ]}));
    let cwd = workspace(&setup);
    let mut client = engine(&setup, Api::Anthropic, 200_000, false);
    let session = new_session(&mut client, &cwd);
    client.prompt(&session, "hello");
    assert_eq!(
        stop_reason(&client.prompt(&session, "/compact")),
        "end_turn"
    );
    let shown = compaction_calls(&client, &session);
    let failed = shown.last().unwrap();
    assert_eq!(failed["status"], "failed");
    let why = failed["content"][0]["content"]["text"].as_str().unwrap();
    assert!(why.contains("upstream exploded"), "{why}");
    assert!(why.contains("unchanged"), "{why}");
    // The user is told in a notice too (a message line: this client shows no notices).
    let told = hearth_testkit::agent_text(&client.updates(&session));
    assert!(
        told.contains("**Compaction failed:** Compaction failed; the conversation is unchanged"),
        "{told}"
    );

    assert_eq!(stop_reason(&client.prompt(&session, "ok?")), "end_turn");
    let next = transcript(&setup.mock.requests()[2].body);
    let texts: Vec<&str> = next.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(texts, ["hello", "Hello!", "ok?"]);
}

/// When clearing old results of read-only tools is enough, no summary is asked for: the old
/// bodies give way to a note, the newest three stay.
#[test]
fn clearing_old_read_results_can_be_enough() {
    // 20,000-token window: 2,000 reported at the first step, ~2,000 per read of 8,000 bytes;
    // the eighth request would pass 16,000, and clearing four results brings it near 8,000.
    let mut responses = vec![with_usage(
        call("r0", "read", json!({"path": "big.txt"})),
        2000,
    )];
    responses.extend((1..7).map(|i| call(&format!("r{i}"), "read", json!({"path": "big.txt"}))));
    responses.push(text(&["Done reading."]));
    let setup = Setup::new(json!({ "responses": responses }));
    let cwd = workspace(&setup);
    std::fs::write(cwd.join("big.txt"), lines('y')).unwrap();
    let mut client = engine(&setup, Api::OpenAi, 20_000, false);
    let session = new_session(&mut client, &cwd);
    assert_eq!(
        stop_reason(&client.prompt(&session, "read it seven times")),
        "end_turn"
    );

    let requests = setup.mock.requests();
    assert_eq!(requests.len(), 8, "no summary request");
    let tools: Vec<String> = transcript(&requests[7].body)
        .into_iter()
        .filter(|(role, _)| role == "tool")
        .map(|(_, text)| text)
        .collect();
    assert_eq!(tools.len(), 7);
    for cleared in &tools[..4] {
        assert!(
            cleared.starts_with("[Output cleared to save context"),
            "{cleared}"
        );
    }
    for kept in &tools[4..] {
        assert!(kept.contains("yyyy"), "{kept}");
    }
    let shown = compaction_calls(&client, &session);
    let done = shown.last().unwrap();
    assert_eq!(
        done["content"][0]["content"]["text"],
        "Cleared the output of 4 earlier tool calls."
    );
}

/// The provider's own counts reach the client with the window's fill: how much of the prompt
/// its cache served (and, on Anthropic, wrote).
#[test]
fn cached_prompt_tokens_reach_the_client_on_both_providers() {
    for (api, written) in [(Api::OpenAi, 0), (Api::Anthropic, 50)] {
        let usage = json!({"input": 100, "output": 5, "cacheRead": 900, "cacheWrite": 50});
        let setup =
            Setup::new(json!({"responses": [{"events": [{"text": "hi"}, {"usage": usage}]}]}));
        let cwd = workspace(&setup);
        let mut client = engine(&setup, api, 200_000, false);
        let session = new_session(&mut client, &cwd);
        client.prompt(&session, "hello");
        let update = client
            .updates(&session)
            .into_iter()
            .find(|u| u["sessionUpdate"] == "usage_update")
            .unwrap();
        assert_eq!(update["used"], 1055);
        assert_eq!(update["size"], 200_000);
        assert_eq!(
            update["_meta"]["hearth"],
            json!({"inputTokens": 1050, "outputTokens": 5, "cachedReadTokens": 900, "cachedWriteTokens": written})
        );
    }
}
