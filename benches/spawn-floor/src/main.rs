//! The floor of the startup bench's spawn figure (core/benches/startup.rs): the least a
//! process spawned as an ACP agent can do — start, read one line from stdin, write one line
//! to stdout — so that `hearth acp`'s spawn → `initialize` answered is read as a ratio of it,
//! measured in the same run. It links nothing of Hearth's.

use std::io::{BufRead, Write};

fn main() {
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line).is_ok() {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
        let _ = out.flush();
    }
    // Waits for EOF, as an agent does, so the driver can read its memory before it exits.
    let _ = std::io::stdin().lock().read_line(&mut line);
}
