//! Single jobs handed from async code to the pool's threads
//! ([`on_pool`]); the pool and the work shared over it are the engine's
//! ([`skillpm_engine::parallel`]), one pool per process.

pub(crate) use skillpm_engine::parallel::{chunked, cores, each, pool};

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

#[cfg(test)]
mod tests {
    use super::on_pool;

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
