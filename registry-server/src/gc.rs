//! `skillpm-registry gc`: finds (and with `--delete` removes) blobs that
//! no version references.
//!
//! A publish stores its blob before the row that references it commits
//! (see `store/blobs.rs`), so a replica killed between the two, or a
//! publish refused at the last moment, leaves a blob nobody references.
//! Those are harmless but take space. A blob is collected only when it
//! is older than a grace period: a publish in flight on another replica
//! has stored its blob but not yet its row, and storing bytes that are
//! already there renews the blob's time, so a retried publish keeps it.
//! Each candidate's time is read again right before it is deleted.

use crate::store::{BlobStore, MetaStore, StoredBlob};
use anyhow::{Context, Result};
use skillpm_core::checksum::Checksum;
use std::collections::HashSet;
use std::time::Duration;

/// What a collection found, and did.
#[derive(Debug, Default)]
pub struct Report {
    /// Unreferenced blobs past the grace period, sorted by checksum.
    pub orphans: Vec<StoredBlob>,
    /// Of those, the ones deleted (all of them with `--delete` unless
    /// one was renewed meanwhile).
    pub deleted: Vec<Checksum>,
    /// Blobs stored in all.
    pub stored: usize,
    /// Unreferenced blobs left alone because they are still in the grace
    /// period.
    pub recent: usize,
}

impl Report {
    pub fn orphan_bytes(&self) -> u64 {
        self.orphans.iter().map(|b| b.size).sum()
    }
}

pub async fn run(
    meta: &dyn MetaStore,
    blobs: &dyn BlobStore,
    older_than: Duration,
    delete: bool,
) -> Result<Report> {
    // Blobs first, rows second: a blob stored after the listing is not
    // considered at all, and a row committed before the reading of rows
    // protects its blob.
    let stored = blobs.list().await.context("cannot list the blobs")?;
    let referenced: HashSet<Checksum> = meta
        .audit_rows()
        .await
        .context("cannot list the stored versions")?
        .iter()
        .filter_map(|r| Checksum::parse(&r.cksum).ok())
        .collect();
    let cutoff = crate::store::now() - older_than.as_secs() as i64;
    let mut report = Report {
        stored: stored.len(),
        ..Report::default()
    };
    for b in stored {
        if referenced.contains(&b.sum) {
            continue;
        }
        if b.modified > cutoff {
            report.recent += 1;
        } else {
            report.orphans.push(b);
        }
    }
    report.orphans.sort_by_key(|b| b.sum.hex());
    if delete {
        for b in &report.orphans {
            let now = blobs
                .stat(&b.sum)
                .await
                .with_context(|| format!("cannot read blob {}", b.sum))?;
            if now.is_some_and(|n| n.modified <= cutoff) {
                blobs
                    .delete(&b.sum)
                    .await
                    .with_context(|| format!("cannot delete blob {}", b.sum))?;
                report.deleted.push(b.sum);
            }
        }
    }
    Ok(report)
}
