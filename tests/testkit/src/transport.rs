//! Two ways to reach the engine: in-process through `Engine`, or a `hearth acp` child.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio as Pipe};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hearth_core::{Config, Confinement, Engine, Host, HostPorts};

/// Frames in, frames out.
pub trait Transport {
    fn send(&mut self, frame: &str);
    /// The next frame the agent emitted, raw, or `None` after `timeout`.
    fn recv(&mut self, timeout: Duration) -> Option<String>;
}

struct ChannelHost(Mutex<Sender<String>>);

impl Host for ChannelHost {
    fn deliver(&self, frame: &str) {
        let _ = self.0.lock().unwrap().send(frame.to_string());
    }
}

pub struct InProcess {
    pub engine: Arc<Engine>,
    frames: Receiver<String>,
}

impl InProcess {
    pub fn start(config_json: &str) -> InProcess {
        InProcess::start_with(config_json, HostPorts::default())
    }

    /// An engine whose every child passes through `policy` first (a test may give the
    /// children an environment of its own this way, e.g. a fake `HOME`).
    pub fn start_confined(config_json: &str, policy: Arc<dyn Confinement>) -> InProcess {
        let ports = HostPorts {
            confinement: Some(policy),
            ..HostPorts::default()
        };
        InProcess::start_with(config_json, ports)
    }

    fn start_with(config_json: &str, ports: HostPorts) -> InProcess {
        let config = Config::from_json(config_json).expect("valid test config");
        let (tx, rx) = mpsc::channel();
        let host = Arc::new(ChannelHost(Mutex::new(tx)));
        let engine = Engine::start_with(config, host, ports).expect("engine starts");
        InProcess {
            engine: Arc::new(engine),
            frames: rx,
        }
    }
}

impl Transport for InProcess {
    fn send(&mut self, frame: &str) {
        self.engine.send(frame).expect("engine open");
    }
    fn recv(&mut self, timeout: Duration) -> Option<String> {
        self.frames.recv_timeout(timeout).ok()
    }
}

/// `hearth acp` as a child process, one frame per line.
pub struct Stdio {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Stdio {
    /// Starts `hearth acp --config <file>` with the given config and environment tweaks.
    pub fn start(config_json: &str, dir: &Path, env: &[(&str, Option<&str>)]) -> Stdio {
        let config_path = dir.join("hearth-config.json");
        std::fs::write(&config_path, config_json).unwrap();
        let mut command = Command::new(crate::cargo_bin("hearth"));
        command
            .arg("acp")
            .arg("--config")
            .arg(&config_path)
            .stdin(Pipe::piped())
            .stdout(Pipe::piped())
            .stderr(Pipe::inherit());
        for (key, value) in env {
            match value {
                Some(v) => command.env(key, v),
                None => command.env_remove(key),
            };
        }
        let mut child = command.spawn().expect("hearth acp starts");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Stdio {
            stdin: child.stdin.take(),
            child,
            lines: rx,
        }
    }

    /// Closes stdin (the client hanging up) and waits for the exit status.
    pub fn hang_up(&mut self) -> std::process::ExitStatus {
        self.stdin.take();
        self.child.wait().expect("hearth exits")
    }
}

impl Transport for Stdio {
    fn send(&mut self, frame: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(frame.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }
    fn recv(&mut self, timeout: Duration) -> Option<String> {
        self.lines.recv_timeout(timeout).ok()
    }
}

impl Drop for Stdio {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
