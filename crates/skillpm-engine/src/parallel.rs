//! CPU-bound work over many items, spread over the cores (in contiguous
//! chunks, or item by item), results in input order.
//!
//! Every share runs on one rayon pool per process ([`pool`]), a thread
//! per core (at most eight), started on first use: the engine's walks
//! and the installer's staging and packing share its threads (the
//! installer hands async jobs to it as well).

use rayon::prelude::*;

/// `work` applied to `items` in up to one chunk per core (at most eight),
/// the outputs concatenated in input order. Each chunk is handed to
/// `work` whole, so per-thread state (an object database handle, a
/// parser) is set up once per chunk, not once per item. Fewer than
/// `min_parallel` items are done on this thread: below that, handing
/// work over costs more than it saves. A panic in a worker is a bug and
/// is re-raised here.
pub fn chunked<T: Sync, R: Send>(
    items: &[T],
    min_parallel: usize,
    work: impl Fn(&[T]) -> Vec<R> + Sync,
) -> Vec<R> {
    if items.len() < min_parallel.max(2) {
        return work(items);
    }
    let threads = cores().min(8);
    if threads <= 1 {
        return work(items);
    }
    let chunk = items.len().div_ceil(threads);
    let parts: Vec<&[T]> = items.chunks(chunk).collect();
    each(&parts, 2, |part| work(part))
        .into_iter()
        .flatten()
        .collect()
}

/// `work` applied to each of `items` on the pool, each thread taking the
/// next item as it finishes one, the outputs in input order. Fewer than
/// `min_parallel` items are done on this thread, which otherwise waits:
/// on two cores a thread kept busy here leaves the pool one core. For
/// items that cost a tenth of a millisecond or more (a skill read whole
/// and packed), where a thread that starts late must not be left a fixed
/// share that then finishes last.
pub fn each<T: Sync, R: Send>(
    items: &[T],
    min_parallel: usize,
    work: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    match pool() {
        Some(pool) if items.len() >= min_parallel.max(2) && cores() > 1 => {
            pool.install(|| items.par_iter().with_max_len(1).map(&work).collect())
        }
        _ => items.iter().map(work).collect(),
    }
}

/// The pool: a thread per core, at most eight, as for the threads it
/// replaced (each costs its creation, its stack's pages and its exit, and
/// staging many trees at once queues on the directory's lock and the
/// journal), started on first use. `None` when its threads cannot start:
/// the work then runs on the caller.
pub fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(cores().min(8))
            .thread_name(|i| format!("skillpm-pool-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}

/// The cores this process may use, asked once: the standard library
/// reads the cgroup's CPU quota (three files) at every call, and a run
/// asked up to five times.
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

#[cfg(test)]
mod tests {
    use super::{chunked, cores, each, pool};

    #[test]
    fn keeps_input_order_whether_split_or_not() {
        let items: Vec<u32> = (0..1000).collect();
        let double = |part: &[u32]| part.iter().map(|x| x * 2).collect::<Vec<_>>();
        let want: Vec<u32> = items.iter().map(|x| x * 2).collect();
        assert_eq!(chunked(&items, 1, double), want);
        assert_eq!(chunked(&items, 10_000, double), want);
        assert_eq!(chunked(&items[..1], 1, double), vec![0]);
        assert!(chunked(&items[..0], 1, double).is_empty());
    }

    #[test]
    fn each_keeps_input_order_however_the_items_are_shared() {
        let items: Vec<u64> = (0..500).collect();
        // Uneven costs, so the threads finish items out of order.
        let slow_square = |x: &u64| {
            if x.is_multiple_of(7) {
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
            x * x
        };
        let want: Vec<u64> = items.iter().map(|x| x * x).collect();
        assert_eq!(each(&items, 1, slow_square), want);
        assert_eq!(each(&items, 10_000, slow_square), want);
        assert_eq!(each(&items[..1], 1, slow_square), vec![0]);
        assert!(each(&items[..0], 1, slow_square).is_empty());
    }

    /// Calls share the pool's threads: none is started per call, and the
    /// caller only waits. On one core the caller does the work itself.
    #[test]
    fn calls_share_the_pools_threads() {
        let items: Vec<u32> = (0..64).collect();
        let ids = || {
            each(&items, 1, |_| {
                std::thread::sleep(std::time::Duration::from_micros(100));
                std::thread::current().id()
            })
        };
        let (a, b) = (ids(), ids());
        let all: std::collections::HashSet<_> = a.iter().chain(&b).collect();
        let caller = std::thread::current().id();
        if cores() <= 1 {
            assert_eq!(all.into_iter().collect::<Vec<_>>(), [&caller]);
            return;
        }
        let threads = pool().map_or(1, |p| p.current_num_threads());
        assert!(threads <= 8);
        assert!(all.len() <= threads, "{all:?}");
        assert!(!all.contains(&caller));
    }
}
