//! Stream behaviour over time: stalls, delays, truncation, long repeats, shutdown.
//! Timing assertions only use lower bounds (a sleep is never shorter) or generous upper
//! bounds far from the scripted durations, so they hold on a loaded machine.

mod common;

use std::time::{Duration, Instant};

use common::{parse_sse, post, script};
use hearth_mock_llm::MockLlm;
use serde_json::json;

/// Reads a body chunk by chunk, returning what arrived before and after the longest gap.
async fn split_at_longest_gap(mut reply: reqwest::Response) -> (String, String, Duration) {
    let mut received = Vec::new();
    while let Some(chunk) = reply.chunk().await.unwrap() {
        received.push((Instant::now(), String::from_utf8(chunk.to_vec()).unwrap()));
    }
    let (at, gap) = (1..received.len())
        .map(|i| (i, received[i].0 - received[i - 1].0))
        .max_by_key(|(_, gap)| *gap)
        .unwrap();
    let text = |part: &[(Instant, String)]| part.iter().map(|(_, t)| t.as_str()).collect();
    (text(&received[..at]), text(&received[at..]), gap)
}

#[tokio::test]
async fn a_stall_flushes_what_came_before_then_pauses() {
    let mock = MockLlm::start(script(json!({"responses": [
        {"events": [{"text": "before"}, {"stallMs": 400}, {"text": "after"}]},
        {"events": [{"text": "before"}, {"stallMs": 400}, {"text": "after"}]}
    ]})))
    .unwrap();
    for url in ["chat/completions", "messages"] {
        let reply = post(
            &format!("{}/{url}", mock.base_url()),
            &json!({"stream": true}),
        )
        .await;
        let (early, late, gap) = split_at_longest_gap(reply).await;
        assert!(gap >= Duration::from_millis(300), "{url}: gap {gap:?}");
        assert!(
            early.contains("before") && !early.contains("after"),
            "{early}"
        );
        assert!(late.contains("after"), "{late}");
    }
}

#[tokio::test]
async fn delay_holds_back_the_headers() {
    let mock = MockLlm::start(script(json!({"responses": [
        {"delayMs": 300, "events": [{"text": "late"}]}
    ]})))
    .unwrap();
    let started = Instant::now();
    let reply = post(
        &format!("{}/chat/completions", mock.base_url()),
        &json!({"stream": true}),
    )
    .await;
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert!(reply.text().await.unwrap().contains("late"));
}

#[tokio::test]
async fn truncate_cuts_the_stream_before_its_end() {
    let mock = MockLlm::start(script(json!({"responses": [
        {"events": [{"text": "partial"}], "truncate": true},
        {"events": [{"text": "partial"}], "truncate": true},
        {"events": [{"text": "partial"}], "truncate": true}
    ]})))
    .unwrap();
    for (url, stream) in [
        ("chat/completions", true),
        ("messages", true),
        ("chat/completions", false),
    ] {
        let mut reply = post(
            &format!("{}/{url}", mock.base_url()),
            &json!({"stream": stream}),
        )
        .await;
        assert_eq!(reply.status(), 200);
        let mut received = String::new();
        let error = loop {
            match reply.chunk().await {
                Ok(Some(chunk)) => received += std::str::from_utf8(&chunk).unwrap(),
                Ok(None) => panic!("{url}: body ended cleanly: {received}"),
                Err(error) => break error,
            }
        };
        assert!(error.is_body() || error.is_decode(), "{url}: {error:?}");
        if stream {
            assert!(received.contains("partial"), "{url}: sent before the cut");
            for end in ["finish_reason\":\"stop", "[DONE]", "message_stop"] {
                assert!(!received.contains(end), "{url}: {received}");
            }
        } else {
            assert!(received.starts_with('{'), "{received}");
            assert!(serde_json::from_str::<serde_json::Value>(&received).is_err());
        }
    }
}

#[tokio::test]
async fn repeat_streams_many_deltas() {
    let mock = MockLlm::start(script(json!({"responses": [
        {"events": [{"text": "<"}, {"repeat": {"text": "tok ", "count": 10000}}, {"text": ">"}]},
        {"events": [{"repeat": {"text": "tok ", "count": 10000}}]}
    ]})))
    .unwrap();

    let body = post(
        &format!("{}/chat/completions", mock.base_url()),
        &json!({"stream": true}),
    )
    .await
    .text()
    .await
    .unwrap();
    let events = parse_sse(&body);
    // role chunk + 10002 text deltas + finish chunk + [DONE]
    assert_eq!(events.len(), 10005);
    let text: String = events[1..10003]
        .iter()
        .map(|e| {
            e.json()["choices"][0]["delta"]["content"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(text, format!("<{}>", "tok ".repeat(10000)));

    let body = post(
        &format!("{}/messages", mock.base_url()),
        &json!({"stream": true}),
    )
    .await
    .text()
    .await
    .unwrap();
    let events = parse_sse(&body);
    let deltas = events
        .iter()
        .filter(|e| e.event.as_deref() == Some("content_block_delta"))
        .count();
    assert_eq!(deltas, 10000);
    let starts = events
        .iter()
        .filter(|e| e.event.as_deref() == Some("content_block_start"))
        .count();
    assert_eq!(starts, 1, "one text block");
}

#[tokio::test]
async fn a_stall_blocks_neither_other_requests_nor_drop() {
    let mock = MockLlm::start(script(json!({"responses": [
        {"events": [{"text": "stuck"}, {"stallMs": 60000}, {"text": "never"}]},
        {"events": [{"text": "free"}]}
    ]})))
    .unwrap();
    let url = format!("{}/chat/completions", mock.base_url());
    let mut stalled = post(&url, &json!({"stream": true})).await;
    let first = stalled.chunk().await.unwrap().unwrap();
    assert!(std::str::from_utf8(&first).unwrap().contains("stuck"));

    let other = tokio::time::timeout(Duration::from_secs(20), async {
        post(&url, &json!({"stream": true}))
            .await
            .text()
            .await
            .unwrap()
    })
    .await
    .expect("a second request is served during the stall");
    assert!(other.contains("free") && other.contains("[DONE]"));

    let started = Instant::now();
    drop(mock);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "drop waited for the 60 s stall"
    );
    // The stalled stream ends with the server, without ever finishing.
    let rest = tokio::time::timeout(Duration::from_secs(20), stalled.chunk())
        .await
        .expect("the client notices the shutdown");
    assert!(rest.is_err(), "{rest:?}");
}
