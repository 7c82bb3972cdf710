//! Serving HTTP connections with every resource bounded per client, shared
//! by both of skillpm's servers: the registry (`skillpm-registry`) and
//! `skillpm mcp --http`. One implementation, so a hole closed for one
//! server is closed for the other (SECURITY.md: "Servers bound every resource
//! per client").
//!
//! - [`listen`]: the listening socket and the default caps derived from
//!   the open-files limit;
//! - [`conns`]: the accept loop, header and idle timeouts, eviction of
//!   silent connections, request slots and small response buffers.

pub mod conns;
pub mod listen;
