//! What the sandbox suites share (`sandbox.rs`, `sandbox_network.rs`): whether this machine
//! confines, which layer this run tests, and commands run through the engine under a
//! `sandbox` config. Linux only.
//!
//! The layer: bwrap where it is installed, Landlock without it or with `HEARTH_TEST_BWRAP=off`
//! (then `sandbox.bwrap` is "off"); CI runs the suites both ways. Under
//! `HEARTH_REQUIRE_SANDBOX=1` a missing Landlock or a missing bwrap fails instead of skipping.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hearth_core::{Confinement, Launch};
use hearth_testkit::{AcpClient, InProcess};
use serde_json::{Value, json};

use super::tools::{session, tool_updates, workspace};
use super::{Setup, call, config, text, tool_results};

fn required() -> bool {
    std::env::var("HEARTH_REQUIRE_SANDBOX").as_deref() == Ok("1")
}

/// Whether `bwrap` is installed where the engine looks for it (`io/process/bwrap.rs`'s
/// `INSTALLED`; apt's bubblewrap puts it in /usr/bin).
pub fn bwrap_installed() -> bool {
    [
        "/usr/bin/bwrap",
        "/bin/bwrap",
        "/usr/local/bin/bwrap",
        "/run/current-system/sw/bin/bwrap",
    ]
    .iter()
    .any(|path| std::path::Path::new(path).is_file())
}

/// Whether this run tests the bwrap layer.
pub fn bwrap_layer() -> bool {
    if std::env::var("HEARTH_TEST_BWRAP").as_deref() == Ok("off") {
        return false;
    }
    assert!(
        bwrap_installed() || !required(),
        "HEARTH_REQUIRE_SANDBOX=1 but bwrap is not installed (apt-get install bubblewrap), \
         or set HEARTH_TEST_BWRAP=off"
    );
    bwrap_installed()
}

/// How the backend this run's layer reports begins.
pub fn backend_prefix() -> &'static str {
    if bwrap_layer() {
        "bwrap + seccomp"
    } else {
        "landlock ABI "
    }
}

/// What running `commands` in turn, under the `sandbox` settings `sandbox`, gave: the results
/// the model read, and each final tool call update.
pub struct Ran {
    pub setup: Setup,
    pub cwd: PathBuf,
    pub results: Vec<String>,
    pub finals: Vec<Value>,
}

/// Runs `commands` in bypass mode under the `sandbox` settings, this run's layer added.
pub fn run(sandbox: Value, commands: &[String]) -> Ran {
    run_with_home(sandbox, commands, None)
}

/// Gives every child the `HOME` it holds (the engine's own environment stays untouched).
struct FakeHome(PathBuf);

impl Confinement for FakeHome {
    fn confine(&self, launch: &mut Launch) -> Result<(), String> {
        launch.env.retain(|(name, _)| name != "HOME");
        launch.env.push(("HOME".into(), self.0.clone().into()));
        Ok(())
    }
}

/// Like `run`, the commands' `HOME` being `home` when given.
pub fn run_with_home(sandbox: Value, commands: &[String], home: Option<&Path>) -> Ran {
    let mut responses: Vec<Value> = commands
        .iter()
        .enumerate()
        .map(|(i, command)| {
            call(
                &format!("c{i}"),
                "run_command",
                json!({ "command": command }),
            )
        })
        .collect();
    responses.push(text(&["done"]));
    let setup = Setup::new(json!({ "responses": responses }));
    let cwd = workspace(&setup);
    let mut settings = sandbox;
    if !bwrap_layer() {
        settings["bwrap"] = json!("off");
    }
    let config = config(
        &setup,
        json!({ "permissionMode": "bypass", "sandbox": settings }),
    );
    let engine = match home {
        Some(home) => InProcess::start_confined(&config, Arc::new(FakeHome(home.to_owned()))),
        None => InProcess::start(&config),
    };
    let mut client = AcpClient::new(engine);
    client.initialize();
    let session = session(&mut client, &cwd);
    client.prompt(&session, "run them");
    let finals = tool_updates(&client, &session)
        .into_iter()
        .filter(|u| u["status"] == "completed" || u["status"] == "failed")
        .collect();
    Ran {
        results: tool_results(&setup, commands.len()),
        finals,
        cwd,
        setup,
    }
}

/// `commands` under the default sandbox.
pub fn sandboxed(commands: &[String]) -> Ran {
    run(json!({}), commands)
}

/// The first line of a result: "Exit code: N".
pub fn exit_code(result: &str) -> &str {
    result.lines().next().unwrap_or_default()
}
