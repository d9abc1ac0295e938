//! Who decides whether a tool call may run: the session's mode, the workspace's stored
//! "always" rules, and the checks no rule or mode can waive — paths outside the workspace,
//! edits of what runs or steers later outside the sandbox (`.git/`, `.hearth/`, Hearth's own
//! directories: [`Roots::guarded`]), and dangerous commands.
//!
//! Tests: the decisions inline; end to end in `core/tests/permissions.rs`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::access::Access;

mod command;
mod execute;
pub mod plan_exit;
pub mod prompt;

use command::command_prefix;
pub use execute::Sandboxing;

/// The permission mode (also a session config option, `category: "mode"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Ask before every edit, command and fetch.
    #[default]
    Ask,
    /// Edits inside the workspace go ahead (but for `.git/`, `.hearth/` and Hearth's own
    /// files), and so do commands the sandbox confines; other commands and fetches ask.
    AcceptEdits,
    /// Read-only: edits are refused; commands run read-only in the sandbox (refused
    /// without one).
    Plan,
    /// Nothing asks, except paths outside the workspace, edits of `.git/`, `.hearth/` and
    /// Hearth's own files, and widening or leaving the sandbox (and commands, where no
    /// sandbox confines them).
    Bypass,
}

impl Mode {
    pub const ALL: [Mode; 4] = [Mode::Ask, Mode::AcceptEdits, Mode::Plan, Mode::Bypass];

    pub fn id(self) -> &'static str {
        match self {
            Mode::Ask => "ask",
            Mode::AcceptEdits => "accept_edits",
            Mode::Plan => "plan",
            Mode::Bypass => "bypass",
        }
    }

    pub fn parse(id: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.id() == id)
    }

    /// The stricter of the two: `Plan`, then `Ask`, then `AcceptEdits`, then `Bypass` (what
    /// a subagent runs under, so that it never has more leeway than its parent).
    pub fn stricter(self, other: Mode) -> Mode {
        let rank = |mode: Mode| match mode {
            Mode::Plan => 3,
            Mode::Ask => 2,
            Mode::AcceptEdits => 1,
            Mode::Bypass => 0,
        };
        if rank(other) > rank(self) {
            other
        } else {
            self
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Mode::Ask => "Ask",
            Mode::AcceptEdits => "Accept edits",
            Mode::Plan => "Plan",
            Mode::Bypass => "Bypass permissions",
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            Mode::Ask => "Ask before every edit, command and web fetch",
            Mode::AcceptEdits => {
                "Edit files in the workspace and run sandboxed commands without asking"
            }
            Mode::Plan => "Read and plan only: no edits; commands run read-only in the sandbox",
            Mode::Bypass => {
                "Never ask, except for paths outside the workspace and leaving the sandbox"
            }
        }
    }
}

/// A remembered answer: allow or reject calls of `tool` matching `pattern` in one workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub tool: String,
    pub pattern: String,
    pub allow: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Allow,
    /// Ask the user. `remember` is the rule pattern an "always" answer would store, or
    /// `None` when no rule may cover this call (outside the workspace, dangerous).
    Ask {
        remember: Option<String>,
    },
    /// Refused without asking; the message goes to the model.
    Deny(String),
}

/// Decides for one prepared call of `tool`; `sandboxing` says whether commands run confined
/// (the table in `execute.rs`).
pub fn decide(
    mode: Mode,
    tool: &str,
    access: &Access,
    roots: &Roots<'_>,
    rules: &[Rule],
    sandboxing: Sandboxing,
) -> Decision {
    let pattern = rule_pattern(access);
    let rule = pattern
        .as_ref()
        .and_then(|p| rules.iter().find(|r| r.tool == tool && r.pattern == *p));
    if rule.is_some_and(|r| !r.allow) {
        return Decision::Deny("Refused by a rule the user chose earlier (reject always).".into());
    }
    let allowed_by_rule = rule.is_some();
    match access {
        Access::None => Decision::Allow,
        Access::Read(paths) => match roots.outside(paths.iter()) {
            Some(_) => Decision::Ask { remember: None },
            None => Decision::Allow,
        },
        Access::Edit(diffs) => {
            if mode == Mode::Plan {
                return Decision::Deny(
                    "Plan mode is read-only: edits are not allowed. Describe the change instead."
                        .into(),
                );
            }
            let paths = || diffs.iter().map(|d| &d.path);
            if roots.outside(paths()).is_some() || roots.guarded(paths()).is_some() {
                return Decision::Ask { remember: None };
            }
            match mode {
                Mode::AcceptEdits | Mode::Bypass => Decision::Allow,
                _ if allowed_by_rule => Decision::Allow,
                _ => Decision::Ask { remember: pattern },
            }
        }
        Access::Execute(command) => {
            execute::command(mode, command, sandboxing, allowed_by_rule, pattern)
        }
        Access::Escalate(escalation) => {
            execute::escalation(mode, escalation, allowed_by_rule, pattern)
        }
        Access::Network(_) => match mode {
            Mode::Bypass => Decision::Allow,
            _ if allowed_by_rule => Decision::Allow,
            _ => Decision::Ask { remember: pattern },
        },
        // A tool that says it only reads runs without asking, in every mode, as the built-in
        // reads do: the user connected the server, and asking before every lookup would
        // teach them to allow without reading. The rest may do anything the server can
        // (`accept_edits` covers files Hearth edits, not a server's actions), so they ask.
        Access::External { read_only, .. } => match mode {
            _ if *read_only => Decision::Allow,
            Mode::Plan => Decision::Deny(
                "Plan mode is read-only: this MCP tool may change things (it is not marked \
                 read-only)."
                    .into(),
            ),
            Mode::Bypass => Decision::Allow,
            _ if allowed_by_rule => Decision::Allow,
            _ => Decision::Ask { remember: pattern },
        },
    }
}

/// What an "always" answer covers: every edit inside the workspace for an edit tool, the
/// program and subcommand for a simple command (none for a compound one), the host for a
/// fetch, every call of one MCP server's tool. The latter is named by the server's and the
/// tool's own names, not the model's: a model name can pass to another server's tool when the
/// servers change (collisions are numbered in order), and a rule must not follow it there.
fn rule_pattern(access: &Access) -> Option<String> {
    match access {
        Access::Edit(_) => Some("*".into()),
        Access::Execute(command) => command_prefix(command),
        Access::Escalate(escalation) => execute::escalation_pattern(escalation),
        Access::Network(url) => host(url).map(str::to_string),
        Access::External { server, tool, .. } => Some(format!("{server}/{tool}")),
        Access::Read(_) | Access::None => None,
    }
}

fn host(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let host = rest.split(['/', '?', '#']).next()?;
    (!host.is_empty()).then_some(host)
}

/// The workspace roots, and where a path really leads. Finding that out (`..`, symlinks,
/// dangling ones too) is the workspace port's job (`Io::canonicalize`); this module only
/// compares what it finds.
pub struct Roots<'a> {
    canonical_roots: Vec<PathBuf>,
    /// Hearth's own directories (data dir, config dir), canonical.
    own: Vec<PathBuf>,
    canonical: &'a (dyn Fn(&Path) -> PathBuf + Sync),
}

/// What an edit inside the workspace still asks about, in every mode: a repository's own
/// files (`.git/`: hooks and `core.fsmonitor` run what they say outside the sandbox, on the
/// user's next `git status`) and Hearth's project settings (`.hearth/`). The sandbox keeps
/// commands off the same (`io/process/bwrap.rs`), though it leaves them the rest of `.git`,
/// which a commit writes.
const GUARDED: &[&str] = &[".git", ".hearth"];

impl<'a> Roots<'a> {
    pub fn new(roots: &[PathBuf], canonical: &'a (dyn Fn(&Path) -> PathBuf + Sync)) -> Self {
        Roots {
            canonical_roots: roots.iter().map(|r| canonical(r)).collect(),
            own: Vec::new(),
            canonical,
        }
    }

    /// These roots, with Hearth's own directories `own` (canonical): an edit there asks.
    pub fn guarding(self, own: &[PathBuf]) -> Self {
        Roots {
            own: own.to_vec(),
            ..self
        }
    }

    /// The first path, where it really leads, that an edit must ask about whatever the mode:
    /// in Hearth's own directories (its instructions, rules and store) — but for a root
    /// inside one, which is the user's, as the sandbox has it (`sandbox/policy.rs`) — or
    /// inside a root under a `.git` or `.hearth` directory.
    pub fn guarded<'p>(&self, mut paths: impl Iterator<Item = &'p PathBuf>) -> Option<PathBuf> {
        paths.find_map(|p| {
            let real = (self.canonical)(p);
            let own = self.own.iter().any(|own| {
                real.starts_with(own)
                    && !self
                        .canonical_roots
                        .iter()
                        .any(|root| root.starts_with(own) && real.starts_with(root))
            });
            let in_root = self.canonical_roots.iter().any(|root| {
                real.strip_prefix(root).is_ok_and(|inner| {
                    inner
                        .components()
                        .any(|part| GUARDED.iter().any(|g| part.as_os_str() == *g))
                })
            });
            (own || in_root).then_some(real)
        })
    }

    /// The first path not inside any root, where it really leads.
    pub fn outside<'p>(&self, mut paths: impl Iterator<Item = &'p PathBuf>) -> Option<PathBuf> {
        paths.find_map(|p| {
            let real = (self.canonical)(p);
            let inside = self
                .canonical_roots
                .iter()
                .any(|root| real.starts_with(root));
            (!inside).then_some(real)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::Diff;

    /// A subagent's mode is never looser than its parent's, whichever side is stricter.
    #[test]
    fn the_stricter_mode_wins_from_either_side() {
        let order = [Mode::Plan, Mode::Ask, Mode::AcceptEdits, Mode::Bypass];
        for (i, a) in order.iter().enumerate() {
            for (j, b) in order.iter().enumerate() {
                let expected = order[i.min(j)];
                assert_eq!(a.stricter(*b), expected, "{a:?} vs {b:?}");
            }
        }
    }

    /// `..` folded, no disk: these tests are about the policy, not the filesystem.
    fn lexical(path: &Path) -> PathBuf {
        let mut out = PathBuf::new();
        for part in path.components() {
            match part {
                std::path::Component::ParentDir => {
                    out.pop();
                }
                other => out.push(other),
            }
        }
        out
    }

    fn workspace() -> Roots<'static> {
        Roots::new(&[PathBuf::from("/w")], &lexical)
    }

    fn edit(path: &str) -> Access {
        Access::Edit(vec![Diff {
            path: PathBuf::from(path),
            old_text: None,
            new_text: "x".into(),
        }])
    }

    #[test]
    fn git_hearth_and_hearths_own_files_are_guarded_where_they_lead() {
        let own = [PathBuf::from("/home/u/.config/hearth"), PathBuf::from("/d")];
        let roots =
            Roots::new(&[PathBuf::from("/w"), PathBuf::from("/d/ws")], &lexical).guarding(&own);
        let guarded = |path: &str| roots.guarded([PathBuf::from(path)].iter()).is_some();
        assert!(guarded("/w/.git/config"));
        assert!(guarded("/w/vendor/lib/.git/hooks/pre-commit"));
        assert!(guarded("/w/src/../.git/info/attributes"));
        assert!(guarded("/w/.hearth/settings.json"));
        assert!(guarded("/home/u/.config/hearth/AGENTS.md"));
        assert!(guarded("/d/hearth.db"));
        assert!(
            !guarded("/d/ws/notes.txt"),
            "a root inside Hearth's dir is the user's"
        );
        assert!(guarded("/d/ws/.git/config"));
        assert!(!guarded("/w/.gitignore"));
        assert!(!guarded("/w/src/git/x.rs"));
        assert_eq!(
            decide(
                Mode::Bypass,
                "write",
                &edit("/w/.git/config"),
                &roots,
                &[],
                Sandboxing::Off
            ),
            Decision::Ask { remember: None }
        );
        assert!(matches!(
            decide(
                Mode::Plan,
                "write",
                &edit("/w/.git/config"),
                &roots,
                &[],
                Sandboxing::Off
            ),
            Decision::Deny(_)
        ));
    }

    #[test]
    fn modes() {
        let roots = workspace();
        let inside = edit("/w/a.rs");
        assert_eq!(
            decide(Mode::Ask, "edit", &inside, &roots, &[], Sandboxing::Off),
            Decision::Ask {
                remember: Some("*".into())
            }
        );
        assert_eq!(
            decide(
                Mode::AcceptEdits,
                "edit",
                &inside,
                &roots,
                &[],
                Sandboxing::Off
            ),
            Decision::Allow
        );
        assert!(matches!(
            decide(Mode::Plan, "edit", &inside, &roots, &[], Sandboxing::Off),
            Decision::Deny(_)
        ));
        assert_eq!(
            decide(Mode::Bypass, "edit", &inside, &roots, &[], Sandboxing::Off),
            Decision::Allow
        );
        assert_eq!(
            command_prefix("rm -f a.o").as_deref(),
            Some("rm -f a.o"),
            "rm rules are exact"
        );
        assert_eq!(
            command_prefix("npm -s run build").as_deref(),
            Some("npm run")
        );
        assert_eq!(command_prefix("ls -la").as_deref(), Some("ls"));
        let run = Access::Execute("cargo test --all".into());
        assert_eq!(
            decide(
                Mode::AcceptEdits,
                "run_command",
                &run,
                &roots,
                &[],
                Sandboxing::Off
            ),
            Decision::Ask {
                remember: Some("cargo test".into())
            }
        );
        assert!(matches!(
            decide(
                Mode::Plan,
                "run_command",
                &run,
                &roots,
                &[],
                Sandboxing::Off
            ),
            Decision::Deny(_)
        ));
        assert_eq!(
            decide(
                Mode::Bypass,
                "run_command",
                &Access::Execute("sudo x".into()),
                &roots,
                &[],
                Sandboxing::Off
            ),
            Decision::Allow
        );
        assert_eq!(
            decide(
                Mode::Plan,
                "read",
                &Access::Read(vec!["/w/a".into()]),
                &roots,
                &[],
                Sandboxing::Off
            ),
            Decision::Allow
        );
        let outside_read = Access::Read(vec!["/etc/passwd".into()]);
        let decision = decide(
            Mode::Bypass,
            "read",
            &outside_read,
            &roots,
            &[],
            Sandboxing::Off,
        );
        assert_eq!(
            decision,
            Decision::Ask { remember: None },
            "outside the workspace asks even in bypass"
        );
    }

    #[test]
    fn outside_the_workspace_always_asks() {
        let roots = workspace();
        for mode in Mode::ALL.into_iter().filter(|m| *m != Mode::Plan) {
            assert_eq!(
                decide(
                    mode,
                    "edit",
                    &edit("/w/../etc/passwd"),
                    &roots,
                    &[],
                    Sandboxing::Off
                ),
                Decision::Ask { remember: None },
                "{mode:?}"
            );
        }
        let rules = [Rule {
            tool: "edit".into(),
            pattern: "*".into(),
            allow: true,
        }];
        assert_eq!(
            decide(
                Mode::Ask,
                "edit",
                &edit("/etc/x"),
                &roots,
                &rules,
                Sandboxing::Off
            ),
            Decision::Ask { remember: None }
        );
        assert_eq!(
            decide(
                Mode::Ask,
                "edit",
                &edit("/w/x"),
                &roots,
                &rules,
                Sandboxing::Off
            ),
            Decision::Allow
        );
    }

    fn mcp(read_only: bool) -> Access {
        Access::External {
            server: "files".into(),
            tool: "delete".into(),
            read_only,
        }
    }

    #[test]
    fn mcp_tools_ask_unless_read_only() {
        let roots = workspace();
        let name = "mcp__files__delete";
        let ask = Decision::Ask {
            remember: Some("files/delete".into()),
        };
        assert_eq!(
            decide(Mode::Ask, name, &mcp(false), &roots, &[], Sandboxing::Off),
            ask
        );
        assert_eq!(
            decide(
                Mode::AcceptEdits,
                name,
                &mcp(false),
                &roots,
                &[],
                Sandboxing::Off
            ),
            ask
        );
        assert_eq!(
            decide(
                Mode::Bypass,
                name,
                &mcp(false),
                &roots,
                &[],
                Sandboxing::Off
            ),
            Decision::Allow
        );
        assert!(matches!(
            decide(Mode::Plan, name, &mcp(false), &roots, &[], Sandboxing::Off),
            Decision::Deny(_)
        ));
        for mode in Mode::ALL {
            assert_eq!(
                decide(mode, name, &mcp(true), &roots, &[], Sandboxing::Off),
                Decision::Allow,
                "{mode:?}"
            );
        }
    }

    #[test]
    fn mcp_rules_cover_one_servers_tool() {
        let roots = workspace();
        let name = "mcp__files__delete";
        let rule = |pattern: &str, allow| Rule {
            tool: name.into(),
            pattern: pattern.into(),
            allow,
        };
        assert_eq!(
            decide(
                Mode::Ask,
                name,
                &mcp(false),
                &roots,
                &[rule("files/delete", true)],
                Sandboxing::Off
            ),
            Decision::Allow
        );
        // The same model name, now another server's tool: the rule does not follow it.
        let other = Access::External {
            server: "files".into(),
            tool: "delete-all".into(),
            read_only: false,
        };
        assert!(matches!(
            decide(
                Mode::Ask,
                name,
                &other,
                &roots,
                &[rule("files/delete", true)],
                Sandboxing::Off
            ),
            Decision::Ask { .. }
        ));
        assert!(matches!(
            decide(
                Mode::Bypass,
                name,
                &mcp(true),
                &roots,
                &[rule("files/delete", false)],
                Sandboxing::Off
            ),
            Decision::Deny(_)
        ));
        assert!(matches!(
            decide(
                Mode::Plan,
                name,
                &mcp(false),
                &roots,
                &[rule("files/delete", true)],
                Sandboxing::Off
            ),
            Decision::Deny(_)
        ));
    }

    #[test]
    fn rules_allow_and_reject_but_never_dangerous() {
        let roots = workspace();
        let allow = [Rule {
            tool: "run_command".into(),
            pattern: "cargo test".into(),
            allow: true,
        }];
        assert_eq!(
            decide(
                Mode::Ask,
                "run_command",
                &Access::Execute("cargo test -q".into()),
                &roots,
                &allow,
                Sandboxing::Off
            ),
            Decision::Allow
        );
        assert_eq!(
            decide(
                Mode::Ask,
                "run_command",
                &Access::Execute("cargo test; rm -rf x".into()),
                &roots,
                &allow,
                Sandboxing::Off
            ),
            Decision::Ask { remember: None }
        );
        let reject = [Rule {
            tool: "run_command".into(),
            pattern: "npm publish".into(),
            allow: false,
        }];
        assert!(matches!(
            decide(
                Mode::Bypass,
                "run_command",
                &Access::Execute("npm publish".into()),
                &roots,
                &reject,
                Sandboxing::Off
            ),
            Decision::Deny(_)
        ));
        let allow_sudo = [Rule {
            tool: "run_command".into(),
            pattern: "sudo ls".into(),
            allow: true,
        }];
        assert_eq!(
            decide(
                Mode::Ask,
                "run_command",
                &Access::Execute("sudo ls".into()),
                &roots,
                &allow_sudo,
                Sandboxing::Off
            ),
            Decision::Ask { remember: None }
        );
    }
}
