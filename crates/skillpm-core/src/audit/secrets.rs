//! Reads of credential stores, and the same file sending data out.
//!
//! A stealer needs both halves: something to take and somewhere to send
//! it. Either alone has honest uses (a deploy script reads an SSH key; an
//! API skill POSTs), so a read alone is a warning and only the pair, in one
//! file, is critical. The file is the unit because skills are small and a
//! data-flow analysis of every language a skill may ship is out of reach;
//! the calibration on public skills (examples/audit_corpus.rs) is what
//! keeps the pair rare enough to block on.
//!
//! `.env` files are deliberately not a credential store here: loading one
//! and calling an API is what most API skills do, so `.env` counts only
//! when the data goes to a webhook or chat bot, an exfiltration channel
//! rather than an API.

use super::pattern::{self, Words};
use super::rules;
use super::source::{cut_chars, Source};
use crate::text::sanitize;
use regex::{bytes, Regex};
use std::sync::LazyLock;

/// Credential stores, as (pattern, what it is), lowercase: they run on
/// [`Source::lower`]. A match is a "read": a skill has no reason to name
/// these paths except to use them.
const STORES: &[(&str, &str)] = &[
    // Private keys (the `.pub` halves are filtered out below).
    (
        r"\.ssh[/\\]+(?:id_[a-z0-9_]+(?:\.pub)?|identity)(?-u:\b)",
        "an SSH private key",
    ),
    (
        r#"(?:~|\$home|\$\{home\}|%userprofile%|home\(\)\s*/\s*['"])[/\\]?\.ssh(?:[/\\]*(?:\*|["'`\s)]|$))"#,
        "the SSH key directory",
    ),
    (r"\.aws[/\\]+credentials(?-u:\b)", "AWS credentials"),
    (
        r"\.config[/\\]+gcloud(?-u:\b)|application_default_credentials\.json",
        "Google Cloud credentials",
    ),
    (r"\.kube[/\\]+config(?-u:\b)", "the Kubernetes config"),
    (
        r"\.azure[/\\]+(?:accesstokens\.json|msal_token_cache)",
        "Azure tokens",
    ),
    (r"\.docker[/\\]+config\.json", "Docker registry credentials"),
    (r"\.git-credentials(?-u:\b)", "stored git credentials"),
    (r"/etc/shadow(?-u:\b)", "the system password hashes"),
    // Browser stores.
    (
        r"login data(?-u:\b)|(?-u:\b)logins\.json(?-u:\b)|(?-u:\b)key[34]\.db(?-u:\b)",
        "browser saved passwords",
    ),
    (
        r"(?-u:\b)cookies\.sqlite(?-u:\b)|(?:default|profile \d+)[/\\]+(?:network[/\\]+)?cookies(?-u:\b)",
        "browser cookies",
    ),
    (
        r"user data[/\\]+local state(?-u:\b)",
        "the browser's cookie encryption key",
    ),
    (r"(?-u:\b)browser_cookie3(?-u:\b)", "browser cookies"),
    // Wallets.
    (r"(?-u:\b)wallet\.dat(?-u:\b)", "a Bitcoin wallet file"),
    (r"(?-u:\b)exodus\.wallet(?-u:\b)", "the Exodus wallet"),
    (
        r"(?-u:\b)nkbihfbeogaeaoehlefnkodbefgpgknn(?-u:\b)|metamask[^\n]{0,40}vault|local extension settings",
        "MetaMask's vault",
    ),
    (r"electrum[/\\]+wallets", "Electrum wallets"),
    (r"ethereum[/\\]+keystore", "an Ethereum keystore"),
    // Keychains.
    (
        r"(?-u:\b)security\s+(?:dump-keychain|find-internet-password)(?-u:\b)",
        "the macOS keychain",
    ),
    (
        r"(?-u:\b)login\.keychain(?:-db)?(?-u:\b)",
        "the macOS login keychain",
    ),
];

/// Every store in one pattern, one capture group each (index + 1), so the
/// file is scanned once: their literals together still make a good
/// prefilter.
static STORE: LazyLock<bytes::Regex> = LazyLock::new(|| {
    let groups: Vec<String> = STORES.iter().map(|(p, _)| format!("({p})")).collect();
    pattern::code(&groups.join("|"))
});

/// Words every [`STORES`] pattern needs one of (each pattern's own
/// literal, lowercase): a file holding none is not searched with
/// [`STORE`], nor is it compiled. Most files name no credential store,
/// and one pass for these words is far cheaper than the pattern.
static STORE_WORDS: Words = Words::new(&[
    ".ssh",
    ".aws",
    "gcloud",
    "application_default_credentials",
    ".kube",
    ".azure",
    ".docker",
    ".git-credentials",
    "/etc/shadow",
    "login data",
    "logins.json",
    "key3.db",
    "key4.db",
    "cookie",
    "local state",
    "wallet.dat",
    "exodus.wallet",
    "nkbihfbeogaeaoehlefnkodbefgpgknn",
    "metamask",
    "local extension settings",
    "electrum",
    "ethereum",
    "dump-keychain",
    "find-internet-password",
    "login.keychain",
]);

/// The whole environment, which holds every token the user exported. Its
/// words are common (`env`, `str(`), so it runs only when
/// [`ENV_WORDS`] are there.
static ENV_DUMP: LazyLock<Regex> = LazyLock::new(|| {
    pattern::text(
        r"(?-u:\b)(?:printenv|env)\s*\|\s*(?:curl|nc|ncat|wget)(?-u:\b)|json\.stringify\(\s*process\.env\s*\)|(?:json\.dumps|str|dict)\(\s*os\.environ\s*\)",
    )
});
static ENV_WORDS: Words = Words::new(&["printenv", "env |", "env|", "process.env", "os.environ"]);

/// A `.env` file (not `.env.example` and the like, which hold no secrets).
static DOTENV: LazyLock<Regex> = LazyLock::new(|| {
    pattern::text(r"(?:^|[\s/'`\x22(])\.env(?:\.local|\.production)?(?:$|[\s'`\x22),;:])")
});

/// Sending data out: uploads and POSTs, raw sockets. Case matters here
/// (`curl -F` uploads a form, `curl -f` only fails quietly), so this one
/// runs on the original text; it runs only on files that read a store.
static SEND: LazyLock<Regex> = LazyLock::new(|| {
    pattern::text(
        r#"(?x)
        (?-u:\b)curl(?-u:\b)[^\n]*?\s(?:-d|--data(?:-binary|-raw|-urlencode)?|-F|--form|-T|--upload-file|-X\s*POST|-XPOST|--request\s+POST)(?-u:\b)
        | (?-u:\b)wget(?-u:\b)[^\n]*?--post-(?:data|file)
        | (?-u:\b)(?:requests|httpx|session|client|aiohttp\.ClientSession\(\))\s*\.\s*(?i:post|put)\s*\(
        | (?-u:\b)urllib\.request\.urlopen\([^\n)]*data\s*=
        | (?-u:\b)(?:axios\s*\.\s*(?:post|put)|\.sendBeacon)\s*\(
        | (?-u:\b)fetch\s*\([^\n]{0,200}method\s*:\s*['"](?i:post|put)['"]
        | (?i:(?-u:\b)(?:invoke-restmethod|invoke-webrequest|irm|iwr)(?-u:\b)[^\n]*-method\s+(?:post|put))
        | (?-u:\b)(?:UploadFile|UploadString|UploadData)\s*\(
        | (?-u:\b)(?:nc|ncat|netcat)\s+(?:-[a-km-zA-Z0-9]+\s+)*[A-Za-z0-9][A-Za-z0-9.-]*\s+\d{2,5}(?-u:\b)
        | /dev/tcp/
    "#,
    )
});

/// Endpoints that are exfiltration channels rather than APIs. Tunnels
/// (ngrok) are not among them: webhook receivers use them honestly.
static DROP: LazyLock<Regex> = LazyLock::new(|| {
    pattern::text(
        r"discord(?:app)?\.com/api/webhooks|api\.telegram\.org/bot|hooks\.slack\.com/|webhook\.site|(?-u:\b)requestbin\.(?:com|net|io)|pipedream\.net|interact\.sh|burpcollaborator|oast\.(?:fun|me|pro|live|site|online)",
    )
});

/// In markdown a read and a send pair only this close (or in one code
/// block): a reference page holds many unrelated snippets, while a script
/// is one program, where any read can reach any send.
const MARKDOWN_PAIR_LINES: usize = 20;

struct Hit {
    start: usize,
    end: usize,
    what: &'static str,
}

pub(super) fn check(src: &mut Source) {
    // A data file's paths are data (a scanner's pattern list, a report).
    if src.data {
        return;
    }
    let text = src.text;
    let lower = src.lower;
    let mut reads: Vec<Hit> = Vec::new();
    let stores = if src.has_any(&STORE_WORDS) {
        Some(STORE.captures_iter(lower.as_bytes()))
    } else {
        None
    };
    for c in stores.into_iter().flatten() {
        let Some((i, m)) = c
            .iter()
            .enumerate()
            .skip(1)
            .find_map(|(i, m)| Some((i, m?)))
        else {
            continue;
        };
        // A public key is meant to be shared.
        if m.as_bytes().ends_with(b".pub") {
            continue;
        }
        let m = pattern::span(lower, m);
        reads.push(Hit {
            start: m.start,
            end: m.end,
            what: STORES[i - 1].1,
        });
    }
    if src.has_any(&ENV_WORDS) {
        reads.extend(ENV_DUMP.find_iter(lower).map(|m| Hit {
            start: m.start(),
            end: m.end(),
            what: "the whole environment",
        }));
    }
    let drops: Vec<(usize, usize)> = DROP
        .find_iter(lower)
        .map(|m| (m.start(), m.end()))
        .collect();
    if reads.is_empty() && drops.is_empty() {
        return;
    }
    let mut sends: Vec<(usize, usize)> = if reads.is_empty() {
        Vec::new()
    } else {
        SEND.find_iter(text).map(|m| (m.start(), m.end())).collect()
    };
    sends.extend(drops.iter().copied());
    sends.sort_unstable();
    // A `.env` pairs only with a drop channel (see the module comment).
    if !drops.is_empty() {
        reads.extend(DOTENV.find_iter(lower).map(|d| Hit {
            start: d.start(),
            end: d.end(),
            what: DOTENV_WHAT,
        }));
    }
    reads.sort_by_key(|h| h.start);
    for hit in reads {
        let dotenv = hit.what == DOTENV_WHAT;
        let candidates = if dotenv { &drops } else { &sends };
        match paired(src, &hit, candidates) {
            Some((s, e)) => {
                let line = src.line(s);
                let shown = cut_chars(&sanitize(text[s..e].trim()), 80);
                src.push(
                    &rules::CREDENTIAL_EXFIL,
                    hit.start..hit.end,
                    format!(
                        "reads {} and sends data out (line {line}: `{shown}`)",
                        hit.what
                    ),
                );
            }
            None if !dotenv => src.push(
                &rules::CREDENTIAL_READ,
                hit.start..hit.end,
                format!("reads {}", hit.what),
            ),
            None => {}
        }
    }
}

const DOTENV_WHAT: &str = "a .env file";

/// The send that pairs with `read`: in a script, the first in the file; in
/// markdown, the nearest within [`MARKDOWN_PAIR_LINES`] or in the same code
/// block.
fn paired(src: &Source, read: &Hit, sends: &[(usize, usize)]) -> Option<(usize, usize)> {
    if !src.markdown {
        return sends.first().copied();
    }
    let line = src.line(read.start);
    let block = src.code_block(read.start);
    sends
        .iter()
        .copied()
        .filter(|&(s, _)| {
            src.line(s).abs_diff(line) <= MARKDOWN_PAIR_LINES
                || block.as_ref().is_some_and(|b| b.contains(&s))
        })
        .min_by_key(|&(s, _)| s.abs_diff(read.start))
}
