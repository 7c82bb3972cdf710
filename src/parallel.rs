//! CPU-bound work over many items, spread over the cores (in contiguous
//! chunks, or item by item), results in input order.

use std::sync::atomic::{AtomicUsize, Ordering};

/// `work` applied to `items` in up to one chunk per core (at most eight),
/// the outputs concatenated in input order. Each chunk is handed to
/// `work` whole, so per-thread state (an object database handle, a
/// parser) is set up once per chunk, not once per item. Fewer than
/// `min_parallel` items are done on this thread: below that, starting
/// threads costs more than it saves. A panic in a worker is a bug and is
/// re-raised here.
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

/// `work` applied to each of `items` on up to one thread per core (at
/// most eight), each thread taking the next item as it finishes one, the
/// outputs in input order. Fewer than `min_parallel` items are done on
/// this thread, which otherwise waits. For items that cost a tenth of a
/// millisecond or more (a skill read whole and packed), where a thread
/// that starts late (0.6 ms after the first, right after a fetch) must
/// not be left a fixed share that then finishes last.
pub(crate) fn each<T: Sync, R: Send>(
    items: &[T],
    min_parallel: usize,
    work: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let threads = cores().min(8).min(items.len());
    if items.len() < min_parallel.max(2) || threads <= 1 {
        return items.iter().map(work).collect();
    }
    let next = AtomicUsize::new(0);
    let take = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else {
                return done;
            };
            done.push((i, work(item)));
        }
    };
    // Every share on a thread of its own, this one waiting: on two cores
    // a thread started while this one keeps working may wait milliseconds
    // for the other core (a 100-skill no-op took 18.6 ms with this thread
    // taking a chunk, 14.8 ms without).
    let mut all: Vec<(usize, R)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads).map(|_| s.spawn(take)).collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    all.sort_by_key(|(i, _)| *i);
    all.into_iter().map(|(_, r)| r).collect()
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
    use super::{chunked, each};

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
}
