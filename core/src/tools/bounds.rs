//! Keeping what the model reads short: cut long lines, cap text, and say so in words the
//! model can act on.

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

/// Appends the list `items` to `out`, one a line, with a closing "… N more <what>" when
/// `total` is larger than what was shown.
pub fn push_list(out: &mut String, items: &[String], total: usize, what: &str, hint: &str) {
    for item in items {
        out.push_str(item);
        out.push('\n');
    }
    if total > items.len() {
        out.push_str(&format!("… {} more {what} ({hint})\n", total - items.len()));
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
        let mut out = String::new();
        push_list(
            &mut out,
            &["a".into(), "b".into()],
            5,
            "files",
            "narrow the pattern",
        );
        assert_eq!(out, "a\nb\n… 3 more files (narrow the pattern)\n");
    }
}
