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
    };
    db.insert_version(&v, "alice").await.unwrap();
    let (_, rows) = db.index_rows("top").await.unwrap();
    assert_eq!(rows[0].deps, deps);
    let dump = db.dump().await.unwrap();
    let top = dump.versions.iter().find(|v| v.name == "top").unwrap();
    assert_eq!(top.deps, deps, "migrate carries dependencies");
    drop(db);
    // Opening again adds nothing twice.
    Db::open(&path).unwrap();
}
