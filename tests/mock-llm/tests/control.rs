//! The queue, the `/_mock/*` routes, script parsing, and use from synchronous code.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;

use common::{post, root, script};
use hearth_mock_llm::{Event, MockLlm, Response, Script, ToolCall};
use serde_json::{Value, json};

#[tokio::test]
async fn an_exhausted_script_fails_loudly_in_each_dialect() {
    let mock = MockLlm::start(Script {
        responses: vec![Response::text("only one")],
    })
    .unwrap();
    let openai = format!("{}/chat/completions", mock.base_url());
    let anthropic = format!("{}/messages", mock.base_url());
    assert_eq!(post(&openai, &json!({"stream": true})).await.status(), 200);
    assert_eq!(mock.remaining(), 0);

    let reply = post(&openai, &json!({"stream": true})).await;
    assert_eq!(reply.status(), 500);
    assert_eq!(
        reply.json::<Value>().await.unwrap(),
        json!({"error": {"message": "mock-llm: script exhausted", "type": "server_error", "code": null}})
    );
    let reply = post(&anthropic, &json!({"stream": true})).await;
    assert_eq!(reply.status(), 500);
    assert_eq!(
        reply.json::<Value>().await.unwrap(),
        json!({"type": "error", "error": {"type": "api_error", "message": "mock-llm: script exhausted"}})
    );
    // Failed requests are recorded too, so a test can see what was sent too many times.
    assert_eq!(mock.requests().len(), 3);
}

#[tokio::test]
async fn control_routes_append_reject_and_reset() {
    let mock = MockLlm::start(Default::default()).unwrap();
    let control = root(&mock);
    let client = common::http();

    let appended = post(
        &format!("{control}/_mock/script"),
        &json!({"responses": [{"events": [{"text": "first"}]}, {"status": 503}]}),
    )
    .await;
    assert_eq!(appended.status(), 200);
    assert_eq!(
        appended.json::<Value>().await.unwrap(),
        json!({"queued": 2})
    );
    mock.push(Response::text("third"));
    assert_eq!(mock.remaining(), 3);

    let bad = client
        .post(format!("{control}/_mock/script"))
        .body(r#"{"responses": [{"events": [{"txt": "typo"}]}]}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    let message = bad.json::<Value>().await.unwrap()["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(message.contains("unknown field `txt`"), "{message}");
    assert_eq!(mock.remaining(), 3, "a bad script queues nothing");

    // Appended responses are served in order, after what was queued before.
    let url = format!("{}/chat/completions", mock.base_url());
    let first = post(&url, &json!({"stream": true}))
        .await
        .text()
        .await
        .unwrap();
    assert!(first.contains(r#""content":"first""#), "{first}");
    assert_eq!(post(&url, &json!({"stream": true})).await.status(), 503);

    let reset = client
        .post(format!("{control}/_mock/reset"))
        .send()
        .await
        .unwrap();
    assert_eq!(reset.status(), 200);
    assert_eq!(mock.remaining(), 0);
    assert!(mock.requests().is_empty());

    let missing = reqwest::get(format!("{control}/v1/models")).await.unwrap();
    assert_eq!(missing.status(), 404);
    let message = missing.json::<Value>().await.unwrap()["error"]["message"].clone();
    assert_eq!(message, "mock-llm: no route for GET /v1/models");
}

/// Each request is recorded with its whole body (kept as text, parsed when read) and the
/// connection it came on; answering it reads only the model it names and whether it streams,
/// whatever else the body holds.
#[tokio::test]
async fn requests_are_recorded_whole_with_the_connection_they_came_on() {
    let mock = MockLlm::start(Script {
        responses: vec![
            Response::text("a"),
            Response::text("b"),
            Response::text("c"),
        ],
    })
    .unwrap();
    let url = format!("{}/chat/completions", mock.base_url());
    let one = common::http();
    let body = json!({"model": "m-1", "messages": [{"role": "user", "content": "hi"}]});
    for _ in 0..2 {
        let reply = one.post(&url).json(&body).send().await.unwrap();
        assert_eq!(reply.json::<Value>().await.unwrap()["model"], "m-1");
    }
    // A `model` that is not a string: valid JSON all the same, answered with the default.
    let odd = json!({"model": 7, "stream": "yes"});
    let reply = common::http().post(&url).json(&odd).send().await.unwrap();
    assert_eq!(reply.json::<Value>().await.unwrap()["model"], "mock-model");

    let requests = mock.requests();
    assert_eq!(requests[0].body, body);
    assert_eq!(requests[0].raw, body.to_string());
    assert_eq!(requests[2].body, odd);
    let connections: Vec<u64> = requests.iter().map(|r| r.connection).collect();
    assert_eq!(
        connections,
        [1, 1, 2],
        "the first client's connection, reused"
    );
    assert_eq!(mock.last_request().unwrap(), requests[2]);
}

#[tokio::test]
async fn a_request_body_that_is_not_json_is_rejected_and_recorded() {
    let mock = MockLlm::start(Script {
        responses: vec![Response::text("kept")],
    })
    .unwrap();
    let reply = common::http()
        .post(format!("{}/messages", mock.base_url()))
        .body("not json")
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 400);
    assert_eq!(
        reply.json::<Value>().await.unwrap()["error"]["type"],
        "invalid_request_error"
    );
    assert_eq!(mock.requests()[0].body, "not json");
    assert_eq!(
        mock.remaining(),
        1,
        "the response is kept for a proper request"
    );
}

#[test]
fn scripts_reject_typos_and_ambiguous_events() {
    let error = |json: &str| {
        serde_json::from_str::<Script>(json)
            .unwrap_err()
            .to_string()
    };
    assert!(error(r#"{"responses": [{"event": []}]}"#).contains("unknown field `event`"));
    assert!(error(r#"{"response": []}"#).contains("unknown field `response`"));
    assert!(
        error(r#"{"responses": [{"events": [{"text": "a", "reasoning": "b"}]}]}"#)
            .contains("exactly one key")
    );
    assert!(error(r#"{"responses": [{"events": [{}]}]}"#).contains("needs one of"));
    assert!(
        error(r#"{"responses": [{"events": [{"text": "a", "signature": "s"}]}]}"#)
            .contains("`signature` is only allowed next to `reasoning`")
    );
    assert!(
        error(r#"{"responses": [{"events": [{"toolCall": {"id": "1", "nmae": "x"}}]}]}"#)
            .contains("unknown field `nmae`")
    );
    assert!(error(r#"{"responses": [{"finish": "done"}]}"#).contains("unknown variant `done`"));
}

#[test]
fn scripts_round_trip_through_json_and_files() {
    let original = script(json!({"responses": [
        {"status": 429, "headers": {"retry-after": "1"}, "error": "later", "delayMs": 5},
        {"events": [
            {"text": "t"},
            {"reasoning": "r", "signature": "s"},
            {"redactedThinking": "d"},
            {"toolCall": {"id": "c", "name": "n", "arguments": "{}", "index": 3, "chunks": 2}},
            {"usage": {"input": 1, "output": 2}},
            {"stallMs": 10},
            {"repeat": {"text": "x", "count": 3}}
        ], "finish": "tool_use", "truncate": true}
    ]}));
    assert_eq!(
        original.responses[1].events[3],
        Event::ToolCall(ToolCall {
            id: "c".into(),
            name: "n".into(),
            arguments: "{}".into(),
            index: Some(3),
            chunks: 2,
        })
    );
    let text = serde_json::to_string(&original).unwrap();
    assert_eq!(serde_json::from_str::<Script>(&text).unwrap(), original);
    // Defaults stay out of the serialized form.
    assert_eq!(
        serde_json::to_value(Response::text("abc")).unwrap(),
        json!({"status": 200, "events": [{"text": "a"}, {"text": "b"}, {"text": "c"}]})
    );

    let dir = std::env::temp_dir().join(format!("mock-llm-script-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.json");
    std::fs::write(&good, &text).unwrap();
    assert_eq!(Script::from_file(&good).unwrap(), original);
    let bad = dir.join("bad.json");
    std::fs::write(&bad, r#"{"responses": [{"stauts": 200}]}"#).unwrap();
    let error = Script::from_file(&bad).unwrap_err().to_string();
    assert!(
        error.contains("bad.json") && error.contains("unknown field `stauts`"),
        "{error}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// No runtime here: the server brings its own.
#[test]
fn works_from_a_synchronous_test() {
    let mock = MockLlm::start(Script {
        responses: vec![Response::text("sync")],
    })
    .unwrap();
    let addr = mock.base_url().replace("http://", "").replace("/v1", "");
    let body = r#"{"stream":true}"#;
    let mut stream = TcpStream::connect(&addr).unwrap();
    write!(
        stream,
        "POST /v1/messages HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    assert!(reply.starts_with("HTTP/1.1 200 OK\r\n"), "{reply}");
    assert!(reply.contains("event: message_stop"), "{reply}");
    assert!(reply.ends_with("0\r\n\r\n"), "chunked body ends cleanly");
    assert_eq!(mock.requests()[0].path, "/v1/messages");
}

/// Concurrent requests (a parent turn and its subagents) each take the response meant for
/// them; the rest are served in order, past the ones still waiting for their request.
#[tokio::test]
async fn a_response_with_when_waits_for_the_request_that_matches_it() {
    let mock = MockLlm::start(script(json!({"responses": [
        {"when": {"contains": "child two"}, "events": [{"text": "for two"}]},
        {"events": [{"text": "first plain"}]},
        {"when": {"contains": "child one"}, "events": [{"text": "for one"}]},
        {"events": [{"text": "second plain"}]},
    ]})))
    .unwrap();
    let url = format!("{}/chat/completions", mock.base_url());
    let ask = |text: &str| {
        let body = json!({"messages": [{"role": "user", "content": text}]});
        let url = url.clone();
        async move {
            let reply = post(&url, &body).await.json::<Value>().await.unwrap();
            reply["choices"][0]["message"]["content"].clone()
        }
    };
    assert_eq!(ask("the parent").await, "first plain");
    assert_eq!(ask("child one, please").await, "for one");
    assert_eq!(ask("the parent again").await, "second plain");
    assert_eq!(ask("child two, please").await, "for two");
    assert_eq!(mock.remaining(), 0);
    let typo = serde_json::from_value::<Script>(json!({"responses": [{"when": {"contain": "x"}}]}));
    assert!(
        typo.unwrap_err()
            .to_string()
            .contains("unknown field `contain`")
    );
}
