//! The names the model calls MCP tools by: `mcp__<server>__<tool>`, in the characters and the
//! length every provider accepts (`^[A-Za-z0-9_-]{1,64}$`), unique across a session's servers.

use std::collections::HashSet;

/// Providers' limit on a function name.
const MAX_CHARS: usize = 64;

/// How much of the server's name is kept, so that a long one still leaves room for the tool's.
const SERVER_CHARS: usize = 24;

/// One name per `(server, tool)` pair, in order. A name already given (two servers with the
/// same name, or names that only differ in characters sanitising replaced) gets `_2`, `_3`, …:
/// the first in order keeps the plain name, so the result depends only on the order of the
/// servers and of their tool lists.
pub fn tool_names(tools: &[(&str, &str)]) -> Vec<String> {
    let mut taken = HashSet::new();
    tools
        .iter()
        .map(|(server, tool)| {
            let base = base_name(server, tool);
            let mut name = base.clone();
            let mut n = 2;
            while !taken.insert(name.clone()) {
                name = with_suffix(&base, n);
                n += 1;
            }
            name
        })
        .collect()
}

fn base_name(server: &str, tool: &str) -> String {
    let mut server = sanitize(server);
    server.truncate(SERVER_CHARS);
    let mut name = format!("mcp__{server}__{}", sanitize(tool));
    name.truncate(MAX_CHARS);
    name
}

/// `base` with `_n`, cut so that the whole stays within the limit.
fn with_suffix(base: &str, n: usize) -> String {
    let suffix = format!("_{n}");
    let keep = base.len().min(MAX_CHARS - suffix.len());
    format!("{}{suffix}", &base[..keep])
}

/// Every character outside `[A-Za-z0-9_-]` becomes `_`, so the result is ASCII (and may be
/// cut at any byte).
fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(name: &str) -> bool {
        !name.is_empty()
            && name.len() <= MAX_CHARS
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    }

    #[test]
    fn plain_names_are_kept() {
        assert_eq!(
            tool_names(&[("files", "read-file"), ("git", "log")]),
            ["mcp__files__read-file", "mcp__git__log"]
        );
    }

    #[test]
    fn characters_providers_refuse_become_underscores() {
        assert_eq!(
            tool_names(&[("my server", "get.thing/é")]),
            ["mcp__my_server__get_thing__"]
        );
    }

    #[test]
    fn collisions_get_a_numeric_suffix_in_order() {
        let names = tool_names(&[
            ("a", "echo"),
            ("a", "echo"),
            ("a b", "x"),
            ("a.b", "x"),
            ("a", "echo"),
        ]);
        assert_eq!(
            names,
            [
                "mcp__a__echo",
                "mcp__a__echo_2",
                "mcp__a_b__x",
                "mcp__a_b__x_2",
                "mcp__a__echo_3"
            ]
        );
    }

    #[test]
    fn long_names_fit_and_stay_unique() {
        let server = "s".repeat(100);
        let tool = "t".repeat(100);
        let names = tool_names(&[(&server, &tool), (&server, &tool), (&server, "short")]);
        assert!(names.iter().all(|n| valid(n)), "{names:?}");
        assert_eq!(
            names[0],
            format!("mcp__{}__{}", "s".repeat(24), "t".repeat(33))
        );
        assert!(names[1].ends_with("t_2"), "{}", names[1]);
        assert_eq!(names[2], format!("mcp__{}__short", "s".repeat(24)));
        let unique: HashSet<&String> = names.iter().collect();
        assert_eq!(unique.len(), names.len());
    }
}
