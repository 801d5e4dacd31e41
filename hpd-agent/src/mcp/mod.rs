//! MCP servers as harnesses, and agents served over MCP (cargo feature `mcp`).

mod connection;
mod content;
mod error;
mod http_server;
mod names;
mod serve;

pub use error::McpError;
