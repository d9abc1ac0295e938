//! OpenAI chat-completions dialect over real HTTP.

mod common;

use common::{parse_sse, post, root, script};
use hearth_mock_llm::{MockLlm, Response};
use serde_json::{Value, json};

#[tokio::test]
async fn streams_reasoning_text_two_chunked_tool_calls_usage_and_finish() {
    let mock = MockLlm::start(script(json!({"responses": [{"events": [
        {"reasoning": "Let me "},
        {"reasoning": "look."},
        {"text": "Hel"},
        {"text": "lo"},
        {"toolCall": {"id": "call_1", "name": "read", "arguments": "{\"path\":\"a.rs\"}", "chunks": 3}},
        {"toolCall": {"id": "call_2", "name": "grep", "arguments": "{\"q\":\"fn\"}", "chunks": 2}},
        {"usage": {"input": 10, "output": 5}}
    ]}]})))
    .unwrap();

    let reply = post(
        &format!("{}/chat/completions", mock.base_url()),
        &json!({"model": "gpt-test", "stream": true, "messages": []}),
    )
    .await;
    assert_eq!(reply.status(), 200);
    assert_eq!(reply.headers()["content-type"], "text/event-stream");
    let events = parse_sse(&reply.text().await.unwrap());

    assert_eq!(events.last().unwrap().data, "[DONE]");
    let chunks: Vec<Value> = events[..events.len() - 1]
        .iter()
        .map(|e| e.json())
        .collect();
    for chunk in &chunks {
        assert_eq!(chunk["object"], "chat.completion.chunk");
        assert_eq!(chunk["id"], "chatcmpl-mock-1");
        assert_eq!(chunk["model"], "gpt-test");
    }
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");

    let (usage_chunk, choice_chunks) = chunks.split_last().unwrap();
    assert_eq!(usage_chunk["choices"], json!([]));
    assert_eq!(
        usage_chunk["usage"],
        json!({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})
    );
    let (finish_chunk, delta_chunks) = choice_chunks.split_last().unwrap();
    assert_eq!(finish_chunk["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(finish_chunk["choices"][0]["delta"], json!({}));

    let mut reasoning = String::new();
    let mut content = String::new();
    // Per tool index: (id, name, argument pieces).
    let mut calls: Vec<(String, String, Vec<String>)> = Vec::new();
    for chunk in delta_chunks {
        let choice = &chunk["choices"][0];
        assert_eq!(choice["finish_reason"], Value::Null);
        let delta = &choice["delta"];
        reasoning += delta["reasoning_content"].as_str().unwrap_or("");
        content += delta["content"].as_str().unwrap_or("");
        for call in delta["tool_calls"].as_array().into_iter().flatten() {
            let index = call["index"].as_u64().unwrap() as usize;
            if index == calls.len() {
                // Only the first delta of a call names it.
                assert_eq!(call["type"], "function");
                let name = call["function"]["name"].as_str().unwrap().to_owned();
                calls.push((call["id"].as_str().unwrap().to_owned(), name, Vec::new()));
            } else {
                assert!(call.get("id").is_none() && call["function"].get("name").is_none());
            }
            let piece = call["function"]["arguments"].as_str().unwrap();
            if !piece.is_empty() {
                calls[index].2.push(piece.to_owned());
            }
        }
    }
    assert_eq!(reasoning, "Let me look.");
    assert_eq!(content, "Hello");
    assert_eq!(calls.len(), 2);
    assert_eq!(
        (calls[0].0.as_str(), calls[0].1.as_str()),
        ("call_1", "read")
    );
    assert_eq!(calls[0].2.len(), 3);
    assert_eq!(calls[0].2.concat(), r#"{"path":"a.rs"}"#);
    assert_eq!(
        (calls[1].0.as_str(), calls[1].1.as_str()),
        ("call_2", "grep")
    );
    assert_eq!(calls[1].2.len(), 2);
    assert_eq!(calls[1].2.concat(), r#"{"q":"fn"}"#);
    assert_eq!(mock.remaining(), 0);
}

#[tokio::test]
async fn non_streaming_request_gets_one_completion() {
    let mock = MockLlm::start(script(json!({"responses": [{"events": [
        {"reasoning": "hmm"},
        {"text": "Hi "},
        {"text": "there"},
        {"redactedThinking": "ignored by OpenAI"},
        {"toolCall": {"id": "call_9", "name": "ls", "arguments": "{}", "chunks": 2}},
        {"usage": {"input": 3, "output": 4, "cacheRead": 10}}
    ], "finish": "length"}]})))
    .unwrap();

    let reply = post(
        &format!("{}/chat/completions", mock.base_url()),
        &json!({"model": "gpt-test", "messages": []}),
    )
    .await;
    assert_eq!(reply.status(), 200);
    let body: Value = reply.json().await.unwrap();
    assert_eq!(
        body,
        json!({
            "id": "chatcmpl-mock-1",
            "object": "chat.completion",
            "created": body["created"],
            "model": "gpt-test",
            "choices": [{
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "Hi there",
                    "reasoning_content": "hmm",
                    "tool_calls": [{
                        "id": "call_9",
                        "type": "function",
                        "function": {"name": "ls", "arguments": "{}"}
                    }]
                },
                "finish_reason": "length"
            }],
            "usage": {"prompt_tokens": 13, "completion_tokens": 4, "total_tokens": 17,
                      "prompt_tokens_details": {"cached_tokens": 10}}
        })
    );
    assert!(body["created"].as_u64().unwrap() > 1_600_000_000);
}

#[tokio::test]
async fn rate_limit_carries_retry_after_and_an_openai_error_body() {
    let mock = MockLlm::start(script(json!({"responses": [
        {"status": 429, "headers": {"retry-after": "1"}, "error": "rate limited"},
        {"events": [{"text": "ok"}]}
    ]})))
    .unwrap();
    let url = format!("{}/chat/completions", mock.base_url());

    let reply = post(&url, &json!({"stream": true})).await;
    assert_eq!(reply.status(), 429);
    assert_eq!(reply.headers()["retry-after"], "1");
    assert_eq!(reply.headers()["content-type"], "application/json");
    let body: Value = reply.json().await.unwrap();
    assert_eq!(
        body,
        json!({"error": {"message": "rate limited", "type": "rate_limit_error", "code": null}})
    );

    // The retry gets the next response.
    let retry = post(&url, &json!({"stream": true})).await;
    assert_eq!(retry.status(), 200);
    assert!(retry.text().await.unwrap().contains(r#""content":"ok""#));
}

#[tokio::test]
async fn server_error_without_events() {
    let mock = MockLlm::start(Default::default()).unwrap();
    mock.push(Response::error(500, "boom"));
    assert_eq!(mock.remaining(), 1);

    let reply = post(
        &format!("{}/chat/completions", mock.base_url()),
        &json!({"stream": true}),
    )
    .await;
    assert_eq!(reply.status(), 500);
    let body: Value = reply.json().await.unwrap();
    assert_eq!(body["error"]["message"], "boom");
    assert_eq!(body["error"]["type"], "server_error");
}

#[tokio::test]
async fn records_what_the_client_sent() {
    let mock = MockLlm::start(Default::default()).unwrap();
    mock.push(Response::text("one"));
    mock.push(Response::text("two"));
    let url = format!("{}/chat/completions", mock.base_url());
    let first =
        json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "hi"}]});
    let reply = common::http()
        .post(&url)
        .bearer_auth("sk-test")
        .header("X-Custom", "Yes")
        .json(&first)
        .send()
        .await
        .unwrap();
    assert!(reply.text().await.unwrap().contains("[DONE]"));
    let second = json!({"model": "m", "stream": false, "tools": [{"type": "function"}]});
    post(&url, &second).await.text().await.unwrap();

    let recorded = mock.requests();
    assert_eq!(recorded.len(), 2);
    assert_eq!(recorded[0].method, "POST");
    assert_eq!(recorded[0].path, "/v1/chat/completions");
    assert_eq!(recorded[0].body, first);
    assert_eq!(recorded[0].headers["authorization"], "Bearer sk-test");
    assert_eq!(recorded[0].headers["x-custom"], "Yes");
    assert_eq!(recorded[1].body, second);

    // The same log over HTTP, for tests in other languages.
    let over_http: Value = reqwest::get(format!("{}/_mock/requests", root(&mock)))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(over_http, serde_json::to_value(&recorded).unwrap());
    assert_eq!(over_http[1]["body"]["tools"][0]["type"], "function");
}
