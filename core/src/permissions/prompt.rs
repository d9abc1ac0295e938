//! Asking the user: the choices a permission request offers, what the chosen one means, and
//! the port that carries the question to the client.

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::access::Diff;

/// What an option does (ACP `PermissionOptionKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionKind {
    AllowOnce,
    AllowAlways,
    RejectOnce,
    RejectAlways,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionOption {
    /// Stable: a client may key its shortcuts on it.
    pub id: &'static str,
    pub name: &'static str,
    pub kind: OptionKind,
}

const ALLOW_ONCE: PermissionOption = PermissionOption {
    id: "allow_once",
    name: "Allow",
    kind: OptionKind::AllowOnce,
};
const ALLOW_ALWAYS: PermissionOption = PermissionOption {
    id: "allow_always",
    name: "Always allow",
    kind: OptionKind::AllowAlways,
};
const REJECT_ONCE: PermissionOption = PermissionOption {
    id: "reject_once",
    name: "Reject",
    kind: OptionKind::RejectOnce,
};
const REJECT_ALWAYS: PermissionOption = PermissionOption {
    id: "reject_always",
    name: "Always reject",
    kind: OptionKind::RejectAlways,
};

/// The options of one request: "always" ones only when a rule may cover the call.
pub fn options(can_remember: bool) -> Vec<PermissionOption> {
    if can_remember {
        vec![ALLOW_ONCE, ALLOW_ALWAYS, REJECT_ONCE, REJECT_ALWAYS]
    } else {
        vec![ALLOW_ONCE, REJECT_ONCE]
    }
}

/// What the user chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    pub allow: bool,
    /// Store it as a rule for the workspace.
    pub remember: bool,
}

/// The meaning of the option `id`; `None` for an id we never offered.
pub fn answer(id: &str) -> Option<Answer> {
    let kind = [ALLOW_ONCE, ALLOW_ALWAYS, REJECT_ONCE, REJECT_ALWAYS]
        .into_iter()
        .find(|o| o.id == id)?
        .kind;
    Some(Answer {
        allow: matches!(kind, OptionKind::AllowOnce | OptionKind::AllowAlways),
        remember: matches!(kind, OptionKind::AllowAlways | OptionKind::RejectAlways),
    })
}

/// One question: the tool call it is about, with the change an edit would make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionAsk {
    pub tool_call_id: String,
    pub title: String,
    /// The tool's ACP `ToolKind` ("execute").
    pub kind: &'static str,
    /// What the title cannot say (an escalation's reason and scope), shown as text.
    pub description: Option<String>,
    pub diffs: Vec<Diff>,
    /// The arguments, for a call whose effect only they tell (an MCP server's tool).
    pub raw_input: Option<serde_json::Value>,
    pub options: Vec<PermissionOption>,
    /// The `task` call whose subagent asks (its call was shown marked with it).
    pub subagent: Option<crate::lineage::ChildLink>,
}

/// Carries permission questions to the user (the ACP client's `session/request_permission`).
pub trait Approver: Send + Sync {
    /// The id of the chosen option; `Ok(None)` when the request was cancelled (by the turn's
    /// `cancel`, or by the client); `Err` with the client's message when it failed.
    fn ask<'a>(
        &'a self,
        session_id: &'a str,
        ask: &'a PermissionAsk,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Option<String>, String>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn always_options_only_when_a_rule_can_cover_the_call() {
        let ids = |remember| options(remember).iter().map(|o| o.id).collect::<Vec<_>>();
        assert_eq!(
            ids(true),
            ["allow_once", "allow_always", "reject_once", "reject_always"]
        );
        assert_eq!(ids(false), ["allow_once", "reject_once"]);
    }

    #[test]
    fn answers_mean_what_their_kind_says() {
        let a = |allow, remember| Some(Answer { allow, remember });
        assert_eq!(answer("allow_once"), a(true, false));
        assert_eq!(answer("allow_always"), a(true, true));
        assert_eq!(answer("reject_once"), a(false, false));
        assert_eq!(answer("reject_always"), a(false, true));
        assert_eq!(answer("maybe"), None);
    }
}
