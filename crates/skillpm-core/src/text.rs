//! Small helpers for text: positions in files, and making untrusted text
//! safe to show.

/// The 1-based line holding byte `offset` of `text` (for parse errors that
/// carry a byte span: TOML, YAML).
pub fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Line numbers for many offsets into one text: the line starts are found
/// once, so each lookup is a binary search (a big lockfile asks for one
/// line per entry; scanning from the start each time was quadratic).
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineIndex { starts }
    }

    /// The 1-based line holding byte `offset` (offsets past the end give
    /// the last line).
    pub fn line(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s <= offset).max(1)
    }
}

/// Whether `c` must not reach a terminal (or an agent's prompt) as is.
///
/// C0 controls other than `\n` and `\t` (ESC starts CSI/OSC sequences,
/// `\r` and backspace overwrite what was printed), DEL, C1 controls
/// (U+0080–U+009F: 8-bit CSI/OSC on some terminals), and the bidirectional
/// formatting characters (U+061C, U+200E/F, U+202A–E, U+2066–9), which
/// reorder what the reader sees without changing what the bytes say.
pub fn is_unsafe_char(c: char) -> bool {
    matches!(c,
        '\0'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        | '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}')
}

/// Writes the visible stand-in for an unsafe `c`: `\x1b` for a one-byte
/// control (C0, DEL, C1), `\u{202e}` for the rest. A visible escape rather
/// than U+FFFD or nothing, so a reader (or a bug report) still sees that
/// something was there and which character it was.
pub fn push_escaped(out: &mut String, c: char) {
    use std::fmt::Write;
    let _ = if (c as u32) < 0x100 {
        write!(out, "\\x{:02x}", c as u32)
    } else {
        write!(out, "\\u{{{:04x}}}", c as u32)
    };
}

/// `s` with every [`is_unsafe_char`] replaced by its visible escape;
/// newlines and tabs are kept, so multi-line output keeps its shape.
///
/// The CLI passes everything it prints through this one function, so text
/// from a `SKILL.md`, a registry, git or a file name cannot move the cursor,
/// recolour, retitle or rewrite the terminal, or fake a line of output.
pub fn sanitize(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(is_unsafe_char) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if is_unsafe_char(c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_lines_from_one_and_clamps() {
        assert_eq!(super::line_of("a\nb\nc", 0), 1);
        assert_eq!(super::line_of("a\nb\nc", 2), 2);
        assert_eq!(super::line_of("a\nb\nc", 99), 3);
    }

    #[test]
    fn line_index_agrees_with_line_of() {
        let text = "a\nbb\n\nccc\n";
        let idx = super::LineIndex::new(text);
        for off in 0..text.len() + 3 {
            assert_eq!(idx.line(off), super::line_of(text, off), "offset {off}");
        }
    }

    #[test]
    fn sanitize_escapes_every_control_but_newline_and_tab() {
        assert_eq!(super::sanitize("plain\n\tline"), "plain\n\tline");
        assert_eq!(
            super::sanitize("\x1b]0;t\x07\x1b[31mred\r\u{9b}2J"),
            "\\x1b]0;t\\x07\\x1b[31mred\\x0d\\x9b2J"
        );
        assert_eq!(
            super::sanitize("a\u{202e}b\u{2066}"),
            "a\\u{202e}b\\u{2066}"
        );
        for c in (0u32..0x20).chain(0x7f..0xa0).filter_map(char::from_u32) {
            let shown = super::sanitize(&c.to_string()).into_owned();
            assert!(!shown.chars().any(super::is_unsafe_char), "{c:?}");
            assert_eq!(c == '\n' || c == '\t', shown == c.to_string(), "{c:?}");
        }
        assert_eq!(super::sanitize("é ü — ok"), "é ü — ok");
    }
}
