//! HTML to readable text, crudely: drop scripts, styles and comments, turn block elements
//! into line breaks, strip the other tags, decode common entities, tidy whitespace. Enough
//! for a model to read documentation pages without a browser engine.

/// Elements whose content is not text for a reader.
const SKIPPED: [&str; 6] = ["script", "style", "noscript", "svg", "template", "iframe"];
/// Elements that start a new line.
const BLOCKS: [&str; 29] = [
    "address",
    "article",
    "aside",
    "blockquote",
    "br",
    "dd",
    "div",
    "dl",
    "dt",
    "footer",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "title",
    "tr",
    "ul",
];

pub fn to_text(html: &str) -> String {
    // ASCII lowercasing keeps byte offsets, so positions found in `lower` index `html`.
    let lower = html.to_ascii_lowercase();
    let mut text = Text::default();
    let mut at = 0;
    while let Some(open) = html[at..].find('<').map(|i| at + i) {
        text.push(&decode_entities(&html[at..open]));
        at = skip_markup(html, &lower, open, &mut text);
    }
    text.push(&decode_entities(&html[at..]));
    tidy(&text.out)
}

/// The text being built. Source whitespace is one space, as a browser renders it, except
/// inside `<pre>`, where code keeps its lines and indentation.
#[derive(Default)]
struct Text {
    out: String,
    in_pre: bool,
}

impl Text {
    fn push(&mut self, text: &str) {
        if self.in_pre {
            self.out.push_str(text);
            return;
        }
        let starts_line = self.out.is_empty() || self.out.ends_with('\n');
        let mut words = text.split_whitespace().peekable();
        if words.peek().is_none() {
            if !starts_line && !text.is_empty() {
                self.out.push(' ');
            }
            return;
        }
        if !starts_line && text.starts_with(char::is_whitespace) {
            self.out.push(' ');
        }
        self.out.push_str(&words.collect::<Vec<_>>().join(" "));
        if text.ends_with(char::is_whitespace) {
            self.out.push(' ');
        }
    }

    fn line_break(&mut self) {
        if !self.out.is_empty() && !self.out.ends_with('\n') {
            self.out.push('\n');
        }
    }
}

/// Skips the tag (or comment, or skipped element) starting at `open`; returns where text
/// resumes. Block tags break the line.
fn skip_markup(html: &str, lower: &str, open: usize, text: &mut Text) -> usize {
    let end_of = |from: usize, needle: &str| {
        lower[from..]
            .find(needle)
            .map_or(html.len(), |i| from + i + needle.len())
    };
    if lower[open..].starts_with("<!--") {
        return end_of(open, "-->");
    }
    let closing = lower[open + 1..].starts_with('/');
    let name: String = lower[open + 1..]
        .trim_start_matches('/')
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    let tag_end = end_of(open, ">");
    if !closing && SKIPPED.contains(&name.as_str()) {
        let close = end_of(tag_end, &format!("</{name}"));
        return end_of(close, ">");
    }
    if BLOCKS.contains(&name.as_str()) {
        text.line_break();
    }
    if name == "pre" {
        text.in_pre = !closing;
    }
    tag_end
}

fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let entity = rest[1..]
            .find(';')
            .filter(|&end| end <= 10)
            .and_then(|end| Some((decode_entity(&rest[1..1 + end])?, end + 2)));
        match entity {
            Some((decoded, len)) => {
                out.push(decoded);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn decode_entity(name: &str) -> Option<char> {
    let named = match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => ' ',
        "mdash" => '—',
        "ndash" => '–',
        "hellip" => '…',
        "copy" => '©',
        _ => {
            let number = name.strip_prefix('#')?;
            let code = match number.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => number.parse().ok()?,
            };
            return char::from_u32(code);
        }
    };
    Some(named)
}

/// No trailing spaces, no runs of blank lines, nothing blank at either end.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = true;
    for line in text.lines().map(str::trim_end) {
        if line.is_empty() {
            if !blank {
                out.push('\n');
            }
            blank = true;
            continue;
        }
        out.push_str(line);
        out.push('\n');
        blank = false;
    }
    out.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::to_text;

    #[test]
    fn keeps_the_text_and_drops_the_machinery() {
        let html = r#"<!DOCTYPE html><html><head><title>Docs &amp; more</title>
            <style>body { color: red }</style><SCRIPT>var x = "<p>no</p>";</SCRIPT></head>
            <body><!-- hidden --><h1>Install</h1><p>Run   <code>cargo&nbsp;add</code>
            &lt;crate&gt; &#8212; done&#x21;</p><ul><li>one</li><li>two</li></ul>
            <p>AT&T & friends</p><pre>fn main() {
    run();
}</pre></body></html>"#;
        assert_eq!(
            to_text(html),
            "Docs & more\nInstall\nRun cargo add <crate> — done!\none\ntwo\nAT&T & friends\n\
             fn main() {\n    run();\n}"
        );
    }

    #[test]
    fn survives_broken_markup() {
        assert_eq!(to_text("text <b unclosed"), "text");
        assert_eq!(to_text("<script>never closed"), "");
        assert_eq!(to_text("a &bogus; b &#xZZ; c"), "a &bogus; b &#xZZ; c");
    }
}
