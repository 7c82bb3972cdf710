//! Times the dependency solver alone on a graph shaped as
//! `benches/deps_registry.py`'s: levels of packages (default 40 / 120 /
//! 280 / 560), each needing 2 or 3 of the next level with `^1`, every
//! package reached, each offered in two versions (1.1.0 first, then
//! 1.0.0), as a warm index hands them over. Prints the median of 21
//! solves in milliseconds.
//!
//! Run: cargo run --release --example solve_graph -- [LEVEL ...]

use semver::{Version, VersionReq};
use skillpm::name::SkillName;
use skillpm::resolve::req::ranges;
use skillpm::resolve::solve::{Candidate, Universe};
use std::time::Instant;

/// A fixed-seed generator: the graph is the same on every run.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n
    }
}

fn main() {
    let levels: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a level size"))
        .collect();
    let levels = if levels.is_empty() {
        vec![40, 120, 280, 560]
    } else {
        levels
    };
    let name = |lv: usize, i: usize| SkillName::new(&format!("k{lv}-{i:03}")).expect("name");
    let caret = ranges(&VersionReq::parse("^1").expect("req"));
    let mut rng = Lcg(47);
    let mut universe = Universe::default();
    for (lv, &n) in levels.iter().enumerate() {
        let children = levels.get(lv + 1).copied().unwrap_or(0);
        let mut needs: Vec<Vec<usize>> = vec![Vec::new(); n];
        // Every child once, then 2 or 3 per parent at random.
        for c in 0..children {
            needs[c % n].push(c);
        }
        for list in &mut needs {
            let want = 2 + rng.below(2);
            while children > 0 && list.len() < want.min(children) {
                let c = rng.below(children);
                if !list.contains(&c) {
                    list.push(c);
                }
            }
        }
        for (i, list) in needs.iter().enumerate() {
            let deps: Vec<_> = list
                .iter()
                .map(|&c| (name(lv + 1, c), caret.clone()))
                .collect();
            let candidates = ["1.1.0", "1.0.0"]
                .iter()
                .map(|v| Candidate {
                    version: Version::parse(v).expect("version"),
                    deps: deps.clone(),
                })
                .collect();
            universe.skills.insert(name(lv, i), candidates);
            if lv == 0 {
                universe.root.push((name(lv, i), caret.clone()));
            }
        }
    }
    let mut times = Vec::new();
    for _ in 0..21 {
        let start = Instant::now();
        let chosen = universe.solve().expect("a solution");
        times.push(start.elapsed());
        assert_eq!(chosen.len(), levels.iter().sum::<usize>());
    }
    times.sort();
    println!(
        "{:.2} ms to solve {} skills in {} levels",
        times[times.len() / 2].as_secs_f64() * 1000.0,
        levels.iter().sum::<usize>(),
        levels.len()
    );
}
