//! The macOS sandbox's profile: a [`Policy`] as Seatbelt's profile language (SBPL), which
//! `/usr/bin/sandbox-exec -p` applies to the command and everything it starts. A pure
//! function of the policy, golden-tested here (`golden/*.sb`); the mechanism that runs it is
//! `io/process/confine_macos.rs`.
//!
//! The profile confines what the Linux backend confines, and no more: writes and the network.
//! It starts from `(allow default)` rather than codex's or gemini's `(deny default)`, whose
//! lists of sysctls, Mach services and IOKit classes are what a toolchain trips over first
//! and cannot be checked without a Mac; reads, processes and IPC stay open as they do under
//! Landlock. Then:
//!
//! - writes: denied, except the writable roots, the private temp dir and the few devices
//!   (`/dev/null`, ttys); Hearth's own directories are denied again after them (SBPL's last
//!   matching rule wins), minus any root that lies inside one;
//! - the network, unless on: every IP socket denied, Unix sockets (a path) allowed as the
//!   Linux fallback allows `AF_UNIX`; with a proxy, TCP to its loopback port only. Unlike a
//!   Linux network namespace there is no private loopback: a confined test server on
//!   127.0.0.1 cannot be reached from inside either;
//! - two ways out of any profile that allows by default, closed: Apple Events (`osascript`
//!   telling Terminal to run something) and LaunchServices (`open -a`), which start
//!   processes outside the sandbox.
//!
//! Paths are written as string literals (canonical: `/private/var/…`, `/private/tmp/…`), with
//! `\` and `"` escaped.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::policy::Policy;

/// Devices a confined command may write, as SBPL filters (a Linux `/dev/pts/N` is a
/// `/dev/ttysN` here, and `/dev/ptmx` opens a new one).
const DEVICES: &[&str] = &[
    "(literal \"/dev/null\")",
    "(literal \"/dev/zero\")",
    "(literal \"/dev/tty\")",
    "(literal \"/dev/ptmx\")",
    "(regex #\"^/dev/ttys[0-9]+$\")",
];

/// The services through which a process could start another outside the sandbox.
const LAUNCHERS: &[&str] = &[
    "com.apple.coreservices.launchservicesd",
    "com.apple.lsd.mapdb",
    "com.apple.lsd.modifydb",
];

/// The profile that confines a command as `policy` says; with `proxy_port`, the one
/// loopback port (Hearth's allowlist proxy) an otherwise offline command may connect to.
pub fn profile(policy: &Policy, proxy_port: Option<u16>) -> String {
    let mut out = format!(
        "(version 1)\n; Hearth's sandbox: {}.\n(allow default)\n",
        policy.describe()
    );
    writes(&mut out, policy);
    if !policy.network_allowed() {
        network(&mut out, proxy_port);
    }
    escapes(&mut out);
    out
}

fn writes(out: &mut String, policy: &Policy) {
    out.push_str("\n; Writes: only the writable set.\n(deny file-write*)\n(allow file-write*\n");
    let trees = policy.writable.iter().chain([&policy.temp_dir]);
    for tree in trees {
        let _ = writeln!(out, "  (subpath {})", quoted(tree));
    }
    for device in DEVICES {
        let _ = writeln!(out, "  {device}");
    }
    out.push_str(")\n");
    if policy.protected.is_empty() {
        return;
    }
    out.push_str("; Hearth's own state, never writable.\n");
    for own in &policy.protected {
        let inside: Vec<&PathBuf> = policy
            .writable
            .iter()
            .filter(|root| root.starts_with(own))
            .collect();
        if inside.is_empty() {
            let _ = writeln!(out, "(deny file-write* (subpath {}))", quoted(own));
            continue;
        }
        // A workspace inside the data dir stays writable; the rest of the dir does not.
        let _ = writeln!(
            out,
            "(deny file-write*\n  (require-all\n    (subpath {})",
            quoted(own)
        );
        for root in inside {
            let _ = writeln!(out, "    (require-not (subpath {}))", quoted(root));
        }
        out.push_str("  ))\n");
    }
}

fn network(out: &mut String, proxy_port: Option<u16>) {
    out.push_str(
        "\n; The network is off: Unix sockets (a path) only.\n\
         (deny network*)\n\
         (allow network* (subpath \"/\"))\n",
    );
    if let Some(port) = proxy_port {
        let _ = writeln!(
            out,
            "; Hearth's proxy, the one way out.\n\
             (allow network-outbound (remote tcp \"localhost:{port}\"))"
        );
    }
}

fn escapes(out: &mut String) {
    out.push_str("\n; No process started outside the sandbox on its behalf.\n(deny appleevent-send)\n(deny mach-lookup\n");
    for service in LAUNCHERS {
        let _ = writeln!(out, "  (global-name \"{service}\")");
    }
    out.push_str(")\n");
}

/// `path` as an SBPL string literal.
fn quoted(path: &Path) -> String {
    let text = path.to_string_lossy();
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::Setup;
    use crate::sandbox::settings::{Mode, Network, Settings};

    /// A policy over `roots` with Hearth's state in `/Users/u/Library/Application
    /// Support/hearth` and `/Users/u/.config/hearth`.
    fn policy(mode: Mode, network: Network, roots: &[&str]) -> Policy {
        let setup = Setup {
            settings: Settings {
                mode,
                network,
                writable_roots: vec!["/Users/u/.cache/shared".into()],
                ..Settings::default()
            },
            protected: vec![
                "/Users/u/Library/Application Support/hearth".into(),
                "/Users/u/.config/hearth".into(),
            ],
        };
        let roots: Vec<PathBuf> = roots.iter().map(PathBuf::from).collect();
        let temp = "/private/var/folders/xy/T/hearth-tmp_1".into();
        Policy::new(&setup, &roots, temp).unwrap()
    }

    /// Compares `actual` with `golden/<name>.sb`; `HEARTH_UPDATE_GOLDEN=1` writes it instead.
    fn golden(name: &str, actual: &str) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/sandbox/golden")
            .join(format!("{name}.sb"));
        if std::env::var("HEARTH_UPDATE_GOLDEN").as_deref() == Ok("1") {
            std::fs::write(&path, actual).unwrap();
        }
        let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!("{}: {e} (HEARTH_UPDATE_GOLDEN=1 writes it)", path.display())
        });
        assert_eq!(
            actual, expected,
            "{name}: the profile changed (HEARTH_UPDATE_GOLDEN=1 accepts it)"
        );
    }

    #[test]
    fn workspace_write_with_two_roots_and_the_network_off() {
        let policy = policy(
            Mode::WorkspaceWrite,
            Network::Off,
            &["/Users/u/src/app", "/Users/u/src/lib \"v2\""],
        );
        golden("workspace-write-two-roots", &profile(&policy, None));
    }

    #[test]
    fn read_only_writes_nothing_but_the_temp_dir() {
        let policy = policy(Mode::ReadOnly, Network::Off, &["/Users/u/src/app"]);
        golden("read-only", &profile(&policy, None));
    }

    #[test]
    fn network_on_has_no_network_rules() {
        let policy = policy(Mode::WorkspaceWrite, Network::On, &["/Users/u/src/app"]);
        golden("network-on", &profile(&policy, None));
    }

    #[test]
    fn an_allowlist_reaches_only_the_proxy_port() {
        let hosts = Network::Allow(vec!["registry.npmjs.org".into()]);
        let policy = policy(Mode::WorkspaceWrite, hosts, &["/Users/u/src/app"]);
        golden("proxy-port", &profile(&policy, Some(47123)));
    }

    #[test]
    fn a_root_inside_hearths_data_dir_stays_writable() {
        let root = "/Users/u/Library/Application Support/hearth/project";
        let policy = policy(Mode::WorkspaceWrite, Network::Off, &[root]);
        golden("root-inside-data-dir", &profile(&policy, None));
    }
}
