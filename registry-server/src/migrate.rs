//! `skillpm-registry migrate --from DIR --to postgres://... --blobs s3://...`
//!
//! Copies an embedded registry into shared storage, creating the target
//! database when the server allows it. Blobs go first, each
//! verified twice (the source file against the checksum in SQLite, then the
//! stored object read back); only then are the rows imported, in one
//! transaction. Re-running it copies nothing twice and changes nothing
//! that is already there, so an interrupted run is finished by running it
//! again.

use crate::config::is_postgres;
use crate::store::{BlobStore, Blobs, Db, PgStore, S3Blobs};
use anyhow::{bail, Context, Result};
use futures_util::stream::{self, StreamExt, TryStreamExt};
use skillpm_core::checksum::Checksum;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

pub async fn run(from: &Path, to: &str, blobs_url: &str) -> Result<()> {
    let db_path = from.join("registry.db");
    if !db_path.is_file() {
        bail!(
            "{} is not an embedded registry: {} does not exist",
            from.display(),
            db_path.display()
        );
    }
    if !is_postgres(to) {
        bail!("--to must be a postgres:// URL");
    }
    if !blobs_url.starts_with("s3://") {
        bail!("--blobs must be an s3://bucket/prefix URL");
    }
    let dump = Db::open(&db_path)
        .with_context(|| format!("cannot open {}", db_path.display()))?
        .dump()
        .await
        .with_context(|| format!("cannot read {}", db_path.display()))?;
    let source = Blobs::open(from).with_context(|| format!("cannot open {}", from.display()))?;
    let s3 = S3Blobs::from_url(blobs_url)?;
    s3.check().await?;
    let target: Arc<dyn BlobStore> = Arc::new(s3);
    if PgStore::create_database_if_missing(to).await? {
        eprintln!("skillpm-registry: created the target database");
    }
    let meta = PgStore::connect(to).await?;

    let sums: BTreeSet<String> = dump.versions.iter().map(|v| v.cksum.clone()).collect();
    let uploaded: usize = stream::iter(sums.iter().cloned())
        .map(|sum| copy_blob(&source, target.clone(), sum))
        .buffer_unordered(8)
        .try_fold(0, |n, up| async move { Ok(n + up as usize) })
        .await?;

    let new = meta.import(&dump).await?;
    println!(
        "migrated {} versions of {} skills ({} new), {} blobs ({} uploaded), {} tokens; every checksum verified",
        dump.versions.len(),
        dump.packages.len(),
        new,
        sums.len(),
        uploaded,
        dump.tokens.len()
    );
    Ok(())
}

/// Copies one blob unless the target already holds the same bytes.
/// Returns whether it uploaded.
async fn copy_blob(source: &Blobs, target: Arc<dyn BlobStore>, sum: String) -> Result<bool> {
    let cksum = Checksum::parse(&sum).map_err(|e| anyhow::anyhow!("bad checksum {sum:?}: {e}"))?;
    if let Some(have) = target.get(&cksum).await? {
        if Checksum::of_bytes(&have) == cksum {
            return Ok(false);
        }
        eprintln!("skillpm-registry: replacing corrupt target object for {sum}");
    }
    let path = source.path(&cksum);
    let bytes = tokio::fs::read(&path)
        .await
        .with_context(|| format!("cannot read blob {}", path.display()))?;
    if Checksum::of_bytes(&bytes) != cksum {
        bail!(
            "source blob {} does not match its checksum; nothing was imported",
            path.display()
        );
    }
    target.put(&cksum, bytes.into()).await?;
    let back = target
        .get(&cksum)
        .await?
        .with_context(|| format!("blob {sum} vanished right after upload"))?;
    if Checksum::of_bytes(&back) != cksum {
        bail!("blob {sum} reads back with other bytes from the target");
    }
    Ok(true)
}
