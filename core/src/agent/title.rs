//! A session's title, taken from its first prompt.

use super::Prompt;

const MAX_CHARS: usize = 80;

/// The first non-blank line of the first text block, whitespace folded, at most 80 chars.
pub fn from_prompt(prompt: &Prompt) -> Option<String> {
    let text = prompt.blocks.iter().find_map(|block| {
        block
            .text
            .as_deref()?
            .lines()
            .find(|l| !l.trim().is_empty())
    })?;
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if folded.chars().count() <= MAX_CHARS {
        return Some(folded);
    }
    let cut: String = folded.chars().take(MAX_CHARS - 1).collect();
    Some(format!("{}…", cut.trim_end()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::agent::PromptBlock;

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
}
