//! Remote code execution: downloads piped into a shell, encoded payloads
//! decoded into one, and programs a skill asks the user (or the agent) to
//! download and run.
//!
//! Code blocks are not exempt. A `curl ... | sh` inside a fenced block of a
//! `SKILL.md` is exactly what an agent runs when it follows the skill, and
//! in a script it is what the script does; only prose about such commands
//! is harmless, and that cannot be told apart from an instruction by
//! syntax. The skills that trip these rules by describing attacks (scanners,
//! security guides) are few, and a human can wave them through.

use super::pattern::{self, code_matches, Words};
use super::rules;
use super::source::{cut_chars, Source};
use crate::text::sanitize;
use regex::{bytes, Regex};
use std::sync::LazyLock;

// Every pattern here runs on the lowercased text ([`Source::lower`]) and
// is written in lowercase.

/// What runs stdin as code: shells and PowerShell's `iex` always; other
/// interpreters only when nothing but `-` follows (`| python3 -c ...` or
/// `| python -m json.tool` read stdin as data).
const SHELL: &str = r"(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+(?:\S+=\S*\s+)*)?(?:/usr/bin/|/bin/|/usr/local/bin/)?(?:(?:(?:ba|z|da|k|fi|tc|c)?sh)(?-u:\b)(?:\s+-c(?-u:\b))?|iex(?-u:\b)|invoke-expression(?-u:\b)|(?:python[0-9.]*|perl|ruby|node|php)(?:\s+-)?\s*(?:$|[;&)|`'\x22]))";

/// Download commands: [`PIPE_TO_SHELL`] and [`FETCH_INTO_SHELL`] cannot
/// match without one.
static FETCHERS: Words = Words::new(&[
    "curl",
    "wget",
    "iwr",
    "irm",
    "invoke-webrequest",
    "invoke-restmethod",
    "downloadstring",
    "net.webclient",
]);
/// Process substitution: [`FETCH_INTO_SHELL`]'s shells need it.
static SUBSTITUTIONS: Words = Words::new(&["<(", "$("]);
/// PowerShell's eval, [`FETCH_INTO_SHELL`]'s other way in.
static POWERSHELL_EVAL: Words = Words::new(&["iex", "invoke-expression"]);

static PIPE_TO_SHELL: LazyLock<bytes::Regex> = LazyLock::new(|| {
    pattern::code(&format!(
        r"(?m)(?-u:\b)(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|downloadstring)(?-u:\b)[^\n|]{{0,400}}\|\s*{SHELL}"
    ))
});

/// `bash <(curl ...)`, `sh -c "$(curl ...)"`, `eval "$(wget ...)"`, and
/// PowerShell's `iex (iwr ...)` / `iex (New-Object Net.WebClient)...`.
/// (Dot-sourcing, `. <(curl ...)`, is left out: a pattern that starts at
/// every `.` would cost more than the rare form is worth.)
static FETCH_INTO_SHELL: LazyLock<Regex> = LazyLock::new(|| {
    pattern::text(
        r#"(?x)
        (?-u:\b)(?:(?:ba|z|k|da)?sh|source)\s+<\(\s*(?:curl|wget)(?-u:\b)
        | (?-u:\b)(?:(?:ba|z|k|da)?sh\s+-c|eval)\s+["']?\$\(\s*(?:curl|wget)(?-u:\b)
        | (?-u:\b)(?:iex|invoke-expression)\s*[(\s]\s*\(?\s*(?:iwr|irm|invoke-webrequest|invoke-restmethod|new-object\s+(?:system\.)?net\.webclient)(?-u:\b)
    "#,
    )
});

/// A base64 (or hex) decoder's output piped into something that runs it.
static DECODE_PIPE: LazyLock<bytes::Regex> = LazyLock::new(|| {
    pattern::code(&format!(
        r"(?m)(?:(?-u:\b)base64\s+(?:-[a-z]*d[a-z]*|--decode)(?-u:\b)|(?-u:\b)xxd\s+-(?:r\s+-p|rp|pr|r)(?-u:\b)|(?-u:\b)openssl\s+(?:base64|enc\s+-base64)\s+-d(?-u:\b))[^\n|;]{{0,200}}\|\s*{SHELL}"
    ))
});

/// The commands [`DECODE_PIPE`] starts with, its gate.
static DECODE_COMMANDS: Words = Words::new(&["base64", "xxd", "openssl"]);

/// Words [`DECODE_EVAL`] cannot match without: it has no rare literal to
/// start from, so it runs only where one of these is.
static DECODERS: Words = Words::new(&[
    "base64",
    "xxd",
    "codecs",
    "zlib",
    "marshal",
    "binascii",
    "fromhex",
    "atob",
    "powershell",
    "pwsh",
]);

/// A decoder's output handed to `eval`, `sh -c` or process substitution,
/// and the same in Python, JavaScript and PowerShell.
static DECODE_EVAL: LazyLock<bytes::Regex> = LazyLock::new(|| {
    pattern::code(
        r#"(?x)
        (?-u:\b)(?:eval|(?:ba|z|k|da)?sh\s+-c|source)\s+["']?(?:\$\(|`)[^\n]{0,400}?(?:base64\s+(?:-[a-z]*d[a-z]*|--decode)|xxd\s+-r)
        | (?-u:\b)(?:(?:ba|z|k|da)?sh|source)\s+<\([^\n)]{0,400}(?:base64\s+(?:-[a-z]*d[a-z]*|--decode)|xxd\s+-r)
        | (?-u:\b)(?:exec|eval)\s*\(\s*(?:compile\s*\(\s*)?(?:__import__\s*\(\s*['"](?:base64|codecs|zlib|marshal|binascii)['"]\s*\)\s*\.|base64\s*\.\s*(?:b64|b32|b16|a85|b85|urlsafe_b64)decode|codecs\s*\.\s*decode|bytes\s*\.\s*fromhex|zlib\s*\.\s*decompress|marshal\s*\.\s*loads|binascii\s*\.\s*(?:a2b_base64|unhexlify))
        | (?-u:\b)(?:eval|function)\s*\(\s*(?:atob\s*\(|buffer\s*\.\s*from\s*\([^\n)]{0,400}['"]base64['"])
        | (?-u:\b)(?:powershell|pwsh)(?:\.exe)?(?:\s+-\w+)*\s+-(?:e|ec|enc|encodedcommand)\s+[a-z0-9+/=]{16,}
        | (?-u:\b)(?:iex|invoke-expression)[^\n]{0,80}frombase64string
    "#,
    )
});

/// A literal base64 blob (in the original text: case matters), to show
/// what a decoded payload says.
static BASE64_BLOB: LazyLock<Regex> = LazyLock::new(|| pattern::text(r"[A-Za-z0-9+/]{16,}={0,2}"));

static URL: LazyLock<Regex> = LazyLock::new(|| {
    pattern::text(r#"(?-u:\b)(https?)://([^/\s"'`<>()\[\]]+)([^\s"'`<>()\[\]]*)"#)
});

/// A URL on one of [`PASTE_HOSTS`].
static PASTE_URL: LazyLock<Regex> = LazyLock::new(|| {
    let hosts: Vec<String> = PASTE_HOSTS.iter().map(|h| regex::escape(h)).collect();
    pattern::text(&format!(
        r#"https?://(?:[a-z0-9-]+\.)*(?:{})(?:[/:?#\s"'`)\]>]|$)[^\s"'`<>()\[\]]*"#,
        hosts.join("|")
    ))
});

/// Hosts that serve anonymous, editable text or files: no official
/// installer lives there. Suffix match on the host.
const PASTE_HOSTS: &[&str] = &[
    "pastebin.com",
    "paste.ee",
    "glot.io",
    "rentry.co",
    "rentry.org",
    "hastebin.com",
    "hastebin.skyra.pw",
    "ghostbin.com",
    "ghostbin.co",
    "dpaste.org",
    "dpaste.com",
    "termbin.com",
    "ix.io",
    "sprunge.us",
    "paste.rs",
    "controlc.com",
    "justpaste.it",
    "pastes.dev",
    "paste.c-net.org",
    "transfer.sh",
    "file.io",
    "0x0.st",
    "temp.sh",
    "bashupload.com",
    "catbox.moe",
    "bit.ly",
    "tinyurl.com",
    "is.gd",
    "cutt.ly",
    "rb.gy",
    "shorturl.at",
    "t.ly",
];

fn host_of(url_host: &str) -> String {
    // Strip credentials and port: `user@host:8080`.
    let h = url_host.rsplit('@').next().unwrap_or(url_host);
    let h = if h.starts_with('[') {
        h.find(']').map_or(h, |i| &h[..=i])
    } else {
        h.split(':').next().unwrap_or(h)
    };
    h.trim_end_matches('.').to_ascii_lowercase()
}

fn is_paste_host(host: &str) -> bool {
    PASTE_HOSTS
        .iter()
        .any(|p| host == *p || host.ends_with(&format!(".{p}")))
}

/// The address a host names literally (`1.2.3.4`, `[::1]`), if it does.
fn ip_literal(host: &str) -> Option<std::net::IpAddr> {
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    bare.parse().ok()
}

/// Loopback, private and link-local addresses, and `localhost`: a local
/// dev server, not someone else's.
fn is_local(host: &str) -> bool {
    if host == "localhost" || host.ends_with(".localhost") {
        return true;
    }
    match ip_literal(host) {
        Some(std::net::IpAddr::V4(ip)) => {
            ip.is_loopback() || ip.is_private() || ip.is_link_local() || ip.is_unspecified()
        }
        Some(std::net::IpAddr::V6(ip)) => {
            ip.is_loopback()
                || ip.is_unspecified()
                || ip.is_unique_local()
                || ip.is_unicast_link_local()
        }
        None => false,
    }
}

/// Why a URL in a piped download makes it untrusted, if it does.
fn untrusted(scheme: &str, host: &str) -> Option<&'static str> {
    if is_local(host) {
        return None;
    }
    if ip_literal(host).is_some() {
        Some("a bare IP address")
    } else if is_paste_host(host) {
        Some("a paste, file-drop or link-shortener site")
    } else if scheme.eq_ignore_ascii_case("http") {
        Some("plain HTTP, which anyone on the path can rewrite")
    } else {
        None
    }
}

/// [`FETCHERS`], [`DECODE_COMMANDS`] and [`DECODERS`] together: a file
/// holding none of them (most files) is passed over by [`pipes`] and
/// [`decoded`] after one search instead of three.
static FETCH_OR_DECODE: Words = Words::any_of(&[&FETCHERS, &DECODE_COMMANDS, &DECODERS]);

pub(super) fn check(src: &mut Source) {
    if src.has_any(&FETCH_OR_DECODE) {
        pipes(src);
        decoded(src);
    }
    download_and_run(src);
    if src.markdown {
        prerequisites(src);
    }
}

fn pipes(src: &mut Source) {
    let text = src.text;
    let lower = src.lower;
    // Both patterns need a download command: without one, neither runs
    // (nor is compiled, which is most of what a short scan costs).
    if !src.has_any(&FETCHERS) {
        return;
    }
    let mut hits: Vec<(usize, usize)> = code_matches(&PIPE_TO_SHELL, lower)
        .map(|m| (m.start, m.end))
        .collect();
    // This pattern's first words are short and common (`sh`, `eval`), so
    // it runs only where its other half could be.
    if src.has_any(&SUBSTITUTIONS) || src.has_any(&POWERSHELL_EVAL) {
        hits.extend(
            FETCH_INTO_SHELL
                .find_iter(lower)
                .map(|m| (m.start(), m.end())),
        );
    }
    for (start, end) in hits {
        let cmd = &text[start..end];
        // The URL may come after the shell (`bash <(curl URL)`): look at the
        // rest of the line too.
        let line_end = lower[end..].find('\n').map_or(lower.len(), |i| end + i);
        let scope = &lower[start..line_end];
        let bad = URL.captures_iter(scope).find_map(|c| {
            let host = host_of(&c[2]);
            untrusted(&c[1], &host).map(|why| (host, why))
        });
        let shown = cut_chars(&sanitize(cmd.trim()), 100);
        match bad {
            Some((host, why)) => src.push(
                &rules::PIPE_TO_SHELL_UNTRUSTED,
                start..end,
                format!("`{shown}` runs code from {host}, {why}"),
            ),
            None => src.push(
                &rules::PIPE_TO_SHELL,
                start..end,
                format!("`{shown}` runs downloaded code without review"),
            ),
        }
    }
}

fn decoded(src: &mut Source) {
    let text = src.text;
    let lower = src.lower;
    let mut hits: Vec<(usize, usize)> = if src.has_any(&DECODE_COMMANDS) {
        code_matches(&DECODE_PIPE, lower)
            .map(|m| (m.start, m.end))
            .collect()
    } else {
        Vec::new()
    };
    if src.has_any(&DECODERS) {
        hits.extend(code_matches(&DECODE_EVAL, lower).map(|m| (m.start, m.end)));
    }
    for (start, end) in hits {
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[end..].find('\n').map_or(text.len(), |i| end + i);
        let payload = decode_payload(&text[line_start..line_end]);
        let shown = cut_chars(&sanitize(text[start..end].trim()), 80);
        let message = match payload {
            Some(p) => format!("`{shown}` runs hidden code; the encoded text decodes to {p:?}"),
            None => format!("`{shown}` decodes data and runs it as code"),
        };
        src.push(&rules::ENCODED_EXEC, start..end, message);
    }
}

/// The first base64 blob on the line that decodes to readable text,
/// sanitized and cut, to show the user what would run.
fn decode_payload(line: &str) -> Option<String> {
    BASE64_BLOB.find_iter(line).find_map(|m| {
        let bytes = base64_decode(m.as_str())?;
        let s = std::str::from_utf8(&bytes).ok()?;
        let printable = s
            .chars()
            .filter(|c| !c.is_control() || c.is_whitespace())
            .count();
        (printable * 10 >= s.chars().count() * 9 && !s.trim().is_empty())
            .then(|| cut_chars(&sanitize(s.trim()), 160))
    })
}

/// Standard base64 (padding optional); `None` on any other byte.
pub(crate) fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for b in s.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => break,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

static CHMOD_X: LazyLock<bytes::Regex> = LazyLock::new(|| {
    pattern::code(
        r"(?-u:\b)chmod\s+(?:-\w+\s+)*(?:[ugoa]*\+[rwx]*x[rwx]*|[0-7]?[0-7]*[1357][0-7]{0,2})\s+([^\s;&|]+)",
    )
});
static DOWNLOAD_TO_FILE: LazyLock<Regex> = LazyLock::new(|| {
    pattern::text(
        r"(?i)(?-u:\b)(?:curl|wget|iwr|invoke-webrequest)(?-u:\b)[^\n]*(?:\s-o\s*\S|\s-O(?:\s|$)|\s--output|\s-outfile|\s>\s*\S|\s-O\s*\S)",
    )
});

/// `curl -o tool URL && chmod +x tool && ./tool`, on one line or across a
/// few (a code block). Downloading a binary and moving it onto the PATH
/// is how many CLIs install and is not reported; running it straight away
/// from where it landed is.
fn download_and_run(src: &mut Source) {
    let text = src.text;
    if !src.mentions("chmod") {
        return;
    }
    let hits: Vec<(usize, usize, String)> = CHMOD_X
        .captures_iter(text.as_bytes())
        .filter_map(|c| {
            let m = pattern::span(text, c.get(0)?);
            let target = &text[pattern::span(text, c.get(1)?)];
            Some((m.start, m.end, target.to_string()))
        })
        .collect();
    for (start, end, target) in hits {
        let before = lines_before(text, start, 3);
        if !DOWNLOAD_TO_FILE.is_match(before) {
            continue;
        }
        let file = target.trim_matches(['"', '\'']);
        let base = file.rsplit('/').next().unwrap_or(file);
        if base.is_empty() {
            continue;
        }
        let after = lines_after(text, end, 3);
        let ran = [
            format!("./{base}"),
            format!("{file} "),
            format!("{file}\n"),
            format!("\"{file}\""),
        ];
        let runs = after.lines().any(|l| {
            let l = l.trim_start_matches(['&', ';', ' ', '\t']);
            let l = l.strip_prefix("sudo ").unwrap_or(l);
            ran.iter()
                .any(|r| l.starts_with(r.as_str()) || l.contains(&format!("&& {r}")))
        }) || after.contains(&format!("&& ./{base}"))
            || after.contains(&format!("; ./{base}"));
        if runs {
            src.push(
                &rules::DOWNLOAD_AND_RUN,
                start..end,
                format!(
                    "downloads `{}`, makes it executable and runs it",
                    cut_chars(&sanitize(base), 60)
                ),
            );
        }
    }
}

/// The text of up to `n` lines before `at`, and `at`'s own line up to it.
fn lines_before(text: &str, at: usize, n: usize) -> &str {
    let mut start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    for _ in 0..n {
        if start == 0 {
            break;
        }
        start = text[..start - 1].rfind('\n').map_or(0, |i| i + 1);
    }
    &text[start..at]
}

/// The rest of `at`'s line and up to `n` lines after it.
fn lines_after(text: &str, at: usize, n: usize) -> &str {
    let mut end = at;
    for _ in 0..=n {
        match text[end..].find('\n') {
            Some(i) => end += i + 1,
            None => return &text[at..],
        }
    }
    &text[at..end]
}

/// A link to a program or installer: executables, disk images, packages,
/// scripts, and release downloads of archives. The extension must end a
/// path, not a host (`https://tool.app`, `https://cli.inference.sh`).
static EXECUTABLE_LINK: LazyLock<Regex> = LazyLock::new(|| {
    pattern::text(
        r#"https?://[^/\s"'`<>()\[\]]+/[^\s"'`<>()\[\]]*?(?:\.(?:exe|msi|scr|bat|cmd|ps1|dmg|pkg|appimage|deb|rpm|apk|jar|sh|zip|rar|7z)|/releases/download/[^\s"'`<>()\[\]]+)(?:[?#][^\s"'`<>()\[\]]*)?(?:[\s"'`<>()\[\]*]|$)"#,
    )
});
/// Words that present a download as required before the skill works.
static PREREQUISITE_WORDS: LazyLock<Regex> = LazyLock::new(|| {
    pattern::text(
        r"(?ix)(?-u:\b)(?:prerequisites?|before\s+(?:using|you\s+(?:use|start|begin)|starting|running|proceeding)|install\s+(?:it\s+)?first|must\s+(?:be\s+)?(?:download|install|run)|required?\s+(?:tool|utility|to\s+function|authentication)|requires?\s+the\s+\S+\s+(?:utility|tool|cli|agent)|will\s+not\s+(?:work|function)\s+without|without\s+(?:it|this)[^.\n]{0,40}(?:not|cannot|won'?t)\s+(?:work|function)|run\s+the\s+(?:executable|installer|\.exe)|important(?-u:\b)\W{0,4}\s*(?:download|install|run))(?-u:\b)",
    )
});
/// An archive password, or the "extract using: <password>" disguise.
static PASSWORD_WORDS: LazyLock<Regex> = LazyLock::new(|| {
    pattern::text(
        r"(?ix)(?-u:\b)(?:(?:archive|zip|extraction|unzip|file)\s+)?(?:password|passcode|passphrase|pass)\s*(?:\*\*)?\s*[:=]|(?-u:\b)(?:with|using)\s+(?:the\s+)?(?:password|passcode|passphrase)(?-u:\b)|(?-u:\b)password[- ]protected(?-u:\b)|\(\s*extract\s+using\s*:\s*\S+",
    )
});
static ARCHIVE_WORDS: LazyLock<Regex> =
    LazyLock::new(|| pattern::text(r"(?i)(?-u:\b)(?:zip|rar|7z|archive)(?-u:\b)"));
static RUN_WORDS: LazyLock<Regex> = LazyLock::new(|| {
    pattern::text(
        r"(?i)(?-u:\b)(?:execute|run|paste|copy)(?-u:\b)[^\n]{0,80}(?-u:\b)(?:terminal|command|shell|installation|installer|console)(?-u:\b)",
    )
});

/// Markdown that presents a program download as a prerequisite, protects
/// an archive with a password, or sends the reader to a paste site for a
/// command to run: the shapes of the skill-borne stealers seen on public
/// registries.
fn prerequisites(src: &mut Source) {
    // Both patterns start at a URL: without one, neither runs (nor is
    // compiled).
    if !src.mentions("http") {
        return;
    }
    let text = src.text;
    let links: Vec<(usize, usize)> = EXECUTABLE_LINK
        .find_iter(src.lower)
        .map(|m| (m.start(), m.end()))
        .collect();
    for (start, end) in links {
        let around = paragraph(text, start, end);
        let link = text[start..end].trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
        let shown = cut_chars(&sanitize(link), 100);
        let archive = ARCHIVE_WORDS.is_match(link) || link.contains("/releases/download/");
        if archive && PASSWORD_WORDS.is_match(around) {
            src.push(
                &rules::PASSWORD_ARCHIVE,
                start..end,
                format!("{shown} is a download whose text gives an archive password"),
            );
        } else if PREREQUISITE_WORDS.is_match(around) {
            src.push(
                &rules::PREREQUISITE_BINARY,
                start..end,
                format!("{shown} is presented as a required download"),
            );
        }
    }
    let pastes: Vec<(usize, usize, String)> = PASTE_URL
        .find_iter(src.lower)
        .filter_map(|m| {
            let c = URL.captures(m.as_str())?;
            Some((m.start(), m.end(), host_of(&c[2])))
        })
        .collect();
    for (start, end, host) in pastes {
        if RUN_WORDS.is_match(paragraph(text, start, end)) {
            src.push(
                &rules::PASTE_SITE_EXEC,
                start..end,
                format!("tells the reader to run a command taken from {host}"),
            );
        }
    }
}

/// The text around a match, for wording that qualifies it: three lines
/// each side (a list item, its password line, the step after it), at most
/// a few hundred bytes each way.
fn paragraph(text: &str, start: usize, end: usize) -> &str {
    let before = lines_before(text, start, 3);
    let after = lines_after(text, end, 3);
    let from =
        pattern::floor_char_boundary(text, (start - before.len()).max(start.saturating_sub(600)));
    let to = pattern::floor_char_boundary(text, (end + after.len()).min(end + 600));
    &text[from..to]
}
