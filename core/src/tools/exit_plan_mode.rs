//! `exit_plan_mode`: in plan mode, the model submits its plan and asks to start on it. The
//! plan is published — its steps as the client's `plan` (one entry per list item or line),
//! its text as the call's content — and the user approves it through the permission prompt:
//! leave plan mode for `accept_edits`, for `ask`, or keep planning (`permissions/plan_exit.rs`).
//! On approval the turn's `User` has already switched the session's mode, the way
//! `session/set_mode` does, so the model's next write runs under the new mode.
//!
//! Offered to the model only in plan mode (`Session::tool_specs`); called in another mode, it
//! says so and changes nothing.

use schemars::JsonSchema;
use serde::Deserialize;

use super::user::PlanVerdict;
use super::{
    About, Access, CallReport, Context, Kind, Output, PlanEntry, Planned, Result, Tool,
    ToolContent, ToolError,
};
use crate::permissions::Mode;

pub struct ExitPlanMode;

/// The name the model calls it by.
pub const NAME: &str = "exit_plan_mode";

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// The plan, in Markdown: the steps you will take, one list item each, concise.
    plan: String,
}

/// What the model is told `exit_plan_mode` does.
const DESCRIPTION: &str = "In plan mode, when your plan is ready: present it to the user and \
    ask for approval to start. If they approve, the mode changes and your edits and commands \
    can run; if not, keep planning (revise the plan, ask questions). Use it only when the task \
    needs changes, not after research alone.";

impl Tool for ExitPlanMode {
    type Input = Input;
    type Plan = String;

    async fn prepare(&self, input: Input, _ctx: &Context) -> Result<Planned<String>> {
        let plan = input.plan.trim();
        if plan.is_empty() {
            return Err(ToolError("`plan` is empty".into()));
        }
        let title = "Ready to code?".to_string();
        Ok(Planned::new(
            title,
            Vec::new(),
            Access::None,
            plan.to_string(),
        ))
    }

    async fn run(&self, plan: String, ctx: &Context, report: &dyn CallReport) -> Result<Output> {
        let Some(user) = &ctx.user else {
            return Err(ToolError("Nobody is there to approve the plan.".into()));
        };
        // Outside plan mode the plan is not published: there is nothing to approve.
        if user.mode() == Mode::Plan {
            report.plan(steps(&plan));
        }
        let verdict = user.approve_plan(&plan).await;
        let for_model = match verdict {
            PlanVerdict::Approved(mode) => format!(
                "The user approved the plan; the mode is now `{}`. Carry it out.",
                mode.id()
            ),
            PlanVerdict::KeepPlanning => {
                return Err(ToolError(
                    "The user wants to keep planning: still in plan mode, nothing may be \
                     changed. Ask what to revise, or refine the plan."
                        .into(),
                ));
            }
            PlanVerdict::NotPlanning(mode) => {
                return Err(ToolError(format!(
                    "Not in plan mode (the mode is `{}`): there is nothing to approve; go on.",
                    mode.id()
                )));
            }
            PlanVerdict::Cancelled => {
                return Err(ToolError(
                    "The approval was cancelled; still in plan mode.".into(),
                ));
            }
            PlanVerdict::Failed(why) => {
                return Err(ToolError(format!(
                    "The approval could not be asked ({why}); still in plan mode."
                )));
            }
        };
        Ok(Output {
            for_model,
            content: vec![ToolContent::Text(plan)],
            ..Output::default()
        })
    }

    fn about(&self) -> About {
        About::new(NAME, Kind::SwitchMode, DESCRIPTION)
    }
}

/// The plan's steps for the client's `plan`: its list items (`-`, `*`, `1.`), or else its
/// non-empty lines; headings are not steps.
fn steps(plan: &str) -> Vec<PlanEntry> {
    let lines: Vec<&str> = plan
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let items: Vec<&str> = lines.iter().filter_map(|l| list_item(l)).collect();
    let steps = if items.is_empty() { lines } else { items };
    steps
        .into_iter()
        .map(|content| PlanEntry {
            content: content.to_string(),
            priority: "medium".into(),
            status: "pending".into(),
        })
        .collect()
}

/// The text of a Markdown list item, without its marker.
fn list_item(line: &str) -> Option<&str> {
    let bulleted = line.strip_prefix("- ").or_else(|| line.strip_prefix("* "));
    let numbered = || {
        let (number, rest) = line.split_once(". ")?;
        number.chars().all(|c| c.is_ascii_digit()).then_some(rest)
    };
    bulleted.or_else(numbered).map(str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_steps_are_the_list_items_else_the_lines() {
        let contents =
            |plan: &str| -> Vec<String> { steps(plan).into_iter().map(|e| e.content).collect() };
        assert_eq!(
            contents("# Plan\nFirst we look.\n1. Read a.rs\n2. Fix b\n- Test it"),
            ["Read a.rs", "Fix b", "Test it"]
        );
        assert_eq!(contents("Rename x\n\nRun tests"), ["Rename x", "Run tests"]);
    }
}
