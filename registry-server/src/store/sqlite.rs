//! The embedded metadata store: SQLite in `DIR/registry.db`.
//!
//! One writer connection behind a mutex: SQLite serialises writers
//! anyway, and a single writer makes "exactly one of N concurrent
//! publishes wins" a property of the `UNIQUE(name, vers)` constraint
//! inside an immediate transaction rather than of timing. Reads go to a
//! small pool of read-only connections instead: in WAL mode they see the
//! last commit without waiting for a writer, so a slow publish (or one
//! waiting on a lock) never stalls `/index`, downloads or search. Every
//! call runs on the blocking pool, because every SQLite call may block on
//! the disk.

use super::{
    newest_listed, now, search_words, token_hash, vers_key, AuditRow, Dump, FullVersion,
    Generations, MetaStore, NewSignature, NewVersion, SearchRow, SigningRow, StoreError,
    StoreResult, TokenRow, VersionRow,
};
use crate::typosquat;
use async_trait::async_trait;
use rusqlite::{params, Connection, ErrorCode, OpenFlags, OptionalExtension, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio::sync::Semaphore;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS packages (
    name    TEXT PRIMARY KEY,
    created INTEGER NOT NULL,
    gen     INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS versions (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL REFERENCES packages(name),
    vers        TEXT NOT NULL,
    cksum       TEXT NOT NULL,
    yanked      INTEGER NOT NULL DEFAULT 0,
    description TEXT NOT NULL,
    requires    TEXT NOT NULL DEFAULT '{}',
    deps        TEXT NOT NULL DEFAULT '[]',
    body        TEXT NOT NULL DEFAULT '',
    published   INTEGER NOT NULL,
    sig_key     TEXT,
    sig         TEXT,
    audit       TEXT,
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
CREATE TABLE IF NOT EXISTS search (
    name        TEXT PRIMARY KEY REFERENCES packages(name),
    vers        TEXT,
    description TEXT NOT NULL,
    words       TEXT NOT NULL,
    audit       TEXT
);
";

/// Read-only connections; reads beyond this many wait for one.
const READERS: usize = 4;

#[derive(Clone)]
pub struct Db {
    writer: Arc<Mutex<Connection>>,
    readers: Arc<Readers>,
    gens: Arc<Generations>,
}

/// A pool of read-only connections: the semaphore counts free ones, the
/// vector holds them. One lost to a panic is reopened on demand.
struct Readers {
    path: PathBuf,
    free: Semaphore,
    conns: Mutex<Vec<Connection>>,
}

impl Readers {
    fn open_one(path: &Path) -> rusqlite::Result<Connection> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        Ok(conn)
    }
}

impl Db {
    /// Opens (creating if needed) the database file with durable settings,
    /// and fills in search entries a database from before the search
    /// table lacks.
    pub fn open(path: &Path) -> rusqlite::Result<Self> {
        let mut conn = Connection::open(path)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        // FULL: a commit that returned has reached the disk, so a publish the
        // client saw succeed survives a crash of the machine, not just of us.
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.execute_batch(SCHEMA)?;
        add_generations(&conn)?;
        add_column(&conn, "versions", "deps", "TEXT NOT NULL DEFAULT '[]'")?;
        // The registry's signature (`keys.rs`): key id and signature;
        // NULL for versions published without keys.
        add_column(&conn, "versions", "sig_key", "TEXT")?;
        add_column(&conn, "versions", "sig", "TEXT")?;
        // The audit's findings (`crate::audit`): NULL for versions
        // published before they were kept, until `rescan`; the search
        // entry carries its version's.
        add_column(&conn, "versions", "audit", "TEXT")?;
        add_column(&conn, "search", "audit", "TEXT")?;
        backfill_search(&mut conn)?;
        Ok(Db {
            gens: Arc::default(),
            writer: Arc::new(Mutex::new(conn)),
            readers: Arc::new(Readers {
                path: path.to_path_buf(),
                free: Semaphore::new(READERS),
                conns: Mutex::new(Vec::new()),
            }),
        })
    }

    /// Runs `f` on the writer connection.
    async fn call<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> StoreResult<T> + Send + 'static,
    {
        let db = self.writer.clone();
        tokio::task::spawn_blocking(move || {
            let mut conn = db.lock().map_err(|_| StoreError::Poisoned)?;
            f(&mut conn)
        })
        .await?
    }

    /// Runs `f` on a read-only connection, which never waits for the
    /// writer.
    async fn read<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    {
        let readers = self.readers.clone();
        let _slot = readers
            .free
            .acquire()
            .await
            .map_err(|_| StoreError::Poisoned)?;
        let pool = readers.clone();
        tokio::task::spawn_blocking(move || {
            let conn = match pool.conns.lock().map_err(|_| StoreError::Poisoned)?.pop() {
                Some(c) => c,
                None => Readers::open_one(&pool.path)?,
            };
            let out = f(&conn);
            if let Ok(mut conns) = pool.conns.lock() {
                conns.push(conn);
            }
            out
        })
        .await?
    }

    /// Everything this registry holds, for `migrate`.
    pub async fn dump(&self) -> StoreResult<Dump> {
        self.call(|c| Ok(dump(c)?)).await
    }
}

/// A user exists once a token was ever issued for them.
fn user_exists(conn: &Connection, user: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM tokens WHERE user = ?1)",
        params![user],
        |r| r.get(0),
    )
}

fn package_exists(conn: &Connection, name: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM packages WHERE name = ?1)",
        params![name],
        |r| r.get(0),
    )
}

fn is_owner(conn: &Connection, name: &str, user: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM owners WHERE name = ?1 AND user = ?2)",
        params![name, user],
        |r| r.get(0),
    )
}

/// `NoSkill` before `NotOwner`, so a stranger learns only that the name is
/// taken, which the index shows anyway.
fn require_owner(conn: &Connection, name: &str, user: &str) -> StoreResult<()> {
    if !package_exists(conn, name)? {
        return Err(StoreError::NoSkill(name.to_string()));
    }
    if !is_owner(conn, name, user)? {
        return Err(StoreError::not_owner(name, user));
    }
    Ok(())
}

/// Ownership and version clash, shared by the precheck and the insert so
/// both refuse the same uploads.
fn check_publish(
    conn: &Connection,
    name: &str,
    vers: &semver::Version,
    user: &str,
) -> StoreResult<()> {
    if package_exists(conn, name)? {
        if !is_owner(conn, name, user)? {
            return Err(StoreError::not_owner(name, user));
        }
    } else {
        guard_new_name(conn, name, user)?;
    }
    let key = vers_key(vers);
    let mut stmt = conn.prepare("SELECT vers FROM versions WHERE name = ?1")?;
    let existing = stmt
        .query_map(params![name], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    for e in existing {
        if semver::Version::parse(&e).is_ok_and(|ev| vers_key(&ev) == key) {
            return Err(StoreError::version_exists(name, &e));
        }
    }
    Ok(())
}

/// The typosquat guard for a name not yet taken.
fn guard_new_name(conn: &Connection, name: &str, user: &str) -> StoreResult<()> {
    let mut stmt = conn.prepare(
        "SELECT p.name, EXISTS (SELECT 1 FROM owners o WHERE o.name = p.name AND o.user = ?1)
         FROM packages p ORDER BY p.name",
    )?;
    let names = stmt
        .query_map(params![user], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<Vec<(String, bool)>>>()?;
    match typosquat::clash(name, names) {
        Some(existing) => Err(StoreError::Confusable {
            name: name.to_string(),
            existing,
        }),
        None => Ok(()),
    }
}

/// Rewrites `name`'s search entry from its newest listed version.
fn refresh_search(conn: &Connection, name: &str) -> rusqlite::Result<()> {
    let rows = conn
        .prepare("SELECT vers, yanked FROM versions WHERE name = ?1")?
        .query_map(params![name], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? != 0)))?
        .collect::<rusqlite::Result<Vec<(String, bool)>>>()?;
    let (vers, description, words, audit) = match newest_listed(&rows) {
        Some(v) => {
            let (description, body, audit): (String, String, Option<String>) = conn.query_row(
                "SELECT description, body, audit FROM versions WHERE name = ?1 AND vers = ?2",
                params![name, v],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )?;
            (Some(v), description, search_words(&body), audit)
        }
        None => (None, String::new(), String::new(), None),
    };
    conn.execute(
        "INSERT INTO search (name, vers, description, words, audit) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (name) DO UPDATE SET
           vers = excluded.vers, description = excluded.description, words = excluded.words,
           audit = excluded.audit",
        params![name, vers, description, words, audit],
    )?;
    Ok(())
}

/// The index generation column (see `generations.rs`), added to a
/// database from before it.
fn add_generations(conn: &Connection) -> rusqlite::Result<()> {
    add_column(conn, "packages", "gen", "INTEGER NOT NULL DEFAULT 0")?;
    conn.execute_batch("CREATE INDEX IF NOT EXISTS packages_gen ON packages (gen)")
}

/// Adds `column` to `table` of a database from before it: `SCHEMA`'s
/// `CREATE TABLE IF NOT EXISTS` leaves an existing table as it was.
/// Only ever called with this file's constants.
fn add_column(conn: &Connection, table: &str, column: &str, decl: &str) -> rusqlite::Result<()> {
    let has: bool = conn.query_row(
        "SELECT COUNT(*) > 0 FROM pragma_table_info(?1) WHERE name = ?2",
        params![table, column],
        |r| r.get(0),
    )?;
    if !has {
        conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {decl}"))?;
    }
    Ok(())
}

/// Raises `name`'s index generation above every other (the caller holds
/// the write transaction, so numbers follow commit order).
fn bump_generation(conn: &Connection, name: &str) -> rusqlite::Result<i64> {
    let gen: i64 = conn.query_row("SELECT COALESCE(MAX(gen), 0) + 1 FROM packages", [], |r| {
        r.get(0)
    })?;
    conn.execute(
        "UPDATE packages SET gen = ?2 WHERE name = ?1",
        params![name, gen],
    )?;
    Ok(gen)
}

/// Search entries for packages that have none (a database from before
/// the search table).
fn backfill_search(conn: &mut Connection) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let missing = tx
        .prepare("SELECT name FROM packages WHERE name NOT IN (SELECT name FROM search)")?
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    for name in missing {
        refresh_search(&tx, &name)?;
    }
    tx.commit()
}

/// Records a version; the first publisher of a name becomes its owner.
fn insert_version(conn: &mut Connection, v: &NewVersion, user: &str) -> StoreResult<i64> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let now = now();
    check_publish(&tx, &v.name, &v.vers, user)?;
    if !package_exists(&tx, &v.name)? {
        tx.execute(
            "INSERT INTO packages (name, created) VALUES (?1, ?2)",
            params![v.name, now],
        )?;
        tx.execute(
            "INSERT INTO owners (name, user) VALUES (?1, ?2)",
            params![v.name, user],
        )?;
    }
    let vers = v.vers.to_string();
    let res = tx.execute(
        "INSERT INTO versions
           (name, vers, cksum, yanked, description, requires, deps, body, published, sig_key,
            sig, audit)
         VALUES (?1, ?2, ?3, 0, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            v.name,
            vers,
            v.cksum,
            v.description,
            v.requires,
            v.deps,
            v.body,
            now,
            v.sig_key,
            v.sig,
            v.audit
        ],
    );
    match res {
        Ok(_) => {}
        Err(rusqlite::Error::SqliteFailure(e, _)) if e.code == ErrorCode::ConstraintViolation => {
            return Err(StoreError::version_exists(&v.name, &vers));
        }
        Err(e) => return Err(e.into()),
    }
    refresh_search(&tx, &v.name)?;
    let gen = bump_generation(&tx, &v.name)?;
    tx.commit()?;
    Ok(gen)
}

/// Removes owners unless that would leave the package without one.
fn remove_owners(conn: &mut Connection, name: &str, users: &[String]) -> StoreResult<i64> {
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
        return Err(StoreError::LastOwner(name.to_string()));
    }
    let gen = bump_generation(&tx, name)?;
    tx.commit()?;
    Ok(gen)
}

fn add_owners(conn: &mut Connection, name: &str, users: &[String]) -> rusqlite::Result<i64> {
    let tx = conn.transaction()?;
    for u in users {
        tx.execute(
            "INSERT OR IGNORE INTO owners (name, user) VALUES (?1, ?2)",
            params![name, u],
        )?;
    }
    let gen = bump_generation(&tx, name)?;
    tx.commit()?;
    Ok(gen)
}

fn owners(conn: &Connection, name: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare("SELECT user FROM owners WHERE name = ?1 ORDER BY user")?;
    let rows = stmt.query_map(params![name], |r| r.get(0))?;
    rows.collect()
}

fn versions(conn: &Connection, name: &str) -> rusqlite::Result<Vec<VersionRow>> {
    let mut stmt = conn.prepare(
        "SELECT vers, cksum, yanked, description, requires, deps, published, sig_key, sig, audit
         FROM versions WHERE name = ?1",
    )?;
    let rows = stmt.query_map(params![name], |r| {
        Ok(VersionRow {
            vers: r.get(0)?,
            cksum: r.get(1)?,
            yanked: r.get::<_, i64>(2)? != 0,
            description: r.get(3)?,
            requires: r.get(4)?,
            deps: r.get(5)?,
            published: r.get(6)?,
            sig_key: r.get(7)?,
            sig: r.get(8)?,
            audit: r.get(9)?,
        })
    })?;
    rows.collect()
}

fn search_rows(conn: &Connection) -> rusqlite::Result<Vec<SearchRow>> {
    let mut stmt = conn.prepare(
        "SELECT name, vers, description, words, audit FROM search WHERE vers IS NOT NULL
         ORDER BY name",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (name, vers, description, words, audit) = row?;
        if let Ok(vers) = semver::Version::parse(&vers) {
            out.push(SearchRow {
                name,
                vers,
                description,
                words,
                audit,
            });
        }
    }
    Ok(out)
}

fn tokens(conn: &Connection) -> rusqlite::Result<Vec<TokenRow>> {
    conn.prepare("SELECT hash, user, created, revoked FROM tokens ORDER BY created, user")?
        .query_map([], |r| {
            Ok(TokenRow {
                hash: r.get(0)?,
                user: r.get(1)?,
                created: r.get(2)?,
                revoked: r.get(3)?,
            })
        })?
        .collect()
}

#[async_trait]
impl MetaStore for Db {
    fn describe(&self) -> String {
        "sqlite".to_string()
    }

    async fn token_user(&self, token: &str) -> StoreResult<Option<String>> {
        let hash = token_hash(token);
        self.read(move |c| {
            Ok(c.query_row(
                "SELECT user FROM tokens WHERE hash = ?1 AND revoked IS NULL",
                params![hash],
                |r| r.get(0),
            )
            .optional()?)
        })
        .await
    }

    async fn create_token(&self, user: &str, token: &str) -> StoreResult<()> {
        let (user, hash) = (user.to_string(), token_hash(token));
        self.call(move |c| {
            c.execute(
                "INSERT INTO tokens (hash, user, created) VALUES (?1, ?2, ?3)",
                params![hash, user, now()],
            )?;
            Ok(())
        })
        .await
    }

    async fn revoke_token(&self, token: &str) -> StoreResult<bool> {
        let hash = token_hash(token);
        self.call(move |c| {
            let n = c.execute(
                "UPDATE tokens SET revoked = ?2 WHERE hash = ?1 AND revoked IS NULL",
                params![hash, now()],
            )?;
            Ok(n > 0)
        })
        .await
    }

    async fn tokens(&self) -> StoreResult<Vec<TokenRow>> {
        self.read(|c| Ok(tokens(c)?)).await
    }

    async fn cksum_of(&self, name: &str, vers: &str) -> StoreResult<Option<String>> {
        let (name, vers) = (name.to_string(), vers.to_string());
        self.read(move |c| {
            Ok(c.query_row(
                "SELECT cksum FROM versions WHERE name = ?1 AND vers = ?2",
                params![name, vers],
                |r| r.get(0),
            )
            .optional()?)
        })
        .await
    }

    async fn set_yanked(&self, name: &str, vers: &str, user: &str, yank: bool) -> StoreResult<()> {
        let (name, vers, user) = (name.to_string(), vers.to_string(), user.to_string());
        self.call(move |c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            require_owner(&tx, &name, &user)?;
            let n = tx.execute(
                "UPDATE versions SET yanked = ?3 WHERE name = ?1 AND vers = ?2",
                params![name, vers, yank as i64],
            )?;
            if n == 0 {
                return Err(StoreError::no_version(&name, &vers));
            }
            refresh_search(&tx, &name)?;
            let gen = bump_generation(&tx, &name)?;
            tx.commit()?;
            Ok((name, gen))
        })
        .await
        .map(|(name, gen)| self.gens.saw(&name, gen))
    }

    async fn owners(&self, name: &str) -> StoreResult<Vec<String>> {
        let name = name.to_string();
        self.read(move |c| {
            if !package_exists(c, &name)? {
                return Err(StoreError::NoSkill(name));
            }
            Ok(owners(c, &name)?)
        })
        .await
    }

    async fn add_owners(&self, name: &str, user: &str, users: &[String]) -> StoreResult<()> {
        let (name, user, users) = (name.to_string(), user.to_string(), users.to_vec());
        self.call(move |c| {
            require_owner(c, &name, &user)?;
            for u in &users {
                if !user_exists(c, u)? {
                    return Err(StoreError::NoUser(u.clone()));
                }
            }
            Ok((add_owners(c, &name, &users)?, name))
        })
        .await
        .map(|(gen, name)| self.gens.saw(&name, gen))
    }

    async fn remove_owners(&self, name: &str, user: &str, users: &[String]) -> StoreResult<()> {
        let (name, user, users) = (name.to_string(), user.to_string(), users.to_vec());
        self.call(move |c| {
            require_owner(c, &name, &user)?;
            Ok((remove_owners(c, &name, &users)?, name))
        })
        .await
        .map(|(gen, name)| self.gens.saw(&name, gen))
    }

    async fn precheck(&self, name: &str, vers: &semver::Version, user: &str) -> StoreResult<()> {
        let (name, vers, user) = (name.to_string(), vers.clone(), user.to_string());
        self.read(move |c| check_publish(c, &name, &vers, &user))
            .await
    }

    async fn insert_version(&self, v: &NewVersion, user: &str) -> StoreResult<()> {
        let (v, user) = (v.clone(), user.to_string());
        let name = v.name.clone();
        let gen = self.call(move |c| insert_version(c, &v, &user)).await?;
        self.gens.saw(&name, gen);
        Ok(())
    }

    async fn index_rows(&self, name: &str) -> StoreResult<(i64, Vec<VersionRow>)> {
        let name = name.to_string();
        self.read(move |c| {
            // One read transaction: the generation and the rows agree.
            let tx = c.unchecked_transaction()?;
            let gen = tx
                .query_row(
                    "SELECT gen FROM packages WHERE name = ?1",
                    params![name],
                    |r| r.get(0),
                )
                .optional()?
                .unwrap_or(0);
            let rows = versions(&tx, &name)?;
            Ok((gen, rows))
        })
        .await
    }

    async fn changed_since(&self, gen: i64) -> StoreResult<Vec<(String, i64)>> {
        self.read(move |c| {
            let mut stmt = c.prepare_cached("SELECT name, gen FROM packages WHERE gen > ?1")?;
            let rows = stmt.query_map(params![gen], |r| Ok((r.get(0)?, r.get(1)?)))?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
        .await
    }

    async fn max_generation(&self) -> StoreResult<i64> {
        self.read(|c| {
            Ok(
                c.query_row("SELECT COALESCE(MAX(gen), 0) FROM packages", [], |r| {
                    r.get(0)
                })?,
            )
        })
        .await
    }

    fn generations(&self) -> &Generations {
        &self.gens
    }

    async fn search_rows(&self) -> StoreResult<Vec<SearchRow>> {
        self.read(|c| Ok(search_rows(c)?)).await
    }

    async fn signing_rows(&self) -> StoreResult<Vec<SigningRow>> {
        self.read(|c| {
            let mut stmt = c.prepare(
                "SELECT name, vers, cksum, deps, sig_key, sig FROM versions ORDER BY name, id",
            )?;
            let rows = stmt.query_map([], |r| {
                Ok(SigningRow {
                    name: r.get(0)?,
                    vers: r.get(1)?,
                    cksum: r.get(2)?,
                    deps: r.get(3)?,
                    sig_key: r.get(4)?,
                    sig: r.get(5)?,
                })
            })?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
        .await
    }

    async fn set_signatures(&self, name: &str, sigs: &[NewSignature]) -> StoreResult<()> {
        let name = name.to_string();
        let sigs: Vec<(String, String, String)> = sigs
            .iter()
            .map(|s| (s.vers.clone(), s.keyid.clone(), s.sig.clone()))
            .collect();
        let gen = self
            .call({
                let name = name.clone();
                move |c| {
                    let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
                    for (vers, keyid, sig) in &sigs {
                        let n = tx.execute(
                            "UPDATE versions SET sig_key = ?3, sig = ?4 WHERE name = ?1 AND vers = ?2",
                            params![name, vers, keyid, sig],
                        )?;
                        if n == 0 {
                            return Err(StoreError::no_version(&name, vers));
                        }
                    }
                    let gen = bump_generation(&tx, &name)?;
                    tx.commit()?;
                    Ok(gen)
                }
            })
            .await?;
        self.gens.saw(&name, gen);
        Ok(())
    }

    async fn audit_rows(&self) -> StoreResult<Vec<AuditRow>> {
        self.read(|c| {
            let mut stmt =
                c.prepare("SELECT name, vers, cksum, audit FROM versions ORDER BY name, id")?;
            let rows = stmt.query_map([], |r| {
                Ok(AuditRow {
                    name: r.get(0)?,
                    vers: r.get(1)?,
                    cksum: r.get(2)?,
                    audit: r.get(3)?,
                })
            })?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
        .await
    }

    async fn set_audits(&self, name: &str, audits: &[(String, String)]) -> StoreResult<()> {
        let name = name.to_string();
        let audits = audits.to_vec();
        let gen = self
            .call({
                let name = name.clone();
                move |c| {
                    let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
                    for (vers, audit) in &audits {
                        let n = tx.execute(
                            "UPDATE versions SET audit = ?3 WHERE name = ?1 AND vers = ?2",
                            params![name, vers, audit],
                        )?;
                        if n == 0 {
                            return Err(StoreError::no_version(&name, vers));
                        }
                    }
                    refresh_search(&tx, &name)?;
                    let gen = bump_generation(&tx, &name)?;
                    tx.commit()?;
                    Ok(gen)
                }
            })
            .await?;
        self.gens.saw(&name, gen);
        Ok(())
    }
}

fn dump(conn: &Connection) -> rusqlite::Result<Dump> {
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
            "SELECT name, vers, cksum, yanked, description, requires, deps, body, published,
                    sig_key, sig, audit
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
                deps: r.get(6)?,
                body: r.get(7)?,
                published: r.get(8)?,
                sig_key: r.get(9)?,
                sig: r.get(10)?,
                audit: r.get(11)?,
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

#[cfg(test)]
mod tests;
