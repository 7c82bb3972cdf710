//! The metadata seam (`MetaStore`) and its embedded implementation, SQLite:
//! packages, versions, owners and hashed tokens. The PostgreSQL
//! implementation is in `pg.rs`; handlers only see `dyn MetaStore`.
//!
//! One connection behind a mutex, used only from `spawn_blocking`: SQLite
//! serialises writers anyway, and a single writer makes "exactly one of N
//! concurrent publishes wins" a property of the `UNIQUE(name, vers)`
//! constraint inside an immediate transaction rather than of timing.

use crate::error::{ApiError, ApiResult};
use async_trait::async_trait;
use rusqlite::{params, Connection, ErrorCode, OptionalExtension, TransactionBehavior};
use sha2::{Digest, Sha256};
use std::path::Path;
use std::sync::{Arc, Mutex};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS packages (
    name    TEXT PRIMARY KEY,
    created INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS versions (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL REFERENCES packages(name),
    vers        TEXT NOT NULL,
    cksum       TEXT NOT NULL,
    yanked      INTEGER NOT NULL DEFAULT 0,
    description TEXT NOT NULL,
    requires    TEXT NOT NULL DEFAULT '{}',
    body        TEXT NOT NULL DEFAULT '',
    published   INTEGER NOT NULL,
    UNIQUE (name, vers)
);
CREATE TABLE IF NOT EXISTS owners (
    name TEXT NOT NULL REFERENCES packages(name),
    user TEXT NOT NULL,
    PRIMARY KEY (name, user)
);
CREATE TABLE IF NOT EXISTS tokens (
    hash    TEXT PRIMARY KEY,
    user    TEXT NOT NULL,
    created INTEGER NOT NULL,
    revoked INTEGER
);
";

/// Opens (creating if needed) `registry.db` with durable settings.
pub fn open(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    // FULL: a commit that returned has reached the disk, so a publish the
    // client saw succeed survives a crash of the machine, not just of us.
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.execute_batch(SCHEMA)?;
    Ok(conn)
}

#[derive(Clone)]
pub struct Db(Arc<Mutex<Connection>>);

impl Db {
    pub fn new(conn: Connection) -> Self {
        Db(Arc::new(Mutex::new(conn)))
    }

    /// Runs `f` on the connection off the async runtime.
    pub async fn call<T, F>(&self, f: F) -> ApiResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> ApiResult<T> + Send + 'static,
    {
        let db = self.0.clone();
        tokio::task::spawn_blocking(move || {
            let mut conn = db
                .lock()
                .map_err(|_| ApiError::internal("database mutex poisoned"))?;
            f(&mut conn)
        })
        .await?
    }
}

pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// The user a live token belongs to.
pub fn token_user(conn: &Connection, token: &str) -> rusqlite::Result<Option<String>> {
    conn.query_row(
        "SELECT user FROM tokens WHERE hash = ?1 AND revoked IS NULL",
        params![token_hash(token)],
        |r| r.get(0),
    )
    .optional()
}

pub fn create_token(conn: &Connection, user: &str, token: &str) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO tokens (hash, user, created) VALUES (?1, ?2, ?3)",
        params![token_hash(token), user, now()],
    )?;
    Ok(())
}

/// Returns whether a live token was revoked.
pub fn revoke_token(conn: &Connection, token: &str) -> rusqlite::Result<bool> {
    let n = conn.execute(
        "UPDATE tokens SET revoked = ?2 WHERE hash = ?1 AND revoked IS NULL",
        params![token_hash(token), now()],
    )?;
    Ok(n > 0)
}

/// A user exists once a token was ever issued for them.
pub fn user_exists(conn: &Connection, user: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM tokens WHERE user = ?1)",
        params![user],
        |r| r.get(0),
    )
}

pub fn package_exists(conn: &Connection, name: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM packages WHERE name = ?1)",
        params![name],
        |r| r.get(0),
    )
}

pub fn is_owner(conn: &Connection, name: &str, user: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM owners WHERE name = ?1 AND user = ?2)",
        params![name, user],
        |r| r.get(0),
    )
}

pub fn owners(conn: &Connection, name: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare("SELECT user FROM owners WHERE name = ?1 ORDER BY user")?;
    let rows = stmt.query_map(params![name], |r| r.get(0))?;
    rows.collect()
}

pub fn no_skill(name: &str) -> ApiError {
    ApiError::not_found(format!("no skill named `{name}`"))
}

pub fn no_version(name: &str, vers: &str) -> ApiError {
    ApiError::not_found(format!("no version {vers} of `{name}`"))
}

pub fn not_owner(name: &str, user: &str) -> ApiError {
    ApiError::forbidden(format!("user `{user}` is not an owner of `{name}`"))
}

pub fn no_user(user: &str) -> ApiError {
    ApiError::not_found(format!("no user named `{user}`"))
}

pub fn last_owner(name: &str) -> ApiError {
    ApiError::bad_request(format!(
        "cannot remove every owner of `{name}`; add another owner first"
    ))
}

/// 404 when the package is unknown, 403 when `user` does not own it.
pub fn require_owner(conn: &Connection, name: &str, user: &str) -> ApiResult<()> {
    if !package_exists(conn, name)? {
        return Err(no_skill(name));
    }
    if !is_owner(conn, name, user)? {
        return Err(not_owner(name, user));
    }
    Ok(())
}

pub struct VersionRow {
    pub vers: String,
    pub cksum: String,
    pub yanked: bool,
    pub description: String,
    pub requires: String,
    pub published: i64,
}

pub fn versions(conn: &Connection, name: &str) -> rusqlite::Result<Vec<VersionRow>> {
    let mut stmt = conn.prepare(
        "SELECT vers, cksum, yanked, description, requires, published
         FROM versions WHERE name = ?1",
    )?;
    let rows = stmt.query_map(params![name], |r| {
        Ok(VersionRow {
            vers: r.get(0)?,
            cksum: r.get(1)?,
            yanked: r.get::<_, i64>(2)? != 0,
            description: r.get(3)?,
            requires: r.get(4)?,
            published: r.get(5)?,
        })
    })?;
    rows.collect()
}

pub fn cksum_of(conn: &Connection, name: &str, vers: &str) -> rusqlite::Result<Option<String>> {
    conn.query_row(
        "SELECT cksum FROM versions WHERE name = ?1 AND vers = ?2",
        params![name, vers],
        |r| r.get(0),
    )
    .optional()
}

/// Returns false when the version does not exist.
pub fn set_yanked(
    conn: &Connection,
    name: &str,
    vers: &str,
    yanked: bool,
) -> rusqlite::Result<bool> {
    let n = conn.execute(
        "UPDATE versions SET yanked = ?3 WHERE name = ?1 AND vers = ?2",
        params![name, vers, yanked as i64],
    )?;
    Ok(n > 0)
}

pub fn add_owners(conn: &mut Connection, name: &str, users: &[String]) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    for u in users {
        tx.execute(
            "INSERT OR IGNORE INTO owners (name, user) VALUES (?1, ?2)",
            params![name, u],
        )?;
    }
    tx.commit()
}

/// Removes owners unless that would leave the package without one.
pub fn remove_owners(conn: &mut Connection, name: &str, users: &[String]) -> ApiResult<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    for u in users {
        tx.execute(
            "DELETE FROM owners WHERE name = ?1 AND user = ?2",
            params![name, u],
        )?;
    }
    let left: i64 = tx.query_row(
        "SELECT COUNT(*) FROM owners WHERE name = ?1",
        params![name],
        |r| r.get(0),
    )?;
    if left == 0 {
        // Dropping the transaction rolls the deletes back.
        return Err(last_owner(name));
    }
    tx.commit()?;
    Ok(())
}

/// What a publish adds; everything already validated.
#[derive(Clone)]
pub struct NewVersion {
    pub name: String,
    pub vers: semver::Version,
    pub cksum: String,
    pub description: String,
    pub requires: String,
    pub body: String,
}

/// Checks ownership and version clash without writing, so a doomed upload
/// is refused before its blob is stored.
pub fn precheck(
    conn: &Connection,
    name: &str,
    vers: &semver::Version,
    user: &str,
) -> ApiResult<()> {
    if package_exists(conn, name)? && !is_owner(conn, name, user)? {
        return Err(ApiError::forbidden(format!(
            "user `{user}` is not an owner of `{name}`"
        )));
    }
    check_clash(conn, name, vers)
}

/// Versions equal except for build metadata are the same version to
/// semver resolution, so they clash too.
fn check_clash(conn: &Connection, name: &str, vers: &semver::Version) -> ApiResult<()> {
    let mut stmt = conn.prepare("SELECT vers FROM versions WHERE name = ?1")?;
    let existing = stmt
        .query_map(params![name], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    for e in existing {
        if let Ok(ev) = semver::Version::parse(&e) {
            if ev.major == vers.major
                && ev.minor == vers.minor
                && ev.patch == vers.patch
                && ev.pre == vers.pre
            {
                return Err(exists(name, &e));
            }
        }
    }
    Ok(())
}

pub fn exists(name: &str, vers: &str) -> ApiError {
    ApiError::conflict(format!(
        "`{name}@{vers}` already exists; published versions are immutable, bump `version` in SKILL.md"
    ))
}

/// Records a version; the first publisher of a name becomes its owner.
pub fn insert_version(conn: &mut Connection, v: &NewVersion, user: &str) -> ApiResult<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let now = now();
    if package_exists(&tx, &v.name)? {
        if !is_owner(&tx, &v.name, user)? {
            return Err(ApiError::forbidden(format!(
                "user `{user}` is not an owner of `{}`",
                v.name
            )));
        }
    } else {
        tx.execute(
            "INSERT INTO packages (name, created) VALUES (?1, ?2)",
            params![v.name, now],
        )?;
        tx.execute(
            "INSERT INTO owners (name, user) VALUES (?1, ?2)",
            params![v.name, user],
        )?;
    }
    check_clash(&tx, &v.name, &v.vers)?;
    let vers = v.vers.to_string();
    let res = tx.execute(
        "INSERT INTO versions (name, vers, cksum, yanked, description, requires, body, published)
         VALUES (?1, ?2, ?3, 0, ?4, ?5, ?6, ?7)",
        params![
            v.name,
            vers,
            v.cksum,
            v.description,
            v.requires,
            v.body,
            now
        ],
    );
    match res {
        Ok(_) => {}
        Err(rusqlite::Error::SqliteFailure(e, _)) if e.code == ErrorCode::ConstraintViolation => {
            return Err(exists(&v.name, &vers));
        }
        Err(e) => return Err(e.into()),
    }
    tx.commit()?;
    Ok(())
}

/// Newest non-yanked version of every package, for search.
pub struct SearchRow {
    pub name: String,
    pub vers: semver::Version,
    pub description: String,
    pub body: String,
}

pub fn search_rows(conn: &Connection) -> rusqlite::Result<Vec<SearchRow>> {
    let mut stmt = conn.prepare(
        "SELECT name, vers, description, body FROM versions WHERE yanked = 0 ORDER BY name",
    )?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(newest_per_name(rows))
}

/// Keeps the newest version of each name from `(name, vers, description,
/// body)` rows sorted by name.
pub fn newest_per_name(rows: Vec<(String, String, String, String)>) -> Vec<SearchRow> {
    let mut out: Vec<SearchRow> = Vec::new();
    for (name, vers, description, body) in rows {
        let Ok(vers) = semver::Version::parse(&vers) else {
            continue;
        };
        match out.last_mut() {
            Some(last) if last.name == name => {
                if vers > last.vers {
                    *last = SearchRow {
                        name,
                        vers,
                        description,
                        body,
                    };
                }
            }
            _ => out.push(SearchRow {
                name,
                vers,
                description,
                body,
            }),
        }
    }
    out
}

/// Every metadata operation a handler needs, each a whole unit of work
/// (checks and writes in one transaction), so the two implementations can
/// give the same answers under concurrency.
#[async_trait]
pub trait MetaStore: Send + Sync + 'static {
    /// Short description for start-up logs (no credentials).
    fn describe(&self) -> String;
    async fn token_user(&self, token: &str) -> ApiResult<Option<String>>;
    async fn create_token(&self, user: &str, token: &str) -> ApiResult<()>;
    async fn revoke_token(&self, token: &str) -> ApiResult<bool>;
    async fn versions(&self, name: &str) -> ApiResult<Vec<VersionRow>>;
    async fn cksum_of(&self, name: &str, vers: &str) -> ApiResult<Option<String>>;
    /// 404 unknown package or version, 403 when `user` is not an owner.
    async fn set_yanked(&self, name: &str, vers: &str, user: &str, yanked: bool) -> ApiResult<()>;
    /// 404 when the package is unknown.
    async fn owners(&self, name: &str) -> ApiResult<Vec<String>>;
    async fn add_owners(&self, name: &str, user: &str, users: &[String]) -> ApiResult<()>;
    async fn remove_owners(&self, name: &str, user: &str, users: &[String]) -> ApiResult<()>;
    /// Ownership and version clash, without writing.
    async fn precheck(&self, name: &str, vers: &semver::Version, user: &str) -> ApiResult<()>;
    /// Records a version; 409 when it (or a build-metadata twin) exists.
    async fn insert_version(&self, v: &NewVersion, user: &str) -> ApiResult<()>;
    async fn search_rows(&self) -> ApiResult<Vec<SearchRow>>;
}

#[async_trait]
impl MetaStore for Db {
    fn describe(&self) -> String {
        "sqlite".to_string()
    }
    async fn token_user(&self, token: &str) -> ApiResult<Option<String>> {
        let token = token.to_string();
        self.call(move |c| Ok(token_user(c, &token)?)).await
    }
    async fn create_token(&self, user: &str, token: &str) -> ApiResult<()> {
        let (user, token) = (user.to_string(), token.to_string());
        self.call(move |c| Ok(create_token(c, &user, &token)?))
            .await
    }
    async fn revoke_token(&self, token: &str) -> ApiResult<bool> {
        let token = token.to_string();
        self.call(move |c| Ok(revoke_token(c, &token)?)).await
    }
    async fn versions(&self, name: &str) -> ApiResult<Vec<VersionRow>> {
        let name = name.to_string();
        self.call(move |c| Ok(versions(c, &name)?)).await
    }
    async fn cksum_of(&self, name: &str, vers: &str) -> ApiResult<Option<String>> {
        let (name, vers) = (name.to_string(), vers.to_string());
        self.call(move |c| Ok(cksum_of(c, &name, &vers)?)).await
    }
    async fn set_yanked(&self, name: &str, vers: &str, user: &str, yanked: bool) -> ApiResult<()> {
        let (name, vers, user) = (name.to_string(), vers.to_string(), user.to_string());
        self.call(move |c| {
            require_owner(c, &name, &user)?;
            if !set_yanked(c, &name, &vers, yanked)? {
                return Err(no_version(&name, &vers));
            }
            Ok(())
        })
        .await
    }
    async fn owners(&self, name: &str) -> ApiResult<Vec<String>> {
        let name = name.to_string();
        self.call(move |c| {
            if !package_exists(c, &name)? {
                return Err(no_skill(&name));
            }
            Ok(owners(c, &name)?)
        })
        .await
    }
    async fn add_owners(&self, name: &str, user: &str, users: &[String]) -> ApiResult<()> {
        let (name, user, users) = (name.to_string(), user.to_string(), users.to_vec());
        self.call(move |c| {
            require_owner(c, &name, &user)?;
            for u in &users {
                if !user_exists(c, u)? {
                    return Err(no_user(u));
                }
            }
            Ok(add_owners(c, &name, &users)?)
        })
        .await
    }
    async fn remove_owners(&self, name: &str, user: &str, users: &[String]) -> ApiResult<()> {
        let (name, user, users) = (name.to_string(), user.to_string(), users.to_vec());
        self.call(move |c| {
            require_owner(c, &name, &user)?;
            remove_owners(c, &name, &users)
        })
        .await
    }
    async fn precheck(&self, name: &str, vers: &semver::Version, user: &str) -> ApiResult<()> {
        let (name, vers, user) = (name.to_string(), vers.clone(), user.to_string());
        self.call(move |c| precheck(c, &name, &vers, &user)).await
    }
    async fn insert_version(&self, v: &NewVersion, user: &str) -> ApiResult<()> {
        let (v, user) = (v.clone(), user.to_string());
        self.call(move |c| insert_version(c, &v, &user)).await
    }
    async fn search_rows(&self) -> ApiResult<Vec<SearchRow>> {
        self.call(|c| Ok(search_rows(c)?)).await
    }
}

/// Everything an embedded registry holds, for `migrate`.
pub struct Dump {
    pub packages: Vec<(String, i64)>,
    pub owners: Vec<(String, String)>,
    pub tokens: Vec<(String, String, i64, Option<i64>)>,
    pub versions: Vec<FullVersion>,
}

pub struct FullVersion {
    pub name: String,
    pub vers: String,
    pub cksum: String,
    pub yanked: bool,
    pub description: String,
    pub requires: String,
    pub body: String,
    pub published: i64,
}

pub fn dump(conn: &Connection) -> rusqlite::Result<Dump> {
    let packages = conn
        .prepare("SELECT name, created FROM packages ORDER BY name")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let owners = conn
        .prepare("SELECT name, user FROM owners ORDER BY name, user")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let tokens = conn
        .prepare("SELECT hash, user, created, revoked FROM tokens ORDER BY hash")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let versions = conn
        .prepare(
            "SELECT name, vers, cksum, yanked, description, requires, body, published
             FROM versions ORDER BY name, id",
        )?
        .query_map([], |r| {
            Ok(FullVersion {
                name: r.get(0)?,
                vers: r.get(1)?,
                cksum: r.get(2)?,
                yanked: r.get::<_, i64>(3)? != 0,
                description: r.get(4)?,
                requires: r.get(5)?,
                body: r.get(6)?,
                published: r.get(7)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(Dump {
        packages,
        owners,
        tokens,
        versions,
    })
}
