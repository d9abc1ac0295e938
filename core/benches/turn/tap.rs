//! A TCP relay between the engine and the mock LLM that notes when bytes pass each way, so a
//! model step can be timed from outside the engine as the issue defines it: from the last
//! byte of a reply (a tool call) to the first byte of the request that follows it.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Clone, Copy)]
enum Mark {
    /// The first bytes of a request (a read that begins with `POST `).
    Request(Instant),
    /// Bytes of a reply.
    Reply(Instant),
}

type Marks = Arc<Mutex<Vec<Mark>>>;

pub struct Tap {
    address: String,
    marks: Marks,
}

impl Tap {
    /// Relays every connection made to the tap to `upstream` (`host:port`).
    pub fn start(upstream: String) -> Tap {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let marks = Marks::default();
        let relay_marks = marks.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let server = TcpStream::connect(&upstream).unwrap();
                relay(client, server, relay_marks.clone());
            }
        });
        Tap { address, marks }
    }

    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.address)
    }

    /// The gaps between a reply's last byte and the next request's first byte since the last
    /// call (a request with no reply before it, a prompt's first, has none).
    pub fn take_gaps(&self) -> Vec<Duration> {
        let marks = std::mem::take(&mut *self.marks.lock().unwrap());
        let mut last_reply = None;
        let mut gaps = Vec::new();
        for mark in marks {
            match mark {
                Mark::Reply(at) => last_reply = Some(at),
                Mark::Request(at) => {
                    if let Some(reply) = last_reply.take() {
                        gaps.push(at - reply);
                    }
                }
            }
        }
        gaps
    }
}

fn relay(client: TcpStream, server: TcpStream, marks: Marks) {
    for s in [&client, &server] {
        s.set_nodelay(true).unwrap();
    }
    let (client_in, server_in) = (client.try_clone().unwrap(), server.try_clone().unwrap());
    let up = marks.clone();
    std::thread::spawn(move || pump(client_in, server, &up, true));
    std::thread::spawn(move || pump(server_in, client, &marks, false));
}

/// Copies `from` to `to`, marking each read, until `from` closes. The mark is taken when
/// bytes are there to read (a peek at the first few), before the read copies them: a long
/// request's first read takes up to 256 KiB, and that copy is the tap's time, not the
/// engine's.
fn pump(mut from: TcpStream, mut to: TcpStream, marks: &Marks, requests: bool) {
    let mut buffer = vec![0; 256 * 1024];
    let mut first = [0; 5];
    loop {
        if from.peek(&mut first).is_err() {
            break;
        }
        let at = Instant::now();
        let read = match from.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        let mark = match requests {
            true if buffer[..read].starts_with(b"POST ") => Some(Mark::Request(at)),
            true => None,
            false => Some(Mark::Reply(at)),
        };
        if let Some(mark) = mark {
            marks.lock().unwrap().push(mark);
        }
        if to.write_all(&buffer[..read]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}
