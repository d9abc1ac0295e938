//! Whether a failed command was stopped by the sandbox, and the short block that tells the
//! model (and the user) what was denied. The exit code and output stay as they were; the
//! block is added only when the failure is really the sandbox's: a permission error on a path
//! outside the writable set, a network error while the network is off (or goes only to the
//! allowlist proxy), the proxy's refusal of a host, or SIGSYS. A command
//! that simply failed (`false`, a failing test) gets nothing, and neither does a permission
//! error on a path the command was allowed to write (the file's own mode said no).

use std::path::{Path, PathBuf};

use super::policy::Policy;

/// What the sandbox denied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Denied {
    /// Writing this path (outside the writable set).
    Write(PathBuf),
    /// A connection, with the network off (or only the allowlist proxy reachable).
    Network,
    /// A host the allowlist proxy refused (`host:port`).
    Host(String),
    /// A system call the sandbox forbids (the command was killed by SIGSYS).
    Syscall,
}

impl Denied {
    /// Its form in the tool call's `_meta.hearth.sandbox.denied`.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Denied::Write(path) => serde_json::json!({ "write": path }),
            Denied::Network => serde_json::json!({ "network": true }),
            Denied::Host(host) => serde_json::json!({ "host": host }),
            Denied::Syscall => serde_json::json!({ "syscall": true }),
        }
    }
}

/// Phrases of a refused write, as the C library and the usual runtimes word them.
const WRITE_ERRORS: &[&str] = &[
    "Permission denied",
    "Operation not permitted",
    "Read-only file system",
    "EACCES",
    "EPERM",
];

/// How a path under the host's `/tmp` looks from inside a private `/tmp`.
const MISSING: &str = "No such file or directory";

/// Phrases of a connection or name lookup that had no network to go to.
const NETWORK_ERRORS: &[&str] = &[
    "Network is unreachable",
    "Could not resolve host",
    "Temporary failure in name resolution",
    "Name or service not known",
    "No address associated with hostname",
    "ENETUNREACH",
    "ENOTFOUND",
    "EAI_AGAIN",
    "getaddrinfo",
];

/// How the allowlist proxy words a refusal (its 403's reason phrase and body).
const HOST_REFUSED: &str = "is not on the sandbox allowlist";

/// How clients report a proxy's 403 without its words (curl, Python).
const PROXY_REFUSALS: &[&str] = &[
    "CONNECT tunnel failed, response 403",
    "Tunnel connection failed: 403",
];

/// What the sandbox denied the command that ended with `exit_code` or `signal` and printed
/// `output`, run in `cwd` under `policy` — with a `/tmp` of its own when `private_tmp` (the
/// bwrap layer), where a host path under `/tmp` does not exist; `None` when it failed for
/// reasons of its own.
pub fn find_denial(
    policy: &Policy,
    cwd: &Path,
    private_tmp: bool,
    exit_code: Option<i32>,
    signal: Option<&str>,
    output: &str,
) -> Option<Denied> {
    if !policy.confines() || exit_code == Some(0) {
        return None;
    }
    if signal == Some("SIGSYS") {
        return Some(Denied::Syscall);
    }
    let lines = output.lines();
    for line in lines {
        if WRITE_ERRORS.iter().any(|phrase| line.contains(phrase))
            && let Some(path) = paths_in(line, cwd).find(|path| !policy.may_write(path))
        {
            return Some(Denied::Write(path));
        }
        if private_tmp
            && line.contains(MISSING)
            && let Some(path) =
                paths_in(line, cwd).find(|path| path.starts_with("/tmp") && !policy.may_write(path))
        {
            return Some(Denied::Write(path));
        }
        if let Some(host) = refused_host(line) {
            return Some(Denied::Host(host));
        }
        if !policy.network_allowed()
            && NETWORK_ERRORS
                .iter()
                .chain(PROXY_REFUSALS)
                .any(|p| line.contains(p))
        {
            return Some(Denied::Network);
        }
    }
    None
}

/// The `host:port` a line of the proxy's refusal names: the word before the phrase (its
/// reason phrase "… 403 h:p is not on …", its body "… refused h:p: it is not on …").
fn refused_host(line: &str) -> Option<String> {
    let before = &line[..line.find(HOST_REFUSED)?];
    let before = before.trim_end();
    let before = before.strip_suffix("it").unwrap_or(before).trim_end();
    let word = before.split_whitespace().last()?.trim_end_matches(':');
    (!word.is_empty()).then(|| word.to_owned())
}

/// The paths an error line names: its words that look like paths, quotes and a trailing
/// colon taken off, relative ones resolved against `cwd`.
fn paths_in<'a>(line: &'a str, cwd: &'a Path) -> impl Iterator<Item = PathBuf> + 'a {
    line.split_whitespace()
        .map(|word| {
            word.trim_matches(|c| matches!(c, '\'' | '"' | '`' | '‘' | '’' | ',' | '(' | ')'))
                .trim_end_matches(':')
                .trim_matches(|c| matches!(c, '\'' | '"' | '`' | '‘' | '’'))
        })
        .filter(|word| word.starts_with('/') || word.starts_with("./") || word.starts_with("../"))
        .map(move |word| lexical(&cwd.join(word)))
}

/// `path` with its `.` and `..` steps taken away (without asking the filesystem: the path
/// the command named may not exist).
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The block added to the model's result after a denial: what ran confined, what was
/// denied, what is writable, and how the usual caches are pointed inside it.
pub fn notice(policy: &Policy, backend: &str, denied: &Denied) -> String {
    let what = match denied {
        Denied::Write(path) => format!("writing {} was denied", path.display()),
        Denied::Network if policy.allowlist().is_some() => "a network connection was denied \
            (only Hearth's allowlist proxy is reachable; a tool that ignores HTTPS_PROXY \
            cannot connect)"
            .into(),
        Denied::Network => "a network connection was denied (the network is off)".into(),
        Denied::Host(host) => format!(
            "the allowlist proxy refused {host} (not in sandbox.network; only the user can \
             add it)"
        ),
        Denied::Syscall => "a forbidden system call killed it (SIGSYS)".into(),
    };
    let mut writable: Vec<String> = policy
        .writable
        .iter()
        .map(|root| root.display().to_string())
        .collect();
    writable.push(format!("$TMPDIR ({})", policy.temp_dir.display()));
    let mut block = format!(
        "[sandbox] Ran confined: {} ({backend}).\n\
         Probably stopped by the sandbox: {what}.\n\
         Writable: {}.\n",
        policy.describe(),
        writable.join(", ")
    );
    if matches!(denied, Denied::Write(_)) {
        block.push_str(
            "Caches outside it are read-only; point them inside, e.g. \
             GOCACHE=\"$TMPDIR/go-build\", CARGO_HOME=\"$TMPDIR/cargo\", \
             npm_config_cache=\"$TMPDIR/npm\", PIP_CACHE_DIR=\"$TMPDIR/pip\".\n",
        );
    }
    block.push_str(
        "If the command needs more, run it again with `sandbox: \"widen\"` (and \
         `writable_paths` or `network: true`) or `sandbox: \"escalate\"` (no sandbox), and a \
         one-line `justification`: the user decides.",
    );
    block
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::Setup;
    use crate::sandbox::settings::{Mode, Network, Settings};

    fn policy(network: Network) -> Policy {
        let setup = Setup {
            settings: Settings {
                network,
                ..Settings::default()
            },
            protected: Vec::new(),
        };
        Policy::new(&setup, &["/w".into()], "/t/s".into()).unwrap()
    }

    fn denial(output: &str) -> Option<Denied> {
        failed_with(false, output)
    }

    /// What a command in `/w`, network off, that failed printing `output` was denied.
    fn failed_with(private_tmp: bool, output: &str) -> Option<Denied> {
        find_denial(
            &policy(Network::Off),
            Path::new("/w"),
            private_tmp,
            Some(1),
            None,
            output,
        )
    }

    #[test]
    fn a_missing_host_tmp_path_is_a_denial_only_behind_a_private_tmp() {
        let line = "touch: cannot touch '/tmp/other/f': No such file or directory";
        assert_eq!(
            failed_with(true, line),
            Some(Denied::Write("/tmp/other/f".into()))
        );
        assert_eq!(failed_with(false, line), None, "a real missing directory");
        let elsewhere = "cat: /etc/nope: No such file or directory";
        assert_eq!(failed_with(true, elsewhere), None, "only /tmp is private");
        let inside = "cat: /w/nope: No such file or directory";
        assert_eq!(
            failed_with(true, inside),
            None,
            "the workspace is the host's"
        );
    }

    #[test]
    fn names_a_refused_write_outside_the_writable_set() {
        let cases = [
            ("touch: cannot touch '/etc/x': Permission denied", "/etc/x"),
            (
                "sh: 1: cannot create /tmp/other/f: Permission denied",
                "/tmp/other/f",
            ),
            (
                "mv: cannot move 'a' to '/tmp/b': Permission denied",
                "/tmp/b",
            ),
            (
                "PermissionError: [Errno 13] Permission denied: '/root/.cache/pip'",
                "/root/.cache/pip",
            ),
            (
                "ln: failed to create symbolic link '../out': Permission denied",
                "/out",
            ),
        ];
        for (line, path) in cases {
            assert_eq!(denial(line), Some(Denied::Write(path.into())), "{line}");
        }
    }

    #[test]
    fn ignores_plain_failures_and_allowed_paths() {
        assert_eq!(denial(""), None);
        assert_eq!(denial("test failed: expected 2, got 3"), None);
        // Inside the workspace, a refusal is the file's own mode, not the sandbox.
        assert_eq!(
            denial("sh: 1: cannot create /w/ro.txt: Permission denied"),
            None
        );
        assert_eq!(denial("cannot create /dev/null/x: Permission denied"), None);
        let ok = find_denial(
            &policy(Network::Off),
            Path::new("/w"),
            false,
            Some(0),
            None,
            "/etc/x: Permission denied",
        );
        assert_eq!(ok, None);
    }

    #[test]
    fn network_errors_count_only_with_the_network_off() {
        let line = "curl: (6) Could not resolve host: example.com";
        assert_eq!(denial(line), Some(Denied::Network));
        let on = find_denial(
            &policy(Network::On),
            Path::new("/w"),
            false,
            Some(6),
            None,
            line,
        );
        assert_eq!(on, None);
    }

    #[test]
    fn the_proxys_refusal_names_the_host() {
        let listed = policy(Network::Allow(vec!["example.com".into()]));
        let find = |line: &str| find_denial(&listed, Path::new("/w"), false, Some(1), None, line);
        for line in [
            "< HTTP/1.1 403 evil.net:443 is not on the sandbox allowlist",
            "Hearth's sandbox refused evil.net:443: it is not on the sandbox allowlist. The user…",
            "OSError: Tunnel connection failed: 403 evil.net:443 is not on the sandbox allowlist",
        ] {
            assert_eq!(
                find(line),
                Some(Denied::Host("evil.net:443".into())),
                "{line}"
            );
        }
        let curl = find("curl: (56) CONNECT tunnel failed, response 403");
        assert_eq!(curl, Some(Denied::Network));
        let block = notice(
            &listed,
            "bwrap + seccomp + allowlist proxy",
            &Denied::Network,
        );
        assert!(
            block.contains("only Hearth's allowlist proxy is reachable"),
            "{block}"
        );
        let block = notice(&listed, "x", &Denied::Host("evil.net:443".into()));
        assert!(block.contains("network only to example.com"), "{block}");
        assert!(block.contains("refused evil.net:443"), "{block}");
    }

    #[test]
    fn sigsys_is_the_sandbox() {
        let found = find_denial(
            &policy(Network::Off),
            Path::new("/w"),
            false,
            None,
            Some("SIGSYS"),
            "",
        );
        assert_eq!(found, Some(Denied::Syscall));
    }

    #[test]
    fn off_never_adds_a_block() {
        let mut setup = Setup::default();
        setup.settings.mode = Mode::Off;
        let off = Policy::new(&setup, &["/w".into()], "/t".into()).unwrap();
        let found = find_denial(
            &off,
            Path::new("/w"),
            false,
            Some(1),
            None,
            "touch: cannot touch '/etc/x': Permission denied",
        );
        assert_eq!(found, None);
    }

    #[test]
    fn the_block_names_the_denial_and_the_cache_hints() {
        let block = notice(
            &policy(Network::Off),
            "landlock ABI 7 + seccomp",
            &Denied::Write("/etc/x".into()),
        );
        assert!(
            block.starts_with(
                "[sandbox] Ran confined: workspace-write, network off (landlock ABI 7 + seccomp)."
            ),
            "{block}"
        );
        assert!(block.contains("writing /etc/x was denied"), "{block}");
        assert!(block.contains("Writable: /w, $TMPDIR (/t/s)."), "{block}");
        assert!(block.contains("GOCACHE"), "{block}");
    }
}
