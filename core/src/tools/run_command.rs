//! `run_command`: a shell command line in the working directory, its output streamed live,
//! bounded, with a timeout; cancel, timeout and close stop the whole process tree (the I/O
//! backend does that).
//!
//! Every command runs in the sandbox the user configured (`crate::sandbox`): the session's
//! roots writable in `workspace-write`, a private temp dir per session (made at the first
//! command, removed when the session closes), the network off unless allowed. When the
//! sandbox stopped the command, its result gains a short block saying what was denied; the
//! tool call carries `_meta.hearth.sandbox` = {backend, policy, denied} either way.
//!
//! The model may ask for more for one run: `sandbox: "widen"` (the network, paths to write)
//! or `"escalate"` (no sandbox), with a `justification`. That is an `Access::Escalate`, which
//! the user approves in every mode (`permissions/execute.rs`); the policy is widened only for
//! the run that was approved. With the sandbox off there is nothing to widen, and the
//! request is a plain command.

use std::path::PathBuf;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::mpsc::unbounded_channel;

use super::bounds::{cut_line, fence};
use super::{
    About, Access, CallReport, Context, Kind, Output, Planned, Result, Tool, ToolContent, ToolError,
};
use crate::access::{Escalation, Scope};
use crate::ids::new_id;
use crate::io::process::{BWRAP_BACKEND, shell};
use crate::io::{CommandResult, CommandSpec};
use crate::sandbox::{self, Denied, Policy, find_denial, notice};

pub struct RunCommand {
    /// The session's private temp dir (`TMPDIR` of its commands).
    temp_dir: PathBuf,
}

impl RunCommand {
    /// The tool of one session, with a temp dir of its own under the system's.
    pub fn for_session() -> Self {
        let system = std::env::temp_dir();
        let system = dunce::canonicalize(&system).unwrap_or(system);
        RunCommand {
            temp_dir: system.join(format!("hearth-{}", new_id("tmp"))),
        }
    }

    /// The policy a command of the session in `ctx` runs under (its roots canonical, as the
    /// sandbox compares them) with what the user approved for this run, or why its roots or
    /// paths cannot be granted.
    fn policy(&self, ctx: &Context, scope: Option<&Scope>) -> Result<Policy> {
        let roots: Vec<PathBuf> = ctx.roots.iter().map(|r| ctx.io.canonicalize(r)).collect();
        let setup = ctx.sandbox.resolved(|root| ctx.io.canonicalize(root));
        let policy = Policy::new(&setup, &roots, self.temp_dir.clone()).map_err(ToolError)?;
        match scope {
            None => Ok(policy),
            Some(Scope::Unconfined) => Ok(policy.unconfined()),
            Some(Scope::Widen { network, writable }) => policy
                .widened(&ctx.sandbox, writable, *network)
                .map_err(ToolError),
        }
    }
}

/// The longest a model may ask a command to run.
const MAX_TIMEOUT: Duration = Duration::from_secs(60 * 60);
/// Titles show at most this much of the command line.
const TITLE_CHARS: usize = 80;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The command line, e.g. `cargo test -p core 2>&1 | tail -50`.
    command: String,
    /// Stop the command after this many seconds. Default: the configured command timeout (120 s unless changed).
    #[schemars(range(min = 1, max = MAX_TIMEOUT.as_secs()))]
    timeout_secs: Option<u64>,
    /// `default`: the sandbox the user configured. Only after the sandbox denied what the command needs: `widen` asks the user for `network` and/or `writable_paths` for this run, `escalate` asks to run it with no sandbox. The user decides; plan mode refuses both.
    #[serde(default)]
    sandbox: SandboxRequest,
    /// One line for the user saying why this run needs more than the sandbox (required with `widen` and `escalate`).
    justification: Option<String>,
    /// With `widen`: existing files or directories this run may also write.
    #[serde(default)]
    writable_paths: Vec<PathBuf>,
    /// With `widen`: let this run reach the network.
    #[serde(default)]
    network: bool,
}

/// What the model asks of the sandbox for one run.
#[derive(Deserialize, JsonSchema, Default, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum SandboxRequest {
    #[default]
    Default,
    Widen,
    Escalate,
}

pub struct Call {
    command: String,
    timeout: Duration,
    /// What the user approved beyond the sandbox for this run.
    scope: Option<Scope>,
}

/// What the model is told `run_command` does, after the shell that runs it (`sh -c` on Unix,
/// PowerShell or `cmd.exe` on Windows: the model writes different command lines for each).
const DESCRIPTION: &str = "in the working directory: builds, \
    tests, git, scripts. stdout and stderr come back merged, with the exit code. \
    There is no stdin, so interactive prompts fail: pass flags like `--yes`. Long \
    output keeps its beginning and end. The command and everything it starts are \
    stopped at the timeout or when the user cancels, and nothing keeps running in \
    the background after the command returns.";

impl Tool for RunCommand {
    type Input = Input;
    type Plan = Call;

    async fn prepare(&self, input: Input, ctx: &Context) -> Result<Planned<Call>> {
        if input.command.trim().is_empty() {
            return Err(ToolError("the command is empty".into()));
        }
        let timeout = input
            .timeout_secs
            .map(|secs| Duration::from_secs(secs.max(1)).min(MAX_TIMEOUT))
            .unwrap_or(ctx.limits.command_timeout);
        let scope = requested_scope(&input, ctx)?;
        let (title, access) = match &scope {
            None => (
                title(&input.command),
                Access::Execute(input.command.clone()),
            ),
            Some(scope) => (
                escalation_title(&input.command, scope),
                Access::Escalate(Escalation {
                    command: input.command.clone(),
                    justification: justification(&input)?,
                    scope: scope.clone(),
                }),
            ),
        };
        Ok(Planned::new(
            title,
            Vec::new(),
            access,
            Call {
                command: input.command,
                timeout,
                scope,
            },
        ))
    }

    async fn run(&self, call: Call, ctx: &Context, report: &dyn CallReport) -> Result<Output> {
        let policy = self.policy(ctx, call.scope.as_ref())?;
        let spec = CommandSpec {
            command: call.command,
            cwd: ctx.cwd.clone(),
            timeout: call.timeout,
            output_limit: ctx.limits.output_limit,
            sandbox: Some(policy.clone()),
        };
        let (progress, mut deltas) = unbounded_channel::<String>();
        let forward = async {
            while let Some(delta) = deltas.recv().await {
                report.output(delta);
            }
        };
        let running = ctx.io.run_command(spec, progress, ctx.cancel.clone());
        let (result, ()) = tokio::join!(running, forward);
        let result = result?;
        let status = status_line(&result, call.timeout, ctx.cancel.is_cancelled());
        let mut output = output(&result, &status);
        let backend = backend(&policy, &result);
        let denied = find_denial(
            &policy,
            &ctx.io.canonicalize(&ctx.cwd),
            backend.starts_with(BWRAP_BACKEND),
            result.exit_code,
            result.signal.as_deref(),
            &result.output,
        );
        if let Some(denied) = &denied {
            output.for_model.push('\n');
            output
                .for_model
                .push_str(&notice(&policy, &backend, denied));
        }
        output.meta = Some(json!({ "sandbox": sandbox_meta(&policy, &backend, denied.as_ref()) }));
        Ok(output)
    }

    fn shutdown(&self) {
        // The temp dir exists once a command ran; what a command left in it goes with it.
        let _ = std::fs::remove_dir_all(&self.temp_dir);
    }

    fn about(&self) -> About {
        let shell = shell().invocation();
        About::new(
            "run_command",
            Kind::Execute,
            format!("Run a shell command ({shell}) {DESCRIPTION}"),
        )
    }
}

/// What the model asked beyond the sandbox, checked; `None` for a plain run, and when the
/// user switched the sandbox off (there is nothing to widen).
fn requested_scope(input: &Input, ctx: &Context) -> Result<Option<Scope>> {
    let widening = input.network || !input.writable_paths.is_empty();
    let scope = match input.sandbox {
        SandboxRequest::Default if widening => {
            return Err(ToolError(
                "`network` and `writable_paths` go with `sandbox: \"widen\"`".into(),
            ));
        }
        SandboxRequest::Default => return Ok(None),
        SandboxRequest::Escalate if widening => {
            return Err(ToolError(
                "`escalate` runs with no sandbox at all: leave out `network` and \
                 `writable_paths`, or ask to `widen` instead"
                    .into(),
            ));
        }
        SandboxRequest::Escalate => Scope::Unconfined,
        SandboxRequest::Widen if !widening => {
            return Err(ToolError(
                "`widen` needs `network: true` or `writable_paths`".into(),
            ));
        }
        SandboxRequest::Widen => Scope::Widen {
            network: input.network,
            // Where each really leads, as the sandbox grants and the user is shown it.
            writable: input
                .writable_paths
                .iter()
                .map(|path| ctx.io.canonicalize(&ctx.cwd.join(path)))
                .collect(),
        },
    };
    Ok((ctx.sandbox.settings.mode != sandbox::Mode::Off).then_some(scope))
}

/// The model's reason, one line; an error when it gave none.
fn justification(input: &Input) -> Result<String> {
    let line = input
        .justification
        .as_deref()
        .and_then(|text| text.lines().map(str::trim).find(|line| !line.is_empty()));
    match line {
        Some(line) => Ok(cut_line(line, JUSTIFICATION_CHARS).into_owned()),
        None => Err(ToolError(
            "`justification` is required with `widen` and `escalate`: one line telling the \
             user why this run needs more than the sandbox"
                .into(),
        )),
    }
}

/// At most this much of a justification is shown.
const JUSTIFICATION_CHARS: usize = 200;

/// "Run outside the sandbox: `npm install`", "Run with network, write /x: `npm install`".
fn escalation_title(command: &str, scope: &Scope) -> String {
    let run = title(command);
    let command = run.trim_start_matches("Run ");
    match scope {
        Scope::Unconfined => format!("Run outside the sandbox: {command}"),
        Scope::Widen { .. } => format!("Run with {}: {command}", scope.describe()),
    }
}

/// What confined the command: the launcher's backend, "off", or nothing Hearth controls (a
/// client's terminal).
fn backend(policy: &Policy, result: &CommandResult) -> String {
    match &result.sandbox {
        Some(backend) => backend.clone(),
        None if !policy.confines() => "off".into(),
        None => "none (ran in the client's terminal)".into(),
    }
}

/// `_meta.hearth.sandbox` of the tool call.
fn sandbox_meta(policy: &Policy, backend: &str, denied: Option<&Denied>) -> serde_json::Value {
    json!({
        "backend": backend,
        "policy": {
            "mode": policy.mode.as_str(),
            "network": match policy.allowlist() {
                Some(hosts) => json!(hosts),
                None => json!(policy.network_allowed()),
            },
            "writable": policy.writable,
            "tempDir": policy.temp_dir,
        },
        "denied": denied.map(Denied::to_json),
    })
}

/// "Run `cargo test`", the first line of the command, cut when long.
fn title(command: &str) -> String {
    let first = command.trim().lines().next().unwrap_or_default();
    let more = if command.trim().lines().nth(1).is_some() {
        " …"
    } else {
        ""
    };
    format!("Run `{}{more}`", cut_line(first, TITLE_CHARS))
}

fn status_line(result: &CommandResult, timeout: Duration, cancelled: bool) -> String {
    if result.timed_out {
        return format!(
            "Timed out after {} s; the command and everything it started were stopped.",
            timeout.as_secs()
        );
    }
    if cancelled {
        return "Cancelled by the user; the command and everything it started were stopped.".into();
    }
    match (result.exit_code, &result.signal) {
        (Some(code), _) => format!("Exit code: {code}"),
        (None, Some(signal)) => format!("Killed by signal {signal}"),
        (None, None) => "The command ended without an exit status.".into(),
    }
}

fn output(result: &CommandResult, status: &str) -> Output {
    let shown = if result.output.is_empty() {
        "(no output)".to_owned()
    } else {
        fence(&result.output)
    };
    let content = match &result.terminal_id {
        Some(id) => ToolContent::Terminal(id.clone()),
        None => ToolContent::Text(shown.clone()),
    };
    Output {
        for_model: format!("{status}\n{shown}"),
        content: vec![content],
        raw_output: Some(json!({
            "exitCode": result.exit_code,
            "signal": result.signal,
            "timedOut": result.timed_out,
            "truncated": result.truncated,
        })),
        ..Output::default()
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::sync::Arc;

    use futures::future::BoxFuture;
    use serde_json::json;
    use tokio::sync::mpsc::UnboundedSender;
    use tokio_util::sync::CancellationToken;

    use super::*;
    use crate::io::testing::{group_is_gone, live_group_members};
    use crate::io::{Io, IoError, Meta, WalkEntry, WalkSpec};
    use crate::tools::testing::{Recorder, call, context, prepare, workspace};

    /// A workspace whose commands are confined without the bwrap layer: these tests read the
    /// process group's id on the host from `echo $$`, which under bwrap (a pid namespace of
    /// its own, bwrap leading the group) it is not. Cancel under bwrap is proved by
    /// `core/tests/sandbox.rs`, which finds the tree by a marker instead.
    fn landlock_workspace() -> (tempfile::TempDir, Context) {
        let (dir, mut ctx) = workspace();
        let mut setup = (*ctx.sandbox).clone();
        setup.settings.bwrap = crate::sandbox::Bwrap::Off;
        ctx.sandbox = Arc::new(setup);
        (dir, ctx)
    }

    #[tokio::test]
    async fn titles_and_access_name_the_command() {
        let (_dir, ctx) = workspace();
        let prepared = prepare(
            &RunCommand::for_session(),
            json!({ "command": "cargo test" }),
            &ctx,
        )
        .await
        .unwrap();
        assert_eq!(prepared.title, "Run `cargo test`");
        assert_eq!(prepared.access, Access::Execute("cargo test".into()));
        let long = prepare(
            &RunCommand::for_session(),
            json!({ "command": "set -e\nmake\nmake install" }),
            &ctx,
        )
        .await
        .unwrap();
        assert_eq!(long.title, "Run `set -e …`");
        let empty = prepare(&RunCommand::for_session(), json!({ "command": " " }), &ctx)
            .await
            .err()
            .unwrap();
        assert_eq!(empty.0, "the command is empty");
    }

    #[tokio::test]
    async fn widening_and_escalating_are_escalations_with_a_reason() {
        let (dir, mut ctx) = workspace();
        let tool = RunCommand::for_session();
        let prepared = |input| prepare(&tool, input, &ctx);
        let escalate = json!({ "command": "npm ci", "sandbox": "escalate",
            "justification": "postinstall writes ~/.cache\nand more" });
        let planned = prepared(escalate).await.unwrap();
        assert_eq!(planned.title, "Run outside the sandbox: `npm ci`");
        let Access::Escalate(escalation) = &planned.access else {
            panic!("{:?}", planned.access)
        };
        assert_eq!(escalation.justification, "postinstall writes ~/.cache");
        assert_eq!(escalation.scope, Scope::Unconfined);
        let widen = json!({ "command": "npm ci", "sandbox": "widen", "network": true,
            "writable_paths": ["cache"], "justification": "the registry" });
        let planned = prepared(widen).await.unwrap();
        let cache = dunce::canonicalize(dir.path()).unwrap().join("cache");
        assert_eq!(
            planned.title,
            format!("Run with network, write {}: `npm ci`", cache.display())
        );
        for (input, error) in [
            (
                json!({ "command": "x", "sandbox": "escalate" }),
                "`justification` is required",
            ),
            (
                json!({ "command": "x", "sandbox": "widen", "justification": "y" }),
                "`widen` needs",
            ),
            (json!({ "command": "x", "network": true }), "go with"),
            (
                json!({ "command": "x", "sandbox": "escalate", "network": true, "justification": "y" }),
                "no sandbox at all",
            ),
        ] {
            let got = prepared(input).await.err().unwrap().0;
            assert!(got.contains(error), "{got}");
        }
        // With the sandbox off there is nothing to widen: a plain command.
        let mut off = (*ctx.sandbox).clone();
        off.settings.mode = sandbox::Mode::Off;
        ctx.sandbox = Arc::new(off);
        let escalate = json!({ "command": "npm ci", "sandbox": "escalate", "justification": "y" });
        let planned = prepare(&tool, escalate, &ctx).await.unwrap();
        assert_eq!(planned.access, Access::Execute("npm ci".into()));
    }

    #[tokio::test]
    async fn reports_exit_code_and_output() {
        let (_dir, ctx) = workspace();
        let output = call(
            &RunCommand::for_session(),
            json!({ "command": "echo hi; echo oops >&2; exit 2" }),
            &ctx,
        )
        .await
        .unwrap();
        assert_eq!(output.for_model, "Exit code: 2\n```\nhi\noops\n```");
        assert_eq!(
            output.content,
            vec![ToolContent::Text("```\nhi\noops\n```".into())]
        );
        assert_eq!(
            output.raw_output,
            Some(json!({ "exitCode": 2, "signal": null, "timedOut": false, "truncated": false }))
        );
        let quiet = call(
            &RunCommand::for_session(),
            json!({ "command": "true" }),
            &ctx,
        )
        .await
        .unwrap();
        assert_eq!(quiet.for_model, "Exit code: 0\n(no output)");
    }

    #[tokio::test]
    async fn caps_long_output_with_a_marker() {
        let dir = tempfile::tempdir().unwrap();
        let mut ctx = context(dir.path());
        ctx.limits.output_limit = 200;
        let output = call(
            &RunCommand::for_session(),
            json!({ "command": "seq 1 10000" }),
            &ctx,
        )
        .await
        .unwrap();
        assert!(output.for_model.starts_with("Exit code: 0\n```\n1\n2\n"));
        assert!(output.for_model.contains("bytes of output omitted"));
        assert!(output.for_model.ends_with("9999\n10000\n```"));
        assert_eq!(output.raw_output.unwrap()["truncated"], true);
    }

    #[tokio::test]
    async fn streams_progress_and_cancel_stops_the_whole_tree() {
        let (_dir, ctx) = landlock_workspace();
        let input = json!({ "command": "echo $$; sleep 1000 & sleep 1000" });
        let prepared = prepare(&RunCommand::for_session(), input, &ctx)
            .await
            .unwrap();
        let (recorder, mut rx) = Recorder::new();
        let tool = RunCommand::for_session();
        let running = tool.run(prepared.plan, &ctx, &recorder);
        let watcher = async {
            let first = rx.recv().await.unwrap();
            let pgid: i32 = first.trim().parse().unwrap();
            while live_group_members(pgid).len() < 2 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            ctx.cancel.cancel();
            pgid
        };
        let (output, pgid) = tokio::join!(running, watcher);
        let output = output.unwrap();
        assert!(
            output.for_model.starts_with("Cancelled by the user"),
            "{}",
            output.for_model
        );
        assert!(
            group_is_gone(pgid).await,
            "left: {:?}",
            live_group_members(pgid)
        );
    }

    #[tokio::test]
    async fn a_timeout_stops_the_whole_tree() {
        let (_dir, ctx) = landlock_workspace();
        let input = json!({ "command": "echo $$; sleep 1000 & sleep 1000", "timeout_secs": 1 });
        let output = call(&RunCommand::for_session(), input, &ctx).await.unwrap();
        assert!(
            output.for_model.starts_with("Timed out after 1 s"),
            "{}",
            output.for_model
        );
        let pgid: i32 = output.for_model.lines().nth(2).unwrap().parse().unwrap();
        assert!(
            group_is_gone(pgid).await,
            "left: {:?}",
            live_group_members(pgid)
        );
        assert_eq!(output.raw_output.unwrap()["timedOut"], true);
    }

    /// A backend that ran the command in a client terminal.
    struct TerminalIo;

    impl Io for TerminalIo {
        fn read_text<'a>(&'a self, _: &'a Path) -> BoxFuture<'a, Result<String, IoError>> {
            unreachable!()
        }
        fn read_bytes<'a>(
            &'a self,
            _: &'a Path,
            _: usize,
        ) -> BoxFuture<'a, Result<Vec<u8>, IoError>> {
            unreachable!()
        }
        fn write_text<'a>(&'a self, _: &'a Path, _: &'a str) -> BoxFuture<'a, Result<(), IoError>> {
            unreachable!()
        }
        fn remove_file<'a>(&'a self, _: &'a Path) -> BoxFuture<'a, Result<(), IoError>> {
            unreachable!()
        }
        fn stat<'a>(&'a self, _: &'a Path) -> BoxFuture<'a, Result<Option<Meta>, IoError>> {
            unreachable!()
        }
        fn canonicalize(&self, path: &Path) -> PathBuf {
            path.to_owned()
        }
        fn walk(
            &self,
            _: &WalkSpec,
            _: &CancellationToken,
            _: &mut dyn FnMut(WalkEntry) -> bool,
        ) -> Result<(), IoError> {
            unreachable!()
        }
        fn walk_parallel<'v>(
            &self,
            _: &WalkSpec,
            _: &CancellationToken,
            _: &(dyn Fn() -> crate::io::Visit<'v> + Sync),
        ) -> Result<(), IoError> {
            unreachable!()
        }
        fn run_command<'a>(
            &'a self,
            spec: CommandSpec,
            _: UnboundedSender<String>,
            _: CancellationToken,
        ) -> BoxFuture<'a, Result<CommandResult, IoError>> {
            Box::pin(async move {
                Ok(CommandResult {
                    exit_code: Some(0),
                    output: format!("ran {}\n", spec.command),
                    terminal_id: Some("term-7".into()),
                    ..CommandResult::default()
                })
            })
        }
    }

    #[tokio::test]
    async fn embeds_a_client_terminal() {
        let dir = tempfile::tempdir().unwrap();
        let mut ctx = context(dir.path());
        ctx.io = Arc::new(TerminalIo);
        let output = call(
            &RunCommand::for_session(),
            json!({ "command": "make" }),
            &ctx,
        )
        .await
        .unwrap();
        assert_eq!(output.content, vec![ToolContent::Terminal("term-7".into())]);
        assert_eq!(output.for_model, "Exit code: 0\n```\nran make\n```");
        // Hearth cannot confine the client's terminal, and says so.
        let meta = output.meta.unwrap();
        assert_eq!(
            meta["sandbox"]["backend"],
            "none (ran in the client's terminal)"
        );
    }
}
