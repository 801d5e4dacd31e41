//! The error type of MCP connections and builders.

use std::time::Duration;

/// Why an MCP harness could not be built or connected, or an MCP server could not be served.
///
/// Every variant names the server (the harness name given to the builder) so a message read
/// in a log tells which server failed.
///
/// ```
/// use hpd_agent::mcp::{McpError, McpServer};
/// use hpd_agent::{AgentBuilder, ScriptedChatClient};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), hpd_agent::BuildError> {
/// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
/// // HTTP serving needs a bearer token (or an explicit `allow_unauthenticated`).
/// let error = McpServer::new(agent).serve_http("127.0.0.1:0".parse().unwrap()).await.unwrap_err();
/// assert!(matches!(error, McpError::Invalid { .. }), "{error}");
/// # Ok(())
/// # }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The server's command could not be started.
    #[error("MCP server '{server}': could not start `{command}`: {source}")]
    Spawn {
        /// The harness name.
        server: String,
        /// The command that was run.
        command: String,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The `initialize` handshake failed.
    #[error("MCP server '{server}': the connection could not be set up: {message}")]
    Handshake {
        /// The harness name.
        server: String,
        /// What went wrong, with the last lines the server wrote to stderr when there are any.
        message: String,
    },
    /// `tools/list` failed or returned something that is not a tool list.
    #[error("MCP server '{server}': listing its tools failed: {message}")]
    ListTools {
        /// The harness name.
        server: String,
        /// What went wrong.
        message: String,
    },
    /// The server did not answer in time.
    #[error("MCP server '{server}' did not answer {what} within {} ms", .timeout.as_millis())]
    Timeout {
        /// The harness name.
        server: String,
        /// The request that timed out, e.g. `the initialize request`.
        what: String,
        /// The timeout that elapsed.
        timeout: Duration,
    },
    /// The builder was given a value that cannot work, e.g. an invalid header or an
    /// allowlisted function the server does not offer.
    #[error("MCP server '{server}': {message}")]
    Invalid {
        /// The harness name.
        server: String,
        /// What is wrong.
        message: String,
    },
    /// A request of the application (a resource read, a prompt, a completion) failed: the
    /// server answered with an error, or the connection is closed.
    #[error("MCP server '{server}': {method} failed: {message}")]
    Request {
        /// The harness name.
        server: String,
        /// The request, e.g. `resources/read`.
        method: String,
        /// What went wrong: the server's error message, or why there was no answer.
        message: String,
        /// The JSON-RPC error code when the server answered with an error (`-32602` invalid
        /// params, `-32002` resource not found before 2026-07-28, `-32601` a method the server
        /// does not offer).
        code: Option<i32>,
    },
    /// Serving an agent over MCP failed (binding the address, the transport).
    #[error("MCP server: {0}")]
    Serve(String),
}

/// Why a resource reader, a prompt or a completer of an [`McpServer`](super::McpServer) gave
/// no answer. The client gets the JSON-RPC error the protocol names for it.
///
/// ```
/// use hpd_agent::mcp::ProviderError;
///
/// let missing = ProviderError::NotFound;
/// assert_eq!(missing.to_string(), "not found");
/// let broken = ProviderError::failed("the database is unreachable");
/// assert_eq!(broken.to_string(), "the database is unreachable");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// There is nothing at this URI (or of this name): a resource read answers with the
    /// protocol's resource-not-found error (`-32002` up to 2025-11-25, `-32602` from
    /// 2026-07-28 on) carrying the URI in its `data`.
    #[error("not found")]
    NotFound,
    /// An argument or template variable is not acceptable: `-32602` (invalid params) with
    /// this message.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// Anything else: `-32603` (internal error) with this message.
    #[error("{0}")]
    Failed(String),
}

impl ProviderError {
    /// A [`Failed`](Self::Failed) error with this message.
    ///
    /// ```
    /// use hpd_agent::mcp::ProviderError;
    ///
    /// assert_eq!(ProviderError::failed("disk full"), ProviderError::Failed("disk full".into()));
    /// ```
    #[must_use]
    pub fn failed(message: impl Into<String>) -> Self {
        ProviderError::Failed(message.into())
    }
}
