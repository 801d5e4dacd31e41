//! MCP servers as harnesses, and agents served over MCP (cargo feature `mcp`).

mod client;
mod connection;
mod content;
mod error;
mod http_server;
mod names;
mod serve;
mod server;

pub use client::{DEFAULT_MAX_RESULT_CHARS, DEFAULT_TIMEOUT, McpHarness};
pub use error::McpError;
pub use server::{McpHttpServer, McpServer};
