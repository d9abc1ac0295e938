//! LSP's base protocol: JSON-RPC messages framed by a `Content-Length` header.

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt};

/// A message larger than this ends the connection: no server answer Hearth asks for comes
/// near it, and reading it whole could take the engine's memory.
const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// `message` with its header, ready to write.
pub fn frame(message: &Value) -> Vec<u8> {
    let body = message.to_string();
    let mut framed = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    framed.extend_from_slice(body.as_bytes());
    framed
}

/// The next message, `None` at the end of the stream. An error means the stream is not LSP
/// (a server printing to stdout), and the connection cannot go on.
pub async fn read<R: AsyncBufRead + Unpin>(reader: &mut R) -> Result<Option<Value>, String> {
    let Some(length) = read_header(reader).await? else {
        return Ok(None);
    };
    let mut body = vec![0; length];
    reader
        .read_exact(&mut body)
        .await
        .map_err(|e| format!("the server's output ended inside a message: {e}"))?;
    serde_json::from_slice(&body)
        .map_err(|e| format!("the server sent a message that is not JSON: {e}"))
}

/// Reads header lines up to the blank one and returns the content length.
async fn read_header<R: AsyncBufRead + Unpin>(reader: &mut R) -> Result<Option<usize>, String> {
    let mut length = None;
    let mut line = String::new();
    loop {
        line.clear();
        let read = reader
            .read_line(&mut line)
            .await
            .map_err(|e| format!("cannot read the server's output: {e}"))?;
        if read == 0 {
            return match length {
                None => Ok(None),
                Some(_) => Err("the server's output ended inside a header".into()),
            };
        }
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            return match length {
                Some(length) => Ok(Some(length)),
                None => Err("the server sent a header without Content-Length".into()),
            };
        }
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| format!("the server wrote something that is not LSP: {line:.80}"))?;
        let name = name.trim();
        if name.eq_ignore_ascii_case("content-length") {
            let parsed: usize = value
                .trim()
                .parse()
                .map_err(|_| format!("bad Content-Length: {value:.40}"))?;
            if parsed > MAX_MESSAGE_BYTES {
                return Err(format!("the server sent a {parsed}-byte message"));
            }
            length = Some(parsed);
        } else if !name.eq_ignore_ascii_case("content-type") {
            // The base protocol has two headers; anything else is a program printing (an old
            // `tsc` without `--lsp` says "error TS5023: Unknown compiler option").
            return Err(format!(
                "the server wrote something that is not LSP: {line:.120}"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    async fn read_all(bytes: &[u8]) -> Vec<Result<Option<Value>, String>> {
        let mut reader = tokio::io::BufReader::new(bytes);
        let mut out = Vec::new();
        loop {
            let next = read(&mut reader).await;
            let done = !matches!(next, Ok(Some(_)));
            out.push(next);
            if done {
                return out;
            }
        }
    }

    #[tokio::test]
    async fn frames_round_trip_with_other_headers_and_unicode() {
        let message = json!({"jsonrpc": "2.0", "id": 1, "result": "héllo"});
        let mut bytes = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n".to_vec();
        bytes.extend(frame(&message));
        bytes.extend(frame(&json!({"jsonrpc": "2.0", "method": "x"})));
        let read = read_all(&bytes).await;
        assert_eq!(read[0], Ok(Some(message)));
        assert_eq!(read[1].as_ref().unwrap().as_ref().unwrap()["method"], "x");
        assert_eq!(read[2], Ok(None));
    }

    #[tokio::test]
    async fn junk_and_truncation_are_errors() {
        for junk in [
            &b"hello from a print statement\n"[..],
            b"error TS5023: Unknown compiler option '--lsp'.\n",
        ] {
            let read = read_all(junk).await;
            assert!(
                read[0].as_ref().unwrap_err().contains("not LSP"),
                "{read:?}"
            );
        }
        let short = read_all(b"Content-Length: 10\r\n\r\n{}").await;
        assert!(
            short[0].as_ref().unwrap_err().contains("ended inside"),
            "{short:?}"
        );
        let huge = read_all(b"Content-Length: 999999999999\r\n\r\n").await;
        assert!(huge[0].is_err());
        let not_json = read_all(b"Content-Length: 3\r\n\r\nabc").await;
        assert!(not_json[0].as_ref().unwrap_err().contains("not JSON"));
    }
}
