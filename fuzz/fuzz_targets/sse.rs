//! The LLM stream decoders (core/src/llm/sse.rs, openai.rs, anthropic.rs), reached through
//! the public API only: a real turn against a tiny HTTP server in this process that answers
//! every model request with the fuzz input as its (chunked) response body.
//!
//! Input layout: byte 0 picks the dialect (bit 0: OpenAI chat completions or Anthropic
//! Messages), how the body is cut into HTTP chunks (bits 1-3) and the status (bits 4-6: 6 is
//! 400, 7 is 500, else 200); the rest is the body.
//!
//! The engines run in `plan` mode and the host cancels every permission request, so a tool
//! call the fuzzer invents can read the (empty) workspace at most: no edit, no command, no
//! fetch. `maxTurnRequests: 2` bounds a turn that keeps calling tools; `maxRetries: 0` and
//! `streamIdleTimeoutSecs: 1` keep failures fast.
//!
//! Property: no panic, no hang; the prompt is answered exactly once (a result or an error),
//! and so are `session/new` and `session/delete` around it.
#![no_main]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex, OnceLock};

use hearth_fuzz::{Harness, id_key, request};
use libfuzzer_sys::fuzz_target;
use serde_json::json;

/// What the server answers to every request: status, body, chunk size (0: one chunk).
#[derive(Default, Clone)]
struct Reply {
    status: u16,
    body: Vec<u8>,
    chunk: usize,
}

struct Server {
    url: String,
    reply: Arc<Mutex<Reply>>,
}

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a local port");
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let reply = Arc::new(Mutex::new(Reply::default()));
        let shared = reply.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let reply = shared.lock().unwrap().clone();
                std::thread::spawn(move || serve(stream, &reply));
            }
        });
        Server { url, reply }
    })
}

/// Reads one request (head and `Content-Length` body), writes `reply` and closes.
fn serve(stream: TcpStream, reply: &Reply) {
    let _ = stream.set_nodelay(true);
    let mut reader = BufReader::new(match stream.try_clone() {
        Ok(s) => s,
        Err(_) => return,
    });
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let mut out = stream;
    let reason = match reply.status {
        200 => "OK",
        400 => "Bad Request",
        _ => "Internal Server Error",
    };
    let content_type = if reply.status == 200 { "text/event-stream" } else { "application/json" };
    let head = format!(
        "HTTP/1.1 {} {reason}\r\nContent-Type: {content_type}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        reply.status
    );
    let mut wire = head.into_bytes();
    let size = if reply.chunk == 0 { reply.body.len().max(1) } else { reply.chunk };
    for piece in reply.body.chunks(size) {
        wire.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        wire.extend_from_slice(piece);
        wire.extend_from_slice(b"\r\n");
    }
    wire.extend_from_slice(b"0\r\n\r\n");
    // The client may hang up early (a malformed stream fails at once): not an error here.
    let _ = out.write_all(&wire);
    let _ = out.flush();
    let _ = out.shutdown(std::net::Shutdown::Write);
    // Drain until the client closes, so the close is orderly (no reset racing the body).
    let _ = std::io::copy(&mut reader, &mut std::io::sink());
}

fn config(dialect: usize) -> String {
    let url = &server().url;
    let provider = json!({ "baseUrl": url, "apiKey": "fuzz", "maxRetries": 0 });
    let (model, providers) = if dialect == 0 {
        ("fuzz-model", json!({ "openai": provider }))
    } else {
        ("claude-x", json!({ "anthropic": provider }))
    };
    json!({
        "dataDir": ":memory:",
        "workerThreads": 2,
        "model": model,
        "providers": providers,
        "streamIdleTimeoutSecs": 1,
        "maxTurnRequests": 2,
        "permissionMode": "plan",
    })
    .to_string()
}

static HARNESSES: Mutex<[Option<Harness>; 2]> = Mutex::new([None, None]);

const CHUNKS: [usize; 8] = [0, 1, 2, 3, 7, 16, 64, 512];

fuzz_target!(|data: &[u8]| {
    let Some((&control, body)) = data.split_first() else {
        return;
    };
    let dialect = (control & 1) as usize;
    let status = match (control >> 4) & 7 {
        6 => 400,
        7 => 500,
        _ => 200,
    };
    *server().reply.lock().unwrap() = Reply {
        status,
        body: body.to_vec(),
        chunk: CHUNKS[((control >> 1) & 7) as usize],
    };

    let mut guard = HARNESSES.lock().unwrap_or_else(|p| p.into_inner());
    let harness = guard[dialect].get_or_insert_with(|| Harness::new(&config(dialect)));
    harness.begin_round();
    let harness: &Harness = harness;
    let mut expected = BTreeMap::new();
    let mut count = |id: &serde_json::Value| *expected.entry(id_key(id)).or_default() += 1;

    let (new_id, session) = harness.new_session_with_id();
    count(&new_id);
    let session = session.expect("session/new succeeds");
    let prompt = harness.fresh_id("prompt");
    count(&prompt);
    harness.send_text(&request(
        &prompt,
        "session/prompt",
        json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "Read README.md" }] }),
    ));
    // The round below reports a missing answer as a hang; delete only after the turn.
    harness.wait_answer(&prompt);
    let delete = harness.fresh_id("delete");
    count(&delete);
    harness.send_text(&request(&delete, "session/delete", json!({ "sessionId": session })));
    harness.end_round(expected, &String::from_utf8_lossy(data));
});
