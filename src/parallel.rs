//! CPU-bound work over many items, spread over the cores in contiguous
//! chunks, results in input order.

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
    let work = &work;
    let mut parts = items.chunks(chunk);
    let first = parts.next().unwrap_or_default();
    std::thread::scope(|s| {
        let handles: Vec<_> = parts.map(|part| s.spawn(move || work(part))).collect();
        // This thread takes the first chunk rather than waiting idle: one
        // thread fewer to start.
        let mut out = work(first);
        for h in handles {
            out.extend(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        }
        out
    })
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
    use super::chunked;

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
}
