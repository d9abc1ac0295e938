//! The Markdown files a project or user writes for Hearth — custom commands, agent files,
//! skills — share one shape: an optional front matter of `key: value` lines between two `---`
//! lines, then the body. Only that flat subset of YAML is read (what those files use in every
//! peer that reads them): one value per key, quotes optional, a list as `[a, b]` or `a, b`.
//! Anything else in the front matter is ignored rather than refused, so a file written for
//! another agent still loads.

use std::path::{Path, PathBuf};

/// A file's front matter and body.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Document {
    /// `(key, value)` in file order, values unquoted; keys as written.
    fields: Vec<(String, String)>,
    /// The text after the front matter, trimmed; the whole file when there is none (or when
    /// it never closes).
    pub body: String,
}

impl Document {
    pub fn parse(text: &str) -> Document {
        let (front, body) = split(text).unwrap_or(("", text));
        let fields = front
            .lines()
            .filter_map(|line| line.split_once(':'))
            .map(|(key, value)| (key.trim().to_string(), unquote(value.trim()).to_string()))
            .filter(|(key, _)| !key.is_empty() && !key.starts_with('#'))
            .collect();
        Document {
            fields,
            body: body.trim().to_string(),
        }
    }

    /// The value of `key`, when it is given and not empty.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty())
    }

    /// The value of `key` as a list: `[a, b]`, `a, b` or a single `a`.
    pub fn list(&self, key: &str) -> Option<Vec<String>> {
        let value = self.get(key)?;
        let inner = value
            .strip_prefix('[')
            .and_then(|v| v.strip_suffix(']'))
            .unwrap_or(value);
        let items = inner
            .split(',')
            .map(|item| unquote(item.trim()).to_string())
            .filter(|item| !item.is_empty())
            .collect();
        Some(items)
    }

    /// The body's first non-empty line without its heading marks, at most 80 characters:
    /// what describes a file that says nothing of itself.
    pub fn first_line(&self) -> Option<String> {
        let first = self.body.lines().find(|l| !l.trim().is_empty())?;
        let first: String = first
            .trim()
            .trim_start_matches('#')
            .trim()
            .chars()
            .take(80)
            .collect();
        (!first.is_empty()).then_some(first)
    }
}

/// The `<kind>/*.md` files of the user's config dir, then of the workspace's `.hearth/`, as
/// `(stem, text)` — so that a caller keying them by name lets the workspace's win. A file
/// whose stem cannot be typed as a name, or that is too large (a warning names it as `what`),
/// is left out.
pub fn project_files(
    cwd: &Path,
    user_config_dir: Option<&Path>,
    kind: &str,
    (max_bytes, what): (u64, &str),
) -> Vec<(String, String)> {
    let dirs = [
        user_config_dir.map(|dir| dir.join(kind)),
        Some(cwd.join(".hearth").join(kind)),
    ];
    dirs.into_iter()
        .flatten()
        .flat_map(|dir| markdown_files(&dir))
        .filter_map(|(stem, path)| Some((stem, read_bounded(&path, max_bytes, what)?)))
        .collect()
}

/// The `*.md` files of `dir` whose stem can be typed as a name (a command's, an agent's).
fn markdown_files(dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "md") && path.is_file())
        .filter_map(|path| {
            let name = path.file_stem()?.to_str()?.to_string();
            let typable = !name.is_empty() && !name.contains(char::is_whitespace);
            typable.then_some((name, path))
        })
        .collect()
}

/// The text of a hand-written file, or `None` (with a warning naming `what`) when it is larger
/// than `max_bytes` — no one wrote that by hand — or cannot be read.
pub fn read_bounded(path: &Path, max_bytes: u64, what: &str) -> Option<String> {
    let size = std::fs::metadata(path).ok()?.len();
    if size > max_bytes {
        tracing::warn!(path = %path.display(), size, "{what} too large; skipped");
        return None;
    }
    match std::fs::read(path) {
        Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "cannot read a {what}");
            None
        }
    }
}

/// `(front matter, body)` when `text` opens with a `---` line that a later `---` line closes.
fn split(text: &str) -> Option<(&str, &str)> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Some((&rest[..offset], &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    None
}

/// A value written in quotes, as YAML allows, without them.
fn unquote(value: &str) -> &str {
    for quote in ['"', '\''] {
        if let Some(inner) = value
            .strip_prefix(quote)
            .and_then(|v| v.strip_suffix(quote))
        {
            return inner;
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_lists_and_body() {
        let doc = Document::parse(
            "---\nname: reviewer\ndescription: \"Reviews: diffs\"\ntools: [read, 'grep', glob]\nmodel:\n---\n# Review\n\nBody.\n",
        );
        assert_eq!(doc.get("name"), Some("reviewer"));
        assert_eq!(doc.get("description"), Some("Reviews: diffs"));
        assert_eq!(doc.get("model"), None, "an empty value is no value");
        assert_eq!(doc.list("tools").unwrap(), ["read", "grep", "glob"]);
        assert_eq!(doc.body, "# Review\n\nBody.");
        assert_eq!(doc.first_line().as_deref(), Some("Review"));
        let bare = Document::parse("---\ntools: read, write\n---\n");
        assert_eq!(bare.list("tools").unwrap(), ["read", "write"]);
        assert_eq!(bare.first_line(), None);
    }

    #[test]
    fn without_a_closed_front_matter_the_whole_file_is_body() {
        let unclosed = Document::parse("---\ndescription: never closed\n");
        assert_eq!(unclosed.get("description"), None);
        assert_eq!(unclosed.body, "---\ndescription: never closed");
        let crlf = Document::parse("---\r\nname: x\r\n---\r\nbody\r\n");
        assert_eq!(crlf.get("name"), Some("x"));
        assert_eq!(crlf.body, "body");
    }
}
