//! When a command asks: the permission mode against the sandbox. The sandbox is what makes
//! running a command without asking safe, so the modes that skip the question do so only
//! while it confines commands; a widening or an escalation is the user's call in every mode.
//!
//! | mode         | sandbox on: a command        | widen / escalate | sandbox unavailable | sandbox off (the user's) |
//! |--------------|------------------------------|------------------|---------------------|--------------------------|
//! | ask          | asks (a rule may allow)      | asks             | asks                | asks                     |
//! | accept_edits | runs; a dangerous one asks   | asks             | asks, as `ask`      | asks                     |
//! | plan         | runs read-only, network off; a dangerous one asks | refused | refused    | refused                  |
//! | bypass       | runs                         | asks             | runs (unconfined)   | runs                     |
//!
//! `bypass` is the user's own "never ask": without a sandbox its commands still run, and their
//! tool calls say backend "none" — so it is never silent.
//!
//! "Always" answers are stored per command prefix (`command_prefix`), never for a compound
//! command or a dangerous one; an escalation's rule names its scope too, so "always allow
//! `cargo test`" never lets `cargo test` leave the sandbox. A headless run has nobody to ask
//! (its client rejects), so it refuses.

use super::Decision;
use super::command::dangerous;
use crate::access::{Escalation, Scope};

/// Whether the session's commands run confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sandboxing {
    /// They do (a backend is available and the sandbox is on).
    On,
    /// The user switched the sandbox off: the modes behave as they did before it.
    Off,
    /// It is on, but nothing on this machine confines (no Landlock, macOS, Windows).
    Unavailable,
}

/// A plain command of `mode`; `allowed_by_rule` when an "always" rule covers it, `pattern`
/// the rule an "always" answer would store.
pub(super) fn command(
    mode: super::Mode,
    command: &str,
    sandboxing: Sandboxing,
    allowed_by_rule: bool,
    pattern: Option<String>,
) -> Decision {
    use super::Mode::*;
    let confined = sandboxing == Sandboxing::On;
    match mode {
        Plan if !confined => Decision::Deny(
            "Plan mode is read-only: commands are not allowed (no sandbox confines them).".into(),
        ),
        Bypass => Decision::Allow,
        _ if dangerous(command).is_some() => Decision::Ask { remember: None },
        Plan | AcceptEdits if confined => Decision::Allow,
        _ if allowed_by_rule => Decision::Allow,
        _ => Decision::Ask { remember: pattern },
    }
}

/// A widening or an escalation: the user approves it, except in plan mode.
pub(super) fn escalation(
    mode: super::Mode,
    escalation: &Escalation,
    allowed_by_rule: bool,
    pattern: Option<String>,
) -> Decision {
    if mode == super::Mode::Plan {
        return Decision::Deny(
            "Plan mode runs commands read-only in the sandbox: it cannot widen or leave it. \
             Run the command with `sandbox: \"default\"`, or describe what it would do."
                .into(),
        );
    }
    if dangerous(&escalation.command).is_some() {
        return Decision::Ask { remember: None };
    }
    if allowed_by_rule {
        Decision::Allow
    } else {
        Decision::Ask { remember: pattern }
    }
}

/// The rule an "always" answer to an escalation stores: its scope and the command's prefix
/// (none for a compound command).
pub(super) fn escalation_pattern(escalation: &Escalation) -> Option<String> {
    let prefix = super::command::command_prefix(&escalation.command)?;
    let scope = match &escalation.scope {
        Scope::Unconfined => "off".to_string(),
        widen => format!("+ {}", widen.describe()),
    };
    Some(format!("sandbox {scope}: {prefix}"))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::super::{Mode, Roots, Rule, decide};
    use super::*;
    use crate::access::Access;

    fn roots() -> Roots<'static> {
        Roots::new(&[PathBuf::from("/w")], &|p| p.to_path_buf())
    }

    fn run(mode: Mode, command: &str, sandboxing: Sandboxing) -> Decision {
        let access = Access::Execute(command.into());
        decide(mode, "run_command", &access, &roots(), &[], sandboxing)
    }

    /// An escalation of `command` decided in `mode` under `rules`, the sandbox on.
    fn escalating(mode: Mode, command: &str, rules: &[Rule]) -> Decision {
        let access = escalate(command);
        decide(
            mode,
            "run_command",
            &access,
            &roots(),
            rules,
            Sandboxing::On,
        )
    }

    fn escalate(command: &str) -> Access {
        Access::Escalate(Escalation {
            command: command.into(),
            justification: "needs the npm cache".into(),
            scope: Scope::Widen {
                network: true,
                writable: vec!["/home/u/.npm".into()],
            },
        })
    }

    #[test]
    fn the_table_row_by_row() {
        use Sandboxing::*;
        let ask = Decision::Ask {
            remember: Some("cargo test".into()),
        };
        let refused = |d: Decision| matches!(d, Decision::Deny(_));
        // ask: asks whatever the sandbox.
        for sandboxing in [On, Off, Unavailable] {
            assert_eq!(run(Mode::Ask, "cargo test", sandboxing), ask);
        }
        // accept_edits: runs confined commands; a dangerous one, or no sandbox, asks.
        assert_eq!(run(Mode::AcceptEdits, "cargo test", On), Decision::Allow);
        assert_eq!(
            run(Mode::AcceptEdits, "sudo make install", On),
            Decision::Ask { remember: None }
        );
        assert_eq!(run(Mode::AcceptEdits, "cargo test", Unavailable), ask);
        assert_eq!(run(Mode::AcceptEdits, "cargo test", Off), ask);
        // plan: runs them read-only in the sandbox, refuses them without it.
        assert_eq!(run(Mode::Plan, "cargo test", On), Decision::Allow);
        assert!(refused(run(Mode::Plan, "cargo test", Off)));
        assert!(refused(run(Mode::Plan, "cargo test", Unavailable)));
        // bypass: runs, whatever the sandbox (the user chose never to be asked).
        assert_eq!(run(Mode::Bypass, "sudo x", On), Decision::Allow);
        assert_eq!(run(Mode::Bypass, "sudo x", Off), Decision::Allow);
        assert_eq!(
            run(Mode::Bypass, "cargo test", Unavailable),
            Decision::Allow
        );
    }

    #[test]
    fn escalations_ask_in_every_mode_but_plan_which_refuses() {
        let remember = Some("sandbox + network, write /home/u/.npm: npm install".into());
        for mode in [Mode::Ask, Mode::AcceptEdits, Mode::Bypass] {
            let decision = escalating(mode, "npm install", &[]);
            assert_eq!(
                decision,
                Decision::Ask {
                    remember: remember.clone()
                },
                "{mode:?}"
            );
        }
        let plan = escalating(Mode::Plan, "npm install", &[]);
        assert!(matches!(plan, Decision::Deny(why) if why.contains("cannot widen")));
        let compound = escalating(Mode::Bypass, "npm install && npm test", &[]);
        assert_eq!(compound, Decision::Ask { remember: None });
    }

    #[test]
    fn a_plain_rule_never_covers_an_escalation() {
        let plain = [Rule {
            tool: "run_command".into(),
            pattern: "npm install".into(),
            allow: true,
        }];
        let asks = escalating(Mode::Ask, "npm install", &plain);
        assert!(matches!(asks, Decision::Ask { .. }));
        let escalation = [Rule {
            tool: "run_command".into(),
            pattern: "sandbox + network, write /home/u/.npm: npm install".into(),
            allow: true,
        }];
        let allowed = escalating(Mode::Ask, "npm install --no-audit", &escalation);
        assert_eq!(allowed, Decision::Allow);
    }
}
