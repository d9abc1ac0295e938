//! `web_search` end to end, against local fakes of the backends on 127.0.0.1 (their `url` is
//! configurable for that): SearXNG's JSON API and Brave's keyed one. The model reads a
//! numbered list, the client sees `resource_link`s on a call of kind `fetch`, the domain
//! filters hold, and with no backend configured the tool is not offered at all.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use common::tools::{session, tool_updates, workspace};
use common::{Setup, call, start, text, tool_results};
use serde_json::{Value, json};

/// A request the fake saw: its request line and its headers, lower-cased names.
#[derive(Debug, Clone)]
struct Seen {
    target: String,
    headers: Vec<(String, String)>,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A one-answer-fits-all HTTP server on 127.0.0.1: every request gets `body` as JSON.
/// Returns its base URL and what it saw.
fn fake(body: Value) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let target = line
                .split_whitespace()
                .nth(1)
                .unwrap_or_default()
                .to_string();
            let mut headers = Vec::new();
            loop {
                let mut header = String::new();
                reader.read_line(&mut header).unwrap();
                let Some((name, value)) = header.trim_end().split_once(':') else {
                    break;
                };
                headers.push((name.to_lowercase(), value.trim().to_string()));
            }
            record.lock().unwrap().push(Seen { target, headers });
            let body = body.to_string();
            let answer = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            stream.write_all(answer.as_bytes()).unwrap();
        }
    });
    (base, seen)
}

fn allow_network(client: &mut hearth_testkit::AcpClient<hearth_testkit::InProcess>) {
    client.respond_with(|method, _| {
        (method == "session/request_permission")
            .then(|| json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}}))
    });
}

/// The resource links on the final update of the session's one call.
fn links(updates: &[Value]) -> Vec<Value> {
    let done = updates
        .iter()
        .find(|u| u["status"] == "completed")
        .expect("a completed call");
    done["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["content"].clone())
        .collect()
}

#[test]
fn a_search_on_searxng_reaches_the_model_as_a_list_and_the_client_as_links() {
    let (base, seen) = fake(json!({
        "query": "rust async",
        "results": [
            {"title": "Async Rust", "url": "https://rust-lang.github.io/async-book/", "content": "The async book.", "engines": ["ddg"]},
            {"title": "Spam", "url": "https://spam.blocked.example/rust", "content": "Buy now."},
            {"title": "Tokio", "url": "https://tokio.rs/", "content": "An async runtime.", "publishedDate": "2026-03-01"},
            {"title": "Third", "url": "https://example.org/", "content": "Over the limit."},
        ],
        "unresponsive_engines": [],
    }));
    let setup = Setup::new(json!({"responses": [
        call("s1", "web_search", json!({"query": "rust async", "max_results": 2, "blocked_domains": ["blocked.example"]})),
        text(&["Found two."]),
    ]}));
    let cwd = workspace(&setup);
    let mut client = start(
        &setup,
        json!({"webSearch": {"provider": "searxng", "url": base}}),
    );
    let session = session(&mut client, &cwd);
    allow_network(&mut client);
    let answer = client.prompt(&session, "search");
    assert_eq!(answer["result"]["stopReason"], "end_turn");

    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].target, "/search?q=rust+async&format=json");

    let updates = tool_updates(&client, &session);
    assert_eq!(updates[0]["kind"], "fetch");
    assert_eq!(updates[0]["title"], "Searching the web: \"rust async\"");
    assert_eq!(
        links(&updates),
        [
            json!({"type": "resource_link", "uri": "https://rust-lang.github.io/async-book/", "name": "Async Rust", "description": "The async book."}),
            json!({"type": "resource_link", "uri": "https://tokio.rs/", "name": "Tokio", "description": "An async runtime."}),
        ]
    );
    assert_eq!(
        tool_results(&setup, 1),
        ["Results for \"rust async\":\n\
          1. Async Rust\n   https://rust-lang.github.io/async-book/\n   The async book.\n\
          2. Tokio (2026-03-01)\n   https://tokio.rs/\n   An async runtime."]
    );
}

#[test]
fn a_search_on_brave_sends_its_key_and_keeps_to_the_allowed_domains() {
    let (base, seen) = fake(json!({"web": {"results": [
        {"title": "serde - Rust", "url": "https://docs.rs/serde", "description": "Serde docs.", "age": "1 day ago"},
        {"title": "Serde blog", "url": "https://blog.example.com/serde", "description": "Elsewhere."},
    ]}}));
    let setup = Setup::new(json!({"responses": [
        call("s1", "web_search", json!({"query": "serde derive", "allowed_domains": ["docs.rs"]})),
        text(&["One."]),
    ]}));
    let cwd = workspace(&setup);
    let mut client = start(
        &setup,
        json!({"webSearch": {"provider": "brave", "url": base, "apiKey": "brave-test-key"}}),
    );
    let session = session(&mut client, &cwd);
    allow_network(&mut client);
    client.prompt(&session, "search");

    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        seen[0].target, "/?q=serde+derive&count=10",
        "twice the default: a filter may drop some"
    );
    assert_eq!(
        seen[0].header("x-subscription-token"),
        Some("brave-test-key")
    );
    let updates = tool_updates(&client, &session);
    assert_eq!(
        links(&updates),
        [
            json!({"type": "resource_link", "uri": "https://docs.rs/serde", "name": "serde - Rust", "description": "Serde docs."})
        ]
    );
    assert_eq!(
        tool_results(&setup, 1),
        [
            "Results for \"serde derive\":\n1. serde - Rust (1 day ago)\n   https://docs.rs/serde\n   Serde docs."
        ]
    );
}

#[test]
fn without_a_backend_the_tool_is_not_offered() {
    let setup = Setup::new(json!({"responses": [text(&["No search here."])]}));
    let cwd = workspace(&setup);
    let mut client = start(&setup, json!({}));
    let session = session(&mut client, &cwd);
    client.prompt(&session, "hi");
    let tools: Vec<String> = setup.mock.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert!(tools.contains(&"fetch".to_string()), "{tools:?}");
    assert!(!tools.contains(&"web_search".to_string()), "{tools:?}");
}
