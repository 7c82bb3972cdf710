//! Single jobs handed from async code to a run's worker threads
//! ([`on_pool`]); the threads and the work shared over them are the
//! engine's ([`skillpm_engine::parallel`]), one pool per command, owned by
//! its [`Environment`](crate::engine::config::Environment).

pub(crate) use skillpm_engine::parallel::{cores, Workers};

/// Runs `job` on `workers` and waits for it without holding a thread:
/// for async code with disk- or CPU-bound work (staging a tree, packing
/// one), which the threads then share with [`Workers::each`]'s. A panic
/// in `job` is a bug and is re-raised here.
pub(crate) async fn on_pool<T: Send + 'static>(
    workers: &Workers,
    job: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = tokio::sync::oneshot::channel();
    workers.spawn(move || {
        let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)));
    });
    match rx.await {
        Ok(Ok(done)) => done,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        // The job above always sends, even when it panics.
        Err(_) => std::panic::resume_unwind(Box::new("a pool job ended without an answer")),
    }
}

#[cfg(test)]
mod tests {
    use super::{on_pool, Workers};

    /// A job handed over from async code answers; its panic reaches the
    /// caller, and the pool goes on. With one thread the job runs on the
    /// caller, with the same answers.
    #[test]
    fn a_pool_job_answers_and_its_panic_reaches_the_caller() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        for workers in [Workers::with_threads(2), Workers::with_threads(1)] {
            assert_eq!(rt.block_on(on_pool(&workers, || 6 * 7)), 42);
            let job = || -> u8 { panic!("a bug in a job") };
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                rt.block_on(on_pool(&workers, job))
            }));
            assert!(caught.is_err());
            assert_eq!(rt.block_on(on_pool(&workers, || 1)), 1);
        }
    }
}
