use super::*;

/// A database from before the `deps` column (and the generations)
/// opens, its versions depending on nothing, and takes new versions
/// with dependencies.
#[tokio::test]
async fn a_database_from_before_deps_opens_and_takes_them() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("registry.db");
    let old = Connection::open(&path).unwrap();
    old.execute_batch(
        "CREATE TABLE packages (name TEXT PRIMARY KEY, created INTEGER NOT NULL);
         CREATE TABLE versions (
             id INTEGER PRIMARY KEY, name TEXT NOT NULL REFERENCES packages(name),
             vers TEXT NOT NULL, cksum TEXT NOT NULL, yanked INTEGER NOT NULL DEFAULT 0,
             description TEXT NOT NULL, requires TEXT NOT NULL DEFAULT '{}',
             body TEXT NOT NULL DEFAULT '', published INTEGER NOT NULL,
             UNIQUE (name, vers));
         CREATE TABLE owners (name TEXT NOT NULL, user TEXT NOT NULL,
             PRIMARY KEY (name, user));
         INSERT INTO packages VALUES ('base', 1);
         INSERT INTO owners VALUES ('base', 'alice');
         INSERT INTO versions (name, vers, cksum, description, published)
             VALUES ('base', '1.0.0', 'sum', 'd', 1);",
    )
    .unwrap();
    drop(old);

    let db = Db::open(&path).unwrap();
    let (_, rows) = db.index_rows("base").await.unwrap();
    assert_eq!(rows[0].deps, "[]");
    let deps = r#"[{"name":"base","req":"^1"}]"#;
    let v = NewVersion {
        name: "top".into(),
        vers: semver::Version::new(1, 0, 0),
        cksum: "sum2".into(),
        description: "d".into(),
        requires: "{}".into(),
        deps: deps.into(),
        body: String::new(),
        sig_key: Some("0123456789abcdef".into()),
        sig: Some("c2ln".into()),
        audit: r#"{"counts":{"warning":1}}"#.into(),
    };
    db.insert_version(&v, "alice").await.unwrap();
    let (_, rows) = db.index_rows("top").await.unwrap();
    assert_eq!(rows[0].deps, deps);
    assert_eq!(rows[0].sig_key.as_deref(), Some("0123456789abcdef"));
    let (_, rows) = db.index_rows("base").await.unwrap();
    assert_eq!(
        (rows[0].sig_key.as_deref(), rows[0].sig.as_deref()),
        (None, None)
    );
    let dump = db.dump().await.unwrap();
    let top = dump.versions.iter().find(|v| v.name == "top").unwrap();
    assert_eq!(top.deps, deps, "migrate carries dependencies");
    assert_eq!(
        (top.sig_key.as_deref(), top.sig.as_deref()),
        (Some("0123456789abcdef"), Some("c2ln")),
        "migrate carries signatures"
    );
    assert_eq!(
        top.audit.as_deref(),
        Some(r#"{"counts":{"warning":1}}"#),
        "migrate carries audit records"
    );
    let base = dump.versions.iter().find(|v| v.name == "base").unwrap();
    assert_eq!(base.audit, None, "a version from before was never scanned");
    // `rescan` replaces audit records, the search entry's too, and moves
    // the generation.
    let before = db.max_generation().await.unwrap();
    let rec = r#"{"counts":{"error":1}}"#.to_string();
    db.set_audits("base", &[("1.0.0".into(), rec.clone())])
        .await
        .unwrap();
    assert!(db.max_generation().await.unwrap() > before);
    let rows = db.audit_rows().await.unwrap();
    let base = rows.iter().find(|r| r.name == "base").unwrap();
    assert_eq!(base.audit.as_deref(), Some(rec.as_str()));
    let search = db.search_rows().await.unwrap();
    let base = search.iter().find(|r| r.name == "base").unwrap();
    assert_eq!(base.audit.as_deref(), Some(rec.as_str()));
    assert!(db
        .set_audits("base", &[("9.9.9".into(), rec.clone())])
        .await
        .is_err());
    // `key resign` replaces signatures and moves the generation.
    let before = db.max_generation().await.unwrap();
    let new = super::super::NewSignature {
        vers: "1.0.0".into(),
        keyid: "fedcba9876543210".into(),
        sig: "bmV3".into(),
    };
    db.set_signatures("base", &[new]).await.unwrap();
    assert!(db.max_generation().await.unwrap() > before);
    let rows = db.signing_rows().await.unwrap();
    let base = rows.iter().find(|r| r.name == "base").unwrap();
    assert_eq!(base.sig_key.as_deref(), Some("fedcba9876543210"));
    let missing = super::super::NewSignature {
        vers: "9.9.9".into(),
        keyid: "fedcba9876543210".into(),
        sig: "bmV3".into(),
    };
    assert!(db.set_signatures("base", &[missing]).await.is_err());
    drop(db);
    // Opening again adds nothing twice.
    Db::open(&path).unwrap();
}
