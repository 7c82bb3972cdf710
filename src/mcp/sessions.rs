//! A bound on live Streamable HTTP sessions.
//!
//! The SDK's session manager starts a worker task for every `initialize`
//! and keeps it for five idle minutes, with no cap: any local process could
//! open sessions until the server ran out of memory. [`Capped`] admits
//! [`MAX_SESSIONS`] at once. A session gives its place back when its worker
//! ends, whether the client closed it (`DELETE /mcp`) or it went idle; a
//! newcomer beyond the cap is refused (the SDK answers 500 "create
//! session"), so the sessions already open keep working.
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
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Live sessions at once. A host keeps one per connected agent; this
/// leaves room for many agents and bounds what a flood can hold (each
/// session is a task and its channels, about tens of KiB).
pub const MAX_SESSIONS: usize = 64;

/// [`LocalSessionManager`] with at most `max` live sessions.
pub struct Capped {
    inner: LocalSessionManager,
    slots: Arc<Semaphore>,
    max: usize,
}

impl Capped {
    pub fn new(max: usize) -> Self {
        Capped {
            inner: LocalSessionManager::default(),
            slots: Arc::new(Semaphore::new(max)),
            max,
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
        let slot = self
            .slots
            .clone()
            .try_acquire_owned()
            .map_err(|_| CappedError::Full(self.max))?;
        let (id, inner) = self.inner.create_session().await?;
        Ok((id, Held { inner, _slot: slot }))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
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
