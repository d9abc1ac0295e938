//! The stdio host: a thin loop between stdin/stdout and the engine.

use std::io::{self, BufRead, BufWriter, Write};
use std::sync::{Arc, Mutex};

use hearth_core::{Config, Engine, Host};

/// Writes each frame as one line and flushes, so the client sees it at once.
struct StdoutHost {
    out: Mutex<BufWriter<io::Stdout>>,
}

impl Host for StdoutHost {
    fn deliver(&self, frame: &str) {
        let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        let written = out
            .write_all(frame.as_bytes())
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush());
        if let Err(e) = written {
            tracing::warn!(error = %e, "cannot write to stdout");
        }
    }
}

pub fn serve(config: Config) -> Result<(), String> {
    let host = Arc::new(StdoutHost {
        out: Mutex::new(BufWriter::new(io::stdout())),
    });
    let engine = Engine::start(config, host).map_err(|e| e.to_string())?;
    let mut stdin = io::stdin().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        match stdin.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {
                let frame = trim_line_end(&line);
                if frame.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                if engine.send_bytes(frame).is_err() {
                    break;
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot read stdin");
                break;
            }
        }
    }
    engine.close().map_err(|e| e.to_string())
}

fn trim_line_end(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}
