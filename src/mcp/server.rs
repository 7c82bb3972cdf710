//! The MCP handler: plain resources, the Skills extension, the three tools,
//! and change notifications for both protocol eras.
//!
//! Every request reads the current snapshot once (an `Arc` clone under a
//! read lock held for nanoseconds) and answers from it alone, so a reload
//! swapping in a new snapshot mid-request cannot mix two states.
//!
//! Change notifications: a 2025-11-25 session (with `initialize`) gets
//! `notifications/resources/list_changed` on its session, and
//! `notifications/resources/updated` for the URIs it `resources/subscribe`d;
//! a 2026-07-28 client (no `initialize`) gets the same two notifications on
//! each `subscriptions/listen` stream it opens, filtered by what it asked
//! for there. The SDK routes each era's requests; both paths read one
//! broadcast of [`Change`]s.

use super::loaded::Loaded;
use super::named::{self, Named};
use super::resources::{as_text, mime_type, Found, Snapshot};
use super::uri::{canonical, INDEX_URI, LIFECYCLE_URI};
use super::{prompts, skills_ext, tools};
use rmcp::model::{
    CallToolRequestMethod, CallToolRequestParams, CallToolResponse, ConstString, CustomRequest,
    CustomResult, ErrorCode, ErrorData, GetPromptRequestMethod, GetPromptRequestParams,
    GetPromptResponse, GetSkillRequestMethod, GetSkillRequestParams, GetSkillResult,
    ListPromptsRequestMethod, ListPromptsResult, ListResourceTemplatesRequestMethod,
    ListResourceTemplatesResult, ListResourcesRequestMethod, ListResourcesResult,
    ListSkillsRequestMethod, ListSkillsResult, ListToolsRequestMethod, ListToolsResult,
    PaginatedRequestParams, ReadResourceDirectoryRequestMethod, ReadResourceDirectoryRequestParams,
    ReadResourceDirectoryResult, ReadResourceRequestMethod, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents,
    ResourceUpdatedNotificationParam, ServerCapabilities, ServerConfig, SubscribeRequestMethod,
    SubscribeRequestParams, SubscriptionFilter, SubscriptionsListenRequestMethod,
    UnsubscribeRequestMethod, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{RoleServer, ServerHandler};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use tokio::sync::broadcast;

use base64::Engine as _;

/// What one reload changed: the URIs whose content was added, edited or
/// removed (canonical spelling), and whether the resource list changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub uris: BTreeSet<String>,
    pub list_changed: bool,
    /// Whether `prompts/list` (the skill commands) answers differently.
    pub prompts_changed: bool,
}

impl Change {
    /// What a listener that fell behind assumes: every list changed.
    fn everything() -> Arc<Change> {
        Arc::new(Change {
            uris: BTreeSet::new(),
            list_changed: true,
            prompts_changed: true,
        })
    }
}

/// State every session shares: the current snapshot and the change feed.
pub struct Shared {
    snapshot: RwLock<Arc<Snapshot>>,
    changes: broadcast::Sender<Arc<Change>>,
}

impl Shared {
    pub fn new(snapshot: Snapshot) -> Arc<Shared> {
        let (changes, _) = broadcast::channel(64);
        Arc::new(Shared {
            snapshot: RwLock::new(Arc::new(snapshot)),
            changes,
        })
    }

    pub fn current(&self) -> Arc<Snapshot> {
        self.snapshot
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Swaps `new` in whole and tells every listener what changed; returns
    /// the change, or `None` when nothing a client can see differs.
    pub fn swap(&self, new: Snapshot) -> Option<Arc<Change>> {
        let mut slot = self
            .snapshot
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let (uris, list_changed) = super::resources::changes(&slot, &new);
        let prompts_changed = super::prompts::list(&slot) != super::prompts::list(&new);
        *slot = Arc::new(new);
        drop(slot);
        if uris.is_empty() && !list_changed && !prompts_changed {
            return None;
        }
        let change = Arc::new(Change {
            uris,
            list_changed,
            prompts_changed,
        });
        // No receivers is fine: no session is listening yet.
        let _ = self.changes.send(change.clone());
        Some(change)
    }
}

/// One session's handler. Sessions share [`Shared`]; each has its own
/// `resources/subscribe` set.
#[derive(Clone)]
pub struct SkillServer {
    shared: Arc<Shared>,
    subscribed: Arc<Mutex<BTreeSet<String>>>,
    /// The skills this session fetched the instructions of.
    loaded: Arc<Mutex<Loaded>>,
}

impl SkillServer {
    pub fn new(shared: Arc<Shared>) -> Self {
        SkillServer {
            shared,
            subscribed: Arc::default(),
            loaded: Arc::default(),
        }
    }

    fn snapshot(&self) -> Arc<Snapshot> {
        self.shared.current()
    }

    /// `resources/subscribe` and `unsubscribe`: the URI, checked and in
    /// its canonical spelling, handed to `edit` with this session's set.
    fn edit_subscriptions(
        &self,
        uri: &str,
        edit: impl FnOnce(&mut BTreeSet<String>, String) -> Result<(), ErrorData>,
    ) -> Result<(), ErrorData> {
        let key = canonical(uri).map_err(refused)?;
        let mut subs = self
            .subscribed
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        edit(&mut subs, key)
    }

    /// Whether `key` (canonical) names a resource this server serves, now
    /// or once a skill appears: one it serves, or one no longer than a
    /// served URI can be. Clients subscribe to a skill's file before it
    /// exists to hear when it does (the MCP Python SDK's flow), so the
    /// bound is on size, not on the current snapshot alone.
    fn servable(&self, key: &str) -> bool {
        key.len() <= MAX_SUBSCRIBED_URI || self.snapshot().find(key).is_some()
    }
}

/// The most URIs one session may subscribe to, in either era: a session
/// is one client, and every served URI it could want fits many times.
pub const MAX_SUBSCRIPTIONS: usize = 1024;
/// The longest URI a session may subscribe to that is not served yet:
/// a skill's command and a file's path within the package path cap,
/// percent-encoded. With [`MAX_SUBSCRIPTIONS`], a session's set stays
/// within a few MiB whatever a client sends.
pub const MAX_SUBSCRIBED_URI: usize = 4096;

/// Entries per page of `skills/list` and `resources/list`. A page of 10 000
/// skills is ~5 MB of JSON, which some clients read in time quadratic in
/// the line length; 1 000 keeps a page near half a megabyte.
pub const PAGE_SIZE: usize = 1000;

/// One page of `items` (sorted by `key`): the entries after the cursor,
/// and the cursor of the next page. The cursor is the key of the last entry
/// sent, so a reload between two pages neither repeats nor skips an entry
/// that stayed.
fn page<T: Clone>(
    items: &[T],
    key: impl Fn(&T) -> &str,
    cursor: Option<&str>,
) -> (Vec<T>, Option<String>) {
    let start = cursor.map_or(0, |c| items.partition_point(|x| key(x) <= c));
    let end = items.len().min(start + PAGE_SIZE);
    let next = (end < items.len() && end > start).then(|| key(&items[end - 1]).to_string());
    (items[start..end].to_vec(), next)
}

/// The cursor a client sent back, if any. Every cursor this server hands
/// out is an entry's URI in canonical spelling (and stays valid when that
/// entry is gone after a reload); anything else is refused with -32602, as
/// MCP's pagination requires, rather than read as "from the start".
fn cursor(request: &Option<PaginatedRequestParams>) -> Result<Option<&str>, ErrorData> {
    cursor_where(request, |c| canonical(c).as_deref() == Ok(c))
}

/// The cursor of `prompts/list`: the name of the last prompt sent, so
/// anything a command could be named; empty or longer is -32602.
fn name_cursor(request: &Option<PaginatedRequestParams>) -> Result<Option<&str>, ErrorData> {
    cursor_where(request, |c| !c.is_empty() && c.len() <= MAX_SUBSCRIBED_URI)
}

fn cursor_where(
    request: &Option<PaginatedRequestParams>,
    valid: impl Fn(&str) -> bool,
) -> Result<Option<&str>, ErrorData> {
    match request.as_ref().and_then(|r| r.cursor.as_deref()) {
        Some(c) if !valid(c) => Err(ErrorData::invalid_params("invalid cursor", None)),
        c => Ok(c),
    }
}

/// The methods this server answers. A request for one of them whose
/// params do not fit the method's schema reaches
/// [`ServerHandler::on_custom_request`]: rmcp parses a request into an
/// untagged enum whose last variant, `CustomRequest`, takes any method, so
/// a known method with bad params falls through to it, and rmcp's default
/// answers -32601 "method not found". That hook is where -32602 is given.
const SERVED_METHODS: &[&str] = &[
    ListResourcesRequestMethod::VALUE,
    ListResourceTemplatesRequestMethod::VALUE,
    ReadResourceRequestMethod::VALUE,
    SubscribeRequestMethod::VALUE,
    UnsubscribeRequestMethod::VALUE,
    SubscriptionsListenRequestMethod::VALUE,
    ListToolsRequestMethod::VALUE,
    CallToolRequestMethod::VALUE,
    ListSkillsRequestMethod::VALUE,
    GetSkillRequestMethod::VALUE,
    ListPromptsRequestMethod::VALUE,
    GetPromptRequestMethod::VALUE,
    ReadResourceDirectoryRequestMethod::VALUE,
];

fn refused(e: super::uri::UriError) -> ErrorData {
    ErrorData::invalid_params(e.to_string(), None)
}

/// The error for a URI that names nothing served. The URI is the client's
/// own; it is shown only in part, so an error never costs more than the
/// request that caused it.
fn not_found(uri: &str) -> ErrorData {
    let shown: String = uri.chars().take(256).collect();
    let more = if shown.len() < uri.len() { "..." } else { "" };
    ErrorData::resource_not_found(format!("no served resource `{shown}{more}`"), None)
}

/// The index, the session's lifecycle, then every served file, as
/// `resources/list` entries.
fn resources(snap: &Snapshot) -> Vec<Resource> {
    let mut out = Vec::with_capacity(snap.skills.len() * 2 + 1);
    out.push(
        Resource::new(INDEX_URI, "index.json")
            .with_mime_type("application/json")
            .with_description("Agent Skills discovery index of the served skills")
            .with_size(snap.index_json.len() as u64),
    );
    out.push(
        Resource::new(LIFECYCLE_URI, "lifecycle.json")
            .with_mime_type("application/json")
            .with_description(
                "Each served skill's lifecycle in this session: eligible, loaded or active",
            ),
    );
    for (i, s) in snap.skills.iter().enumerate() {
        for f in s.files.iter().filter(|f| snap.lists(i, &f.uri)) {
            let skill_md = f.uri == s.uri;
            // The extension asks a skill's SKILL.md to be named as the
            // skill is; other files by their path.
            let name = match skill_md {
                true => s.name.clone(),
                false => format!("{}/{}", s.command, f.rel),
            };
            let mut r = Resource::new(f.uri.clone(), name)
                .with_mime_type(mime_type(&f.rel, f.text))
                .with_size(f.size);
            if skill_md {
                r = r.with_description(s.description.clone());
            }
            out.push(r);
        }
    }
    out
}

fn contents(uri: &str, rel: &str, bytes: &[u8]) -> ResourceContents {
    match as_text(bytes) {
        Some(text) => ResourceContents::text(text, uri).with_mime_type(mime_type(rel, true)),
        None => {
            ResourceContents::blob(base64::engine::general_purpose::STANDARD.encode(bytes), uri)
                .with_mime_type(mime_type(rel, false))
        }
    }
}

/// Forwards changes to a 2025-11-25 session until it goes away.
fn forward_to_session(server: &SkillServer, peer: rmcp::Peer<RoleServer>) {
    let mut rx = server.shared.changes.subscribe();
    let subscribed = server.subscribed.clone();
    tokio::spawn(async move {
        loop {
            let change = match rx.recv().await {
                Ok(c) => c,
                Err(broadcast::error::RecvError::Lagged(_)) => Change::everything(),
                Err(broadcast::error::RecvError::Closed) => return,
            };
            if change.list_changed && peer.notify_resource_list_changed().await.is_err() {
                return;
            }
            if change.prompts_changed && peer.notify_prompt_list_changed().await.is_err() {
                return;
            }
            let wanted: Vec<String> = {
                let subs = subscribed.lock().unwrap_or_else(PoisonError::into_inner);
                change.uris.intersection(&subs).cloned().collect()
            };
            for uri in wanted {
                let param = ResourceUpdatedNotificationParam::new(uri);
                if peer.notify_resource_updated(param).await.is_err() {
                    return;
                }
            }
        }
    });
}

#[allow(deprecated)] // resources/subscribe is the 2025-11-25 way; both eras are served.
impl ServerHandler for SkillServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_resources_subscribe()
            .enable_tools()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_skills_with_directory_read()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(named::server_info())
            .with_instructions(
                "Agent skills of this project. Hosts with the Skills extension use skills/list; \
                 others call list_skills or search_skills, then load_skill, and read bundled \
                 files as skill:// resources.",
            )
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        forward_to_session(self, context.peer.clone());
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let after = cursor(&request)?;
        let snap = self.snapshot();
        let all = snap.resources.get_or_init(|| {
            let mut all = resources(&snap);
            all.sort_by(|a, b| a.uri.cmp(&b.uri));
            all
        });
        let (items, next) = page(all, |r| r.uri.as_str(), after);
        let mut result = ListResourcesResult::with_all_items(items);
        result.next_cursor = next;
        Ok(result.named())
    }

    /// None are served; answered here so the empty list names the server.
    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(Vec::new()).named())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let key = canonical(&request.uri).map_err(refused)?;
        let snap = self.snapshot();
        if key == LIFECYCLE_URI {
            let doc = self
                .loaded
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .document(&snap.skills);
            let bytes = serde_json::to_vec_pretty(&doc).unwrap_or_default();
            let c = contents(&request.uri, "lifecycle.json", &bytes);
            return Ok(ReadResourceResult::new(vec![c]).named().into());
        }
        if let Some(s) = snap.skill_by_uri(&key) {
            self.loaded
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .record(s);
        }
        let c = match snap.find(&key) {
            // Read here when the snapshot knew the file unchanged rather
            // than read it; refused if it changed since.
            Some(Found::File(f)) => match f.bytes() {
                Ok(bytes) => contents(&request.uri, &f.rel, &bytes),
                Err(e) => return Err(ErrorData::resource_not_found(e.to_string(), None)),
            },
            Some(Found::Index(bytes)) => contents(&request.uri, "index.json", bytes),
            None => return Err(not_found(&request.uri)),
        };
        Ok(ReadResourceResult::new(vec![c]).named().into())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // Only what is or could be served may be subscribed, so what a
        // session keeps is bounded by the server, not by what a client
        // sends.
        self.edit_subscriptions(&request.uri, |subs, key| {
            if !self.servable(&key) {
                return Err(not_found(&request.uri));
            }
            if subs.len() >= MAX_SUBSCRIPTIONS && !subs.contains(&key) {
                return Err(ErrorData::invalid_params(
                    format!("a session may subscribe to at most {MAX_SUBSCRIPTIONS} resources"),
                    None,
                ));
            }
            subs.insert(key);
            Ok(())
        })
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.edit_subscriptions(&request.uri, |subs, key| {
            subs.remove(&key);
            Ok(())
        })
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::new();
        accepted.resources_list_changed = requested.resources_list_changed;
        accepted.prompts_list_changed = requested.prompts_list_changed;
        // As `resources/subscribe`: servable URIs only, at most
        // MAX_SUBSCRIPTIONS of them.
        accepted.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
            uris.iter()
                .filter_map(|u| {
                    canonical(u)
                        .ok()
                        .filter(|k| self.servable(k))
                        .map(|_| u.clone())
                })
                .take(MAX_SUBSCRIPTIONS)
                .collect()
        });
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mut rx = self.shared.changes.subscribe();
        let sink = context.sink().clone();
        let wants_list = sink.accepted().resources_list_changed == Some(true);
        let wants_prompts = sink.accepted().prompts_list_changed == Some(true);
        // The client's spelling is what it matches on; ours is canonical.
        let wanted: Vec<(String, String)> = sink
            .accepted()
            .resource_subscriptions
            .iter()
            .flatten()
            .filter_map(|u| canonical(u).ok().map(|k| (k, u.clone())))
            .collect();
        loop {
            let change = tokio::select! {
                _ = context.cancelled() => return Ok(()),
                r = rx.recv() => match r {
                    Ok(c) => c,
                    Err(broadcast::error::RecvError::Lagged(_)) => Change::everything(),
                    Err(broadcast::error::RecvError::Closed) => return Ok(()),
                },
            };
            if wants_list
                && change.list_changed
                && sink.notify_resource_list_changed().await.is_err()
            {
                return Ok(());
            }
            if wants_prompts
                && change.prompts_changed
                && sink.notify_prompt_list_changed().await.is_err()
            {
                return Ok(());
            }
            for (key, uri) in &wanted {
                if change.uris.contains(key)
                    && sink.notify_resource_updated(uri.clone()).await.is_err()
                {
                    return Ok(());
                }
            }
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::list()).named())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let snap = self.snapshot();
        let mut loaded = self.loaded.lock().unwrap_or_else(PoisonError::into_inner);
        tools::call(&snap, &request.name, &args, &mut loaded)
            .map(|r| r.named().into())
            .ok_or_else(|| ErrorData::invalid_params(format!("no tool `{}`", request.name), None))
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let all = prompts::list(&self.snapshot());
        let (items, next) = page(&all, |p| p.name.as_str(), name_cursor(&request)?);
        let mut result = ListPromptsResult::with_all_items(items);
        result.next_cursor = next;
        Ok(result.named())
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let snap = self.snapshot();
        let (command, result) = prompts::get(&snap, &request.name, request.arguments.as_ref())?;
        // The session invoked the skill's command: it is active.
        if let Some(s) = snap.skill_by_command(&command) {
            self.loaded
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .activate(s);
        }
        Ok(result.named().into())
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let method = request.method.as_str();
        // The method is the client's text, answered back: shown in part.
        let shown: String = method.chars().take(64).collect();
        Err(if SERVED_METHODS.contains(&method) {
            ErrorData::invalid_params(format!("invalid params for `{shown}`"), None)
        } else {
            ErrorData::new(ErrorCode::METHOD_NOT_FOUND, shown, None)
        })
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let snap = self.snapshot();
        let (items, next) = page(&snap.listed, |s| s.uri.as_str(), cursor(&request)?);
        let mut result = ListSkillsResult::with_all_items(items);
        result.next_cursor = next;
        Ok(result.named())
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        canonical(&request.uri).map_err(refused)?;
        let snap = self.snapshot();
        let found = snap
            .listed
            .binary_search_by(|s| s.uri.as_str().cmp(&request.uri))
            .ok()
            .map(|i| snap.listed[i].clone());
        found
            .map(|s| GetSkillResult::new(s).named())
            .ok_or_else(|| {
                ErrorData::invalid_params(format!("no served skill at `{}`", request.uri), None)
            })
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        let key = canonical(&request.uri).map_err(refused)?;
        skills_ext::directory(&self.snapshot(), &key)
            .map(|items| ReadResourceDirectoryResult::with_all_items(items).named())
            .ok_or_else(|| {
                ErrorData::invalid_params(
                    format!("not a served directory: `{}`", request.uri),
                    None,
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_walk_everything_once_and_survive_a_reload() {
        let items: Vec<String> = (0..2500)
            .map(|i| format!("skill://s{i:05}/SKILL.md"))
            .collect();
        let key = String::as_str;
        let (mut seen, mut cursor) = (Vec::new(), None::<String>);
        loop {
            let (got, next) = page(&items, key, cursor.as_deref());
            assert!(got.len() <= PAGE_SIZE);
            seen.extend(got);
            match next {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        assert_eq!(seen, items);
        // An entry removed before the next page neither shifts nor repeats
        // the entries after it.
        let (first, next) = page(&items, key, None);
        let mut reloaded = items.clone();
        reloaded.remove(3);
        let (second, _) = page(&reloaded, key, next.as_deref());
        assert_eq!(second[0], items[PAGE_SIZE]);
        assert_eq!(first.len(), PAGE_SIZE);
    }

    #[test]
    fn a_cursor_is_one_this_server_could_have_sent() {
        let with = |c: &str| Some(PaginatedRequestParams::default().with_cursor(Some(c.into())));
        let items: Vec<String> = (0..=PAGE_SIZE)
            .map(|i| format!("skill://s{i:05}/SKILL.md"))
            .collect();
        let (_, next) = page(&items, String::as_str, None);
        let next = next.expect("a second page");
        assert_eq!(cursor(&with(&next)).ok().flatten(), Some(next.as_str()));
        // An entry gone after a reload still names a place in the list.
        assert!(cursor(&with("skill://gone/SKILL.md")).is_ok());
        assert!(cursor(&None).is_ok_and(|c| c.is_none()));
        for bad in ["garbage", "", "skill://a/%53KILL.md", "skill://a/../b"] {
            assert!(cursor(&with(bad)).is_err(), "{bad}");
        }
    }
}
