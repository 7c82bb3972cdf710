//! `skillpm-registry rescan`: re-checks every stored version with the
//! audit rules of this build, for when the rules change.
//!
//! Each version's blob is read, unpacked with the client's hardened
//! unpacker (checked against the stored checksum first, so what is
//! scanned is exactly what clients install) into a temporary directory,
//! and scanned; a record that changed is stored (per package, in one
//! transaction that also moves the package's index generation, so every
//! replica's cached index, search entry and well-known index are
//! rendered again). Nothing is deleted or yanked: versions that now have
//! critical findings are reported, for an owner to yank.

use crate::audit::Stored;
use crate::store::{AuditRow, BlobStore, MetaStore};
use anyhow::{Context, Result};
use skillpm_core::archive::{unpack_to_new_dir, Limits};
use skillpm_core::checksum::Checksum;
use std::collections::BTreeMap;
use std::path::Path;

/// What a rescan did.
#[derive(Default)]
pub struct Report {
    pub scanned: usize,
    pub skills: usize,
    /// Versions whose record changed (or had none).
    pub updated: usize,
    /// `(name@vers, record)` of versions with critical findings.
    pub critical: Vec<(String, Stored)>,
    /// `(name@vers, why)` of versions that could not be scanned.
    pub failed: Vec<(String, String)>,
}

pub async fn run(
    meta: &dyn MetaStore,
    blobs: &dyn BlobStore,
    scratch: &Path,
    limits: &Limits,
) -> Result<Report> {
    let rows = meta
        .audit_rows()
        .await
        .context("cannot list the stored versions")?;
    let mut by_name: BTreeMap<String, Vec<AuditRow>> = BTreeMap::new();
    for r in rows {
        by_name.entry(r.name.clone()).or_default().push(r);
    }
    let mut report = Report {
        skills: by_name.len(),
        ..Report::default()
    };
    for (name, rows) in by_name {
        let mut changed = Vec::new();
        for row in rows {
            let what = format!("{name}@{}", row.vers);
            let record = match scan_one(blobs, &row, scratch, limits).await {
                Ok(r) => r,
                Err(e) => {
                    report.failed.push((what, format!("{e:#}")));
                    continue;
                }
            };
            report.scanned += 1;
            if record.counts.critical > 0 {
                report.critical.push((what, record.clone()));
            }
            if Stored::decode(row.audit.as_deref()).as_ref() != Some(&record) {
                changed.push((row.vers.clone(), record.encode()));
            }
        }
        if !changed.is_empty() {
            meta.set_audits(&name, &changed)
                .await
                .with_context(|| format!("cannot store the findings of {name}"))?;
            report.updated += changed.len();
        }
    }
    Ok(report)
}

/// The record of one stored version, from its blob.
async fn scan_one(
    blobs: &dyn BlobStore,
    row: &AuditRow,
    scratch: &Path,
    limits: &Limits,
) -> Result<Stored> {
    let sum = Checksum::parse(&row.cksum)
        .map_err(|e| anyhow::anyhow!("stored checksum does not read: {e}"))?;
    let bytes = blobs
        .get(&sum)
        .await
        .context("cannot read the blob")?
        .with_context(|| format!("blob {sum} is missing"))?;
    let (scratch, limits) = (scratch.to_path_buf(), limits.clone());
    tokio::task::spawn_blocking(move || -> Result<Stored> {
        let dir = unpack_to_new_dir(&bytes, Some(&sum), &scratch, &limits)
            .context("cannot unpack the blob")?;
        let findings = crate::audit::scan(dir.path()).context("cannot scan the unpacked blob")?;
        Ok(Stored::of(&findings))
    })
    .await?
}
