//! `hearth auth`: stores the user's API key for a provider (`credentials.rs` says where),
//! shows what is stored (`status`) and removes it (`logout`). What editors run for ACP's
//! `terminal` auth method.

use std::io::{BufRead, IsTerminal, Read};

use hearth_core::{Config, ProviderName};

use crate::credentials::{self, Place};

#[derive(clap::Args)]
pub struct AuthCommand {
    #[command(subcommand)]
    action: Option<Action>,
    /// The provider: openai or anthropic (asked for when interactive).
    #[arg(long, global = true)]
    provider: Option<ProviderName>,
    /// Read the key from stdin instead of asking (for scripts).
    #[arg(long)]
    key_stdin: bool,
}

#[derive(clap::Subcommand)]
enum Action {
    /// Show, per provider, where its key comes from.
    Status,
    /// Remove the stored key (of --provider, else of every provider).
    Logout,
}

pub fn run(command: AuthCommand, config: &Config) -> Result<u8, String> {
    match command.action {
        Some(Action::Status) => status(config),
        Some(Action::Logout) => logout(config, command.provider),
        None => sign_in(config, command.provider, command.key_stdin),
    }
}

fn names() -> String {
    ProviderName::ALL.map(ProviderName::as_str).join(", ")
}

fn sign_in(config: &Config, provider: Option<ProviderName>, key_stdin: bool) -> Result<u8, String> {
    let interactive = !key_stdin;
    if interactive && !std::io::stdin().is_terminal() {
        return Err("no terminal to ask on: pass --key-stdin and --provider".into());
    }
    let provider = match provider {
        Some(p) => p,
        None if interactive => ask_provider()?,
        None => return Err(format!("--key-stdin needs --provider ({})", names())),
    };
    let key = if interactive {
        rpassword::prompt_password(format!("{} API key (not shown): ", provider.as_str()))
            .map_err(|e| format!("cannot read the key: {e}"))?
    } else {
        let mut key = String::new();
        std::io::stdin()
            .read_to_string(&mut key)
            .map_err(|e| format!("cannot read the key from stdin: {e}"))?;
        key
    };
    let key = key.trim();
    if key.is_empty() {
        return Err("the key is empty; nothing was stored".into());
    }
    let name = provider.as_str();
    match credentials::for_config(config).save(provider, key)? {
        Place::Keyring => eprintln!("Stored the {name} key in the OS credential store."),
        Place::File(path) => eprintln!(
            "No OS credential store answered; stored the {name} key in {} (owner-only).",
            path.display()
        ),
    }
    if config.host_passes_key(provider) {
        eprintln!("Note: a key passed by the host (config or environment) still wins over it.");
    }
    Ok(0)
}

fn ask_provider() -> Result<ProviderName, String> {
    for (i, provider) in ProviderName::ALL.iter().enumerate() {
        eprintln!("  {}) {}", i + 1, provider.as_str());
    }
    eprint!("Provider [1]: ");
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| format!("cannot read the provider: {e}"))?;
    let answer = line.trim();
    match answer.parse::<usize>() {
        _ if answer.is_empty() => Ok(ProviderName::ALL[0]),
        Ok(n) if (1..=ProviderName::ALL.len()).contains(&n) => Ok(ProviderName::ALL[n - 1]),
        _ => answer.parse(),
    }
}

fn status(config: &Config) -> Result<u8, String> {
    let credentials = credentials::for_config(config);
    for provider in ProviderName::ALL {
        let source = if config.host_passes_key(provider) {
            let var = provider.key_env();
            format!("key passed by the host (config apiKey or {var})")
        } else if credentials.load(provider).is_some() {
            "signed in (stored with `hearth auth`)".to_string()
        } else {
            "not signed in".to_string()
        };
        println!("{}: {source}", provider.as_str());
    }
    Ok(0)
}

fn logout(config: &Config, provider: Option<ProviderName>) -> Result<u8, String> {
    let credentials = credentials::for_config(config);
    let providers: Vec<ProviderName> = match provider {
        Some(p) => vec![p],
        None => ProviderName::ALL.to_vec(),
    };
    for provider in providers {
        let removed = credentials.delete(provider)?;
        let what = if removed { "removed" } else { "none stored" };
        eprintln!("{}: {what}", provider.as_str());
    }
    Ok(0)
}
