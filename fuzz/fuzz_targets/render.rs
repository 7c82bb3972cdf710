//! Output sanitizing: whatever a SKILL.md or a registry says, the text the
//! CLI prints holds no terminal control (ESC, C0 but newline, tab and the
//! carriage return of a CRLF line ending, DEL, C1, bidi), and XML-escaped
//! text holds nothing XML 1.0 forbids and no markup.
#![no_main]
use libfuzzer_sys::fuzz_target;

fn xml_forbidden(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}')
}

fn check(s: &str) {
    let shown = skillpm::text::sanitize(s);
    // A CRLF line ending is kept: `\r` right before `\n` overwrites nothing.
    let unsafe_at = |(at, c): (usize, char)| {
        let line_end = c == '\r' && shown[at + 1..].starts_with('\n');
        (c.is_control() && c != '\n' && c != '\t' && !line_end)
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{61c}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    assert!(!shown.char_indices().any(unsafe_at), "{shown:?}");
    let xml = skillpm::engine::prompt::xml_escape(s);
    assert!(!xml.chars().any(xml_forbidden), "{xml:?}");
    assert!(!xml.contains('<'), "{xml:?}");
}

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        check(s);
    }
    if let Ok(doc) = skillpm::skill::parse(data) {
        check(doc.description());
        if let Some(n) = doc.name() {
            check(n);
        }
    }
});
