//! A file's line endings, kept through every change a tool makes: models write `\n`, and a
//! file that uses `\r\n` (most Windows files) must stay `\r\n` throughout — lines that came
//! back as `\n` would mix the two, and git and diff tools then show every one as changed.

use std::borrow::Cow;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineEnding {
    Lf,
    CrLf,
}

impl LineEnding {
    /// The ending most of `text`'s lines use; LF when there is no line break at all (a new
    /// line added to a one-line file is then written as the model wrote it).
    pub fn of(text: &str) -> LineEnding {
        let crlf = text.matches("\r\n").count();
        let lf = text.matches('\n').count() - crlf;
        if crlf > lf {
            LineEnding::CrLf
        } else {
            LineEnding::Lf
        }
    }

    /// `text` (written by a model) with its line breaks in this ending. An LF file gets the
    /// text as it came: a `\r` there may be meant.
    pub fn apply(self, text: &str) -> Cow<'_, str> {
        match self {
            LineEnding::CrLf if text.contains('\n') => {
                Cow::Owned(text.replace("\r\n", "\n").replace('\n', "\r\n"))
            }
            _ => Cow::Borrowed(text),
        }
    }
}

/// `text` with its `\r\n` as `\n`: the form diffs are shown to the model in (a `\r` at the end
/// of every line would be noise in every line of the diff).
pub fn without_cr(text: &str) -> Cow<'_, str> {
    if text.contains("\r\n") {
        Cow::Owned(text.replace("\r\n", "\n"))
    } else {
        Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ending_most_lines_use_wins() {
        assert_eq!(LineEnding::of("a\r\nb\r\n"), LineEnding::CrLf);
        assert_eq!(LineEnding::of("a\r\nb\r\nc\n"), LineEnding::CrLf);
        assert_eq!(LineEnding::of("a\nb\nc\r\n"), LineEnding::Lf);
        assert_eq!(LineEnding::of("one line"), LineEnding::Lf);
        assert_eq!(LineEnding::of(""), LineEnding::Lf);
    }

    #[test]
    fn crlf_is_applied_to_every_line_break_once() {
        let crlf = LineEnding::CrLf;
        assert_eq!(crlf.apply("x\ny\n"), "x\r\ny\r\n");
        assert_eq!(crlf.apply("x\r\ny\n"), "x\r\ny\r\n", "no \\r\\r\\n");
        assert_eq!(crlf.apply("no break"), "no break");
        assert_eq!(LineEnding::Lf.apply("x\r\ny\n"), "x\r\ny\n");
    }

    #[test]
    fn diffs_lose_their_carriage_returns() {
        assert_eq!(without_cr("a\r\nb\r\n"), "a\nb\n");
        assert_eq!(without_cr("a\rb\n"), "a\rb\n", "a lone \\r is text");
    }
}
