//! `hearth-mock-llm [--script FILE] [--port N]`: serves a script for tests in other
//! languages. Prints the base URL as its only stdout line, then serves until stdin closes.

use std::io::{self, Write};
use std::process::ExitCode;

use hearth_mock_llm::{MockLlm, Script};

const USAGE: &str = "usage: hearth-mock-llm [--script FILE] [--port N]";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("hearth-mock-llm: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let mut script = Script::default();
    let mut port = 0;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value\n{USAGE}"));
        match arg.as_str() {
            "--script" => script = Script::from_file(value()?).map_err(|e| e.to_string())?,
            "--port" => port = value()?.parse().map_err(|e| format!("--port: {e}"))?,
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            _ => return Err(format!("unexpected argument {arg}\n{USAGE}")),
        }
    }
    let server = MockLlm::start_on_port(script, port).map_err(|e| e.to_string())?;
    let mut stdout = io::stdout().lock();
    writeln!(stdout, "{}", server.base_url())
        .and_then(|()| stdout.flush())
        .map_err(|e| e.to_string())?;
    // A harness that dies closes our stdin, so this is how we avoid outliving it.
    // SIGTERM and SIGINT keep their default action: there is nothing to clean up.
    io::copy(&mut io::stdin().lock(), &mut io::sink()).map_err(|e| e.to_string())?;
    drop(server);
    Ok(())
}
