//! `hearth run -p "…"`: one prompt to completion in the terminal, for scripts and CI.
//!
//! A small ACP client over the in-process engine: it creates a session (with `--model` and
//! `--mode` as the config's defaults), sends the prompt, prints the answer on stdout and tool activity on stderr
//! (`--output jsonl`: every `session/update` as one JSON line on stdout), answers permission
//! requests on the terminal when there is one (and rejects them when there is not), and
//! questions — it advertises `elicitation.form` — on the terminal too (`form.rs`; without
//! one, the question fails and the model is told it could not ask), and exits non-zero
//! unless the turn ended normally.

use std::io::{self, BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hearth_core::{Config, Engine, Host};

use crate::credentials::{self, SignIn};
use serde_json::{Value, json};

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Output {
    Text,
    Jsonl,
}

/// The mode comes in through the config (`permissionMode`), the model through `model`.
pub struct RunArgs {
    pub prompt: String,
    pub cwd: Option<PathBuf>,
    pub output: Output,
}

/// Exit codes: 0 the turn ended (end_turn, max_tokens); 1 an error; 3 the model refused;
/// 4 the step limit was hit; 130 cancelled (Ctrl-C).
pub fn run(config: Config, sign_in: SignIn, args: RunArgs) -> Result<u8, String> {
    let (tx, frames) = mpsc::channel();
    let host = Arc::new(Forward(Mutex::new(tx)));
    let engine = Engine::start_with(config, host, credentials::ports(sign_in));
    let engine = Arc::new(engine.map_err(|e| e.to_string())?);
    let interrupt = engine.clone();
    let mut client = Client {
        engine,
        frames,
        next_id: 1,
        output: args.output,
        session: String::new(),
    };
    let outcome = client.session(&args).and_then(|()| {
        let session = client.session.clone();
        interrupt_cancels(interrupt, session);
        client.prompt(&args.prompt)
    });
    client.engine.close().map_err(|e| e.to_string())?;
    outcome
}

struct Forward(Mutex<Sender<String>>);

impl Host for Forward {
    fn deliver(&self, frame: &str) {
        let _ = self
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .send(frame.to_string());
    }
}

struct Client {
    engine: Arc<Engine>,
    frames: Receiver<String>,
    next_id: u64,
    output: Output,
    session: String,
}

impl Client {
    fn session(&mut self, args: &RunArgs) -> Result<(), String> {
        self.call("initialize", json!({"protocolVersion": 1, "clientCapabilities": {"elicitation": {"form": {}}}, "clientInfo": {"name": "hearth run", "version": env!("CARGO_PKG_VERSION")}}))?;
        let cwd = match &args.cwd {
            Some(dir) => {
                std::fs::canonicalize(dir).map_err(|e| format!("--cwd {}: {e}", dir.display()))?
            }
            None => std::env::current_dir().map_err(|e| e.to_string())?,
        };
        let created = self.call("session/new", json!({"cwd": cwd, "mcpServers": []}))?;
        self.session = created["sessionId"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        Ok(())
    }

    fn prompt(&mut self, text: &str) -> Result<u8, String> {
        let result = self.call(
            "session/prompt",
            json!({"sessionId": self.session, "prompt": [{"type": "text", "text": text}]}),
        )?;
        if self.output == Output::Text {
            println!();
        }
        Ok(match result["stopReason"].as_str() {
            Some("end_turn" | "max_tokens") => 0,
            Some("refusal") => 3,
            Some("max_turn_requests") => 4,
            Some("cancelled") => 130,
            _ => 1,
        })
    }

    /// Sends a request and serves everything that arrives until its answer.
    fn call(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.engine
            .send(&frame.to_string())
            .map_err(|e| e.to_string())?;
        loop {
            let frame = self
                .frames
                .recv_timeout(Duration::from_secs(3600))
                .map_err(|_| "the engine went quiet".to_string())?;
            let frame: Value = serde_json::from_str(&frame).map_err(|e| e.to_string())?;
            match (frame.get("method").and_then(Value::as_str), frame.get("id")) {
                (Some("session/update"), _) => self.show(&frame["params"]["update"]),
                (Some("session/request_permission"), Some(request)) => {
                    let answer = ask(&frame["params"]);
                    let reply =
                        json!({"jsonrpc": "2.0", "id": request, "result": {"outcome": answer}});
                    self.engine
                        .send(&reply.to_string())
                        .map_err(|e| e.to_string())?;
                }
                (Some("elicitation/create"), Some(request)) => {
                    let reply = match crate::form::answer(&frame["params"]) {
                        Ok(result) => json!({"jsonrpc": "2.0", "id": request, "result": result}),
                        Err(message) => json!({"jsonrpc": "2.0", "id": request,
                            "error": {"code": -32603, "message": message}}),
                    };
                    self.engine
                        .send(&reply.to_string())
                        .map_err(|e| e.to_string())?;
                }
                (None, Some(answered)) if *answered == json!(id) => {
                    return match frame.get("error") {
                        Some(error) => Err(error_text(error)),
                        None => Ok(frame["result"].clone()),
                    };
                }
                _ => {}
            }
        }
    }

    fn show(&self, update: &Value) {
        if self.output == Output::Jsonl {
            println!("{update}");
            return;
        }
        let text = |u: &Value| {
            u["content"]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        };
        match update["sessionUpdate"].as_str() {
            Some("agent_message_chunk") => {
                print!("{}", text(update));
                let _ = io::stdout().flush();
            }
            Some("tool_call") => eprintln!("\n⏺ {}", update["title"].as_str().unwrap_or("tool")),
            Some("tool_call_update") => match update["status"].as_str() {
                Some("failed") => eprintln!("  ✗ {}", first_text(&update["content"])),
                Some("completed") => eprintln!("  ✓ done"),
                _ => {
                    if let Some(delta) = update
                        .pointer("/_meta/terminal_output/data")
                        .and_then(Value::as_str)
                    {
                        eprint!("{delta}");
                    }
                }
            },
            Some("plan") => {
                for entry in update["entries"].as_array().into_iter().flatten() {
                    eprintln!(
                        "  [{}] {}",
                        entry["status"].as_str().unwrap_or(""),
                        entry["content"].as_str().unwrap_or("")
                    );
                }
            }
            _ => {}
        }
    }
}

fn first_text(content: &Value) -> String {
    content[0]["content"]["text"]
        .as_str()
        .unwrap_or("failed")
        .to_string()
}

fn error_text(error: &Value) -> String {
    let message = error["message"].as_str().unwrap_or("error");
    match error.pointer("/data/detail").and_then(Value::as_str) {
        Some(detail) => format!("{message}: {detail}"),
        None => message.to_string(),
    }
}

/// Asks on the terminal; without one, nobody can approve, so the call is rejected.
fn ask(params: &Value) -> Value {
    let options = params["options"].as_array().cloned().unwrap_or_default();
    let pick = |kind: &str| {
        options
            .iter()
            .find(|o| o["kind"] == kind)
            .map(|o| o["optionId"].clone())
    };
    let title = params["toolCall"]["title"]
        .as_str()
        .unwrap_or("a tool call");
    if !io::stdin().is_terminal() {
        eprintln!("\n  ✗ rejected `{title}`: approving needs a terminal (or pass --mode)");
        return json!({"outcome": "selected", "optionId": pick("reject_once")});
    }
    let always = pick("allow_always").is_some();
    eprint!(
        "\n  Allow {title}? [y]es{} / [n]o: ",
        if always { " / [a]lways" } else { "" }
    );
    let _ = io::stderr().flush();
    let mut line = String::new();
    let _ = io::stdin().lock().read_line(&mut line);
    let kind = match line.trim() {
        "y" | "Y" | "yes" => "allow_once",
        "a" | "A" | "always" if always => "allow_always",
        _ => "reject_once",
    };
    json!({"outcome": "selected", "optionId": pick(kind)})
}

/// Ctrl-C cancels the turn; the prompt then answers `cancelled` and the run exits 130.
fn interrupt_cancels(engine: Arc<Engine>, session: String) {
    let cancel =
        json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}})
            .to_string();
    let _ = crate::signals::on_termination(move || {
        let _ = engine.send(&cancel);
    });
}
