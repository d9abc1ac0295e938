//! Leaving plan mode: the options of the approval `exit_plan_mode` asks for, and the mode
//! each one switches to. The ids are the modes' own, and the kinds follow Claude Code's ACP
//! adapter (`claude-agent-acp`: "Yes, and auto-accept edits" is `allow_always`, "Yes, and
//! manually approve edits" `allow_once`, "No, keep planning" `reject_once`), so a client that
//! shows those kinds shows the choice as users of that agent know it.

use super::Mode;
use super::prompt::{OptionKind, PermissionOption};

const ACCEPT_EDITS: PermissionOption = PermissionOption {
    id: "accept_edits",
    name: "Yes, and accept edits",
    kind: OptionKind::AllowAlways,
};
const ASK: PermissionOption = PermissionOption {
    id: "ask",
    name: "Yes, and ask before edits",
    kind: OptionKind::AllowOnce,
};
const KEEP_PLANNING: PermissionOption = PermissionOption {
    id: "plan",
    name: "No, keep planning",
    kind: OptionKind::RejectOnce,
};

/// The options of a plan's approval.
pub fn options() -> Vec<PermissionOption> {
    vec![ACCEPT_EDITS, ASK, KEEP_PLANNING]
}

/// What the user chose: `Some(mode)` to leave plan mode for it, `None` to keep planning;
/// `Err` for an id we never offered.
pub fn chosen(id: &str) -> Result<Option<Mode>, String> {
    match id {
        _ if id == KEEP_PLANNING.id => Ok(None),
        _ if id == ACCEPT_EDITS.id => Ok(Some(Mode::AcceptEdits)),
        _ if id == ASK.id => Ok(Some(Mode::Ask)),
        _ => Err(format!("the client chose an unknown option `{id}`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_option_means_a_mode_or_keep_planning() {
        let meanings: Vec<_> = options().iter().map(|o| chosen(o.id)).collect();
        assert_eq!(
            meanings,
            [Ok(Some(Mode::AcceptEdits)), Ok(Some(Mode::Ask)), Ok(None)]
        );
        assert!(chosen("bypass").is_err(), "bypass is never offered");
    }
}
