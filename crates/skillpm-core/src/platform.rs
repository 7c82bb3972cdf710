//! What differs between the platforms skillpm runs on, as rules a caller
//! can select explicitly: the tests run every platform's rule on any
//! machine, and [`Platform::CURRENT`] is the one this build applies.
//!
//! The rest is the same everywhere on purpose, so that a package installs
//! as the same tree on every machine: entry names that differ only in case
//! are refused on every platform (they merge on macOS' and Windows' default
//! file systems), so is `.git` in any case, and so are `\` and `:` in a
//! name. The book's platforms page lists every difference, client side
//! included.

use std::fs;
use std::io::Read;
use std::path::Path;

/// A family of platforms with the same rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    /// Linux and the BSDs.
    Unix,
    /// macOS: Unix rules; what differs (case-insensitive APFS, the atomic
    /// swap through `renamex_np`) is handled the same way as on Unix.
    MacOs,
    Windows,
}

impl Platform {
    /// The platform this build runs on.
    pub const CURRENT: Platform = if cfg!(windows) {
        Platform::Windows
    } else if cfg!(target_vendor = "apple") {
        Platform::MacOs
    } else {
        Platform::Unix
    };

    /// Why `name` (one path component of a package) cannot be a file or
    /// directory name on this platform; `None` when it can. Windows
    /// reserves device names (`CON`, `aux.md`: with any extension, in any
    /// case), drops a trailing dot or space (`run.` would become `run`, a
    /// second name for one file), and refuses `<>"|?*` in names.
    pub fn refuses_name(self, name: &str) -> Option<&'static str> {
        if self != Platform::Windows {
            return None;
        }
        if name.ends_with('.') || name.ends_with(' ') {
            return Some("ends with a dot or a space, which Windows drops");
        }
        if name.contains(['<', '>', '"', '|', '?', '*']) {
            return Some("contains one of <>\"|?*, which Windows does not allow in a name");
        }
        let stem = name.split('.').next().unwrap_or(name).trim_end();
        if is_device_name(stem) {
            return Some("is a device name on Windows (CON, PRN, AUX, NUL, COM1-9, LPT1-9)");
        }
        None
    }

    /// How a file's executable bit is read on this platform.
    pub fn exec_rule(self) -> ExecRule {
        match self {
            Platform::Unix | Platform::MacOs => ExecRule::ModeBits,
            Platform::Windows => ExecRule::Shebang,
        }
    }
}

/// Device names Windows reserves in every directory, with any extension.
fn is_device_name(stem: &str) -> bool {
    let upper = stem.to_ascii_uppercase();
    match upper.as_str() {
        "CON" | "PRN" | "AUX" | "NUL" => true,
        _ => {
            let b = upper.as_bytes();
            b.len() == 4
                && (upper.starts_with("COM") || upper.starts_with("LPT"))
                && (b'1'..=b'9').contains(&b[3])
        }
    }
}

/// How a packed file's executable bit is decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecRule {
    /// Any of the file's x bits (Unix, macOS).
    ModeBits,
    /// A file that starts with `#!`: Windows keeps no executable bit, and
    /// a script with a shebang is what carries one everywhere else. A
    /// package published from Windows then keeps its scripts runnable,
    /// and an installed tree checks against its lock without a bit to
    /// read (a file the rule reads otherwise is compared with the cached
    /// package, file by file).
    Shebang,
}

impl ExecRule {
    /// Whether the file at `path`, whose metadata is `meta`, counts as
    /// executable in a package.
    pub fn is_executable(self, path: &Path, meta: &fs::Metadata) -> bool {
        match self {
            ExecRule::ModeBits => mode_bits(meta),
            ExecRule::Shebang => {
                let mut head = [0u8; 2];
                fs::File::open(path)
                    .and_then(|mut f| f.read_exact(&mut head))
                    .is_ok_and(|()| head == *b"#!")
            }
        }
    }
}

#[cfg(unix)]
fn mode_bits(meta: &fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn mode_bits(_meta: &fs::Metadata) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_refuses_device_names_trailing_dots_and_its_reserved_characters() {
        for name in [
            "CON",
            "con",
            "aux.md",
            "Nul.txt",
            "COM1",
            "lpt9.sh",
            "prn.",
            "run.",
            "notes ",
            "a?b",
            "x*",
            "say\"hi\"",
            "a|b",
            "<x>",
            "con .txt",
        ] {
            assert!(Platform::Windows.refuses_name(name).is_some(), "{name}");
            assert_eq!(Platform::Unix.refuses_name(name), None, "{name}");
            assert_eq!(Platform::MacOs.refuses_name(name), None, "{name}");
        }
        for name in [
            "console.md",
            "auxiliary",
            "COM0",
            "COM10",
            "lpt",
            "nul-check",
            ".git-keep",
            "SKILL.md",
            "a.b.c",
        ] {
            assert_eq!(Platform::Windows.refuses_name(name), None, "{name}");
        }
    }

    #[test]
    fn exec_bits_come_from_the_mode_or_from_a_shebang() {
        let t = tempfile::tempdir().unwrap();
        let script = t.path().join("run.sh");
        let text = t.path().join("notes.md");
        let short = t.path().join("one");
        fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
        fs::write(&text, "# notes\n").unwrap();
        fs::write(&short, "#").unwrap();
        let rule = ExecRule::Shebang;
        let meta = |p: &Path| fs::metadata(p).unwrap();
        assert!(rule.is_executable(&script, &meta(&script)));
        assert!(!rule.is_executable(&text, &meta(&text)));
        assert!(!rule.is_executable(&short, &meta(&short)));
        assert_eq!(Platform::Windows.exec_rule(), ExecRule::Shebang);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let rule = ExecRule::ModeBits;
            // The mode decides, whatever the file holds.
            assert!(!rule.is_executable(&script, &meta(&script)));
            fs::set_permissions(&text, fs::Permissions::from_mode(0o744)).unwrap();
            assert!(rule.is_executable(&text, &meta(&text)));
            assert_eq!(Platform::CURRENT.exec_rule(), ExecRule::ModeBits);
        }
    }
}
