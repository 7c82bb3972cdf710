//! CPU-bound work over many items, spread over the cores (in contiguous
//! chunks, or item by item), results in input order.
//!
//! Every share runs on one run's [`Workers`]: a rayon pool, a thread per
//! core (at most eight), started on first use and owned by whoever made
//! the handle (skillpm makes one per command, in its [`Environment`]).
//! The engine's walks and the installer's staging and packing share its
//! threads (the installer hands async jobs to it as well).
//!
//! [`Environment`]: crate::config::Environment

use rayon::prelude::*;
use std::sync::{Arc, OnceLock};

/// One run's worker threads: a handle, cheap to clone, every clone
/// sharing the same pool. Its threads start on first use (a run that
/// spreads nothing starts none) and end when the last handle is dropped.
#[derive(Clone)]
pub struct Workers(Arc<Pool>);

struct Pool {
    threads: usize,
    /// `None` when the threads could not start: the work then runs on
    /// the caller.
    pool: OnceLock<Option<rayon::ThreadPool>>,
}

impl Default for Workers {
    fn default() -> Self {
        Workers::new()
    }
}

impl std::fmt::Debug for Workers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workers")
            .field("threads", &self.0.threads)
            .field("started", &self.0.pool.get().is_some())
            .finish()
    }
}

impl Workers {
    /// A thread per core, at most eight, as for the threads the pool
    /// replaced: each costs its creation, its stack's pages and its exit,
    /// and staging many trees at once queues on the directory's lock and
    /// the journal.
    pub fn new() -> Self {
        Workers::with_threads(cores().min(8))
    }

    /// `threads` threads (at least one; with one, all work runs on the
    /// caller).
    pub fn with_threads(threads: usize) -> Self {
        Workers(Arc::new(Pool {
            threads: threads.max(1),
            pool: OnceLock::new(),
        }))
    }

    /// How many threads share the work.
    pub fn threads(&self) -> usize {
        self.0.threads
    }

    /// The pool, started on first use; `None` with one thread, or when
    /// its threads cannot start.
    fn pool(&self) -> Option<&rayon::ThreadPool> {
        if self.0.threads <= 1 {
            return None;
        }
        self.0
            .pool
            .get_or_init(|| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(self.0.threads)
                    .thread_name(|i| format!("skillpm-pool-{i}"))
                    .build()
                    .ok()
            })
            .as_ref()
    }

    /// `work` applied to `items` in up to one chunk per thread, the
    /// outputs concatenated in input order. Each chunk is handed to
    /// `work` whole, so per-thread state (an object database handle, a
    /// parser) is set up once per chunk, not once per item. Fewer than
    /// `min_parallel` items are done on this thread: below that, handing
    /// work over costs more than it saves. A panic in a worker is a bug
    /// and is re-raised here.
    pub fn chunked<T: Sync, R: Send>(
        &self,
        items: &[T],
        min_parallel: usize,
        work: impl Fn(&[T]) -> Vec<R> + Sync,
    ) -> Vec<R> {
        if items.len() < min_parallel.max(2) || self.0.threads <= 1 {
            return work(items);
        }
        let chunk = items.len().div_ceil(self.0.threads);
        let parts: Vec<&[T]> = items.chunks(chunk).collect();
        self.each(&parts, 2, |part| work(part))
            .into_iter()
            .flatten()
            .collect()
    }

    /// `work` applied to each of `items` on the pool, each thread taking
    /// the next item as it finishes one, the outputs in input order.
    /// Fewer than `min_parallel` items are done on this thread, which
    /// otherwise waits: on two cores a thread kept busy here leaves the
    /// pool one core. For items that cost a tenth of a millisecond or
    /// more (a skill read whole and packed), where a thread that starts
    /// late must not be left a fixed share that then finishes last.
    pub fn each<T: Sync, R: Send>(
        &self,
        items: &[T],
        min_parallel: usize,
        work: impl Fn(&T) -> R + Sync,
    ) -> Vec<R> {
        match self.pool() {
            Some(pool) if items.len() >= min_parallel.max(2) => {
                pool.install(|| items.par_iter().with_max_len(1).map(&work).collect())
            }
            _ => items.iter().map(work).collect(),
        }
    }

    /// Starts `job` on the pool and returns at once; without a pool,
    /// `job` runs here before this returns. For callers that wait on the
    /// job's answer some other way (an async channel).
    pub fn spawn(&self, job: impl FnOnce() + Send + 'static) {
        match self.pool() {
            Some(pool) => pool.spawn(job),
            None => job(),
        }
    }
}

/// The cores this process may use, asked once: a process fact, and the
/// standard library reads the cgroup's CPU quota (three files) at every
/// call.
pub fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

#[cfg(test)]
mod tests {
    use super::Workers;

    #[test]
    fn keeps_input_order_whether_split_or_not() {
        let items: Vec<u32> = (0..1000).collect();
        let double = |part: &[u32]| part.iter().map(|x| x * 2).collect::<Vec<_>>();
        let want: Vec<u32> = items.iter().map(|x| x * 2).collect();
        for workers in [
            Workers::new(),
            Workers::with_threads(3),
            Workers::with_threads(1),
        ] {
            assert_eq!(workers.chunked(&items, 1, double), want);
            assert_eq!(workers.chunked(&items, 10_000, double), want);
            assert_eq!(workers.chunked(&items[..1], 1, double), vec![0]);
            assert!(workers.chunked(&items[..0], 1, double).is_empty());
        }
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
        let workers = Workers::with_threads(3);
        assert_eq!(workers.each(&items, 1, slow_square), want);
        assert_eq!(workers.each(&items, 10_000, slow_square), want);
        assert_eq!(workers.each(&items[..1], 1, slow_square), vec![0]);
        assert!(workers.each(&items[..0], 1, slow_square).is_empty());
    }

    /// Calls through one handle, or its clones, share its threads: none
    /// is started per call, and the caller only waits. With one thread
    /// the caller does the work itself.
    #[test]
    fn calls_share_the_pools_threads() {
        let items: Vec<u32> = (0..64).collect();
        let ids = |workers: &Workers| {
            workers.each(&items, 1, |_| {
                std::thread::sleep(std::time::Duration::from_micros(100));
                std::thread::current().id()
            })
        };
        let caller = std::thread::current().id();
        let workers = Workers::with_threads(2);
        let (a, b) = (ids(&workers), ids(&workers.clone()));
        let all: std::collections::HashSet<_> = a.iter().chain(&b).collect();
        assert!(all.len() <= 2, "{all:?}");
        assert!(!all.contains(&caller));
        let alone = ids(&Workers::with_threads(1));
        assert!(alone.iter().all(|id| *id == caller));
    }

    /// Each run's pool is its own: a second handle does not borrow the
    /// first one's threads.
    #[test]
    fn handles_made_apart_have_threads_apart() {
        let items: Vec<u32> = (0..16).collect();
        let ids = |workers: &Workers| -> std::collections::HashSet<_> {
            workers
                .each(&items, 1, |_| {
                    std::thread::sleep(std::time::Duration::from_micros(100));
                    std::thread::current().id()
                })
                .into_iter()
                .collect()
        };
        let (one, two) = (Workers::with_threads(2), Workers::with_threads(2));
        assert!(ids(&one).is_disjoint(&ids(&two)));
    }
}
