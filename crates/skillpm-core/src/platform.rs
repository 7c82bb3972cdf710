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

use std::ffi::OsString;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

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

/// The user's directories, by the conventions uv follows: XDG on Linux
/// and macOS (`~/.config`, `~/.cache`; not `~/Library`, which no agent
/// uses for skills), Known Folders on Windows (`%APPDATA%`,
/// `%LOCALAPPDATA%`). Read from the variables given, so each platform's
/// rule is tested on any machine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserDirs {
    /// `HOME`; on Windows `USERPROFILE` first, as the agents (Node's
    /// `os.homedir()`, Rust's `home_dir`) read it, then `HOME`.
    pub home: Option<PathBuf>,
    /// `XDG_CONFIG_HOME`, else `<home>/.config`: where agents that follow
    /// XDG keep their files, on Windows too (OpenCode).
    pub xdg_config: Option<PathBuf>,
    /// Windows' roaming application data (`%APPDATA%`); `None` elsewhere.
    pub app_data: Option<PathBuf>,
    /// skillpm's own config directory: `<xdg_config>/skillpm`, on
    /// Windows `%APPDATA%\skillpm`.
    pub config: Option<PathBuf>,
    /// skillpm's cache: `$XDG_CACHE_HOME/skillpm` or `~/.cache/skillpm`,
    /// on Windows `%LOCALAPPDATA%\skillpm\cache`.
    pub cache: Option<PathBuf>,
}

impl UserDirs {
    /// The directories `platform` uses, given its environment `var`
    /// (empty values count as unset).
    pub fn from_vars(platform: Platform, var: impl Fn(&str) -> Option<OsString>) -> UserDirs {
        let get = |k: &str| var(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        let windows = platform == Platform::Windows;
        let home = if windows {
            get("USERPROFILE").or_else(|| get("HOME"))
        } else {
            get("HOME")
        };
        let xdg_config =
            get("XDG_CONFIG_HOME").or_else(|| home.as_ref().map(|h| h.join(".config")));
        if windows {
            let app_data =
                get("APPDATA").or_else(|| home.as_ref().map(|h| h.join("AppData/Roaming")));
            let local =
                get("LOCALAPPDATA").or_else(|| home.as_ref().map(|h| h.join("AppData/Local")));
            return UserDirs {
                config: app_data.as_ref().map(|d| d.join("skillpm")),
                cache: local.map(|d| d.join("skillpm").join("cache")),
                app_data,
                xdg_config,
                home,
            };
        }
        let cache = get("XDG_CACHE_HOME").or_else(|| home.as_ref().map(|h| h.join(".cache")));
        UserDirs {
            config: xdg_config.as_ref().map(|d| d.join("skillpm")),
            cache: cache.map(|d| d.join("skillpm")),
            app_data: None,
            xdg_config,
            home,
        }
    }

    /// [`UserDirs::from_vars`] for this process.
    pub fn of_process() -> UserDirs {
        UserDirs::from_vars(Platform::CURRENT, |k| std::env::var_os(k))
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
    fn user_directories_follow_each_platforms_convention() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        let unix = UserDirs::from_vars(Platform::Unix, vars(&[("HOME", "/h")]));
        assert_eq!(unix.home, Some(PathBuf::from("/h")));
        assert_eq!(unix.config, Some(PathBuf::from("/h/.config/skillpm")));
        assert_eq!(unix.cache, Some(PathBuf::from("/h/.cache/skillpm")));
        assert_eq!(unix.app_data, None);
        let mac = UserDirs::from_vars(
            Platform::MacOs,
            vars(&[
                ("HOME", "/h"),
                ("XDG_CONFIG_HOME", "/c"),
                ("XDG_CACHE_HOME", "/k"),
            ]),
        );
        assert_eq!(mac.config, Some(PathBuf::from("/c/skillpm")));
        assert_eq!(mac.cache, Some(PathBuf::from("/k/skillpm")));
        let win = UserDirs::from_vars(
            Platform::Windows,
            vars(&[
                ("HOME", "/msys/home"),
                ("USERPROFILE", "C:/Users/a"),
                ("APPDATA", "C:/Users/a/AppData/Roaming"),
                ("LOCALAPPDATA", "C:/Users/a/AppData/Local"),
                ("XDG_CACHE_HOME", "/ignored"),
            ]),
        );
        assert_eq!(win.home, Some(PathBuf::from("C:/Users/a")));
        assert_eq!(win.xdg_config, Some(PathBuf::from("C:/Users/a/.config")));
        assert_eq!(
            win.config,
            Some(PathBuf::from("C:/Users/a/AppData/Roaming/skillpm"))
        );
        assert_eq!(
            win.cache,
            Some(PathBuf::from("C:/Users/a/AppData/Local/skillpm/cache"))
        );
        // Git Bash sets HOME alone; an empty variable counts as unset.
        let bash = UserDirs::from_vars(
            Platform::Windows,
            vars(&[("HOME", "/c/Users/a"), ("USERPROFILE", "")]),
        );
        assert_eq!(bash.home, Some(PathBuf::from("/c/Users/a")));
        assert_eq!(
            bash.app_data,
            Some(PathBuf::from("/c/Users/a/AppData/Roaming"))
        );
        assert_eq!(
            UserDirs::from_vars(Platform::Unix, vars(&[])),
            UserDirs::default()
        );
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
