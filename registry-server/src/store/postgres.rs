//! PostgreSQL metadata store, for several stateless replicas sharing one
//! database.
//!
//! Correctness across replicas rests on the database, not on timing:
//! `UNIQUE (name, vers)` and `UNIQUE (name, vers_key)` (the version without
//! build metadata) make exactly one of N concurrent publishes of a version
//! commit; `INSERT ... ON CONFLICT DO NOTHING` on `packages` waits for a
//! concurrent first publish of the same name, so its owner is settled
//! before anyone else's ownership is checked. Schema migrations run at
//! start-up under `pg_advisory_lock`, so replicas starting together apply
//! each migration once.

use super::{
    newest_listed, now, search_words, token_hash, vers_key, AuditRow, Dump, Generations, MetaStore,
    NewSignature, NewVersion, SearchRow, SigningRow, StoreError, StoreResult, TokenRow, VersionRow,
};
use crate::typosquat;
use anyhow::Context;
use async_trait::async_trait;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::error::SqlState;
use tokio_postgres::{GenericClient, Transaction};

mod schema;
mod tls;

/// Advisory lock held by a first publish while it checks and takes a new
/// name, so two replicas cannot each admit one of two look-alike names
/// ("skillpm-new" in ASCII, shifted).
const NEW_NAME_LOCK: i64 = 0x736b_696c_6c6e_6577;

/// Advisory lock held from taking an index generation until commit, so
/// generations are committed in the order they are taken and a replica
/// polling `gen > watermark` misses none ("skillpm-gen" in ASCII, shifted).
const GENERATION_LOCK: i64 = 0x736b_696c_6c67_656e;

pub struct PgStore {
    pool: Pool,
    desc: String,
    gens: Generations,
}

/// `postgres://user@host:port/db` without password or query, for logs.
fn describe(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            let _ = u.set_password(None);
            u.set_query(None);
            u.to_string()
        }
        Err(_) => "postgres".to_string(),
    }
}

impl PgStore {
    /// Connects and brings the schema up to date.
    pub async fn connect(url: &str) -> anyhow::Result<Self> {
        let (cfg, tls) = tls::connect_config(url)?;
        let mgr = Manager::from_config(
            cfg,
            tls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(mgr)
            .max_size(16)
            .build()
            .context("cannot build the connection pool")?;
        let store = PgStore {
            pool,
            desc: describe(url),
            gens: Generations::default(),
        };
        schema::migrate(&store.pool)
            .await
            .with_context(|| format!("cannot prepare the schema in {}", store.desc))?;
        store
            .backfill_search()
            .await
            .with_context(|| format!("cannot build the search entries in {}", store.desc))?;
        Ok(store)
    }

    /// Creates the database `url` names when the server says it does not
    /// exist, through the same server's `postgres` database with the same
    /// credentials. Returns whether it created it; when it cannot, the
    /// error says in one line how to create it by hand.
    pub async fn create_database_if_missing(url: &str) -> anyhow::Result<bool> {
        let (cfg, tls) = tls::connect_config(url)?;
        let Some(db) = cfg.get_dbname().map(str::to_string) else {
            return Ok(false);
        };
        match cfg.connect(tls.clone()).await {
            Ok(_) => return Ok(false),
            Err(e) if e.code() == Some(&SqlState::INVALID_CATALOG_NAME) => {}
            Err(e) => {
                return Err(
                    anyhow::Error::new(e).context(format!("cannot connect to {}", describe(url)))
                )
            }
        }
        let how = format!(
            "create it first, e.g. `createdb {}` or `CREATE DATABASE {};` as a user allowed to",
            shell_word(&db),
            quote_ident(&db)
        );
        let mut admin = cfg.clone();
        admin.dbname("postgres");
        let (client, conn) = admin.connect(tls).await.map_err(|e| {
            anyhow::anyhow!("database {db:?} does not exist and the server's `postgres` database is not reachable to create it ({e}); {how}")
        })?;
        let task = tokio::spawn(conn);
        let res = client
            .batch_execute(&format!("CREATE DATABASE {}", quote_ident(&db)))
            .await;
        drop(client);
        let _ = task.await;
        match res {
            Ok(()) => Ok(true),
            Err(e) if e.code() == Some(&SqlState::DUPLICATE_DATABASE) => Ok(false),
            Err(e) => {
                let why = e
                    .as_db_error()
                    .map(|d| d.message().to_string())
                    .unwrap_or_else(|| e.to_string());
                anyhow::bail!("database {db:?} does not exist and cannot be created ({why}); {how}")
            }
        }
    }

    /// Search entries for packages that have none (a database from before
    /// migration 2). Each in its own transaction, so replicas starting
    /// together at worst compute one twice.
    async fn backfill_search(&self) -> StoreResult<()> {
        let mut client = self.pool.get().await?;
        let missing: Vec<String> = client
            .query(
                "SELECT name FROM packages WHERE name NOT IN (SELECT name FROM search)",
                &[],
            )
            .await?
            .into_iter()
            .map(|r| r.get(0))
            .collect();
        for name in missing {
            let tx = client.transaction().await?;
            refresh_search(&tx, &name).await?;
            tx.commit().await?;
        }
        Ok(())
    }

    /// Copies an embedded registry's rows in one transaction. Idempotent:
    /// rows already present are kept, but a version present with another
    /// checksum is an error and nothing is written. Returns how many
    /// versions were new.
    pub async fn import(&self, d: &Dump) -> anyhow::Result<usize> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        for (name, created) in &d.packages {
            tx.execute(
                "INSERT INTO packages (name, created) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                &[name, created],
            )
            .await?;
        }
        for (name, login) in &d.owners {
            tx.execute(
                "INSERT INTO owners (name, login) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                &[name, login],
            )
            .await?;
        }
        for (hash, login, created, revoked) in &d.tokens {
            tx.execute(
                "INSERT INTO tokens (hash, login, created, revoked) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (hash) DO UPDATE SET revoked = COALESCE(tokens.revoked, EXCLUDED.revoked)",
                &[hash, login, created, revoked],
            )
            .await?;
        }
        let insert = tx
            .prepare(
                "INSERT INTO versions
                   (name, vers, vers_key, cksum, yanked, description, requires, deps, body,
                    published, sig_key, sig, audit)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
                 ON CONFLICT DO NOTHING",
            )
            .await?;
        let check = tx
            .prepare("SELECT cksum FROM versions WHERE name = $1 AND vers = $2")
            .await?;
        let mut new = 0;
        for v in &d.versions {
            let parsed = semver::Version::parse(&v.vers)
                .with_context(|| format!("{}@{}: not a semver version", v.name, v.vers))?;
            new += tx
                .execute(
                    &insert,
                    &[
                        &v.name,
                        &v.vers,
                        &vers_key(&parsed),
                        &v.cksum,
                        &v.yanked,
                        &v.description,
                        &v.requires,
                        &v.deps,
                        &v.body,
                        &v.published,
                        &v.sig_key,
                        &v.sig,
                        &v.audit,
                    ],
                )
                .await? as usize;
            let have: Option<String> = tx
                .query_opt(&check, &[&v.name, &v.vers])
                .await?
                .map(|r| r.get(0));
            match have {
                Some(c) if c == v.cksum => {}
                Some(c) => anyhow::bail!(
                    "{}@{} already exists in the target with checksum {c}, not {}; nothing was written",
                    v.name,
                    v.vers,
                    v.cksum
                ),
                None => anyhow::bail!(
                    "{}@{} clashes with another build of the same version in the target; nothing was written",
                    v.name,
                    v.vers
                ),
            }
        }
        for (name, _) in &d.packages {
            refresh_search(&tx, name).await?;
        }
        tx.commit().await?;
        Ok(new)
    }
}

/// `name` as a PostgreSQL identifier.
fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `name` as one shell word, for the hint printed when it cannot be
/// created.
fn shell_word(name: &str) -> String {
    if name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
    {
        name.to_string()
    } else {
        format!("'{}'", name.replace('\'', "'\\''"))
    }
}

/// The typosquat guard for a name not yet taken.
async fn guard_new_name<C: GenericClient + Sync>(c: &C, name: &str, user: &str) -> StoreResult<()> {
    let names = c
        .query(
            "SELECT p.name, EXISTS (SELECT 1 FROM owners o WHERE o.name = p.name AND o.login = $1)
             FROM packages p ORDER BY p.name",
            &[&user],
        )
        .await?
        .into_iter()
        .map(|r| (r.get(0), r.get(1)));
    match typosquat::clash(name, names) {
        Some(existing) => Err(StoreError::Confusable {
            name: name.to_string(),
            existing,
        }),
        None => Ok(()),
    }
}

/// Rewrites `name`'s search entry from its newest listed version.
async fn refresh_search(t: &Transaction<'_>, name: &str) -> StoreResult<()> {
    let rows: Vec<(String, bool)> = t
        .query(
            "SELECT vers, yanked FROM versions WHERE name = $1",
            &[&name],
        )
        .await?
        .into_iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let (vers, description, words, audit) = match newest_listed(&rows) {
        Some(v) => {
            let r = t
                .query_one(
                    "SELECT description, body, audit FROM versions WHERE name = $1 AND vers = $2",
                    &[&name, &v],
                )
                .await?;
            let body: String = r.get(1);
            let audit: Option<String> = r.get(2);
            (Some(v), r.get::<_, String>(0), search_words(&body), audit)
        }
        None => (None, String::new(), String::new(), None),
    };
    t.execute(
        "INSERT INTO search (name, vers, description, words, audit) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (name) DO UPDATE SET
           vers = EXCLUDED.vers, description = EXCLUDED.description, words = EXCLUDED.words,
           audit = EXCLUDED.audit",
        &[&name, &vers, &description, &words, &audit],
    )
    .await?;
    Ok(())
}

/// Raises `name`'s index generation above every other committed one.
/// The package row is locked first and the generation lock second, the
/// order every writer takes them in, so two writers never wait on each
/// other in a cycle. (`NO KEY UPDATE`, as the `UPDATE` itself would take:
/// it does not conflict with the key-share locks that inserting a version
/// of the same package holds through its foreign key.)
async fn bump_generation(t: &Transaction<'_>, name: &str) -> StoreResult<i64> {
    t.execute(
        "SELECT 1 FROM packages WHERE name = $1 FOR NO KEY UPDATE",
        &[&name],
    )
    .await?;
    t.execute("SELECT pg_advisory_xact_lock($1)", &[&GENERATION_LOCK])
        .await?;
    Ok(t.query_one(
        "UPDATE packages SET gen = (SELECT COALESCE(MAX(gen), 0) + 1 FROM packages)
             WHERE name = $1 RETURNING gen",
        &[&name],
    )
    .await?
    .get(0))
}

async fn package_exists<C: GenericClient + Sync>(c: &C, name: &str) -> StoreResult<bool> {
    Ok(c.query_one(
        "SELECT EXISTS (SELECT 1 FROM packages WHERE name = $1)",
        &[&name],
    )
    .await?
    .get(0))
}

async fn is_owner<C: GenericClient + Sync>(c: &C, name: &str, user: &str) -> StoreResult<bool> {
    Ok(c.query_one(
        "SELECT EXISTS (SELECT 1 FROM owners WHERE name = $1 AND login = $2)",
        &[&name, &user],
    )
    .await?
    .get(0))
}

async fn require_owner<C: GenericClient + Sync>(c: &C, name: &str, user: &str) -> StoreResult<()> {
    if !package_exists(c, name).await? {
        return Err(StoreError::NoSkill(name.to_string()));
    }
    if !is_owner(c, name, user).await? {
        return Err(StoreError::not_owner(name, user));
    }
    Ok(())
}

#[async_trait]
impl MetaStore for PgStore {
    fn describe(&self) -> String {
        self.desc.clone()
    }

    async fn token_user(&self, token: &str) -> StoreResult<Option<String>> {
        let c = self.pool.get().await?;
        let st = c
            .prepare_cached("SELECT login FROM tokens WHERE hash = $1 AND revoked IS NULL")
            .await?;
        Ok(c.query_opt(&st, &[&token_hash(token)])
            .await?
            .map(|r| r.get(0)))
    }

    async fn create_token(&self, user: &str, token: &str) -> StoreResult<()> {
        let c = self.pool.get().await?;
        c.execute(
            "INSERT INTO tokens (hash, login, created) VALUES ($1, $2, $3)",
            &[&token_hash(token), &user, &now()],
        )
        .await?;
        Ok(())
    }

    async fn revoke_token(&self, token: &str) -> StoreResult<bool> {
        let c = self.pool.get().await?;
        let n = c
            .execute(
                "UPDATE tokens SET revoked = $2 WHERE hash = $1 AND revoked IS NULL",
                &[&token_hash(token), &now()],
            )
            .await?;
        Ok(n > 0)
    }

    async fn tokens(&self) -> StoreResult<Vec<TokenRow>> {
        let c = self.pool.get().await?;
        Ok(c.query(
            "SELECT hash, login, created, revoked FROM tokens ORDER BY created, login",
            &[],
        )
        .await?
        .into_iter()
        .map(|r| TokenRow {
            hash: r.get(0),
            user: r.get(1),
            created: r.get(2),
            revoked: r.get(3),
        })
        .collect())
    }

    async fn cksum_of(&self, name: &str, vers: &str) -> StoreResult<Option<String>> {
        let c = self.pool.get().await?;
        let st = c
            .prepare_cached("SELECT cksum FROM versions WHERE name = $1 AND vers = $2")
            .await?;
        Ok(c.query_opt(&st, &[&name, &vers]).await?.map(|r| r.get(0)))
    }

    async fn set_yanked(&self, name: &str, vers: &str, user: &str, yank: bool) -> StoreResult<()> {
        let mut c = self.pool.get().await?;
        let tx = c.transaction().await?;
        let t: &tokio_postgres::Transaction = &tx;
        require_owner(t, name, user).await?;
        let n = t
            .execute(
                "UPDATE versions SET yanked = $3 WHERE name = $1 AND vers = $2",
                &[&name, &vers, &yank],
            )
            .await?;
        if n == 0 {
            return Err(StoreError::no_version(name, vers));
        }
        refresh_search(&tx, name).await?;
        let gen = bump_generation(&tx, name).await?;
        tx.commit().await?;
        self.gens.saw(name, gen);
        Ok(())
    }

    async fn owners(&self, name: &str) -> StoreResult<Vec<String>> {
        let c = self.pool.get().await?;
        let c: &tokio_postgres::Client = &c;
        if !package_exists(c, name).await? {
            return Err(StoreError::NoSkill(name.to_string()));
        }
        Ok(c.query(
            "SELECT login FROM owners WHERE name = $1 ORDER BY login",
            &[&name],
        )
        .await?
        .into_iter()
        .map(|r| r.get(0))
        .collect())
    }

    async fn add_owners(&self, name: &str, user: &str, users: &[String]) -> StoreResult<()> {
        let mut c = self.pool.get().await?;
        let tx = c.transaction().await?;
        let t: &tokio_postgres::Transaction = &tx;
        require_owner(t, name, user).await?;
        for u in users {
            let known: bool = t
                .query_one(
                    "SELECT EXISTS (SELECT 1 FROM tokens WHERE login = $1)",
                    &[u],
                )
                .await?
                .get(0);
            if !known {
                return Err(StoreError::NoUser(u.clone()));
            }
            t.execute(
                "INSERT INTO owners (name, login) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                &[&name, u],
            )
            .await?;
        }
        let gen = bump_generation(&tx, name).await?;
        tx.commit().await?;
        self.gens.saw(name, gen);
        Ok(())
    }

    async fn remove_owners(&self, name: &str, user: &str, users: &[String]) -> StoreResult<()> {
        let mut c = self.pool.get().await?;
        let tx = c.transaction().await?;
        let t: &tokio_postgres::Transaction = &tx;
        // Serialises owner changes of one package across replicas.
        t.execute(
            "SELECT 1 FROM packages WHERE name = $1 FOR UPDATE",
            &[&name],
        )
        .await?;
        require_owner(t, name, user).await?;
        for u in users {
            t.execute(
                "DELETE FROM owners WHERE name = $1 AND login = $2",
                &[&name, u],
            )
            .await?;
        }
        let left: i64 = t
            .query_one("SELECT COUNT(*) FROM owners WHERE name = $1", &[&name])
            .await?
            .get(0);
        if left == 0 {
            // Dropping the transaction rolls the deletes back.
            return Err(StoreError::LastOwner(name.to_string()));
        }
        let gen = bump_generation(&tx, name).await?;
        tx.commit().await?;
        self.gens.saw(name, gen);
        Ok(())
    }

    async fn precheck(&self, name: &str, vers: &semver::Version, user: &str) -> StoreResult<()> {
        let c = self.pool.get().await?;
        let c: &tokio_postgres::Client = &c;
        if package_exists(c, name).await? {
            if !is_owner(c, name, user).await? {
                return Err(StoreError::not_owner(name, user));
            }
        } else {
            guard_new_name(c, name, user).await?;
        }
        if let Some(r) = c
            .query_opt(
                "SELECT vers FROM versions WHERE name = $1 AND vers_key = $2",
                &[&name, &vers_key(vers)],
            )
            .await?
        {
            return Err(StoreError::version_exists(name, r.get(0)));
        }
        Ok(())
    }

    async fn insert_version(&self, v: &NewVersion, user: &str) -> StoreResult<()> {
        let mut c = self.pool.get().await?;
        let tx = c.transaction().await?;
        let t: &tokio_postgres::Transaction = &tx;
        let now = now();
        if !package_exists(t, &v.name).await? {
            // Serialises first publishes across replicas, so each sees the
            // names the others took before choosing its own.
            t.execute("SELECT pg_advisory_xact_lock($1)", &[&NEW_NAME_LOCK])
                .await?;
            if !package_exists(t, &v.name).await? {
                guard_new_name(t, &v.name, user).await?;
            }
        }
        // Waits for a concurrent first publish of this name to finish.
        let created = t
            .execute(
                "INSERT INTO packages (name, created) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                &[&v.name, &now],
            )
            .await?
            == 1;
        if created {
            t.execute(
                "INSERT INTO owners (name, login) VALUES ($1, $2)",
                &[&v.name, &user],
            )
            .await?;
        } else if !is_owner(t, &v.name, user).await? {
            return Err(StoreError::not_owner(&v.name, user));
        }
        let vers = v.vers.to_string();
        let res = t
            .execute(
                "INSERT INTO versions
                   (name, vers, vers_key, cksum, yanked, description, requires, deps, body,
                    published, sig_key, sig, audit)
                 VALUES ($1, $2, $3, $4, FALSE, $5, $6, $7, $8, $9, $10, $11, $12)",
                &[
                    &v.name,
                    &vers,
                    &vers_key(&v.vers),
                    &v.cksum,
                    &v.description,
                    &v.requires,
                    &v.deps,
                    &v.body,
                    &now,
                    &v.sig_key,
                    &v.sig,
                    &v.audit,
                ],
            )
            .await;
        match res {
            Ok(_) => {}
            Err(e) if e.code() == Some(&SqlState::UNIQUE_VIOLATION) => {
                return Err(StoreError::version_exists(&v.name, &vers));
            }
            Err(e) => return Err(e.into()),
        }
        refresh_search(&tx, &v.name).await?;
        let gen = bump_generation(&tx, &v.name).await?;
        tx.commit().await?;
        self.gens.saw(&v.name, gen);
        Ok(())
    }

    async fn index_rows(&self, name: &str) -> StoreResult<(i64, Vec<VersionRow>)> {
        let c = self.pool.get().await?;
        // One statement, one snapshot: the generation and the rows agree.
        let st = c
            .prepare_cached(
                "SELECT p.gen, v.vers, v.cksum, v.yanked, v.description, v.requires, v.deps,
                        v.published, v.sig_key, v.sig, v.audit
                 FROM packages p JOIN versions v ON v.name = p.name WHERE p.name = $1",
            )
            .await?;
        let rows = c.query(&st, &[&name]).await?;
        let gen = rows.first().map_or(0, |r| r.get(0));
        Ok((
            gen,
            rows.into_iter()
                .map(|r| VersionRow {
                    vers: r.get(1),
                    cksum: r.get(2),
                    yanked: r.get(3),
                    description: r.get(4),
                    requires: r.get(5),
                    deps: r.get(6),
                    published: r.get(7),
                    sig_key: r.get(8),
                    sig: r.get(9),
                    audit: r.get(10),
                })
                .collect(),
        ))
    }

    async fn changed_since(&self, gen: i64) -> StoreResult<Vec<(String, i64)>> {
        let c = self.pool.get().await?;
        let st = c
            .prepare_cached("SELECT name, gen FROM packages WHERE gen > $1")
            .await?;
        Ok(c.query(&st, &[&gen])
            .await?
            .into_iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect())
    }

    async fn max_generation(&self) -> StoreResult<i64> {
        let c = self.pool.get().await?;
        Ok(
            c.query_one("SELECT COALESCE(MAX(gen), 0) FROM packages", &[])
                .await?
                .get(0),
        )
    }

    fn generations(&self) -> &Generations {
        &self.gens
    }

    async fn search_rows(&self) -> StoreResult<Vec<SearchRow>> {
        let c = self.pool.get().await?;
        let st = c
            .prepare_cached(
                "SELECT name, vers, description, words, audit FROM search
                 WHERE vers IS NOT NULL ORDER BY name",
            )
            .await?;
        Ok(c.query(&st, &[])
            .await?
            .into_iter()
            .filter_map(|r| {
                Some(SearchRow {
                    name: r.get(0),
                    vers: semver::Version::parse(r.get::<_, &str>(1)).ok()?,
                    description: r.get(2),
                    words: r.get(3),
                    audit: r.get(4),
                })
            })
            .collect())
    }

    async fn signing_rows(&self) -> StoreResult<Vec<SigningRow>> {
        let c = self.pool.get().await?;
        Ok(c.query(
            "SELECT name, vers, cksum, deps, sig_key, sig FROM versions ORDER BY name, id",
            &[],
        )
        .await?
        .into_iter()
        .map(|r| SigningRow {
            name: r.get(0),
            vers: r.get(1),
            cksum: r.get(2),
            deps: r.get(3),
            sig_key: r.get(4),
            sig: r.get(5),
        })
        .collect())
    }

    async fn set_signatures(&self, name: &str, sigs: &[NewSignature]) -> StoreResult<()> {
        let mut c = self.pool.get().await?;
        let tx = c.transaction().await?;
        for s in sigs {
            let n = tx
                .execute(
                    "UPDATE versions SET sig_key = $3, sig = $4 WHERE name = $1 AND vers = $2",
                    &[&name, &s.vers, &s.keyid, &s.sig],
                )
                .await?;
            if n == 0 {
                return Err(StoreError::no_version(name, &s.vers));
            }
        }
        let gen = bump_generation(&tx, name).await?;
        tx.commit().await?;
        self.gens.saw(name, gen);
        Ok(())
    }

    async fn audit_rows(&self) -> StoreResult<Vec<AuditRow>> {
        let c = self.pool.get().await?;
        Ok(c.query(
            "SELECT name, vers, cksum, audit FROM versions ORDER BY name, id",
            &[],
        )
        .await?
        .into_iter()
        .map(|r| AuditRow {
            name: r.get(0),
            vers: r.get(1),
            cksum: r.get(2),
            audit: r.get(3),
        })
        .collect())
    }

    async fn set_audits(&self, name: &str, audits: &[(String, String)]) -> StoreResult<()> {
        let mut c = self.pool.get().await?;
        let tx = c.transaction().await?;
        for (vers, audit) in audits {
            let n = tx
                .execute(
                    "UPDATE versions SET audit = $3 WHERE name = $1 AND vers = $2",
                    &[&name, vers, audit],
                )
                .await?;
            if n == 0 {
                return Err(StoreError::no_version(name, vers));
            }
        }
        refresh_search(&tx, name).await?;
        let gen = bump_generation(&tx, name).await?;
        tx.commit().await?;
        self.gens.saw(name, gen);
        Ok(())
    }
}
