//! Calibrates the audit rules on real skill collections.
//!
//! ```text
//! cargo run --release -p skillpm-core --example audit_corpus -- \
//!     [--known name,name,...] [--show rule-id|severity[,...]] ROOT...
//! ```
//!
//! Every directory under each ROOT holding a `SKILL.md` is one skill;
//! `audit::scan_dir` runs on each. Prints, per rule, how many skills it
//! flags in each collection (ROOT) and in all, the skills with any
//! critical finding, and the time spent in `scan_dir`. `--show` prints
//! every finding of the named rules (or of every rule of a severity, such
//! as `critical`) with its skill, line, excerpt and message, for reading.
//!
//! For speed work: `--slowest N` also times `scan_file` on every file and
//! lists the N slowest; `--file PATH` scans one file repeatedly (`REPS`
//! times, 50 by default) and prints the steady-state time; `AUDIT_WARM=1`
//! scans each skill twice and reports both passes.

use skillpm_core::audit::{self, Context, Severity, RULES};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn main() {
    let mut roots = Vec::new();
    let mut known: Vec<String> = Vec::new();
    let mut show: Vec<String> = Vec::new();
    let mut slowest = 0usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--known" => known.extend(
                args.next()
                    .unwrap_or_default()
                    .split(',')
                    .map(str::to_string),
            ),
            "--file" => {
                // Steady-state time of one file, scanned repeatedly.
                let path = PathBuf::from(args.next().unwrap_or_default());
                let bytes = std::fs::read(&path).unwrap_or_default();
                let rel = if path.ends_with("SKILL.md") {
                    "SKILL.md"
                } else {
                    "x.md"
                };
                let cx = Context::default();
                let t = Instant::now();
                let _ = audit::scan_file(rel, &bytes, &cx);
                println!(
                    "{:.3} ms first scan (compiles patterns)",
                    t.elapsed().as_secs_f64() * 1000.0
                );
                let reps: usize = std::env::var("REPS")
                    .ok()
                    .and_then(|r| r.parse().ok())
                    .unwrap_or(50);
                let t = Instant::now();
                for _ in 0..reps {
                    let _ = audit::scan_file(rel, &bytes, &cx);
                }
                println!(
                    "{:.3} ms per scan",
                    t.elapsed().as_secs_f64() * 1000.0 / reps as f64
                );
                return;
            }
            "--slowest" => slowest = args.next().and_then(|n| n.parse().ok()).unwrap_or(20),
            "--show" => show.extend(
                args.next()
                    .unwrap_or_default()
                    .split(',')
                    .map(str::to_string),
            ),
            _ => roots.push(PathBuf::from(a)),
        }
    }
    if roots.is_empty() {
        eprintln!("usage: audit_corpus [--known a,b] [--show rule|severity] ROOT...");
        std::process::exit(2);
    }
    let known_refs: Vec<&str> = known.iter().map(String::as_str).collect();
    let cx = Context {
        known_names: &known_refs,
    };

    let names: Vec<String> = roots
        .iter()
        .map(|r| {
            r.file_name().map_or_else(
                || r.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            )
        })
        .collect();
    // rule -> collection -> skills flagged
    let mut flagged: BTreeMap<&str, BTreeMap<usize, BTreeSet<PathBuf>>> = BTreeMap::new();
    let mut totals = vec![0usize; roots.len()];
    let mut files = 0usize;
    let mut bytes = 0u64;
    let mut spent = Duration::ZERO;
    let mut spent_warm = Duration::ZERO;
    let mut errors = 0;
    for (ci, root) in roots.iter().enumerate() {
        let skills = skill_dirs(root);
        totals[ci] = skills.len();
        for dir in skills {
            let (f, b) = size_of(&dir);
            files += f;
            bytes += b;
            let t = Instant::now();
            if std::env::var_os("AUDIT_WARM").is_some() {
                let _ = audit::scan_dir(&dir, &cx);
                spent_warm += t.elapsed();
            }
            let t = Instant::now();
            let findings = match audit::scan_dir(&dir, &cx) {
                Ok(f) => f,
                Err(e) => {
                    eprintln!("{e}");
                    errors += 1;
                    continue;
                }
            };
            spent += t.elapsed();
            for f in &findings {
                flagged
                    .entry(f.rule)
                    .or_default()
                    .entry(ci)
                    .or_default()
                    .insert(dir.clone());
                if f.severity >= Severity::Critical {
                    flagged
                        .entry("(any critical)")
                        .or_default()
                        .entry(ci)
                        .or_default()
                        .insert(dir.clone());
                }
                let wanted = show.iter().any(|s| {
                    s == f.rule || s.parse::<Severity>().is_ok_and(|sev| sev == f.severity)
                });
                if wanted {
                    println!(
                        "{} {}/{}:{}\n    {}\n    {}",
                        f.rule,
                        dir.display(),
                        f.file,
                        f.line,
                        f.excerpt,
                        f.message
                    );
                }
            }
        }
    }

    if slowest > 0 {
        slowest_files(&roots, &cx, slowest);
    }
    let all: usize = totals.iter().sum();
    print!("{:<30} {:>8}", "rule", "severity");
    for n in &names {
        print!(" {:>12}", cut(n, 12));
    }
    println!(" {:>14}", "total");
    print!("{:<30} {:>8}", "(skills)", "");
    for t in &totals {
        print!(" {t:>12}");
    }
    println!(" {all:>14}");
    let ids: Vec<(&str, String)> = RULES
        .iter()
        .map(|r| (r.id, r.severity.to_string()))
        .chain(std::iter::once(("(any critical)", String::new())))
        .collect();
    for (id, sev) in ids {
        let per = flagged.get(id);
        print!("{id:<30} {sev:>8}");
        let mut sum = 0;
        for ci in 0..roots.len() {
            let n = per.and_then(|p| p.get(&ci)).map_or(0, BTreeSet::len);
            sum += n;
            print!(" {n:>12}");
        }
        println!(
            " {:>6} {:>6.2}%",
            sum,
            100.0 * sum as f64 / all.max(1) as f64
        );
    }
    if spent_warm > Duration::ZERO {
        println!("first pass (AUDIT_WARM): {:.3} s", spent_warm.as_secs_f64());
    }
    println!(
        "\nscanned {all} skills ({files} files, {:.1} MiB) in {:.3} s of scan_dir ({:.3} ms/skill); {errors} errors",
        bytes as f64 / (1024.0 * 1024.0),
        spent.as_secs_f64(),
        spent.as_secs_f64() * 1000.0 / all.max(1) as f64
    );
}

fn cut(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Every directory under `root` with a `SKILL.md`, not following symlinks.
fn skill_dirs(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut has_skill = false;
        for e in entries.flatten() {
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() && e.file_name() != ".git" && e.file_name() != "node_modules" {
                stack.push(e.path());
            } else if ft.is_file() && e.file_name() == "SKILL.md" {
                has_skill = true;
            }
        }
        if has_skill {
            out.push(dir);
        }
    }
    out.sort();
    out
}

/// Files and bytes under `dir`, for the throughput figure.
fn size_of(dir: &Path) -> (usize, u64) {
    let mut files = 0;
    let mut bytes = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(m) = std::fs::symlink_metadata(e.path()) else {
                continue;
            };
            if m.is_dir() {
                stack.push(e.path());
            } else if m.is_file() {
                files += 1;
                bytes += m.len();
            }
        }
    }
    (files, bytes)
}

/// Times `scan_file` on every file under the skills of `roots` and prints
/// the `n` slowest, to find what a speed-up should look at.
fn slowest_files(roots: &[PathBuf], cx: &Context, n: usize) {
    let mut times: Vec<(Duration, u64, PathBuf)> = Vec::new();
    for root in roots {
        for dir in skill_dirs(root) {
            let mut stack = vec![dir.clone()];
            while let Some(d) = stack.pop() {
                let Ok(entries) = std::fs::read_dir(&d) else {
                    continue;
                };
                for e in entries.flatten() {
                    let Ok(m) = std::fs::symlink_metadata(e.path()) else {
                        continue;
                    };
                    if m.is_dir() {
                        stack.push(e.path());
                    } else if m.is_file() && m.len() <= audit::MAX_FILE_BYTES {
                        let Ok(bytes) = std::fs::read(e.path()) else {
                            continue;
                        };
                        let rel = e.path().strip_prefix(&dir).map_or_else(
                            |_| String::new(),
                            |p| p.to_string_lossy().replace('\\', "/"),
                        );
                        let t = Instant::now();
                        let _ = audit::scan_file(&rel, &bytes, cx);
                        times.push((t.elapsed(), m.len(), e.path()));
                    }
                }
            }
        }
    }
    let total: Duration = times.iter().map(|t| t.0).sum();
    times.sort_by_key(|t| std::cmp::Reverse(t.0));
    println!(
        "scan_file over {} files: {:.3} s",
        times.len(),
        total.as_secs_f64()
    );
    for (t, size, p) in times.iter().take(n) {
        println!(
            "{:>8.2} ms {:>9} B {}",
            t.as_secs_f64() * 1000.0,
            size,
            p.display()
        );
    }
}
