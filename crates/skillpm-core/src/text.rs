//! Small helpers for reporting positions in text files.

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

#[cfg(test)]
mod tests {
    #[test]
    fn counts_lines_from_one_and_clamps() {
        assert_eq!(super::line_of("a\nb\nc", 0), 1);
        assert_eq!(super::line_of("a\nb\nc", 2), 2);
        assert_eq!(super::line_of("a\nb\nc", 99), 3);
    }
}
