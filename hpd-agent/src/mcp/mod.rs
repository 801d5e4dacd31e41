//! MCP in both directions (cargo feature `mcp`), built on the official Rust SDK `rmcp`.
//!
//! - **Client.** [`McpHarness`] connects an MCP server, started as a child process over stdio
//!   or reached over streamable HTTP, and turns its tools into a [`DynamicHarness`], collapsed
//!   behind one container by default. Servers can also come from the JSON config
//!   (`mcp_servers`, see [`McpServerConfig`]) or [`AgentBuilder::with_mcp_server`]; both are
//!   connected by [`AgentBuilder::build_async`].
//! - **Server.** [`McpServer`] serves an agent's tools to MCP clients over stdio or streamable
//!   HTTP, collapsing per MCP session.
//!
//! Both directions together, offline: an agent's tools served on loopback and used by another
//! agent as one collapsed harness.
//!
//! ```
//! use hpd_agent::mcp::{McpHarness, McpServer};
//! use hpd_agent::{AgentBuilder, ChatResponse, HarnessBuilder, ScriptedChatClient, Tool, ToolCall, ToolResult};
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // The serving side: a plain harness with one tool. Its model is never asked.
//! let shout = Tool::new(
//!     "shout",
//!     "Upper-cases a text",
//!     json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
//!     |args, _ctx| async move { ToolResult::ok(args["text"].as_str().unwrap_or_default().to_uppercase()) },
//! );
//! let served = AgentBuilder::new()
//!     .with_harness(HarnessBuilder::new("Loud").with_tool(shout).build()?)
//!     .with_chat_client(ScriptedChatClient::new())
//!     .build()?;
//! let server = McpServer::new(served)
//!     .with_bearer_token("doc-token")
//!     .serve_http("127.0.0.1:0".parse()?)
//!     .await?;
//!
//! // The using side: the server is one collapsed harness, `Remote`.
//! let remote = McpHarness::http("Remote", server.url())
//!     .with_header("Authorization", "Bearer doc-token")
//!     .connect()
//!     .await?;
//! let model = ScriptedChatClient::with_replies([
//!     ChatResponse::tool_calls(vec![ToolCall::new("c1", "Remote", "{}")]),
//!     ChatResponse::tool_calls(vec![ToolCall::new(
//!         "c2",
//!         "call_function",
//!         r#"{"name": "shout", "arguments": {"text": "hi"}}"#,
//!     )]),
//!     ChatResponse::text("HI"),
//! ]);
//! let agent = AgentBuilder::new()
//!     .with_harness(remote)
//!     .with_chat_client(model.clone())
//!     .build()?;
//! agent.run("Shout hi").await?;
//! let requests = model.requests();
//! assert_eq!(requests[0].tool_names(), ["Remote", "call_function"]);
//! assert_eq!(requests[1].tool_names(), ["Remote", "call_function"]);
//! assert_eq!(requests[2].tool_result("c2"), Some(("HI", false)));
//! server.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! # Choices where the protocol leaves room
//!
//! - Result text: text blocks joined with newlines; `structuredContent` as compact JSON after
//!   them unless a text block already carries it (also when wrapped in a one-field object);
//!   images, audio and resources as a bracketed placeholder with their type and size; results
//!   longer than [`McpHarness::with_max_result_chars`] (default [`DEFAULT_MAX_RESULT_CHARS`]) become
//!   an error result. `isError` results reach the model with the server's text unchanged;
//!   the agent's [`Limits`](crate::config::Limits) then cut long results. A message over the stdio
//!   transport's 16 MiB line limit is dropped unread, so such a call ends at its timeout.
//! - A call that times out is followed by a ping; only a server that does not answer it
//!   either counts as down. A server that is down gets one restart attempt at the start of
//!   every following turn (and of every [`ToolSession::refresh`](crate::agent::ToolSession::refresh)),
//!   until one succeeds.
//! - A tool whose schema is not an object schema is left out (with a warning in the log); a
//!   schema without `"type"` is taken as `"type": "object"`. A listing whose entries do not
//!   all have the protocol's shape (a schema that is a string or `null`, a name that is no
//!   string) is read entry by entry, leaving out the entries that cannot be used, so one bad
//!   tool does not take the server's other tools with it.
//! - Protocol revisions: the client asks for the stateless 2026-07-28 first (`server/discover`,
//!   rmcp's `Auto` lifecycle) and otherwise uses the `initialize` handshake with 2025-11-25,
//!   which servers may answer with 2025-06-18; it prefers 2026-07-28 because that is what rmcp
//!   3.11 and current servers speak, and falls back because most deployed servers are older.
//!   A collapsing server offers revisions up to 2025-11-25, which have sessions: expansions
//!   live in the session. A flat server also offers 2026-07-28. A result that made tools visible (a container call, a recovered
//!   member) ends with the new tools, their descriptions and parameter schemas.
//! - A served function's [`FunctionContext::report_progress`](crate::FunctionContext::report_progress)
//!   becomes `notifications/progress` when the request carries a `progressToken`, and its
//!   [`FunctionContext::log`](crate::FunctionContext::log) `notifications/message` at or
//!   above the level the client set with `logging/setLevel` (`info` until it sets one); both
//!   are sent before the call's result.
//! - The HTTP server accepts requests without `Origin` (non-browser clients) and with a
//!   loopback origin; others must be allowed with [`McpServer::with_allowed_origin`].
//! - Tracing: connection, restarts, renames and rejected HTTP requests log under the target
//!   `hpd_agent::mcp`; a stdio server's stderr lines are logged there at debug level and the
//!   last five are quoted in errors.
//!
//! [`DynamicHarness`]: crate::harness::DynamicHarness
//! [`McpServerConfig`]: crate::config::McpServerConfig
//! [`AgentBuilder::with_mcp_server`]: crate::AgentBuilder::with_mcp_server
//! [`AgentBuilder::build_async`]: crate::AgentBuilder::build_async

mod answering;
mod asking;
mod builder;
mod client;
mod connection;
mod content;
mod error;
mod http_client;
mod http_server;
mod names;
mod oauth;
mod resource_server;
mod serve;
mod server;
mod source;

pub use answering::SamplingPolicy;
pub use client::{DEFAULT_MAX_RESULT_CHARS, DEFAULT_TIMEOUT, McpHarness};
pub use error::McpError;
pub use oauth::{
    AuthorizationHandler, FileTokenStore, LoopbackRedirect, MAX_SIGN_INS, McpOAuth,
    MemoryTokenStore, StoredTokens, TokenStore, TokenStoreError,
};
pub use resource_server::{
    DiscoveryError, JwtVerifier, ProtectedResource, StaticTokenVerifier, TokenRejected,
    TokenVerifier, VerifiedToken,
};
pub use server::{McpHttpServer, McpServer};
