//! The leaf of questions to the user: a message with a form, what came back, and the `Asker`
//! port that carries it to whoever can answer (the ACP client: `acp/client.rs`).
//!
//! The form is a JSON Schema object of primitive properties — the restricted schema MCP's
//! elicitation defines, which ACP's `elicitation/create` adopted — so an MCP server's form
//! passes through unchanged and `ask_user` builds the same kind. Where the client can show
//! no form, [`one_pick`] says whether a single choice among options still answers it (the
//! permission prompt's fallback).
//!
//! Never a silent default: every way a question ends without an answer is a [`Reply`] of its
//! own, and the caller tells the model (or the MCP server) which.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

/// One question.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// The tool call it is asked for, when there is one (shown with it).
    pub tool_call_id: Option<String>,
    /// What the user reads.
    pub message: String,
    /// The form: `{"type": "object", "properties": {...}, "required": [...]}`.
    pub schema: Value,
    /// The session it is asked on, when not the asking one's: a subagent's own, for a
    /// client that shows subagents as child sessions (`Wire::asks_on`).
    pub asked_on: Option<String>,
}

/// How a question ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The user's answer, an object of the form's properties.
    Answered(Map<String, Value>),
    /// The user chose not to answer.
    Declined,
    /// Nobody answered: the turn was cancelled, or the client dismissed the question.
    Cancelled,
    /// There was no way to ask (why, in words for the model and the user).
    CannotAsk(String),
}

/// Carries questions to the user.
pub trait Asker: Send + Sync {
    /// Asks `question` in `session_id`; `cancel` ends the wait with [`Reply::Cancelled`].
    fn ask<'a>(
        &'a self,
        session_id: &'a str,
        question: &'a Question,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Reply>;
}

/// Told when a question or a permission request starts and stops waiting for the user: a
/// subagent's state reads `requires_action` meanwhile (`agent/child.rs`).
pub trait Waiting: Send + Sync {
    fn waiting(&self, waiting: bool);
}

/// One wait for the user, reported from its start until it drops — answered, cancelled, or
/// given up with the future that waited — so no end goes unreported.
pub struct Wait(Option<Arc<dyn Waiting>>);

impl Wait {
    /// Starts a wait reported to `on` (`None`: nobody is told).
    pub fn start(on: Option<Arc<dyn Waiting>>) -> Wait {
        if let Some(on) = &on {
            on.waiting(true);
        }
        Wait(on)
    }
}

impl Drop for Wait {
    fn drop(&mut self) {
        if let Some(on) = &self.0 {
            on.waiting(false);
        }
    }
}

/// A form one choice answers: which property gets the chosen value, and the choices as
/// `(value, label)`.
#[derive(Debug, Clone, PartialEq)]
pub struct OnePick {
    /// `None` for a form with no properties: choosing "accept" answers it.
    pub property: Option<String>,
    pub choices: Vec<(Value, String)>,
    /// The property takes a list (a multiple choice): the chosen value goes in one.
    pub list: bool,
}

impl OnePick {
    /// The answer when the user picked `choices[index]`.
    pub fn answer(&self, index: usize) -> Option<Map<String, Value>> {
        let (value, _) = self.choices.get(index)?;
        let mut answer = Map::new();
        if let Some(property) = &self.property {
            let value = if self.list {
                Value::Array(vec![value.clone()])
            } else {
                value.clone()
            };
            answer.insert(property.clone(), value);
        }
        Some(answer)
    }
}

/// How `schema` is answered by one pick, if it can be: no properties at all (a confirmation),
/// or one choice-like property (an enum, a multiple choice, a boolean) and nothing else the
/// form requires.
pub fn one_pick(schema: &Value) -> Option<OnePick> {
    let empty = Map::new();
    let properties = schema["properties"].as_object().unwrap_or(&empty);
    if properties.is_empty() {
        return Some(OnePick {
            property: None,
            choices: vec![(Value::Null, "Accept".into())],
            list: false,
        });
    }
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut picks = properties
        .iter()
        .filter_map(|(name, property)| choices(property).map(|c| (name, c)));
    let (name, (choices, list)) = picks.next()?;
    let others_required = required.iter().any(|r| *r != name);
    (picks.next().is_none() && !others_required).then(|| OnePick {
        property: Some(name.clone()),
        choices,
        list,
    })
}

/// The choices of one property, and whether it takes a list; `None` for a property that is
/// not a choice (free text, a number).
fn choices(property: &Value) -> Option<(Vec<(Value, String)>, bool)> {
    match property["type"].as_str()? {
        "boolean" => Some((
            vec![
                (Value::Bool(true), "Yes".into()),
                (Value::Bool(false), "No".into()),
            ],
            false,
        )),
        "string" => enumerated(property, "oneOf").map(|c| (c, false)),
        "array" => enumerated(&property["items"], "anyOf").map(|c| (c, true)),
        _ => None,
    }
}

/// `enum` (with `enumNames` for labels) or titled consts under `titled` (`oneOf` for a single
/// choice, `anyOf` for the items of a multiple one).
fn enumerated(schema: &Value, titled: &str) -> Option<Vec<(Value, String)>> {
    if let Some(values) = schema["enum"].as_array() {
        let names = schema["enumNames"].as_array();
        return Some(
            values
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let label = names
                        .and_then(|n| n.get(i))
                        .and_then(Value::as_str)
                        .or(v.as_str())
                        .unwrap_or_default();
                    (v.clone(), label.to_string())
                })
                .collect(),
        );
    }
    let consts = schema[titled].as_array()?;
    Some(
        consts
            .iter()
            .map(|c| {
                let label = c["title"].as_str().or(c["const"].as_str());
                (c["const"].clone(), label.unwrap_or_default().to_string())
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_single_choice_is_one_pick_of_its_titled_consts() {
        let schema = json!({"type": "object", "properties": {
            "answer": {"type": "string", "oneOf": [{"const": "a", "title": "A"}, {"const": "b"}]},
            "other": {"type": "string"},
        }});
        let pick = one_pick(&schema).unwrap();
        assert_eq!(pick.property.as_deref(), Some("answer"));
        assert_eq!(
            pick.choices,
            [(json!("a"), "A".to_string()), (json!("b"), "b".to_string())]
        );
        assert_eq!(
            pick.answer(1).unwrap(),
            *json!({"answer": "b"}).as_object().unwrap()
        );
    }

    #[test]
    fn a_multiple_choice_picks_one_into_a_list_and_enums_use_their_names() {
        let schema = json!({"type": "object", "properties": {
            "tags": {"type": "array", "items": {"enum": ["x", "y"], "enumNames": ["Ex", "Why"]}},
        }, "required": ["tags"]});
        let pick = one_pick(&schema).unwrap();
        assert_eq!(pick.choices[1].1, "Why");
        assert_eq!(
            pick.answer(0).unwrap(),
            *json!({"tags": ["x"]}).as_object().unwrap()
        );
    }

    #[test]
    fn a_confirmation_and_a_boolean_are_one_pick() {
        let confirm = one_pick(&json!({"type": "object", "properties": {}})).unwrap();
        assert_eq!(confirm.answer(0).unwrap(), Map::new());
        let boolean = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}});
        assert_eq!(
            one_pick(&boolean).unwrap().answer(1).unwrap(),
            *json!({"ok": false}).as_object().unwrap()
        );
    }

    #[test]
    fn free_text_two_choices_or_another_required_field_need_a_form() {
        let text = json!({"type": "object", "properties": {"name": {"type": "string"}}});
        assert_eq!(one_pick(&text), None);
        let two = json!({"type": "object", "properties": {
            "a": {"type": "boolean"}, "b": {"type": "boolean"},
        }});
        assert_eq!(one_pick(&two), None);
        let required_text = json!({"type": "object", "properties": {
            "a": {"type": "boolean"}, "why": {"type": "string"},
        }, "required": ["why"]});
        assert_eq!(one_pick(&required_text), None);
    }
}
