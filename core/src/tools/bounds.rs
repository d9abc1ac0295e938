//! Keeping what the model reads short: cut long lines, cap text, and say so in words the
//! model can act on.

use serde_json::json;

use super::Output;
use crate::io::floor_char_boundary;

/// Lines longer than this (minified code, data) are cut in listings and search results.
pub const MAX_LINE_CHARS: usize = 500;

/// A process's last words are cut the same way, in `io/`.
pub(crate) use crate::io::cut_line;

/// `text` cut to at most `max` bytes on a character boundary; `true` when cut.
pub fn cap(text: &str, max: usize) -> (&str, bool) {
    let end = floor_char_boundary(text, max);
    (&text[..end], end < text.len())
}

/// `text` in a Markdown code fence that no backtick run inside it can close.
pub fn fence(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let ticks = "`".repeat(longest.max(2) + 1);
    let newline = if text.ends_with('\n') || text.is_empty() {
        ""
    } else {
        "\n"
    };
    format!("{ticks}\n{text}{newline}{ticks}")
}

/// Counts are worded the same by the language-server stack, so the words live in a leaf.
pub(crate) use crate::text::plural;

/// A listing for the model: `items` one a line (`empty` when there are none), with a closing
/// "… N more <what>" when `total` is larger than what was shown; its raw output counts them
/// as `{ <what>: total }`.
pub fn listing(items: &[String], total: usize, empty: &str, what: &str, hint: &str) -> Output {
    let mut for_model = String::new();
    if items.is_empty() {
        for_model.push_str(empty);
    }
    for item in items {
        for_model.push_str(item);
        for_model.push('\n');
    }
    if total > items.len() {
        for_model.push_str(&format!("… {} more {what} ({hint})\n", total - items.len()));
    }
    Output {
        for_model,
        raw_output: Some(json!({ what: total })),
        ..Output::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_long_lines_on_characters() {
        assert_eq!(cut_line("short", 10), "short");
        assert_eq!(cut_line("ééééé", 2), "éé… [3 more characters]");
    }

    #[test]
    fn caps_on_a_character_boundary() {
        assert_eq!(cap("héllo", 2), ("h", true));
        assert_eq!(cap("héllo", 100), ("héllo", false));
    }

    #[test]
    fn fences_survive_backticks_inside() {
        assert_eq!(fence("a"), "```\na\n```");
        assert_eq!(fence("x ```` y\n"), "`````\nx ```` y\n`````");
    }

    #[test]
    fn lists_end_with_how_many_more() {
        let output = listing(
            &["a".into(), "b".into()],
            5,
            "(none)\n",
            "files",
            "narrow the pattern",
        );
        assert_eq!(
            output.for_model,
            "a\nb\n… 3 more files (narrow the pattern)\n"
        );
        assert_eq!(output.raw_output, Some(json!({ "files": 5 })));
        let empty = listing(&[], 0, "(none)\n", "files", "narrow the pattern");
        assert_eq!(empty.for_model, "(none)\n");
    }
}
