//! Anthropic Messages dialect over real HTTP.

mod common;

use common::{parse_sse, post, script};
use hearth_mock_llm::MockLlm;
use serde_json::{Value, json};

#[tokio::test]
async fn streams_thinking_redacted_text_and_tool_use_blocks() {
    let mock = MockLlm::start(script(json!({"responses": [{"events": [
        {"usage": {"input": 12, "output": 34}},
        {"reasoning": "Think "},
        {"reasoning": "hard.", "signature": "sig-1"},
        {"redactedThinking": "opaque"},
        {"text": "Hel"},
        {"stallMs": 1},
        {"text": "lo"},
        {"toolCall": {"id": "toolu_1", "name": "read", "arguments": "{\"path\":\"a\"}", "chunks": 2}},
        {"reasoning": "again"}
    ]}]})))
    .unwrap();

    let reply = post(
        &format!("{}/messages", mock.base_url()),
        &json!({"model": "claude-test", "stream": true, "max_tokens": 100, "messages": []}),
    )
    .await;
    assert_eq!(reply.status(), 200);
    assert_eq!(reply.headers()["content-type"], "text/event-stream");
    let events = parse_sse(&reply.text().await.unwrap());
    let data: Vec<Value> = events.iter().map(|e| e.json()).collect();
    for (event, data) in events.iter().zip(&data) {
        assert_eq!(
            event.event.as_deref(),
            data["type"].as_str(),
            "SSE name = type"
        );
    }
    let names: Vec<&str> = data.iter().map(|d| d["type"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "message_start",
            // thinking: two thinking deltas then the signature
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            // redacted thinking: data in the start, no deltas
            "content_block_start",
            "content_block_stop",
            // text: a stall does not split the block
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            // tool_use with two input pieces
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            // thinking without a scripted signature
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        ]
    );

    let message = &data[0]["message"];
    assert_eq!(message["id"], "msg_mock_1");
    assert_eq!(message["model"], "claude-test");
    assert_eq!(message["role"], "assistant");
    assert_eq!(message["content"], json!([]));
    assert_eq!(message["usage"]["input_tokens"], 12);

    assert_eq!(
        data[1]["content_block"],
        json!({"type": "thinking", "thinking": ""})
    );
    assert_eq!(
        data[2]["delta"],
        json!({"type": "thinking_delta", "thinking": "Think "})
    );
    assert_eq!(
        data[3]["delta"],
        json!({"type": "thinking_delta", "thinking": "hard."})
    );
    assert_eq!(
        data[4]["delta"],
        json!({"type": "signature_delta", "signature": "sig-1"})
    );
    assert_eq!(
        data[6]["content_block"],
        json!({"type": "redacted_thinking", "data": "opaque"})
    );
    assert_eq!(
        data[8]["content_block"],
        json!({"type": "text", "text": ""})
    );
    assert_eq!(
        [&data[9]["delta"], &data[10]["delta"]],
        [
            &json!({"type": "text_delta", "text": "Hel"}),
            &json!({"type": "text_delta", "text": "lo"})
        ]
    );
    assert_eq!(
        data[12]["content_block"],
        json!({"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}})
    );
    let input: String = data[13..15]
        .iter()
        .map(|d| {
            assert_eq!(d["delta"]["type"], "input_json_delta");
            d["delta"]["partial_json"].as_str().unwrap()
        })
        .collect();
    assert_eq!(input, r#"{"path":"a"}"#);
    assert_eq!(data[18]["delta"]["signature"], "mock-signature");

    // Every block's events carry its own index, counting up from 0.
    let mut index = -1;
    for d in &data[1..20] {
        if d["type"] == "content_block_start" {
            index += 1;
        }
        assert_eq!(d["index"], index);
    }
    assert_eq!(index, 4);

    assert_eq!(
        data[20],
        json!({
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": null},
            "usage": {"output_tokens": 34}
        })
    );
}

#[tokio::test]
async fn finish_accepts_both_vocabularies() {
    let mock = MockLlm::start(script(json!({"responses": [
        {"events": [{"text": "a"}], "finish": "length"},
        {"events": [{"text": "b"}], "finish": "max_tokens"},
        {"events": [{"text": "c"}], "finish": "refusal"}
    ]})))
    .unwrap();
    let url = format!("{}/messages", mock.base_url());
    for expected in ["max_tokens", "max_tokens", "refusal"] {
        let body = post(&url, &json!({"stream": true}))
            .await
            .text()
            .await
            .unwrap();
        let delta = parse_sse(&body)
            .into_iter()
            .find(|e| e.event.as_deref() == Some("message_delta"))
            .unwrap()
            .json();
        assert_eq!(delta["delta"]["stop_reason"], expected);
    }
}

#[tokio::test]
async fn non_streaming_request_gets_one_message() {
    let mock = MockLlm::start(script(json!({"responses": [{"events": [
        {"reasoning": "a"},
        {"reasoning": "b", "signature": "sig-x"},
        {"redactedThinking": "opaque"},
        {"text": "Do"},
        {"repeat": {"text": "ne", "count": 2}},
        {"toolCall": {"id": "toolu_2", "name": "write", "arguments": "{\"n\":1}", "chunks": 3}},
        {"usage": {"input": 7, "output": 8}}
    ]}]})))
    .unwrap();

    let reply = post(
        &format!("{}/messages", mock.base_url()),
        &json!({"model": "claude-test", "stream": false}),
    )
    .await;
    assert_eq!(reply.status(), 200);
    let body: Value = reply.json().await.unwrap();
    assert_eq!(
        body,
        json!({
            "id": "msg_mock_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [
                {"type": "thinking", "thinking": "ab", "signature": "sig-x"},
                {"type": "redacted_thinking", "data": "opaque"},
                {"type": "text", "text": "Donene"},
                {"type": "tool_use", "id": "toolu_2", "name": "write", "input": {"n": 1}}
            ],
            "stop_reason": "tool_use",
            "stop_sequence": null,
            "usage": {"input_tokens": 7, "output_tokens": 8,
                      "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
        })
    );
}

#[tokio::test]
async fn rate_limit_and_overload_use_anthropic_error_bodies() {
    let mock = MockLlm::start(script(json!({"responses": [
        {"status": 429, "headers": {"retry-after": "2"}, "error": "slow down"},
        {"status": 529}
    ]})))
    .unwrap();
    let url = format!("{}/messages", mock.base_url());

    let limited = post(&url, &json!({"stream": true})).await;
    assert_eq!(limited.status(), 429);
    assert_eq!(limited.headers()["retry-after"], "2");
    assert_eq!(
        limited.json::<Value>().await.unwrap(),
        json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}})
    );

    let overloaded = post(&url, &json!({"stream": true})).await;
    assert_eq!(overloaded.status(), 529);
    let body: Value = overloaded.json().await.unwrap();
    assert_eq!(body["error"]["type"], "overloaded_error");
    // With no scripted message the status's own wording is used.
    assert!(!body["error"]["message"].as_str().unwrap().is_empty());
}

#[tokio::test]
async fn server_searches_and_cited_text_render_as_anthropic_blocks() {
    let result = json!({"type": "web_search_result", "url": "https://tokio.rs/", "title": "Tokio", "encrypted_content": "enc"});
    let citation = json!({"type": "web_search_result_location", "url": "https://tokio.rs/", "encrypted_index": "idx"});
    let script = json!({"responses": [{"events": [
        {"serverSearch": {"id": "srvtoolu_1", "query": "tokio", "results": [result]}},
        {"serverSearch": {"id": "srvtoolu_2", "query": "more", "errorCode": "max_uses_exceeded"}},
        {"citedText": {"text": "A runtime.", "citations": [citation]}},
    ], "finish": "pause_turn"}]});
    let mock = MockLlm::start(common::script(script)).unwrap();
    let reply = post(
        &format!("{}/messages", mock.base_url()),
        &json!({"model": "claude-test", "stream": true, "max_tokens": 100, "messages": []}),
    )
    .await;
    let events: Vec<Value> = parse_sse(&reply.text().await.unwrap())
        .iter()
        .map(|e| e.json())
        .collect();
    let starts: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "content_block_start")
        .map(|e| &e["content_block"])
        .collect();
    assert_eq!(
        starts,
        [
            &json!({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}),
            &json!({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [result]}),
            &json!({"type": "server_tool_use", "id": "srvtoolu_2", "name": "web_search", "input": {}}),
            &json!({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_2",
                "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}}),
            &json!({"type": "text", "text": ""}),
        ]
    );
    let deltas: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "content_block_delta")
        .map(|e| &e["delta"])
        .collect();
    assert_eq!(deltas[0]["partial_json"], r#"{"query":"tokio"}"#);
    assert_eq!(
        deltas[2],
        &json!({"type": "citations_delta", "citation": citation})
    );
    assert_eq!(
        deltas[3],
        &json!({"type": "text_delta", "text": "A runtime."})
    );
    let stop = events
        .iter()
        .find(|e| e["type"] == "message_delta")
        .unwrap();
    assert_eq!(stop["delta"]["stop_reason"], "pause_turn");
}
