//! Every result names the server: `_meta["io.modelcontextprotocol/serverInfo"]`,
//! which the 2026-07-28 revision asks of servers (a SHOULD), as its clients
//! need not have sent `initialize`, whose answer names the server in its
//! body. The SDK adds it to `server/discover` and to the final result of
//! `subscriptions/listen` only; the handler adds it to each of its results
//! with [`Named::named`]. (`ping`, which the 2026-07-28 revision dropped,
//! still answers an empty object.)
//!
//! `_meta` is open in every result of every revision, so clients of the
//! older ones read past it.

use rmcp::model::{
    CallToolResult, GetPromptResult, GetSkillResult, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult, ListToolsResult,
    MetaObject, ReadResourceResult,
};

/// The `_meta` key naming the server, as the SDK spells it.
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// The server's name and version, as `initialize` gives them.
pub fn server_info() -> Implementation {
    Implementation::new("skillpm", env!("CARGO_PKG_VERSION"))
}

/// A result with a `_meta` object.
pub trait Named: Sized {
    fn meta(&mut self) -> &mut Option<MetaObject>;

    /// The result, with the server's name in its `_meta`.
    fn named(mut self) -> Self {
        if let Ok(info) = serde_json::to_value(server_info()) {
            let meta = self.meta().get_or_insert_with(MetaObject::new);
            meta.0.insert(SERVER_INFO_KEY.to_string(), info);
        }
        self
    }
}

macro_rules! named {
    ($($t:ty),*) => {
        $(impl Named for $t {
            fn meta(&mut self) -> &mut Option<MetaObject> {
                &mut self.meta
            }
        })*
    };
}

named!(
    CallToolResult,
    GetPromptResult,
    GetSkillResult,
    ListPromptsResult,
    ListResourceTemplatesResult,
    ListResourcesResult,
    ListSkillsResult,
    ListToolsResult,
    ReadResourceResult
);
