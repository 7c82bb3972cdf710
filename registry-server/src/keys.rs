//! The registry's signing keys: a directory of its own (`serve --keys DIR`,
//! `skillpm-registry key ... --dir DIR`), never the database.
//!
//! ```text
//! DIR/keys.json   the public keyring: {"active": ID, "keys": [...]}, each
//!                 key as config.json lists it (id, algorithm, key,
//!                 valid_from, revoked)
//! DIR/ID.pem      the private key of ID, PKCS#8 PEM, mode 0600
//! ```
//!
//! `keys.json` is replaced whole (temporary file, fsync, rename), and a
//! key's private file is written before the keyring names it, so a
//! server reading the directory at any moment finds a whole keyring whose
//! active key has its private half. A serving registry reloads the
//! keyring when the file changes ([`Keys::current`]), so `key rotate`
//! and `key revoke` take effect without a restart. A revoked key's
//! private file is deleted: it must never sign again.

use anyhow::{bail, Context, Result};
use ed25519_dalek::pkcs8::{DecodePrivateKey, EncodePrivateKey};
use serde::{Deserialize, Serialize};
use skillpm_core::protocol::PublicKey;
use skillpm_core::signing::{self, Keyring, SigningKey};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The public keyring's file name in the key directory.
pub const KEYRING: &str = "keys.json";
/// Largest keyring or private key file read.
const MAX_FILE: u64 = 1 << 20;

/// `DIR/keys.json`.
#[derive(Serialize, Deserialize, Clone, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct KeyringFile {
    /// The key new versions are signed with; `None` once none is left.
    pub active: Option<String>,
    /// Every key the registry has had, oldest first, as config.json
    /// lists them.
    pub keys: Vec<PublicKey>,
}

/// The key new versions are signed with.
pub struct Active {
    pub id: String,
    pub key: SigningKey,
}

/// A key directory.
#[derive(Clone, Debug)]
pub struct KeyDir {
    dir: PathBuf,
}

fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default()
}

/// At most [`MAX_FILE`] bytes of `path`; `None` when it does not exist.
fn read_capped(path: &Path) -> Result<Option<Vec<u8>>> {
    use std::io::Read;
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut out = Vec::new();
    file.take(MAX_FILE + 1)
        .read_to_end(&mut out)
        .with_context(|| format!("cannot read {}", path.display()))?;
    if out.len() as u64 > MAX_FILE {
        bail!("{} is larger than {MAX_FILE} bytes", path.display());
    }
    Ok(Some(out))
}

impl KeyDir {
    pub fn new(dir: impl Into<PathBuf>) -> KeyDir {
        KeyDir { dir: dir.into() }
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    fn keyring_path(&self) -> PathBuf {
        self.dir.join(KEYRING)
    }

    fn private_path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.pem"))
    }

    /// The keyring, `None` when the directory holds none; checked as a
    /// client would check it (ids, keys) so what config.json serves is
    /// never refused.
    pub fn read(&self) -> Result<Option<KeyringFile>> {
        let path = self.keyring_path();
        let Some(bytes) = read_capped(&path)? else {
            return Ok(None);
        };
        let file: KeyringFile = serde_json::from_slice(&bytes)
            .with_context(|| format!("{} is not a keyring", path.display()))?;
        Keyring::new(&file.keys).with_context(|| format!("{}", path.display()))?;
        if let Some(id) = &file.active {
            match file.keys.iter().find(|k| k.id == *id) {
                None => bail!("{}: the active key {id} is not listed", path.display()),
                Some(k) if k.revoked.is_some() => {
                    bail!("{}: the active key {id} is revoked", path.display())
                }
                Some(_) => {}
            }
        }
        Ok(Some(file))
    }

    /// The keyring, or an error saying how to make one.
    fn read_some(&self) -> Result<KeyringFile> {
        self.read()?.with_context(|| {
            format!(
                "{} holds no keys; run `skillpm-registry key generate --dir {}` first",
                self.dir.display(),
                self.dir.display()
            )
        })
    }

    /// Replaces the keyring whole: temporary file, fsync, rename, then
    /// the directory synced.
    fn write(&self, file: &KeyringFile) -> Result<()> {
        let mut text = serde_json::to_vec_pretty(file).context("cannot encode the keyring")?;
        text.push(b'\n');
        let mut tmp = tempfile::Builder::new()
            .prefix(".keys-")
            .tempfile_in(&self.dir)
            .with_context(|| format!("cannot write in {}", self.dir.display()))?;
        tmp.write_all(&text)?;
        tmp.as_file().sync_all()?;
        tmp.persist(self.keyring_path())
            .map_err(|e| e.error)
            .with_context(|| format!("cannot write {}", self.keyring_path().display()))?;
        sync_dir(&self.dir);
        Ok(())
    }

    /// Makes the directory (0700 on unix) if it is missing.
    fn create_dir(&self) -> Result<()> {
        let mut b = std::fs::DirBuilder::new();
        b.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            b.mode(0o700);
        }
        b.create(&self.dir)
            .with_context(|| format!("cannot create {}", self.dir.display()))
    }

    /// A new key: its private half written (0600, never replacing a
    /// file), its public half returned for the keyring.
    fn new_key(&self) -> Result<PublicKey> {
        let mut seed = zeroize::Zeroizing::new([0u8; 32]);
        getrandom::fill(seed.as_mut()).map_err(|e| anyhow::anyhow!("no randomness: {e}"))?;
        let key = SigningKey::from_bytes(&seed);
        let public = key.verifying_key();
        let id = signing::key_id(&public);
        let pem = key
            .to_pkcs8_pem(ed25519_dalek::pkcs8::spki::der::pem::LineEnding::LF)
            .map_err(|e| anyhow::anyhow!("cannot encode the private key: {e}"))?;
        let path = self.private_path(&id);
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        let mut f = opts
            .open(&path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        f.write_all(pem.as_bytes())?;
        f.sync_all()?;
        sync_dir(&self.dir);
        Ok(PublicKey {
            id,
            algorithm: signing::ALGORITHM.to_string(),
            key: signing::encode_key(&public),
            valid_from: Some(now_rfc3339()),
            revoked: None,
        })
    }

    /// `key generate`: the first key of a new directory. Returns its id.
    pub fn generate(&self) -> Result<String> {
        self.create_dir()?;
        if let Some(file) = self.read()? {
            if !file.keys.is_empty() {
                bail!(
                    "{} already holds keys; use `skillpm-registry key rotate` to make a new active key",
                    self.dir.display()
                );
            }
        }
        let key = self.new_key()?;
        let id = key.id.clone();
        self.write(&KeyringFile {
            active: Some(id.clone()),
            keys: vec![key],
        })?;
        Ok(id)
    }

    /// `key rotate`: a new active key; the old ones stay listed (valid for
    /// verification) until revoked. Returns the old active id and the new.
    pub fn rotate(&self) -> Result<(Option<String>, String)> {
        let mut file = self.read_some()?;
        if file.keys.len() >= signing::MAX_KEYS {
            bail!(
                "the keyring lists {} keys, the most clients accept; nothing was changed",
                file.keys.len()
            );
        }
        let key = self.new_key()?;
        let id = key.id.clone();
        file.keys.push(key);
        let old = file.active.replace(id.clone());
        self.write(&file)?;
        Ok((old, id))
    }

    /// `key revoke ID`: marks the key revoked (clients then refuse what it
    /// signed) and deletes its private file. The active key cannot be
    /// revoked: rotate first, so the registry always signs with a live
    /// key.
    pub fn revoke(&self, id: &str) -> Result<()> {
        let mut file = self.read_some()?;
        if file.active.as_deref() == Some(id) {
            bail!("key {id} is the active signing key; run `skillpm-registry key rotate` first, then revoke it");
        }
        let Some(k) = file.keys.iter_mut().find(|k| k.id == id) else {
            bail!("no key {id:?} in {}", self.dir.display());
        };
        if k.revoked.is_some() {
            bail!("key {id} is already revoked");
        }
        k.revoked = Some(now_rfc3339());
        self.write(&file)?;
        let path = self.private_path(id);
        match std::fs::remove_file(&path) {
            Ok(()) => sync_dir(&self.dir),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(e).with_context(|| {
                    format!(
                        "key {id} is revoked, but {} could not be deleted",
                        path.display()
                    )
                })
            }
        }
        Ok(())
    }

    /// The active key with its private half, checked against the keyring.
    pub fn active(&self) -> Result<Active> {
        let file = self.read_some()?;
        self.load_active(&file)?.with_context(|| {
            format!(
                "{} has no active key; run `skillpm-registry key rotate`",
                self.dir.display()
            )
        })
    }

    fn load_active(&self, file: &KeyringFile) -> Result<Option<Active>> {
        let Some(id) = &file.active else {
            return Ok(None);
        };
        let path = self.private_path(id);
        let bytes = read_capped(&path)?.with_context(|| {
            format!(
                "the private key of the active key {id} ({}) is missing",
                path.display()
            )
        })?;
        let text = zeroize::Zeroizing::new(
            String::from_utf8(bytes)
                .with_context(|| format!("{} is not a PEM file", path.display()))?,
        );
        let key = SigningKey::from_pkcs8_pem(&text).map_err(|e| {
            anyhow::anyhow!("{}: not an ed25519 PKCS#8 private key: {e}", path.display())
        })?;
        let listed = file
            .keys
            .iter()
            .find(|k| k.id == *id)
            .map(|k| k.key.as_str());
        if listed != Some(signing::encode_key(&key.verifying_key()).as_str()) {
            bail!(
                "{} is not the private half of key {id} in {KEYRING}",
                path.display()
            );
        }
        Ok(Some(Active {
            id: id.clone(),
            key,
        }))
    }
}

/// Makes a rename or creation in `dir` durable; best effort.
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

/// What a serving registry signs with and publishes.
pub struct Loaded {
    /// config.json's `keys`.
    pub public: Vec<PublicKey>,
    pub active: Option<Active>,
}

/// What identifies one version of the keyring file.
#[derive(Clone, PartialEq, Eq, Debug)]
struct Stamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    #[cfg(unix)]
    ino: u64,
}

fn stamp(path: &Path) -> Option<Stamp> {
    let m = std::fs::metadata(path).ok()?;
    Some(Stamp {
        len: m.len(),
        modified: m.modified().ok(),
        #[cfg(unix)]
        ino: std::os::unix::fs::MetadataExt::ino(&m),
    })
}

/// The keys of a serving registry, reloaded when `keys.json` changes (a
/// stat per publish and per config.json request). A keyring that fails
/// to load is logged and the last good one kept.
pub struct Keys {
    dir: KeyDir,
    state: Mutex<(Option<Stamp>, Arc<Loaded>)>,
}

impl Keys {
    /// Loads the directory's keys; an error unless it holds a keyring with
    /// an active key.
    pub fn open(dir: KeyDir) -> Result<Keys> {
        let file = dir.read_some()?;
        let active = dir.load_active(&file)?;
        if active.is_none() {
            bail!(
                "{} has no active key; run `skillpm-registry key rotate --dir {}`",
                dir.path().display(),
                dir.path().display()
            );
        }
        let loaded = Loaded {
            public: file.keys,
            active,
        };
        let s = stamp(&dir.keyring_path());
        Ok(Keys {
            dir,
            state: Mutex::new((s, Arc::new(loaded))),
        })
    }

    /// The keys as of the keyring's last change.
    pub fn current(&self) -> Arc<Loaded> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let now = stamp(&self.dir.keyring_path());
        if now != state.0 {
            state.0 = now;
            let fresh = self.dir.read_some().and_then(|file| {
                let active = self.dir.load_active(&file)?;
                Ok(Loaded {
                    public: file.keys,
                    active,
                })
            });
            match fresh {
                Ok(l) => {
                    eprintln!(
                        "skillpm-registry: keys reloaded from {}; signing with {}",
                        self.dir.path().display(),
                        l.active.as_ref().map_or("no key", |a| a.id.as_str())
                    );
                    state.1 = Arc::new(l);
                }
                Err(e) => eprintln!(
                    "skillpm-registry: cannot reload the keys, keeping the last ones: {e:#}"
                ),
            }
        }
        state.1.clone()
    }
}

/// What `key resign` did.
pub struct Resigned {
    /// The active key's id.
    pub keyid: String,
    /// Versions signed now.
    pub signed: usize,
    /// Versions the active key had signed already.
    pub kept: usize,
    /// Versions left alone: `name@vers` and why.
    pub refused: Vec<(String, String)>,
}

/// `key resign`: signs, with the active key, every stored version the
/// active key has not signed. A version that carries a signature is
/// re-signed only if that signature still verifies with the key it names
/// (revoked keys included): a row altered in the database since it was
/// signed is reported, not vouched for again. Versions without a
/// signature (published before the registry had keys) are signed as they
/// stand.
pub async fn resign(meta: &dyn crate::store::MetaStore, dir: &KeyDir) -> Result<Resigned> {
    use crate::store::NewSignature;
    use skillpm_core::checksum::Checksum;
    use skillpm_core::name::SkillName;
    use skillpm_core::protocol::IndexDep;
    use std::collections::BTreeMap;

    let file = dir.read_some()?;
    let active = dir.active()?;
    let known: BTreeMap<&str, signing::VerifyingKey> = file
        .keys
        .iter()
        .filter(|k| k.algorithm == signing::ALGORITHM)
        .filter_map(|k| Some((k.id.as_str(), signing::decode_public(&k.key).ok()?)))
        .collect();
    let rows = meta
        .signing_rows()
        .await
        .context("cannot read the versions")?;
    let mut out = Resigned {
        keyid: active.id.clone(),
        signed: 0,
        kept: 0,
        refused: Vec::new(),
    };
    let mut by_name: BTreeMap<String, Vec<NewSignature>> = BTreeMap::new();
    for r in rows {
        let what = format!("{}@{}", r.name, r.vers);
        let fields = (|| {
            let name = SkillName::new(&r.name).map_err(|e| e.to_string())?;
            let vers = semver::Version::parse(&r.vers).map_err(|e| e.to_string())?;
            let cksum = Checksum::parse(&r.cksum).map_err(|e| e.to_string())?;
            let deps: Vec<IndexDep> = serde_json::from_str(&r.deps).map_err(|e| e.to_string())?;
            Ok::<_, String>((name, vers, cksum, deps))
        })();
        let (name, vers, cksum, deps) = match fields {
            Ok(f) => f,
            Err(e) => {
                out.refused.push((what, format!("corrupt row: {e}")));
                continue;
            }
        };
        if let (Some(keyid), Some(sig)) = (&r.sig_key, &r.sig) {
            let msg = signing::message(&name, &vers, &cksum, &deps);
            match known.get(keyid.as_str()) {
                None => {
                    out.refused.push((
                        what,
                        format!("signed by key {keyid}, which the keyring does not list"),
                    ));
                    continue;
                }
                Some(key) if !signing::verifies(key, &msg, sig) => {
                    out.refused.push((
                        what,
                        format!(
                            "its signature by key {keyid} does not verify: the row changed since it was signed"
                        ),
                    ));
                    continue;
                }
                Some(_) if *keyid == active.id => {
                    out.kept += 1;
                    continue;
                }
                Some(_) => {}
            }
        }
        let sig = signing::sign(&active.key, &name, &vers, &cksum, &deps);
        by_name.entry(r.name).or_default().push(NewSignature {
            vers: r.vers,
            keyid: sig.keyid,
            sig: sig.sig,
        });
    }
    for (name, sigs) in by_name {
        meta.set_signatures(&name, &sigs)
            .await
            .with_context(|| format!("cannot store the signatures of {name}"))?;
        out.signed += sigs.len();
    }
    Ok(out)
}
