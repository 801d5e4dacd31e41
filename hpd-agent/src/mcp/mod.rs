//! MCP in both directions (cargo feature `mcp`), built on the official Rust SDK `rmcp`.
//!
//! - **Client.** [`McpHarness`] connects an MCP server, started as a child process over stdio
//!   or reached over streamable HTTP, and turns its tools into a [`DynamicHarness`], collapsed
//!   behind one container by default. Servers can also come from the JSON config
//!   (`mcp_servers`, see [`McpServerConfig`]) or [`AgentBuilder::with_mcp_server`]; both are
//!   connected by [`AgentBuilder::build_async`].
//! - **Server.** [`McpServer`] serves an agent's tools to MCP clients over stdio or streamable
//!   HTTP, with collapsing: per MCP session in the `hide` and `append` layouts, without any
//!   state between requests in `fixed` (and `native`, served as `fixed`).
//! - **Resources, prompts, completion.** The server also serves what the application registers
//!   in code: [`ServedResource`]s, [`ServedResourceTemplate`]s and [`ServedPrompt`]s, with
//!   [`Completer`]s for their arguments, subscriptions fed by a [`ResourceNotifier`] and the
//!   2026-07-28 [`CacheHint`]s. A prompt can ask the client for sampling, elicitation and
//!   roots as a function can ([`PromptRequest#asking-the-client`]). The client offers a server's resources to the model as two
//!   functions of its harness, `{harness}_list_resources` and `{harness}_read_resource`, and everything to the
//!   application through [`McpClient`] ([`McpHarness::connect_client`]).
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
//!   A flat server and one in the `fixed` layout (or `native`, served as `fixed`) also offer
//!   2026-07-28 and handle each of its requests without session state: every collapsed member
//!   counts as loaded, so `call_function` runs it whether or not its container was called, with
//!   its harness's scoped middleware created for the call (see [`McpServer`]). A server in the
//!   `hide` or `append` layout offers revisions up to 2025-11-25, which have sessions: its
//!   expansions live in the session. In those layouts a result that made tools visible (a
//!   container call, a recovered member) ends with the new tools, their descriptions and
//!   parameter schemas. Over 2026-07-28 a changed tool list (a harness built at run time got a
//!   new list) is announced on the client's `subscriptions/listen` streams, which look for
//!   changes every 250 ms; over the session revisions the session gets
//!   `notifications/tools/list_changed` with its next call.
//! - A served function's [`FunctionContext::report_progress`](crate::FunctionContext::report_progress)
//!   becomes `notifications/progress` when the request carries a `progressToken`, and its
//!   [`FunctionContext::log`](crate::FunctionContext::log) `notifications/message` at or
//!   above the level the client set with `logging/setLevel` (`info` until it sets one); both
//!   are sent before the call's result.
//! - Resources (server): the lists of resources, templates and prompts are fixed while the
//!   server runs, so no `list_changed` is declared for them; a resource read answers with one
//!   content, the one at the URI asked; a URI that is a resource and matches a template is
//!   the resource's, one that matches several templates the first registered one's; template
//!   variables are percent-decoded; subscribing to a URI the server does not have is
//!   resource-not-found; completion is declared when there is a prompt or a template, and an
//!   argument without a completer completes to nothing. Without a hint, 2026-07-28 results
//!   carry `ttlMs: 0`, `cacheScope: "private"`; sessions of older revisions get no hints.
//! - Resources (client): `{harness}_list_resources` and `{harness}_read_resource` (qualified
//!   by the harness's name, since tool names are unique across an agent's harnesses and an
//!   agent may hold several servers with resources) are added when the server has a
//!   resource or a template (the first page of each listing, read at connect and whenever the
//!   tools are listed again), since some SDKs declare the capability with nothing behind it.
//!   A read's text becomes a text resource part, an image an image part, other binary data a
//!   binary resource part (a placeholder with its type and size for the model).
//! - The HTTP server accepts requests without `Origin` (non-browser clients) and with a
//!   loopback origin; others must be allowed with [`McpServer::with_allowed_origin`].
//! - Tracing: connection, restarts, renames and rejected HTTP requests log under the target
//!   `hpd_agent::mcp`; a stdio server's stderr lines are logged there at debug level and the
//!   last five are quoted in errors.
//!
//!
//! # Functions that ask the client
//!
//! A served function can ask the MCP client for a completion of its model
//! ([`FunctionContext::sample`](crate::FunctionContext::sample)), for input from its user
//! ([`FunctionContext::elicit`](crate::FunctionContext::elicit), a form or a URL) and for its
//! roots ([`FunctionContext::roots`](crate::FunctionContext::roots)):
//!
//! - On the session revisions (2025-06-18, 2025-11-25) each ask is a request to the client
//!   (`sampling/createMessage`, `elicitation/create`, `roots/list`) while the call runs.
//! - On 2026-07-28, which forbids requests to the client, a call whose function asks
//!   something not yet answered ends with an `input_required` result listing every ask made
//!   so far (asks started together, as with `tokio::join!`, are listed together; the key of
//!   each is the request's `with_key`, else `{kind}-{n}`), and a `requestState`. The client
//!   sends the call again with its answers (`inputResponses`) and the state, and the function
//!   runs again **from the start**: answered asks return at once, the next unanswered ones
//!   end the round. So a function that asks should do its side effects after its asks. The
//!   state carries the answers of earlier rounds, sealed with HMAC-SHA256 (rmcp's
//!   `RequestStateCodec`) and bound to the tool and its arguments, valid for 10 minutes; a
//!   state that was changed, belongs to another call or is too old is refused with JSON-RPC
//!   error -32602, as is an answer that is not the kind of result asked for. Extra answers are
//!   ignored; a missing one is asked for again. The key is random per [`McpServer`]; servers
//!   that share clients set one with [`McpServer::with_request_state_key`].
//! - Either way, a capability the client did not declare is not asked: the function gets
//!   [`AskError::NotDeclared`](crate::tool::AskError::NotDeclared) at once, and an accepted form
//!   whose content does not fit the schema reaches the function as
//!   [`AskError::InvalidAnswer`](crate::tool::AskError::InvalidAnswer). On 2026-07-28 a
//!   function that fails after such an ask needed the capability, as the revision sees it: the
//!   request then fails with `MissingRequiredClientCapabilityError` (-32021, HTTP 400), its
//!   `requiredCapabilities` naming what was asked and its message ending with the function's
//!   error; a function that goes on without the answer keeps its result.
//! - Approval through elicitation (a served function that needs approval) is such an ask,
//!   with the key `approval`.
//!
//! # A client that answers servers
//!
//! [`McpHarness`] declares sampling and elicitation (form and URL), and roots when it has
//! some, and answers the server's requests (and `input_required` results, sending the call
//! again with the answers and the `requestState` unchanged, at most 10 rounds):
//!
//! - **Sampling** goes to the model of the agent whose call is in flight (its
//!   [sampling handler](crate::AgentBuilder::with_sampling_handler), its own model by default),
//!   after the harness's [`SamplingPolicy`], which can refuse or rewrite the request. Only text
//!   messages are answered; a request without a call in flight is refused.
//! - **Elicitation** goes to the harness's
//!   [`with_elicitation_handler`](McpHarness::with_elicitation_handler), else to the calling
//!   agent's [elicitation handler](crate::AgentBuilder::with_elicitation_handler); without
//!   either the server gets an error. An accepted form gets the schema's defaults for the
//!   properties the answer left out (SEP-1034) and is checked against the schema before it is
//!   sent.
//! - **Roots** are those of [`McpHarness::with_roots`] or of the config entry's `roots`.
//!
//! A server's request names no call, so when calls of several agents to one harness are in
//! flight at once, the newest call's agent answers. An `input_required` round belongs to one
//! call, and that call's agent answers it.
//!
//! When the client cannot answer an `input_required` round (2026-07-28), the call's result
//! says so, and the server is not blamed: for instance "MCP server 'X' asked this client for
//! elicitation during 'wipe', and this agent has no elicitation handler to ask its user;
//! register one with AgentBuilder::with_elicitation_handler or
//! McpHarness::with_elicitation_handler". On the session revisions the server's request gets
//! the error, and the server's function decides what its result is.
//!
//! An elicitation handler whose user is not there now answers
//! [`AskError::Deferred`](crate::tool::AskError::Deferred). On 2026-07-28 the calling run
//! then pauses with the round saved (its questions and the server's `requestState`), and the
//! call is sent again with the answer and that state when the session resumes; on the session
//! revisions the server's request cannot outlive the call, so the server gets an error saying
//! the question was deferred and the run does not pause. See
//! [deferred questions](crate::approval#deferred-questions).
//!
//! [`DynamicHarness`]: crate::harness::DynamicHarness
//! [`McpServerConfig`]: crate::config::McpServerConfig
//! [`AgentBuilder::with_mcp_server`]: crate::AgentBuilder::with_mcp_server
//! [`AgentBuilder::build_async`]: crate::AgentBuilder::build_async

mod answering;
mod asking;
mod builder;
mod catalog;
mod client;
mod completion;
mod connection;
mod content;
mod error;
mod http_client;
mod http_server;
mod names;
mod oauth;
mod prompts;
mod remote;
mod resource_server;
mod resource_tools;
mod resources;
mod serve;
mod server;
mod source;
mod tasks;
mod uri_template;

pub use answering::SamplingPolicy;
pub use client::{DEFAULT_MAX_RESULT_CHARS, DEFAULT_TIMEOUT, McpHarness};
pub use completion::{Completer, CompletionRequest};
pub use error::{McpError, ProviderError};
pub use oauth::{
    AuthorizationHandler, FileTokenStore, LoopbackRedirect, MAX_SIGN_INS, McpOAuth,
    MemoryTokenStore, StoredTokens, TokenStore, TokenStoreError,
};
pub use prompts::{PromptArgument, PromptMessage, PromptRequest, PromptRole, ServedPrompt};
pub use remote::{CompletionTarget, Completions, McpClient, PromptInfo, PromptMessages};
pub use resource_server::{
    DiscoveryError, JwtVerifier, ProtectedResource, StaticTokenVerifier, TokenRejected,
    TokenVerifier, VerifiedToken,
};
pub use resources::{
    CacheHint, CacheScope, ResourceBody, ResourceInfo, ResourceNotifier, ResourceRequest,
    ResourceTemplateInfo, ServedResource, ServedResourceTemplate,
};
pub use server::{McpHttpServer, McpServer};
pub use tasks::{DEFAULT_MAX_TASKS, DEFAULT_TASK_TTL, TaskSupport};
