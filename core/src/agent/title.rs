//! A session's title: the agent's, taken from its first prompt; the user's, normalised; a
//! fork's, inherited from its parent.
//!
//! Each title carries its source (`title_source`: `agent`, `user`, `fork`), so the rule of
//! `Session::set_title` holds across restarts: the agent names a session once, from the first
//! prompt that yields a title — a fork, whose inherited "<parent's title> (fork)" is only a
//! placeholder, from its own first prompt — and never replaces a title the user set.

use crate::chat::Prompt;

/// The longest title the agent makes, in characters.
const MAX_CHARS: usize = 80;
/// The longest title a user may set, in characters (longer ones are cut, with an ellipsis).
pub const USER_MAX_CHARS: usize = 160;
/// What marks a fork's inherited title.
const FORK_SUFFIX: &str = " (fork)";

/// The first non-blank line of the first text block, whitespace folded, at most 80 chars.
pub fn from_prompt(prompt: &Prompt) -> Option<String> {
    let text = prompt.blocks.iter().find_map(|block| {
        block
            .text
            .as_deref()?
            .lines()
            .find(|l| !l.trim().is_empty())
    })?;
    bounded(text, MAX_CHARS)
}

/// A title the user asked for: trimmed, every run of whitespace (newlines included) one
/// space, at most [`USER_MAX_CHARS`]; `None` if nothing is left.
pub fn from_user(text: &str) -> Option<String> {
    bounded(text, USER_MAX_CHARS)
}

/// A fork's title until its first prompt names it: the parent's, marked once (a fork of a
/// fork that has not been named yet keeps the mark it has).
pub fn for_fork(parent: &str, parent_is_fork: bool) -> String {
    if parent_is_fork {
        return parent.to_string();
    }
    let keep = USER_MAX_CHARS - FORK_SUFFIX.chars().count();
    match bounded(parent, keep) {
        Some(title) => format!("{title}{FORK_SUFFIX}"),
        None => FORK_SUFFIX.trim_start().to_string(),
    }
}

/// `text` with its whitespace folded, cut to `max` chars with an ellipsis.
fn bounded(text: &str, max: usize) -> Option<String> {
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if folded.is_empty() {
        return None;
    }
    if folded.chars().count() <= max {
        return Some(folded);
    }
    let cut: String = folded.chars().take(max - 1).collect();
    Some(format!("{}…", cut.trim_end()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::chat::PromptBlock;

    fn text(t: &str) -> Prompt {
        let content = json!({ "type": "text", "text": t });
        Prompt {
            blocks: vec![PromptBlock {
                content,
                text: Some(t.to_string()),
            }],
        }
    }

    #[test]
    fn first_line_folded_and_bounded() {
        assert_eq!(
            from_prompt(&text("\n  fix   the\tbug \nmore")).as_deref(),
            Some("fix the bug")
        );
        let long = "é".repeat(200);
        let title = from_prompt(&text(&long)).unwrap();
        assert_eq!(title.chars().count(), MAX_CHARS);
        assert!(title.ends_with('…'));
        assert_eq!(from_prompt(&text("   ")), None);
    }

    #[test]
    fn a_user_title_is_folded_and_capped_at_160() {
        assert_eq!(
            from_user("  Fix\n\tthe   bug  ").as_deref(),
            Some("Fix the bug")
        );
        let long = from_user(&"é".repeat(300)).unwrap();
        assert_eq!(long.chars().count(), USER_MAX_CHARS);
        assert!(long.ends_with('…'));
        // A cut that lands after a space drops it.
        let words = from_user(&"ab ".repeat(100)).unwrap();
        assert!(words.ends_with("ab…"), "{words}");
        assert_eq!(from_user(" \n\t "), None);
    }

    #[test]
    fn a_fork_is_marked_once() {
        assert_eq!(for_fork("Fix the bug", false), "Fix the bug (fork)");
        assert_eq!(for_fork("Fix the bug (fork)", true), "Fix the bug (fork)");
        let long = for_fork(&"x".repeat(300), false);
        assert_eq!(long.chars().count(), USER_MAX_CHARS);
        assert!(long.ends_with("… (fork)"));
    }
}
