//! Positions as a person reads them (1-based line and column, a column counting characters)
//! and as LSP does (0-based line, UTF-16 code units: the one encoding every server offers).

/// The LSP position of 1-based `line` and `column` in `text`; an error says what is out of
/// range, for the model to fix its call. A column past the end of the line means its end.
pub fn to_lsp(text: &str, line: u32, column: u32) -> Result<(u32, u32), String> {
    if line == 0 || column == 0 {
        return Err("`line` and `column` start at 1".into());
    }
    let lines = text.lines().count();
    let Some(content) = text.split('\n').nth(line as usize - 1) else {
        return Err(format!(
            "line {line} is past the end of the file ({lines} lines)"
        ));
    };
    let content = content.strip_suffix('\r').unwrap_or(content);
    let units: usize = content
        .chars()
        .take(column as usize - 1)
        .map(char::len_utf16)
        .sum();
    Ok((line - 1, units as u32))
}

/// The 1-based line and column of the LSP position (`line`, `character` in UTF-16 units)
/// in `text`. Positions past the text are kept as they are, shifted to 1-based.
pub fn from_lsp(text: &str, line: u32, character: u32) -> (u32, u32) {
    let Some(content) = text.split('\n').nth(line as usize) else {
        return (line + 1, character + 1);
    };
    let mut units = 0;
    let mut column = 1;
    for c in content.chars() {
        if units >= character as usize {
            break;
        }
        units += c.len_utf16();
        column += 1;
    }
    (line + 1, column)
}

/// The 1-based `line` of `text` (without its line ending), if it has one.
pub fn line_text(text: &str, line: u32) -> Option<&str> {
    let content = text.split('\n').nth(line.checked_sub(1)? as usize)?;
    Some(content.strip_suffix('\r').unwrap_or(content))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_characters_and_lsp_counts_utf16_units() {
        let text = "ab\r\né😀x = 1\n";
        assert_eq!(to_lsp(text, 1, 1), Ok((0, 0)));
        // `x` is the third character of line 2, after a 1-unit é and a 2-unit emoji.
        assert_eq!(to_lsp(text, 2, 3), Ok((1, 3)));
        assert_eq!(from_lsp(text, 1, 3), (2, 3));
        assert_eq!(
            to_lsp(text, 1, 99),
            Ok((0, 2)),
            "past the end of the line: its end"
        );
        assert_eq!(from_lsp(text, 0, 2), (1, 3));
    }

    #[test]
    fn out_of_range_positions_say_why() {
        assert!(to_lsp("a\nb", 0, 1).unwrap_err().contains("start at 1"));
        assert!(to_lsp("a\nb", 4, 1).unwrap_err().contains("2 lines"));
        assert_eq!(from_lsp("a", 5, 0), (6, 1));
        assert_eq!(line_text("a\r\nb", 1), Some("a"));
        assert_eq!(line_text("a", 0), None);
    }
}
