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

/// A TOML parse error's message on one line (`toml_edit` spreads it over
/// several, with a snippet of the file), for errors that give the line
/// number themselves.
pub fn toml_message(e: &toml_edit::TomlError) -> String {
    e.message()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
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

/// Whether `c` must not reach a terminal (or an agent's prompt) as is,
/// wherever it stands.
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

/// Whether `c` is drawn as nothing: Unicode tag characters (U+E0000–
/// U+E007F, an invisible copy of ASCII), zero-width spaces and joiners,
/// word joiner and invisible operators, the byte-order mark, variation
/// selectors, soft hyphen, fillers and other default-ignorable format
/// characters. Text made of them reads as nothing to a person and as
/// instructions to a model.
pub fn is_invisible_char(c: char) -> bool {
    matches!(c,
        '\u{ad}' | '\u{34f}' | '\u{115f}' | '\u{1160}' | '\u{17b4}' | '\u{17b5}'
        | '\u{180b}'..='\u{180f}' | '\u{200b}'..='\u{200d}' | '\u{2060}'..='\u{2064}'
        | '\u{206a}'..='\u{206f}' | '\u{3164}' | '\u{fe00}'..='\u{fe0f}' | '\u{feff}'
        | '\u{ffa0}' | '\u{1d173}'..='\u{1d17a}' | '\u{e0000}'..='\u{e007f}'
        | '\u{e0100}'..='\u{e01ef}')
}

/// Whether `c`, following `prev`, must be shown escaped rather than as is:
/// every [`is_unsafe_char`], and every [`is_invisible_char`] but the ones
/// real text needs — a zero-width joiner or non-joiner, or a variation
/// selector, right after a visible non-ASCII character (an emoji sequence
/// such as "⚠️", Persian and Indic shaping), and the emoji selector after a
/// digit, `#` or `*` (the keycap "1️⃣"). The same after other ASCII, after
/// another invisible character, or at the start is a carrier, and shown.
pub fn must_escape(prev: Option<char>, c: char) -> bool {
    if is_unsafe_char(c) {
        return true;
    }
    if !is_invisible_char(c) {
        return false;
    }
    let joins = matches!(c, '\u{200c}' | '\u{200d}' | '\u{fe00}'..='\u{fe0f}');
    let after_visible =
        prev.is_some_and(|p| !p.is_ascii() && !is_invisible_char(p) && !is_unsafe_char(p));
    let keycap = matches!(c, '\u{fe0e}' | '\u{fe0f}')
        && prev.is_some_and(|p| p.is_ascii_digit() || p == '#' || p == '*');
    !(joins && after_visible || keycap)
}

/// The characters of `s` that [`must_escape`], with their byte offsets. A
/// carriage return that ends a line (CRLF) is a line ending, not a
/// control, and is not among them.
pub fn escaped_chars(s: &str) -> impl Iterator<Item = (usize, char)> + '_ {
    let mut prev = None;
    s.char_indices().filter(move |&(at, c)| {
        let crlf = c == '\r' && s[at + 1..].starts_with('\n');
        let escape = !crlf && must_escape(prev, c);
        prev = Some(c);
        escape
    })
}

/// Writes the visible stand-in for an escaped `c`: `\x1b` for a one-byte
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

/// The candidate `name` most likely mistyped, for a "did you mean": at
/// most two edits (a swap counts as one) and fewer edits than either
/// name's length, so a short name is never "near" everything; the
/// smallest distance wins, then the first in order.
pub fn nearest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let len = name.chars().count();
    candidates
        .into_iter()
        .map(|c| (strsim::osa_distance(name, c), c))
        .filter(|&(d, c)| d <= 2 && d < c.chars().count().min(len))
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// `s` with every character that [`must_escape`] replaced by its visible
/// escape; newlines and tabs are kept, so multi-line output keeps its
/// shape.
///
/// The CLI passes everything it prints through this one function, so text
/// from a `SKILL.md`, a registry, git or a file name cannot move the cursor,
/// recolour, retitle or rewrite the terminal, fake a line of output, or
/// hide text from the reader.
pub fn sanitize(s: &str) -> std::borrow::Cow<'_, str> {
    let mut escaped = escaped_chars(s).peekable();
    if escaped.peek().is_none() {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    let mut done = 0;
    for (at, c) in escaped {
        out.push_str(&s[done..at]);
        push_escaped(&mut out, c);
        done = at + c.len_utf8();
    }
    out.push_str(&s[done..]);
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn nearest_takes_two_edits_at_most_and_never_a_mostly_edited_name() {
        let names = ["code-review", "pdf-tools", "pdf", "x"];
        assert_eq!(super::nearest("code-reveiw", names), Some("code-review"));
        assert_eq!(super::nearest("pdf-tool", names), Some("pdf-tools"));
        assert_eq!(super::nearest("pdx", names), Some("pdf"));
        assert_eq!(super::nearest("zzzzzz", names), None);
        // One letter is one edit from every one-letter name: not a match.
        assert_eq!(super::nearest("y", names), None);
    }

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

    /// Invisible carriers are shown; the joiners and selectors of real
    /// text (an emoji's presentation, a ZWJ sequence) are not.
    #[test]
    fn invisible_text_is_shown_unless_it_joins_visible_text() {
        let tags: String = "ignore"
            .chars()
            .map(|c| char::from_u32(0xe0000 + c as u32).unwrap())
            .collect();
        let hidden = format!("ok{tags}");
        let shown = super::sanitize(&hidden);
        assert_eq!(
            shown,
            "ok\\u{e0069}\\u{e0067}\\u{e006e}\\u{e006f}\\u{e0072}\\u{e0065}"
        );
        assert_eq!(
            super::sanitize("a\u{200b}b\u{feff}"),
            "a\\u{200b}b\\u{feff}"
        );
        assert_eq!(super::sanitize("x\u{fe0f}\u{200d}"), "x\\u{fe0f}\\u{200d}");
        for real in ["⚠️ careful", "👩‍💻 dev", "می‌خواهم", "1️⃣ first, #️⃣"]
        {
            assert_eq!(super::sanitize(real), real);
        }
        // A selector after a selector carries, though the first may not.
        assert_eq!(super::sanitize("⚠\u{fe0f}\u{fe0f}"), "⚠\u{fe0f}\\u{fe0f}");
        let found: Vec<(usize, char)> = super::escaped_chars("a\u{200b}").collect();
        assert_eq!(found, [(1, '\u{200b}')]);
        // A line ending is not a control; a lone carriage return is.
        assert_eq!(super::sanitize("a\r\nb\rc"), "a\r\nb\\x0dc");
    }
}
