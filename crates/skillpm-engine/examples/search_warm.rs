//! Warm search timing for benches/search.py: builds the engine once over
//! ROOT (as the MCP server does) and times each query read from
//! QUERIES_FILE (one per line), `ROUNDS` times over. Prints one JSON line:
//! build time and query latency percentiles in milliseconds.
//!
//! Run: `cargo run -p skillpm-engine --release --example search_warm -- ROOT QUERIES_FILE [ROUNDS]`

use skillpm_engine::embed::{Engine, Host};
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(root), Some(queries)) = (args.next(), args.next()) else {
        eprintln!("usage: search_warm ROOT QUERIES_FILE [ROUNDS]");
        std::process::exit(2);
    };
    let rounds: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(10);
    let queries = std::fs::read_to_string(&queries).expect("read the queries file");
    let queries: Vec<&str> = queries.lines().filter(|l| !l.is_empty()).collect();

    let start = Instant::now();
    let engine = Engine::from_roots(&Host::new().bins(["sh"]), &[root.into()]);
    let build = start.elapsed().as_secs_f64() * 1000.0;

    let mut samples = Vec::with_capacity(queries.len() * rounds);
    let mut hits = 0usize;
    for _ in 0..rounds {
        for q in &queries {
            let t = Instant::now();
            hits += engine.search(q, 10).len();
            samples.push(t.elapsed().as_secs_f64() * 1000.0);
        }
    }
    samples.sort_by(f64::total_cmp);
    let pct = |p: f64| samples[((samples.len() - 1) as f64 * p).round() as usize];
    println!(
        "{{\"skills\": {}, \"build_ms\": {build:.1}, \"queries\": {}, \"hits\": {hits}, \"p50_ms\": {:.3}, \"p99_ms\": {:.3}, \"max_ms\": {:.3}}}",
        engine.skills().count(),
        samples.len(),
        pct(0.50),
        pct(0.99),
        pct(1.0)
    );
}
