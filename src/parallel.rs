//! CPU-bound work over many items, spread over the cores (in contiguous
//! chunks, or item by item), results in input order; and single jobs
//! handed to the same threads from async code ([`on_pool`]).
//!
//! Every share runs on one rayon pool per process, a thread per core (at
//! most eight), started on first use. Not before: started while a
//! command waited on the network, its threads took a core from the TLS
//! handshake and the server's own processes on two cores, and a 10-skill
//! `add` ended 0.4-0.6 ms later for it (its `ls-refs` answer came 0.45 ms
//! later), a 100-skill one 1 ms later.
//! A thread of its own for each share of each call started ten threads
//! for a 10-skill `add`: each a clone, a stack, a fresh malloc arena to
//! fault in, and on two cores a wait for a core right when the work is.

use rayon::prelude::*;

/// `work` applied to `items` in up to one chunk per core (at most eight),
/// the outputs concatenated in input order. Each chunk is handed to
/// `work` whole, so per-thread state (an object database handle, a
/// parser) is set up once per chunk, not once per item. Fewer than
/// `min_parallel` items are done on this thread: below that, handing
/// work over costs more than it saves. A panic in a worker is a bug and
/// is re-raised here.
pub(crate) fn chunked<T: Sync, R: Send>(
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
pub(crate) fn each<T: Sync, R: Send>(
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

/// Runs `job` on the pool and waits for it without holding a thread:
/// for async code with disk- or CPU-bound work (staging a tree, packing
/// one), which the pool's threads then share with [`each`]'s. A panic in
/// `job` is a bug and is re-raised here.
pub(crate) async fn on_pool<T: Send + 'static>(job: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let run = move || {
        let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)));
    };
    match pool() {
        Some(pool) => pool.spawn(run),
        None => run(),
    }
    match rx.await {
        Ok(Ok(done)) => done,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        // The job above always sends, even when it panics.
        Err(_) => std::panic::resume_unwind(Box::new("a pool job ended without an answer")),
    }
}

/// The pool: a thread per core, at most eight, as for the threads it
/// replaced (each costs its creation, its stack's pages and its exit, and
/// staging many trees at once queues on the directory's lock and the
/// journal), started on first use. `None` when its threads cannot start:
/// the work then runs on the caller.
fn pool() -> Option<&'static rayon::ThreadPool> {
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
pub(crate) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

#[cfg(test)]
mod tests {
    use super::{chunked, cores, each, on_pool, pool};

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

    /// A job handed over from async code answers; its panic reaches the
    /// caller, and the pool goes on.
    #[test]
    fn a_pool_job_answers_and_its_panic_reaches_the_caller() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        assert_eq!(rt.block_on(on_pool(|| 6 * 7)), 42);
        let job = || -> u8 { panic!("a bug in a job") };
        let caught =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| rt.block_on(on_pool(job))));
        assert!(caught.is_err());
        assert_eq!(rt.block_on(on_pool(|| 1)), 1);
    }
}
