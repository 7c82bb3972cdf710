//! A bound on live Streamable HTTP sessions.
//!
//! The SDK's session manager starts a worker task for every `initialize`
//! and keeps it for five idle minutes, with no cap: any local process could
//! open sessions until the server ran out of memory. [`Capped`] keeps
//! [`MAX_SESSIONS`] at once. A session gives its place back when its worker
//! ends, whether the client closed it (`DELETE /mcp`) or it went idle. A
//! newcomer beyond the cap closes the session used least recently, so no
//! client, however many sessions it keeps alive with pings, locks others
//! out; the one closed gets 404 on its next request and initializes again,
//! as the protocol expects. (On loopback every client has the same
//! address, so a bound per peer could not tell them apart.)
//!
//! Restoring an unknown session id is not offered (the trait's default):
//! the local manager would create a fresh session for any id a client
//! names, outside the cap. The client re-initializes instead, as the
//! protocol expects after a 404.

use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Live sessions at once. A host keeps one per connected agent; this
/// leaves room for many agents and bounds what a flood can hold (each
/// session is a task and its channels, about tens of KiB).
pub const MAX_SESSIONS: usize = 64;

/// Live sessions by id, with when a request last named each.
type Used = Arc<Mutex<HashMap<SessionId, Instant>>>;

/// How long a newcomer waits for the place of the session it closed: the
/// place comes back when that session's worker has ended.
const EVICTION_WAIT: Duration = Duration::from_secs(2);

/// [`LocalSessionManager`] with at most `max` live sessions.
pub struct Capped {
    inner: LocalSessionManager,
    slots: Arc<Semaphore>,
    max: usize,
    /// Each live session, with when a request last named it.
    used: Used,
}

impl Capped {
    pub fn new(max: usize) -> Self {
        Capped {
            inner: LocalSessionManager::default(),
            slots: Arc::new(Semaphore::new(max)),
            max,
            used: Used::default(),
        }
    }

    fn used(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Instant>> {
        self.used.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn touch(&self, id: &SessionId) {
        if let Some(at) = self.used().get_mut(id) {
            *at = Instant::now();
        }
    }

    /// A place under the cap: a free one, else the place of the session
    /// used least recently, which is closed for it.
    async fn place(&self) -> Result<OwnedSemaphorePermit, CappedError> {
        if let Ok(slot) = self.slots.clone().try_acquire_owned() {
            return Ok(slot);
        }
        loop {
            let oldest = {
                let used = self.used();
                let oldest = used.iter().min_by_key(|(_, at)| **at);
                oldest.map(|(id, _)| id.clone())
            };
            let Some(oldest) = oldest else {
                return Err(CappedError::Full(self.max));
            };
            self.used().remove(&oldest);
            // A session that ended by itself is gone already: try the next.
            if self.inner.close_session(&oldest).await.is_ok() {
                break;
            }
        }
        let wait = tokio::time::timeout(EVICTION_WAIT, self.slots.clone().acquire_owned());
        match wait.await {
            Ok(Ok(slot)) => Ok(slot),
            _ => Err(CappedError::Full(self.max)),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CappedError {
    #[error("{0} MCP sessions are open, the most this server keeps; close one (DELETE /mcp) or let one expire")]
    Full(usize),
    #[error(transparent)]
    Session(#[from] LocalSessionManagerError),
}

/// A session's transport holding its place under the cap: the place is
/// given back when the SDK drops the transport, which it does when the
/// session's worker ends for any reason.
pub struct Held<T> {
    inner: T,
    _slot: OwnedSemaphorePermit,
    id: SessionId,
    used: Used,
}

impl<T> Drop for Held<T> {
    fn drop(&mut self) {
        let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        used.remove(&self.id);
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for Held<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<RoleServer>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    fn receive(
        &mut self,
    ) -> impl std::future::Future<Output = Option<rmcp::service::RxJsonRpcMessage<RoleServer>>> + Send
    {
        self.inner.receive()
    }

    fn close(&mut self) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

type Inner = LocalSessionManager;

impl SessionManager for Capped {
    type Error = CappedError;
    type Transport = Held<<Inner as SessionManager>::Transport>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let slot = self.place().await?;
        let (id, inner) = self.inner.create_session().await?;
        self.used().insert(id.clone(), Instant::now());
        let held = Held {
            inner,
            _slot: slot,
            id: id.clone(),
            used: self.used.clone(),
        };
        Ok((id, held))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.used().remove(id);
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.resume(id, last_event_id).await?)
    }
}
