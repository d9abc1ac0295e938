//! The `sandbox` setting of the configuration:
//!
//! ```jsonc
//! "sandbox": {
//!   "mode": "workspace-write",   // "read-only" | "workspace-write" (default) | "off"
//!   "network": false,            // false (default) | true | ["host", "*.domain", "host:port"]
//!   "writableRoots": [],         // extra absolute directories a command may write
//!   "required": false,           // no sandbox on this machine is an error, not a notice
//!   "bwrap": "auto",             // "auto" (default): the bwrap layer where bwrap is installed | "off"
//!   "languageServers": true,     // language servers run under it too (default)
//!   "mcpServers": false          // and every stdio MCP server (default: only those whose
//!                                // entry says `"sandbox": true`)
//! }
//! ```
//!
//! An allowlist means no direct network: the command reaches only Hearth's proxy, which
//! connects to the hosts on the list and refuses the rest (`hosts.rs` matches them).

use std::fmt;
use std::path::PathBuf;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Settings {
    #[serde(default)]
    pub mode: Mode,
    #[serde(default)]
    pub network: Network,
    #[serde(default)]
    pub writable_roots: Vec<PathBuf>,
    /// Refuse to run a command unconfined when this machine has no sandbox (also set by
    /// `HEARTH_REQUIRE_SANDBOX=1`, as CI does).
    #[serde(default)]
    pub required: bool,
    #[serde(default)]
    pub bwrap: Bwrap,
    /// Whether language servers run confined (default true; `lsp.servers.<name>.sandbox`
    /// decides for one server).
    pub language_servers: Option<bool>,
    /// Whether every stdio MCP server runs confined (default false: only those that opt in).
    pub mcp_servers: Option<bool>,
}

impl Settings {
    /// Whether language servers run confined unless their entry says otherwise.
    pub fn confines_language_servers(&self) -> bool {
        self.language_servers.unwrap_or(true)
    }

    /// Whether stdio MCP servers run confined even when their entry does not ask.
    pub fn confines_mcp_servers(&self) -> bool {
        self.mcp_servers.unwrap_or(false)
    }
}

/// Whether the filesystem is confined by `bwrap` (a private `/tmp`, protected paths in the
/// roots, secrets hidden) where it is installed, instead of by Landlock.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Bwrap {
    /// Where `bwrap` is installed (`io/process/bwrap.rs` says where it is looked for).
    #[default]
    Auto,
    /// Never: Landlock only.
    Off,
}

/// What a command may write.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Nothing but the session's private temp dir.
    ReadOnly,
    /// The workspace roots, the extra roots and the private temp dir.
    #[default]
    WorkspaceWrite,
    /// No sandbox: the user's own rights.
    Off,
}

impl Mode {
    pub const ALL: [Mode; 3] = [Mode::ReadOnly, Mode::WorkspaceWrite, Mode::Off];

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::ReadOnly => "read-only",
            Mode::WorkspaceWrite => "workspace-write",
            Mode::Off => "off",
        }
    }

    pub fn parse(id: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.as_str() == id)
    }
}

/// What a command may reach over the network.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Network {
    #[default]
    Off,
    On,
    /// Only these hosts, through Hearth's proxy.
    Allow(Vec<String>),
}

impl<'de> Deserialize<'de> for Network {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Shape {
            Switch(bool),
            Hosts(Vec<String>),
        }
        let shape = Shape::deserialize(deserializer)
            .map_err(|_| de::Error::custom("expected true, false or a list of host names"))?;
        match shape {
            Shape::Switch(true) => Ok(Network::On),
            Shape::Switch(false) => Ok(Network::Off),
            Shape::Hosts(hosts) => {
                for host in &hosts {
                    check_host(host).map_err(de::Error::custom)?;
                }
                Ok(Network::Allow(hosts))
            }
        }
    }
}

impl fmt::Display for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Network::Off => f.write_str("network off"),
            Network::On => f.write_str("network on"),
            Network::Allow(hosts) => write!(f, "network only to {}", hosts.join(", ")),
        }
    }
}

/// An allowlist entry: a host name (a leading `*.` for its subdomains), an IPv4 address or a
/// bracketed IPv6 one, with an optional `:port`.
fn check_host(entry: &str) -> Result<(), String> {
    let bad = |why: &str| Err(format!("bad sandbox network host `{entry}`: {why}"));
    let (host, port) = match entry.rsplit_once(':') {
        Some((host, port)) if !host.ends_with(':') && !port.contains(']') => (host, Some(port)),
        _ => (entry, None),
    };
    if let Some(port) = port
        && port.parse::<u16>().map_or(true, |port| port == 0)
    {
        return bad("the port must be 1 to 65535");
    }
    if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return match inner.parse::<std::net::Ipv6Addr>() {
            Ok(_) => Ok(()),
            Err(_) => bad("not an IPv6 address"),
        };
    }
    let name = host.strip_prefix("*.").unwrap_or(host);
    if name.is_empty() || name.len() > 253 {
        return bad("empty or too long");
    }
    let label_ok = |label: &str| {
        !label.is_empty()
            && label.len() <= 63
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    };
    if !name.split('.').all(label_ok) {
        return bad("a host is letters, digits, `-` and dots (`*.` only in front)");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(value: serde_json::Value) -> Result<Settings, String> {
        serde_json::from_value(value).map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_to_workspace_write_with_the_network_off() {
        let settings = parse(json!({})).unwrap();
        assert_eq!(settings.mode, Mode::WorkspaceWrite);
        assert_eq!(settings.network, Network::Off);
        assert!(settings.writable_roots.is_empty());
        assert!(!settings.required);
        assert!(settings.confines_language_servers());
        assert!(!settings.confines_mcp_servers());
        let flipped = parse(json!({ "languageServers": false, "mcpServers": true })).unwrap();
        assert!(!flipped.confines_language_servers());
        assert!(flipped.confines_mcp_servers());
    }

    #[test]
    fn reads_modes_switches_and_allowlists() {
        let settings = parse(json!({ "mode": "read-only", "network": true })).unwrap();
        assert_eq!(
            (settings.mode, settings.network),
            (Mode::ReadOnly, Network::On)
        );
        let hosts = json!([
            "registry.npmjs.org",
            "*.pypi.org",
            "10.0.0.1:8080",
            "[::1]:443"
        ]);
        let settings = parse(json!({ "mode": "off", "network": hosts })).unwrap();
        assert_eq!(settings.mode, Mode::Off);
        let Network::Allow(list) = settings.network else {
            panic!("not an allowlist")
        };
        assert_eq!(list.len(), 4);
    }

    #[test]
    fn refuses_bad_hosts_and_unknown_values() {
        for host in [
            "",
            "exa mple.com",
            "*.",
            "a:0",
            "a:99999",
            "[nope]",
            "-a.com",
            "a.*.com",
        ] {
            let error = parse(json!({ "network": [host] })).unwrap_err();
            assert!(
                error.contains("bad sandbox network host"),
                "{host}: {error}"
            );
        }
        let error = parse(json!({ "mode": "danger" })).unwrap_err();
        assert!(error.contains("unknown variant"), "{error}");
        let error = parse(json!({ "network": "yes" })).unwrap_err();
        assert!(error.contains("true, false or a list"), "{error}");
    }

    #[test]
    fn an_allowlist_names_its_hosts() {
        let network = Network::Allow(vec!["example.com".into(), "*.pypi.org".into()]);
        assert_eq!(
            network.to_string(),
            "network only to example.com, *.pypi.org"
        );
    }

    #[test]
    fn the_bwrap_layer_is_automatic_unless_switched_off() {
        assert_eq!(parse(json!({})).unwrap().bwrap, Bwrap::Auto);
        assert_eq!(parse(json!({ "bwrap": "off" })).unwrap().bwrap, Bwrap::Off);
        assert!(parse(json!({ "bwrap": "on" })).is_err());
    }
}
