//! Prompts that are commands to Hearth rather than messages to the model (`/compact`).
//! They are replayed like any prompt, but the model never reads them.

use super::Prompt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Compact the context now, the summary focused on what follows the command, if anything.
    Compact { focus: Option<String> },
}

/// The command a prompt is: one text block that starts with a command's name.
pub fn parse(prompt: &Prompt) -> Option<Command> {
    let [block] = &prompt.blocks[..] else {
        return None;
    };
    let text = block.text.as_deref()?.trim();
    let rest = text.strip_prefix("/compact")?;
    if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
        return None;
    }
    let focus = Some(rest.trim().to_string()).filter(|f| !f.is_empty());
    Some(Command::Compact { focus })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::agent::PromptBlock;

    fn prompt(texts: &[&str]) -> Prompt {
        Prompt {
            blocks: texts
                .iter()
                .map(|t| PromptBlock {
                    content: json!({"type": "text", "text": t}),
                    text: Some(t.to_string()),
                })
                .collect(),
        }
    }

    #[test]
    fn compact_with_and_without_a_focus() {
        assert_eq!(
            parse(&prompt(&["/compact"])),
            Some(Command::Compact { focus: None })
        );
        assert_eq!(
            parse(&prompt(&["  /compact   the parser work \n"])),
            Some(Command::Compact {
                focus: Some("the parser work".into())
            })
        );
    }

    #[test]
    fn anything_else_is_a_message() {
        assert_eq!(parse(&prompt(&["/compaction is slow"])), None);
        assert_eq!(parse(&prompt(&["please /compact"])), None);
        assert_eq!(parse(&prompt(&["/compact", "more"])), None);
    }
}
