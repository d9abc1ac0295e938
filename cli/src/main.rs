//! `hearth` — the command-line host of the Hearth engine.
//!
//! `hearth acp` serves ACP over stdio: one JSON-RPC frame per line on stdin into
//! `Engine::send`, one per line out on stdout. stdout carries protocol only; logs go to
//! stderr. EOF on stdin closes the engine cleanly and exits 0.

mod auth;
mod credentials;
mod form;
mod mcp_config;
mod run;
mod signals;
mod stdio;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use hearth_core::Config;

// propagate_version: `hearth acp --version` answers too, which is what a host that only ever
// spawns `hearth acp` can run to check what it found.
#[derive(Parser)]
#[command(
    name = "hearth",
    version,
    propagate_version = true,
    about = "Hearth, an ACP coding agent"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the Agent Client Protocol over stdin/stdout (what editors spawn).
    Acp(AcpArgs),
    /// Run one prompt to completion in the terminal (for scripts and CI).
    Run(RunCommand),
    /// Sign in: store an API key for a provider (what editors run for terminal auth).
    Auth(AuthArgs),
}

#[derive(clap::Args)]
struct AcpArgs {
    #[command(flatten)]
    config: ConfigArgs,
    #[command(subcommand)]
    then: Option<AcpThen>,
}

/// What `hearth acp … <this>` does instead of serving: ACP's terminal sign-in appends its
/// method's `args` to the agent's invocation, so `hearth acp --config F auth` signs in with
/// that very config (its `configDir`, where the key is kept).
#[derive(Subcommand)]
enum AcpThen {
    /// Sign in, as `hearth auth` (what a client runs for ACP's terminal sign-in).
    Auth(auth::AuthCommand),
}

#[derive(clap::Args)]
struct AuthArgs {
    #[command(flatten)]
    auth: auth::AuthCommand,
    #[command(flatten)]
    config: ConfigArgs,
}

#[derive(clap::Args)]
struct RunCommand {
    /// The prompt.
    #[arg(short = 'p', long)]
    prompt: String,
    /// The workspace (default: the current directory).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Permission mode: ask (default; asks on the terminal, rejects without one),
    /// accept_edits, plan, bypass.
    #[arg(long, value_parser = ["ask", "accept_edits", "plan", "bypass"])]
    mode: Option<String>,
    /// `text`: the answer on stdout, tool activity on stderr; `jsonl`: every session/update.
    #[arg(long, value_enum, default_value = "text")]
    output: run::Output,
    #[command(flatten)]
    config: ConfigArgs,
}

#[derive(clap::Args)]
struct ConfigArgs {
    /// A JSON config file (the same object every host passes; see the README).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Where sessions are stored (overrides `dataDir`); `:memory:` keeps nothing.
    #[arg(long, value_name = "DIR")]
    data_dir: Option<String>,
    /// The default model (overrides `model`).
    #[arg(long)]
    model: Option<String>,
    /// Log filter for stderr, e.g. `info` or `hearth_core=debug` (default: RUST_LOG, else `warn`).
    #[arg(long, value_name = "FILTER")]
    log_level: Option<String>,
    /// MCP servers for every session, from a JSON file with `mcpServers` (ACP's list, or the
    /// object keyed by name other agents use); added to the config's.
    #[arg(long, value_name = "FILE")]
    mcp_config: Option<PathBuf>,
}

impl ConfigArgs {
    fn load(&self) -> Result<Config, String> {
        let mut config = match &self.config {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| format!("cannot read the config file {}: {e}", path.display()))?;
                Config::from_json(&text).map_err(|e| format!("{}: {e}", path.display()))?
            }
            None => Config::default(),
        };
        for (flag, value) in [("--data-dir", &self.data_dir), ("--model", &self.model)] {
            if value.as_deref().is_some_and(|v| v.trim().is_empty()) {
                return Err(format!("`{flag}` must not be empty"));
            }
        }
        if let Some(dir) = &self.data_dir {
            config.data_dir = Some(dir.clone());
        }
        if let Some(model) = &self.model {
            config.model = Some(model.clone());
        }
        if let Some(path) = &self.mcp_config {
            config.mcp_servers.extend(mcp_config::read(path)?);
        }
        // What the flags changed gets the checks the file's values got.
        config.validate().map_err(|e| e.to_string())?;
        Ok(config)
    }
}

fn init_logging(filter: Option<&str>) {
    let directives = match filter {
        Some(f) => f.to_string(),
        None => std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()),
    };
    // rmcp logs every MCP notification at INFO; keep it to warnings unless asked for.
    let directives = if directives.contains("rmcp") {
        directives
    } else {
        format!("{directives},rmcp=warn")
    };
    let filter = tracing_subscriber::EnvFilter::new(directives);
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Acp(AcpArgs {
            config,
            then: Some(AcpThen::Auth(auth)),
        }) => config.load().and_then(|config| auth::run(auth, &config)),
        Command::Acp(AcpArgs { config, then: None }) => {
            init_logging(config.log_level.as_deref());
            config.load().and_then(|config| {
                let sign_in = credentials::SignIn::for_config(&config);
                stdio::serve(config, sign_in).map(|()| 0)
            })
        }
        Command::Run(command) => {
            init_logging(command.config.log_level.as_deref());
            command.config.load().and_then(|mut config| {
                let sign_in = credentials::SignIn::for_config(&config);
                if let Some(mode) = &command.mode {
                    config.permission_mode = hearth_core::Mode::parse(mode);
                }
                let args = run::RunArgs {
                    prompt: command.prompt,
                    cwd: command.cwd,
                    output: command.output,
                };
                run::run(config, sign_in, args)
            })
        }
        Command::Auth(args) => args
            .config
            .load()
            .and_then(|config| auth::run(args.auth, &config)),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("hearth: {e}");
            ExitCode::FAILURE
        }
    }
}
