//! `web_search` end to end, against local fakes of the backends on 127.0.0.1 (their `url` is
//! configurable for that): SearXNG's JSON API and Brave's keyed one. The model reads a
//! numbered list, the client sees `resource_link`s on a call of kind `fetch`, the domain
//! filters hold, and with no backend configured the tool is not offered at all — except to
//! Claude, which gets Anthropic's server-side search: its blocks go back verbatim (after a
//! restart too), `pause_turn` resumes, and the client sees the same call of kind `fetch`.

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

// ---- Anthropic's server-side search ---------------------------------------------------------

/// The Anthropic provider on the setup's mock as the session's model (Claude), and `extra`.
fn on_claude(setup: &Setup, extra: Value) -> Value {
    let mut config = json!({
        "model": "claude-test",
        "providers": {"anthropic": {"baseUrl": setup.mock.base_url(), "apiKey": "k", "maxRetries": 0}},
    });
    for (k, v) in extra.as_object().unwrap() {
        config[k] = v.clone();
    }
    config
}

/// The tools of request `n` as Anthropic reads them: function tools by name, server tools
/// whole.
fn anthropic_tools(setup: &Setup, n: usize) -> (Vec<String>, Vec<Value>) {
    let tools = setup.mock.requests()[n].body["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let (server, functions): (Vec<Value>, Vec<Value>) =
        tools.into_iter().partition(|t| t.get("type").is_some());
    let names = functions
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    (names, server)
}

/// A request's body without its cache breakpoints (which roll forward by design) and without
/// the closing `]}` of its messages: what the next request must begin with.
fn open_without_breakpoints(raw: &str) -> String {
    let unmarked = raw.replace(r#","cache_control":{"type":"ephemeral"}"#, "");
    unmarked.strip_suffix("]}").unwrap().to_string()
}

#[test]
fn a_claude_session_without_a_backend_searches_on_anthropics_servers() {
    let result = json!({"type": "web_search_result", "url": "https://blog.rust-lang.org/",
        "title": "Rust Blog", "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1", "page_age": "March 1, 2026"});
    let citation = json!({"type": "web_search_result_location", "url": "https://blog.rust-lang.org/",
        "title": "Rust Blog", "cited_text": "Rust 1.95 is out.", "encrypted_index": "Eo8BCioIAhgBIiQyYjQ0OWJmZi1lNm"});
    let setup = Setup::new(json!({"responses": [
        // A long turn of searches, paused by the API…
        {"events": [
            {"text": "Let me look."},
            {"serverSearch": {"id": "srvtoolu_01", "query": "rust release", "results": [result]}},
        ], "finish": "pause_turn"},
        // …and resumed when the conversation is sent back.
        {"events": [
            {"citedText": {"text": "Rust 1.95 is out.", "citations": [citation]}},
            {"text": " That is the news."},
        ]},
        text(&["Again."]),
    ]}));
    let cwd = workspace(&setup);
    let mut client = start(&setup, on_claude(&setup, json!({})));
    let session = session(&mut client, &cwd);
    let answer = client.prompt(&session, "what is new in rust?");
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    client.prompt(&session, "thanks");
    assert_eq!(setup.mock.remaining(), 0);

    // The request offers the server tool, and no function of that name.
    let (functions, server) = anthropic_tools(&setup, 0);
    assert!(
        !functions.contains(&"web_search".to_string()),
        "{functions:?}"
    );
    assert_eq!(
        server,
        [json!({"type": "web_search_20250305", "name": "web_search", "max_uses": 5})]
    );

    // The client sees the search as the local tool's call: kind fetch, links.
    let updates = tool_updates(&client, &session);
    assert_eq!(updates[0]["sessionUpdate"], "tool_call");
    assert_eq!(updates[0]["toolCallId"], "srvtoolu_01");
    assert_eq!(updates[0]["kind"], "fetch");
    assert_eq!(updates[0]["title"], "Searching the web: \"rust release\"");
    assert_eq!(updates[0]["rawInput"], json!({"query": "rust release"}));
    assert_eq!(
        links(&updates),
        [
            json!({"type": "resource_link", "uri": "https://blog.rust-lang.org/", "name": "Rust Blog"})
        ]
    );
    let done = updates.iter().find(|u| u["status"] == "completed").unwrap();
    assert_eq!(done["rawOutput"]["provider"], "anthropic");
    assert_eq!(
        done["rawOutput"]["results"][0]["published"],
        "March 1, 2026"
    );

    // The paused answer went back as it came, the last turn of the request that resumed it…
    let resumed = setup.model_messages(1);
    assert_eq!(
        resumed.last().unwrap(),
        &json!({"role": "assistant", "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {"query": "rust release"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "content": [result]},
        ]})
    );
    // …and the rest of the answer, cited text and all, goes with the next prompt.
    let next = setup.model_messages(2);
    assert_eq!(
        next[next.len() - 2],
        json!({"role": "assistant", "content": [
            {"type": "text", "text": "Rust 1.95 is out.", "citations": [citation]},
            {"type": "text", "text": " That is the news."},
        ]})
    );
    // Each request is the previous one with messages appended, byte for byte.
    let requests = setup.mock.requests();
    for pair in requests.windows(2) {
        let previous = open_without_breakpoints(&pair[0].raw);
        let next = pair[1]
            .raw
            .replace(r#","cache_control":{"type":"ephemeral"}"#, "");
        assert!(
            next.starts_with(&previous) && next[previous.len()..].starts_with(','),
            "not appended:\n{previous}\n---\n{next}"
        );
    }

    // The client saw the answer's text whole, in order.
    let text: String = client
        .updates(&session)
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    assert_eq!(
        text,
        "Let me look.Rust 1.95 is out. That is the news.Again."
    );
}

#[test]
fn after_a_restart_the_search_blocks_go_back_unchanged() {
    let result = json!({"type": "web_search_result", "url": "https://tokio.rs/", "title": "Tokio",
        "encrypted_content": "Eo8BCioIAhgB"});
    let setup = Setup::new(json!({"responses": [
        {"events": [
            {"serverSearch": {"id": "srvtoolu_02", "query": "tokio"}},
        ], "finish": "pause_turn"},
        {"events": [{"serverSearch": {"id": "srvtoolu_03", "query": "tokio", "results": [result]}}, {"text": "Found it."}]},
        text(&["Still here."]),
    ]}));
    let cwd = workspace(&setup);
    let config = on_claude(&setup, json!({}));
    let mut client = start(&setup, config.clone());
    let session = session(&mut client, &cwd);
    client.prompt(&session, "search tokio");
    drop(client);

    let mut fresh = start(&setup, config);
    fresh.call(
        "session/load",
        json!({"sessionId": session, "cwd": cwd, "mcpServers": []}),
    );
    fresh.prompt(&session, "and now?");
    let before = setup.model_messages(1);
    let after = setup.model_messages(2);
    // The paused answer (a search that found nothing) went back as it came.
    assert_eq!(
        after[1],
        json!({"role": "assistant", "content": [
            {"type": "server_tool_use", "id": "srvtoolu_02", "name": "web_search", "input": {"query": "tokio"}},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_02", "content": []},
        ]})
    );
    assert_eq!(
        after[..before.len()],
        before[..],
        "the restored context is the same"
    );
    assert_eq!(
        after[2]["content"][1],
        json!({"type": "web_search_tool_result", "tool_use_id": "srvtoolu_03", "content": [result]})
    );
}

#[test]
fn claude_is_offered_the_users_backend_or_nothing_when_turned_off() {
    let setup = Setup::new(json!({"responses": [text(&["a"]), text(&["b"])]}));
    let cwd = workspace(&setup);
    let searxng = json!({"webSearch": {"provider": "searxng", "url": "http://127.0.0.1:9"}});
    let mut client = start(&setup, on_claude(&setup, searxng));
    let s = session(&mut client, &cwd);
    client.prompt(&s, "hi");
    let (functions, server) = anthropic_tools(&setup, 0);
    assert!(
        functions.contains(&"web_search".to_string()),
        "{functions:?}"
    );
    assert_eq!(server, Vec::<Value>::new());

    let off = json!({"anthropicWebSearch": {"enabled": false}});
    let mut client = start(&setup, on_claude(&setup, off));
    let s = session(&mut client, &cwd);
    client.prompt(&s, "hi");
    let (functions, server) = anthropic_tools(&setup, 1);
    assert!(
        !functions.contains(&"web_search".to_string()),
        "{functions:?}"
    );
    assert_eq!(server, Vec::<Value>::new());
}

#[test]
fn the_server_tool_takes_the_configured_limit_and_domains() {
    let setup = Setup::new(json!({"responses": [text(&["a"])]}));
    let cwd = workspace(&setup);
    let tuned = json!({"anthropicWebSearch": {"maxUses": 2, "allowedDomains": ["docs.rs"]}});
    let mut client = start(&setup, on_claude(&setup, tuned));
    let s = session(&mut client, &cwd);
    client.prompt(&s, "hi");
    let (_, server) = anthropic_tools(&setup, 0);
    assert_eq!(
        server,
        [
            json!({"type": "web_search_20250305", "name": "web_search", "max_uses": 2, "allowed_domains": ["docs.rs"]})
        ]
    );
}
