//! The PostgreSQL schema, as numbered migrations applied at start-up, so
//! an existing database is brought forward rather than recreated.

use crate::store::now;
use deadpool_postgres::Pool;

/// Key of the advisory lock held while migrating ("skillpm" in ASCII).
const MIGRATION_LOCK: i64 = 0x0073_6b69_6c6c_706d;

/// Applied in order, each once, inside its own transaction.
const MIGRATIONS: &[(i32, &str)] = &[
    (
        1,
        "
CREATE TABLE packages (
    name    TEXT PRIMARY KEY,
    created BIGINT NOT NULL
);
CREATE TABLE versions (
    id          BIGSERIAL PRIMARY KEY,
    name        TEXT NOT NULL REFERENCES packages(name),
    vers        TEXT NOT NULL,
    vers_key    TEXT NOT NULL,
    cksum       TEXT NOT NULL,
    yanked      BOOLEAN NOT NULL DEFAULT FALSE,
    description TEXT NOT NULL,
    requires    TEXT NOT NULL DEFAULT '{}',
    body        TEXT NOT NULL DEFAULT '',
    published   BIGINT NOT NULL,
    UNIQUE (name, vers),
    UNIQUE (name, vers_key)
);
CREATE TABLE owners (
    name  TEXT NOT NULL REFERENCES packages(name),
    login TEXT NOT NULL,
    PRIMARY KEY (name, login)
);
CREATE TABLE tokens (
    hash    TEXT PRIMARY KEY,
    login   TEXT NOT NULL,
    created BIGINT NOT NULL,
    revoked BIGINT
);
CREATE INDEX tokens_login ON tokens (login);
",
    ),
    (
        2,
        "
CREATE TABLE search (
    name        TEXT PRIMARY KEY REFERENCES packages(name),
    vers        TEXT,
    description TEXT NOT NULL,
    words       TEXT NOT NULL
);
",
    ),
    (
        3,
        "
ALTER TABLE packages ADD COLUMN gen BIGINT NOT NULL DEFAULT 0;
CREATE INDEX packages_gen ON packages (gen);
",
    ),
    (
        4,
        "
ALTER TABLE versions ADD COLUMN deps TEXT NOT NULL DEFAULT '[]';
",
    ),
    (
        5,
        "
ALTER TABLE versions ADD COLUMN sig_key TEXT;
ALTER TABLE versions ADD COLUMN sig TEXT;
",
    ),
    (
        6,
        "
ALTER TABLE versions ADD COLUMN audit TEXT;
ALTER TABLE search ADD COLUMN audit TEXT;
",
    ),
];

/// Serialised across replicas by an advisory lock, so replicas starting
/// together apply each migration once.
pub async fn migrate(pool: &Pool) -> anyhow::Result<()> {
    let mut client = pool.get().await?;
    client
        .execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    let res: Result<(), tokio_postgres::Error> = async {
        client
            .batch_execute(
                "CREATE TABLE IF NOT EXISTS skillpm_migrations (
                     version INTEGER PRIMARY KEY,
                     applied BIGINT NOT NULL)",
            )
            .await?;
        for (version, sql) in MIGRATIONS {
            let tx = client.transaction().await?;
            let done = tx
                .query_opt(
                    "SELECT 1 FROM skillpm_migrations WHERE version = $1",
                    &[version],
                )
                .await?
                .is_some();
            if !done {
                tx.batch_execute(sql).await?;
                tx.execute(
                    "INSERT INTO skillpm_migrations (version, applied) VALUES ($1, $2)",
                    &[version, &now()],
                )
                .await?;
            }
            tx.commit().await?;
        }
        Ok(())
    }
    .await;
    let _ = client
        .execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK])
        .await;
    Ok(res?)
}
