//! The ways a skill declares to get what it needs: OpenClaw's
//! `metadata.openclaw.install` entries (also under `clawdbot` / `clawdis`),
//! parsed into typed steps, checked, and matched to this machine.
//!
//! Everything here is read from an untrusted `SKILL.md` and may end up as
//! a program's arguments, so every value that would become one (package,
//! module, formula, URL) passes [`check_arg`] before it becomes a [`Step`];
//! an entry that does not is kept as [`How::Refused`] with why, so it can
//! be shown but never run. Kinds that are a shell command (`shell`, `exec`,
//! `script`, `manual`, ...) are always refused: a shell line cannot be
//! checked. The engine runs nothing: `skillpm doctor --fix` does.

use crate::eligibility::{normalize_os, Probe, Requirements};
use serde_json::{Map, Value};

/// The metadata maps the install list may sit under.
const INSTALL_KEYS: &[&str] = &["openclaw", "clawdbot", "clawdis"];

/// The most entries read from one skill; real skills declare a handful.
const MAX_ENTRIES: usize = 32;

/// The longest value that may become an argument.
const MAX_ARG: usize = 512;

/// A package manager skillpm may run for a skill, each as an argv with no
/// shell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Manager {
    Brew,
    Npm,
    Go,
    Uv,
    Cargo,
    Apt,
}

impl Manager {
    /// The program it runs; `doctor` offers a step only where it is on PATH.
    pub fn program(self) -> &'static str {
        match self {
            Manager::Brew => "brew",
            Manager::Npm => "npm",
            Manager::Go => "go",
            Manager::Uv => "uv",
            Manager::Cargo => "cargo",
            Manager::Apt => "apt-get",
        }
    }
}

/// One checked way to get a binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// `brew install [--cask] NAME`.
    Brew { name: String, cask: bool },
    /// `npm install --global PACKAGE` (into skillpm's prefix).
    Npm { package: String },
    /// `go install MODULE@VERSION` (`@latest` when none is given).
    Go { module: String },
    /// `uv tool install [--from FROM] PACKAGE`; pip and pipx entries
    /// that name binaries run through it too.
    Uv {
        package: String,
        from: Option<String>,
    },
    /// `cargo install [--git URL] [CRATE]`.
    Cargo {
        krate: Option<String>,
        git: Option<String>,
    },
    /// `apt-get install -y PACKAGES`, only as root.
    Apt { packages: Vec<String> },
    /// A file fetched over https, checked against `sha256` when declared.
    Download {
        url: String,
        sha256: Option<String>,
        /// `None`: the file is the binary itself; else `tar.gz`.
        archive: Option<Archive>,
    },
}

/// The archive formats a download may be unpacked from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Archive {
    TarGz,
}

impl Step {
    /// The package manager it runs; `None` for a download.
    pub fn manager(&self) -> Option<Manager> {
        Some(match self {
            Step::Brew { .. } => Manager::Brew,
            Step::Npm { .. } => Manager::Npm,
            Step::Go { .. } => Manager::Go,
            Step::Uv { .. } => Manager::Uv,
            Step::Cargo { .. } => Manager::Cargo,
            Step::Apt { .. } => Manager::Apt,
            Step::Download { .. } => return None,
        })
    }
}

/// What may be done with one declared entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum How {
    Run(Step),
    /// Shown, never run: `kind` as declared, and why.
    Refused {
        kind: String,
        why: String,
    },
}

/// One entry of a skill's install list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installer {
    pub label: String,
    /// The binaries it provides, as declared.
    pub bins: Vec<String>,
    /// The operating systems it is for (`macos`, `linux`, `windows`);
    /// empty: any.
    pub os: Vec<String>,
    pub how: How,
    /// The shell line of a refused shell-kind entry, to show.
    pub command: Option<String>,
}

/// Every install entry a skill declares, in order.
pub fn declared(fm: &Map<String, Value>) -> Vec<Installer> {
    let Some(meta) = fm.get("metadata").and_then(Value::as_object) else {
        return Vec::new();
    };
    INSTALL_KEYS
        .iter()
        .filter_map(|k| meta.get(*k)?.get("install")?.as_array())
        .flatten()
        .filter_map(Value::as_object)
        .take(MAX_ENTRIES)
        .map(parse_entry)
        .collect()
}

fn parse_entry(e: &Map<String, Value>) -> Installer {
    let kind = string(e, "kind").unwrap_or_default();
    let label = string(e, "label").unwrap_or_else(|| format!("{kind} installer"));
    let mut bins = strings(e.get("bins"));
    bins.truncate(MAX_ENTRIES);
    let os: Vec<String> = strings(e.get("os"))
        .iter()
        .map(|o| normalize_os(o))
        .collect();
    let command = ["command", "script", "instructions", "run"]
        .iter()
        .find_map(|k| string(e, k));
    let how = match step(&kind, e) {
        Ok(step) => How::Run(step),
        Err(why) => How::Refused { kind, why },
    };
    Installer {
        label,
        bins,
        os,
        how,
        command,
    }
}

/// The step an entry of `kind` declares, or why none may run.
fn step(kind: &str, e: &Map<String, Value>) -> Result<Step, String> {
    // A package as its registry names it; URLs come only from `url`,
    // `git` and `from`, which are checked as URLs.
    let arg = |keys: &[&str]| -> Result<String, String> {
        let (key, value) = keys
            .iter()
            .find_map(|k| string(e, k).map(|v| (*k, v)))
            .ok_or_else(|| format!("it names no `{}`", keys[0]))?;
        check_package(key, &value)?;
        Ok(value)
    };
    let optional = |key: &str| -> Result<Option<String>, String> {
        string(e, key)
            .map(|v| check_package(key, &v).map(|()| v))
            .transpose()
    };
    let url = |key: &str| -> Result<Option<String>, String> {
        string(e, key)
            .map(|v| {
                check_arg(key, &v)
                    .and_then(|()| check_url(key, &v))
                    .map(|()| v)
            })
            .transpose()
    };
    match kind {
        "brew" => {
            if let Some(cask) = optional("cask")? {
                return Ok(Step::Brew {
                    name: cask,
                    cask: true,
                });
            }
            let formula = arg(&["formula", "package"])?;
            let name = match optional("tap")? {
                Some(tap) if !formula.contains('/') => format!("{tap}/{formula}"),
                _ => formula,
            };
            Ok(Step::Brew { name, cask: false })
        }
        "node" | "npm" => {
            if string(e, "command").is_some() {
                return Err(shell_why());
            }
            Ok(Step::Npm {
                package: arg(&["package"])?,
            })
        }
        "go" => {
            let module = arg(&["module", "package", "pkg"])?;
            let module = match module.contains('@') {
                true => module,
                false => format!("{module}@latest"),
            };
            Ok(Step::Go { module })
        }
        "uv" => Ok(Step::Uv {
            package: arg(&["package"])?,
            from: url("from")?,
        }),
        "pip" | "pipx" if !strings(e.get("bins")).is_empty() => Ok(Step::Uv {
            package: arg(&["package"])?,
            from: None,
        }),
        "pip" | "pipx" | "python" => Err(
            "a Python library for an environment skillpm does not manage; only packages \
             that declare `bins` are installed, as tools through uv"
                .into(),
        ),
        "cargo" => {
            let krate = optional("crate")?.or(optional("package")?);
            let git = url("git")?;
            if krate.is_none() && git.is_none() {
                return Err("it names no `crate` or `git`".into());
            }
            Ok(Step::Cargo { krate, git })
        }
        "apt" => {
            let mut packages = strings(e.get("packages"));
            if packages.is_empty() {
                packages.push(arg(&["package"])?);
            }
            packages.truncate(MAX_ENTRIES);
            for p in &packages {
                check_package("packages", p)?;
            }
            Ok(Step::Apt { packages })
        }
        "download" => {
            let url = url("url")?.ok_or("it names no `url`")?;
            let sha256 = optional("sha256")?
                .map(|s| {
                    let ok = s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit());
                    ok.then(|| s.to_ascii_lowercase())
                        .ok_or_else(|| "`sha256` is not 64 hexadecimal digits".to_string())
                })
                .transpose()?;
            let archive = match string(e, "archive").as_deref() {
                None => None,
                Some("tar.gz" | "tgz") => Some(Archive::TarGz),
                Some(other) => {
                    return Err(format!(
                        "archive kind `{}` is not supported (only tar.gz)",
                        skillpm_core::text::sanitize(other)
                    ))
                }
            };
            if strings(e.get("bins")).is_empty() {
                return Err("a download must name the `bins` it provides".into());
            }
            for b in strings(e.get("bins")) {
                check_bin(&b)?;
            }
            Ok(Step::Download {
                url,
                sha256,
                archive,
            })
        }
        "shell" | "exec" | "script" | "manual" | "note" => Err(shell_why()),
        "" => Err("it has no `kind`".into()),
        other => Err(format!(
            "`{}` is not an installer kind skillpm runs (brew, node, npm, go, uv, pip, \
             pipx, cargo, apt, download)",
            skillpm_core::text::sanitize(other)
        )),
    }
}

fn shell_why() -> String {
    "a shell command is never run: it cannot be checked; run it yourself if you trust it".into()
}

/// The argument allowlist: `[A-Za-z0-9._/:@+=~-]`, not empty, bounded,
/// never starting with `-` (which every program reads as an option).
pub fn check_arg(field: &str, value: &str) -> Result<(), String> {
    let bad = value.chars().find(|c| {
        !(c.is_ascii_alphanumeric()
            || matches!(c, '.' | '_' | '/' | ':' | '@' | '+' | '=' | '~' | '-'))
    });
    let shown = || skillpm_core::text::sanitize(value).into_owned();
    if let Some(c) = bad {
        return Err(format!(
            "`{field}` value `{}` holds {c:?}, outside [A-Za-z0-9._/:@+=~-]",
            shown()
        ));
    }
    if value.is_empty() || value.starts_with('-') || value.len() > MAX_ARG {
        return Err(format!(
            "`{field}` value `{}` is empty, too long or starts with `-`",
            shown()
        ));
    }
    Ok(())
}

/// A package, formula, module or crate name: [`check_arg`], and no
/// path or URL in disguise (`.`, `../x`, `/opt/x`, `~/x`, `file:x`,
/// `git+https://...`, `npm:alias`), which a package manager would install
/// from this machine or from wherever it points.
fn check_package(field: &str, value: &str) -> Result<(), String> {
    check_arg(field, value)?;
    let path = value.starts_with(['.', '/', '~']) || value.split('/').any(|c| c == "..");
    if path || value.contains(':') {
        return Err(format!(
            "`{field}` value `{value}` is a path or URL, not a package name"
        ));
    }
    Ok(())
}

/// A URL that will be fetched: https, or plain http to loopback only
/// (where `doctor` re-checks it, with every redirect).
fn check_url(field: &str, url: &str) -> Result<(), String> {
    // uv's `--from` takes pip's `git+https://` form too.
    let url = match field {
        "from" => url.strip_prefix("git+").unwrap_or(url),
        _ => url,
    };
    let loopback = ["http://127.0.0.1", "http://localhost", "http://[::1]"]
        .iter()
        .any(|p| url.starts_with(p));
    if url.starts_with("https://") || loopback {
        return Ok(());
    }
    Err(format!("`{field}` must be an https:// URL"))
}

/// A binary's file name: one path component of the allowlist.
pub fn check_bin(bin: &str) -> Result<(), String> {
    check_arg("bins", bin)?;
    if bin.contains('/') || bin == "." || bin == ".." {
        return Err(format!("`bins` entry `{bin}` is not a file name"));
    }
    Ok(())
}

fn string(e: &Map<String, Value>, key: &str) -> Option<String> {
    e.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn strings(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::String(s)) if !s.trim().is_empty() => vec![s.trim().to_string()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// Whether an installer can run on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fit {
    /// Its package manager is here (or it is a download).
    Ready,
    /// Why not here: its manager is missing, or it needs root.
    Unavailable(String),
    /// A refused entry.
    Refused(String),
}

/// An installer for one of a skill's missing binaries, and whether it
/// fits this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    pub installer: Installer,
    pub fit: Fit,
}

/// What a skill lacks on this machine and the declared ways to get it:
/// the binaries not on PATH (all of `bins`, or the `anyBins` group when
/// none of it is), and the installers for them whose `os` matches this
/// one, best first (ready ones in declared order, then the rest).
pub fn offers(
    fm: &Map<String, Value>,
    req: &Requirements,
    probe: &Probe,
    os: &str,
    root: bool,
) -> (Vec<String>, Vec<Offer>) {
    let mut missing: Vec<String> = req
        .bins
        .iter()
        .filter(|b| !probe.has_bin(b))
        .cloned()
        .collect();
    if !req.any_bins.is_empty() && !req.any_bins.iter().any(|b| probe.has_bin(b)) {
        missing.extend(req.any_bins.iter().cloned());
    }
    if missing.is_empty() {
        return (missing, Vec::new());
    }
    let here = normalize_os(os);
    let mut offers: Vec<Offer> = declared(fm)
        .into_iter()
        .filter(|i| i.os.is_empty() || i.os.contains(&here))
        .filter(|i| i.bins.is_empty() || i.bins.iter().any(|b| missing.contains(b)))
        .map(|installer| {
            let fit = match &installer.how {
                How::Refused { why, .. } => Fit::Refused(why.clone()),
                How::Run(step) => match step.manager() {
                    Some(Manager::Apt) if !root => {
                        Fit::Unavailable("apt-get needs root; skillpm never asks for it".into())
                    }
                    Some(m) if !probe.has_bin(m.program()) => {
                        Fit::Unavailable(format!("`{}` is not on PATH", m.program()))
                    }
                    _ => Fit::Ready,
                },
            };
            Offer { installer, fit }
        })
        .collect();
    offers.sort_by_key(|o| !matches!(o.fit, Fit::Ready));
    (missing, offers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Environment;
    use crate::testing::frontmatter as fm;

    fn one(entry: &str) -> Installer {
        let m = fm(&format!(
            r#"{{"metadata": {{"openclaw": {{"install": [{entry}]}}}}}}"#
        ));
        let mut all = declared(&m);
        assert_eq!(all.len(), 1);
        all.remove(0)
    }

    fn refused(entry: &str) -> String {
        match one(entry).how {
            How::Refused { why, .. } => why,
            How::Run(s) => panic!("{entry} ran as {s:?}"),
        }
    }

    #[test]
    fn reads_the_kinds_real_skills_declare() {
        let cases = [
            (
                r#"{"kind":"brew","formula":"himalaya","bins":["himalaya"]}"#,
                Step::Brew {
                    name: "himalaya".into(),
                    cask: false,
                },
            ),
            (
                r#"{"kind":"brew","formula":"gogcli","tap":"steipete/tap"}"#,
                Step::Brew {
                    name: "steipete/tap/gogcli".into(),
                    cask: false,
                },
            ),
            (
                r#"{"kind":"node","package":"@bitwarden/cli","bins":["bw"]}"#,
                Step::Npm {
                    package: "@bitwarden/cli".into(),
                },
            ),
            (
                r#"{"kind":"go","module":"github.com/x/y/cmd/y"}"#,
                Step::Go {
                    module: "github.com/x/y/cmd/y@latest".into(),
                },
            ),
            (
                r#"{"kind":"pip","package":"yt-dlp","bins":["yt-dlp"]}"#,
                Step::Uv {
                    package: "yt-dlp".into(),
                    from: None,
                },
            ),
            (
                r#"{"kind":"uv","package":"s","from":"git+https://github.com/b/s.git"}"#,
                Step::Uv {
                    package: "s".into(),
                    from: Some("git+https://github.com/b/s.git".into()),
                },
            ),
            (
                r#"{"kind":"cargo","git":"https://github.com/d/starlink-cli","bins":["starlink"]}"#,
                Step::Cargo {
                    krate: None,
                    git: Some("https://github.com/d/starlink-cli".into()),
                },
            ),
            (
                r#"{"kind":"apt","packages":["vdirsyncer","khal"]}"#,
                Step::Apt {
                    packages: vec!["vdirsyncer".into(), "khal".into()],
                },
            ),
            (
                r#"{"kind":"download","url":"https://h/jq-linux-amd64","bins":["jq"],"os":["linux"]}"#,
                Step::Download {
                    url: "https://h/jq-linux-amd64".into(),
                    sha256: None,
                    archive: None,
                },
            ),
        ];
        for (entry, want) in cases {
            assert_eq!(one(entry).how, How::Run(want), "{entry}");
        }
    }

    #[test]
    fn refuses_shell_kinds_and_every_injection() {
        assert!(refused(r#"{"kind":"shell","command":"curl x | sh"}"#).contains("never run"));
        assert!(refused(r#"{"kind":"npm","command":"cd x && npm install"}"#).contains("never run"));
        assert_eq!(
            one(r#"{"kind":"shell","command":"curl x | sh"}"#)
                .command
                .as_deref(),
            Some("curl x | sh")
        );
        for bad in [
            r#"{"kind":"node","package":"--prefix=/etc"}"#,
            r#"{"kind":"node","package":"x; rm -rf ~"}"#,
            r#"{"kind":"node","package":"$(touch p)"}"#,
            r#"{"kind":"brew","formula":"jq","tap":"a b"}"#,
            r#"{"kind":"go","module":"x`id`"}"#,
            r#"{"kind":"uv","package":"a","from":"git+https://h/r#subdirectory=x"}"#,
            r#"{"kind":"apt","packages":["ok","-oDebug=1"]}"#,
            r#"{"kind":"download","url":"http://example.com/x","bins":["x"]}"#,
            r#"{"kind":"download","url":"https://h/x","bins":["../x"]}"#,
            r#"{"kind":"download","url":"https://h/x","bins":["x"],"sha256":"abc"}"#,
            r#"{"kind":"download","url":"https://h/x","bins":["x"],"archive":"zip"}"#,
            r#"{"kind":"cargo","git":"file:///etc"}"#,
            r#"{"kind":"node","package":"a\u0000b"}"#,
            r#"{"kind":"node","package":"."}"#,
            r#"{"kind":"npm","package":"https://github.com/x/y"}"#,
            r#"{"kind":"npm","package":"file:../x"}"#,
            r#"{"kind":"node","package":"npm:evil@1"}"#,
            r#"{"kind":"go","module":"../../x"}"#,
            r#"{"kind":"brew","formula":"/opt/x.rb"}"#,
            r#"{"kind":"uv","package":"~/x"}"#,
            r#"{"kind":"uv","package":"a","from":"./local"}"#,
        ] {
            refused(bad);
        }
    }

    #[test]
    fn offers_only_what_fits_the_missing_bins_and_this_machine() {
        let m = fm(
            r#"{"requires": {"bins": ["jq"]}, "metadata": {"openclaw": {"install": [
            {"kind":"brew","formula":"jq","bins":["jq"]},
            {"kind":"download","url":"https://h/jq-mac","bins":["jq"],"os":["darwin"]},
            {"kind":"download","url":"https://h/jq-linux","bins":["jq"],"os":["linux"]},
            {"kind":"node","package":"other","bins":["other"]},
            {"kind":"apt","package":"jq","bins":["jq"]}
        ]}}}"#,
        );
        let mut env = Environment::isolated();
        env.bins = Some(["sh".to_string()].into());
        let probe = Probe::new(&env);
        let req = Requirements::from_frontmatter(&m);
        let (missing, offers) = offers(&m, &req, &probe, "linux", false);
        assert_eq!(missing, ["jq"]);
        let fits: Vec<(&str, &Fit)> = offers
            .iter()
            .map(|o| (o.installer.label.as_str(), &o.fit))
            .collect();
        assert_eq!(fits.len(), 3, "{fits:?}");
        assert_eq!(fits[0].1, &Fit::Ready, "the linux download first: {fits:?}");
        assert!(matches!(fits[1].1, Fit::Unavailable(w) if w.contains("brew")));
        assert!(matches!(fits[2].1, Fit::Unavailable(w) if w.contains("root")));
    }
}
