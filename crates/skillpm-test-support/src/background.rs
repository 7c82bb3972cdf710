//! A server loop on its own thread and runtime, for as long as its handle
//! lives: what the TLS servers of this crate share.

use std::future::Future;

/// Runs a server; dropping it stops the loop and joins the thread
/// (in-flight connections die with the runtime).
pub(crate) struct Background {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Background {
    /// Serves `listener` (already bound, so its address is known) with
    /// `serve` on a two-worker runtime.
    pub(crate) fn start<F>(
        listener: std::net::TcpListener,
        serve: impl FnOnce(tokio::net::TcpListener) -> F + Send + 'static,
    ) -> Background
    where
        F: Future<Output = ()>,
    {
        listener.set_nonblocking(true).expect("nonblocking");
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                tokio::select! {
                    _ = serve(listener) => {}
                    _ = stopped => {}
                }
            });
            rt.shutdown_background();
        });
        Background {
            stop: Some(stop),
            thread: Some(thread),
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
