//! The allowlist proxy: an HTTP proxy Hearth runs for one confined command, on a listener
//! that lives in the command's own network namespace (made there and handed over, see
//! `platform/linux/src/handoff.rs`), so it is the one thing the command can connect to.
//! `CONNECT host:port` opens a tunnel, and a plain-HTTP request in absolute form
//! (`GET http://host/path`) is forwarded in origin form, when the host is on the allowlist
//! (`sandbox::allowed`); any other host gets a 403 that names it and says how to allow it.
//! No SOCKS: the proxy variables a command gets all say `http://`, which curl, pip, npm, git,
//! Python and Go read. One proxy per command, stopped (its tunnels with it) when its
//! [`Proxy`] is dropped, together with the command's process tree.
//!
//! Limits: a name on the list is trusted whatever it resolves to (DNS rebinding), and a
//! kept-alive plain-HTTP connection carries later requests to the first host it was opened to.

use std::net::TcpListener as StdListener;
use std::os::fd::OwnedFd;
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt, copy_bidirectional};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{AbortHandle, JoinSet};

use crate::net::PROXY_VARIABLES;
use crate::sandbox::{allowed, split_authority};

/// The longest request head read before a request is refused.
const HEAD_LIMIT: usize = 64 * 1024;

/// The variables that point a command at the proxy on `port`: every spelling tools read, and
/// an empty `NO_PROXY`, so even loopback names go through it (there is no other way out).
pub fn env(port: u16) -> Vec<(&'static str, String)> {
    let url = format!("http://127.0.0.1:{port}");
    let mut vars: Vec<(&'static str, String)> = PROXY_VARIABLES
        .into_iter()
        .map(|name| (name, url.clone()))
        .collect();
    vars.extend([("NO_PROXY", String::new()), ("no_proxy", String::new())]);
    vars
}

/// A running proxy; dropping it stops it and every tunnel it holds.
pub struct Proxy(AbortHandle);

impl Drop for Proxy {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Serves `listener` (a listening TCP socket) for `allowlist` on the current runtime.
pub fn serve(listener: OwnedFd, allowlist: Vec<String>) -> std::io::Result<Proxy> {
    let runtime = tokio::runtime::Handle::try_current().map_err(std::io::Error::other)?;
    let listener = StdListener::from(listener);
    listener.set_nonblocking(true)?;
    let listener = {
        let _entered = runtime.enter();
        TcpListener::from_std(listener)?
    };
    let task = runtime.spawn(accept(listener, Arc::new(allowlist)));
    Ok(Proxy(task.abort_handle()))
}

/// Accepts connections until aborted; the connections' tasks go with it (the set is dropped).
async fn accept(listener: TcpListener, allowlist: Arc<Vec<String>>) {
    let mut connections = JoinSet::new();
    while let Ok((client, _)) = listener.accept().await {
        let allowlist = allowlist.clone();
        connections.spawn(async move {
            let _ = relay(client, &allowlist).await;
        });
        // Finished connections are reaped as new ones come, so the set stays small.
        while connections.try_join_next().is_some() {}
    }
}

/// One client connection: its request read, answered or relayed to its host.
async fn relay(mut client: TcpStream, allowlist: &[String]) -> std::io::Result<()> {
    let (head, rest) = read_head(&mut client).await?;
    let request = match parse(&head) {
        Ok(request) => request,
        Err(why) => return client.write_all(&answer(400, why, why)).await,
    };
    if !allowed(allowlist, &request.host, request.port) {
        let (reason, body) = refusal(&request.host, request.port);
        return client.write_all(&answer(403, &reason, &body)).await;
    }
    let mut upstream = match TcpStream::connect((request.host.as_str(), request.port)).await {
        Ok(upstream) => upstream,
        Err(e) => {
            let body = format!("cannot reach {}:{}: {e}", request.host, request.port);
            return client
                .write_all(&answer(502, "cannot reach the host", &body))
                .await;
        }
    };
    match &request.forward {
        None => {
            client
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .await?
        }
        Some(head) => upstream.write_all(head).await?,
    }
    upstream.write_all(&rest).await?;
    copy_bidirectional(&mut client, &mut upstream).await?;
    Ok(())
}

/// The request head up to its blank line, and whatever the client sent after it.
async fn read_head(client: &mut TcpStream) -> std::io::Result<(Vec<u8>, Vec<u8>)> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buf.split_off(end + 4);
            return Ok((buf, rest));
        }
        if buf.len() > HEAD_LIMIT {
            return Err(std::io::Error::other("request head too long"));
        }
        match client.read(&mut chunk).await? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// A request the proxy understood.
#[derive(Debug, PartialEq, Eq)]
struct Request {
    host: String,
    port: u16,
    /// For plain HTTP, the head to send the host (request line in origin form); `None` for a
    /// tunnel.
    forward: Option<Vec<u8>>,
}

/// The request `head` asks for, or why it is not one the proxy serves.
fn parse(head: &[u8]) -> Result<Request, &'static str> {
    let text = std::str::from_utf8(head).map_err(|_| "the request head is not UTF-8")?;
    let (line, headers) = text.split_once("\r\n").unwrap_or((text, ""));
    let mut words = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        return Err("not an HTTP request line");
    };
    if method == "CONNECT" {
        let (host, port) = split_authority(target, 443).ok_or("CONNECT needs host:port")?;
        return Ok(Request {
            host,
            port,
            forward: None,
        });
    }
    let rest = target
        .strip_prefix("http://")
        .ok_or("only CONNECT and absolute http:// requests go through this proxy")?;
    let (authority, path) = match rest.find('/') {
        Some(slash) => rest.split_at(slash),
        None => (rest, "/"),
    };
    let (host, port) = split_authority(authority, 80).ok_or("bad host in the request")?;
    let forward = format!("{method} {path} {version}\r\n{headers}").into_bytes();
    Ok(Request {
        host,
        port,
        forward: Some(forward),
    })
}

/// The reason phrase and body of a refusal: the host named, why, and how to allow it.
fn refusal(host: &str, port: u16) -> (String, String) {
    let shown = if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_owned()
    };
    let reason = format!("{shown}:{port} is not on the sandbox allowlist");
    let body = format!(
        "Hearth's sandbox refused {shown}:{port}: it is not on the sandbox allowlist. \
         The user can allow it by adding \"{shown}\" to sandbox.network in Hearth's \
         configuration.\n"
    );
    (reason, body)
}

/// A whole response with `status`, `reason` and a plain-text `body`; the connection closes.
/// A refusal (403) is marked as the allowlist's, as other proxies mark it.
fn answer(status: u16, reason: &str, body: &str) -> Vec<u8> {
    let marker = match status {
        403 => "X-Proxy-Error: blocked-by-allowlist\r\n",
        _ => "",
    };
    format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n{marker}\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connect_names_its_host_and_port() {
        let request = parse(b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com\r\n\r\n");
        assert_eq!(
            request,
            Ok(Request {
                host: "example.com".into(),
                port: 443,
                forward: None
            })
        );
    }

    #[test]
    fn a_plain_request_is_forwarded_in_origin_form() {
        let head = b"GET http://127.0.0.2:8080/a?b HTTP/1.1\r\nHost: 127.0.0.2:8080\r\n\r\n";
        let request = parse(head).unwrap();
        assert_eq!((request.host.as_str(), request.port), ("127.0.0.2", 8080));
        assert_eq!(
            request.forward.unwrap(),
            b"GET /a?b HTTP/1.1\r\nHost: 127.0.0.2:8080\r\n\r\n"
        );
        let bare = parse(b"GET http://example.com HTTP/1.0\r\n\r\n").unwrap();
        assert_eq!(bare.port, 80);
        assert!(bare.forward.unwrap().starts_with(b"GET / HTTP/1.0\r\n"));
    }

    #[test]
    fn other_requests_are_not_served() {
        for head in [
            &b"GET /local HTTP/1.1\r\n\r\n"[..],
            b"GET https://example.com/ HTTP/1.1\r\n\r\n",
            b"CONNECT example.com:0 HTTP/1.1\r\n\r\n",
            b"garbage\r\n\r\n",
            b"\xff\xfe\r\n\r\n",
        ] {
            assert!(parse(head).is_err(), "{}", String::from_utf8_lossy(head));
        }
    }

    #[test]
    fn a_refusal_names_the_host_and_the_setting() {
        let (reason, body) = refusal("evil.example", 443);
        assert_eq!(reason, "evil.example:443 is not on the sandbox allowlist");
        assert!(
            body.contains("adding \"evil.example\" to sandbox.network"),
            "{body}"
        );
        let (reason, _) = refusal("::1", 80);
        assert!(reason.starts_with("[::1]:80 "), "{reason}");
        let response = String::from_utf8(answer(403, &reason, "x")).unwrap();
        assert!(
            response.starts_with("HTTP/1.1 403 [::1]:80 is not on"),
            "{response}"
        );
        assert!(response.contains("X-Proxy-Error: blocked-by-allowlist"));
        assert!(response.ends_with("Content-Length: 1\r\nConnection: close\r\n\r\nx"));
    }
}
