//! [`McpServer`]: an agent's tools served over MCP, with collapsing.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::catalog::{Catalog, ServedCatalog};
use super::http_server::{ConnectionLimits, Guard, parse_origin};
use rmcp::model::RequestStateCodec;

use super::serve::{self, Identity};
use super::tasks::{FunctionTasks, TaskSettings, TaskStore};
use super::{
    CacheHint, McpError, ProtectedResource, ResourceNotifier, ServedPrompt, ServedResource,
    ServedResourceTemplate, TaskSupport,
};
use crate::Agent;
use crate::agent::PreparedTools;

/// Serves an agent's tools to MCP clients, over stdio or streamable HTTP.
///
/// Every MCP session gets its own [`ToolSession`](crate::agent::ToolSession), so collapsing works per
/// session: in the `hide` and `append` layouts `tools/list` shows the plain tools and the
/// containers; calling a container expands it for that session, answers with its members (each
/// with its description and parameter schema, for clients that do not list the tools again),
/// and sends `notifications/tools/list_changed`. Calling a hidden member by name works too (recovery),
/// following the agent's collapsing settings: with
/// [`CollapsingConfig::execute_recovered_calls`](crate::config::CollapsingConfig::execute_recovered_calls)
/// the call runs at once, otherwise it expands the container and asks to call again. Expansions
/// last for the session.
///
/// With the [`fixed`](crate::config::CollapsingLayout::Fixed) collapsing layout (and
/// [`native`](crate::config::CollapsingLayout::Native), which MCP has no form of and so is served as
/// `fixed`), `tools/list` shows the plain tools, the containers and the call tool
/// [`CALL_TOOL`](crate::config::CALL_TOOL) for the whole session; a container call answers with its
/// members' schemas, and no expansion sends `notifications/tools/list_changed`, so the host's
/// tool list, and with it the host's own prompt cache, never changes. [`without_collapse`](Self::without_collapse) lists every function instead. Calls run through
/// the agent's global middleware and their harness's scoped middleware, emit the agent's
/// events, and harnesses built at run time refresh their tool lists before each `tools/list`
/// and call.
///
/// Besides tools it serves what the application registers in code:
/// [`with_resource`](Self::with_resource), [`with_resource_template`](Self::with_resource_template)
/// and [`with_prompt`](Self::with_prompt), with completion for their arguments, subscriptions
/// ([`resource_notifier`](Self::resource_notifier)) and the 2026-07-28 caching hints
/// ([`with_list_cache_hint`](Self::with_list_cache_hint)). A server without them declares no
/// `resources`, `prompts` or `completions` capability.
///
/// Protocol revisions: every server offers those that have sessions (2025-06-18 and
/// 2025-11-25, with the older ones rmcp knows). A server in the `fixed` layout (the one MCP
/// serves `native` as) or built [`without_collapse`](Self::without_collapse) needs no state
/// between requests, so it also offers the stateless 2026-07-28 (`server/discover`, no
/// session), which rmcp 3.11 and [`McpHarness`](super::McpHarness) prefer. A request of that
/// revision is handled on its own, on any transport: `tools/list` shows the plain tools, the
/// containers and the call tool; a container call answers with its members' schemas and its
/// instructions, complete every time; and since the server cannot see the client's
/// conversation, every collapsed member counts as loaded, as if the conversation held its
/// container's result: a call of one, through
/// [`CALL_TOOL`](crate::config::CALL_TOOL) or by its name, runs at once, its arguments checked
/// against its schema (the `argument-validation` feature), with its harness's scoped
/// middleware created for that call alone, and without the harness's instructions after the
/// result (the container's result has them). An unknown name is answered with an error result
/// that lists every name a call can reach: the listed tools, then every member. The `hide`
/// and `append` layouts keep their expansions in the session, so such a server offers only the
/// revisions with sessions, and a client that asks for 2026-07-28 negotiates down.
///
/// Long calls can run as MCP tasks (the 2026-07-28 tasks extension):
/// [`with_task_support`](Self::with_task_support) names the functions that may or must, and a
/// call of one from a client that declares the extension answers at once with a task the
/// client polls (`tasks/get`), answers the function's asks through (`tasks/update`) and
/// cancels (`tasks/cancel`). Task state lives in the server process, shared by its sessions
/// and stateless requests, for [`with_task_ttl`](Self::with_task_ttl), at most
/// [`with_max_tasks`](Self::with_max_tasks) tasks at once.
///
/// ```no_run
/// use hpd_agent::mcp::McpServer;
/// use hpd_agent::{AgentBuilder, ScriptedChatClient};
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let agent = AgentBuilder::new()
///     .with_chat_client(ScriptedChatClient::new()) // the model is not used for serving
///     .build()?;
/// // Over HTTP on loopback, with a bearer token every request must carry.
/// let server = McpServer::new(agent.clone())
///     .with_bearer_token("a-long-random-secret")
///     .serve_http("127.0.0.1:8931".parse()?)
///     .await?;
/// println!("serving on {}", server.url());
/// server.wait().await;
/// // Or on this process's stdin and stdout, for clients that start it as a child process.
/// McpServer::new(agent).serve_stdio().await?;
/// # Ok(())
/// # }
/// # fn main() { let _ = demo(); }
/// ```
///
/// # HTTP security
///
/// Serving tools over HTTP hands them to whoever can reach the port. So
/// [`serve_http`](Self::serve_http) refuses to start without a [`with_bearer_token`](Self::with_bearer_token)
/// unless [`with_unauthenticated_access`](Self::with_unauthenticated_access) says so, and then answers
/// `401 Unauthorized` to every request without `Authorization: Bearer <token>`. A request
/// whose `Origin` header names a site other than a loopback one (or one allowed with
/// [`allow_origin`](Self::allow_origin)) gets `403 Forbidden`, against DNS rebinding; the
/// `Host` header must name a loopback host unless [`with_allowed_hosts`](Self::with_allowed_hosts) says
/// otherwise. No tool runs for a rejected request. Bind to `127.0.0.1` unless the server must
/// be reached from elsewhere.
#[derive(Debug, Clone)]
#[must_use]
pub struct McpServer {
    agent: Agent,
    flat: bool,
    identity: Identity,
    token: Option<String>,
    oauth: Option<ProtectedResource>,
    unauthenticated: bool,
    origins: Vec<String>,
    hosts: Option<Vec<String>>,
    limits: ConnectionLimits,
    catalog: Catalog,
    tasks: TaskSettings,
}

impl McpServer {
    /// A server for `agent`'s tools, named after the agent (or `hpd-agent` when it has no
    /// name).
    ///
    /// ```no_run
    /// use hpd_agent::mcp::McpServer;
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// // `no_run`: it serves this process's stdin and stdout until the client hangs up.
    /// let agent = AgentBuilder::new().with_name("tools").with_chat_client(ScriptedChatClient::new()).build()?;
    /// McpServer::new(agent).serve_stdio().await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn new(agent: Agent) -> Self {
        let name = if agent.name().is_empty() {
            "hpd-agent".to_owned()
        } else {
            agent.name().to_owned()
        };
        McpServer {
            agent,
            flat: false,
            identity: Identity {
                name,
                version: env!("CARGO_PKG_VERSION").to_owned(),
                instructions: None,
                request_state: Arc::new(RequestStateCodec::new_unchecked(random_key().to_vec())),
            },
            token: None,
            oauth: None,
            unauthenticated: false,
            origins: Vec::new(),
            hosts: None,
            limits: ConnectionLimits::default(),
            catalog: Catalog::default(),
            tasks: TaskSettings::default(),
        }
    }

    /// Lists every function, with no containers.
    ///
    /// ```
    /// use hpd_agent::mcp::McpServer;
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// // For clients that cannot refresh their tool list: every function, no containers.
    /// let server = McpServer::new(agent).without_collapse();
    /// # drop(server);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn without_collapse(mut self) -> Self {
        self.flat = true;
        self
    }

    /// `true` lists every function, with no containers; replaced by
    /// [`without_collapse`](Self::without_collapse).
    #[deprecated(
        since = "0.1.0",
        note = "use `without_collapse()` for `flat(true)`; collapsing is the default"
    )]
    pub fn flat(mut self, flat: bool) -> Self {
        self.flat = flat;
        self
    }

    /// The server name sent in the handshake.
    ///
    /// ```
    /// use hpd_agent::mcp::McpServer;
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// let server = McpServer::new(agent).with_name("acme-tools");
    /// # drop(server);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.identity.name = name.into();
        self
    }

    /// Renamed to [`with_name`](Self::with_name).
    #[deprecated(since = "0.1.0", note = "renamed to `with_name`")]
    pub fn name(self, name: impl Into<String>) -> Self {
        self.with_name(name)
    }

    /// The key that seals the `requestState` of 2026-07-28 `input_required` results (the
    /// answers a client gave in earlier rounds of a call that asks it for input; see
    /// [functions that ask the client](super#functions-that-ask-the-client)). By default
    /// each server makes a random one, so a state sealed by one process cannot be opened by
    /// another: servers behind a load balancer that share their clients need the same key
    /// (32 bytes from a secret, e.g. its SHA-256).
    ///
    /// ```
    /// use hpd_agent::mcp::McpServer;
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// let server = McpServer::new(agent).with_request_state_key([7; 32]);
    /// # drop(server);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_request_state_key(mut self, key: [u8; 32]) -> Self {
        self.identity.request_state = Arc::new(RequestStateCodec::new_unchecked(key.to_vec()));
        self
    }

    /// Instructions sent in the handshake (clients may show them to their model).
    ///
    /// ```
    /// use hpd_agent::mcp::McpServer;
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// let server = McpServer::new(agent).with_instructions("Call a container tool to see its functions.");
    /// # drop(server);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.identity.instructions = Some(instructions.into());
        self
    }

    /// Renamed to [`with_instructions`](Self::with_instructions).
    #[deprecated(since = "0.1.0", note = "renamed to `with_instructions`")]
    pub fn instructions(self, instructions: impl Into<String>) -> Self {
        self.with_instructions(instructions)
    }

    /// The bearer token every HTTP request must carry (`Authorization: Bearer <token>`).
    ///
    /// ```
    /// use hpd_agent::mcp::McpServer;
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// let server = McpServer::new(agent).with_bearer_token("s3cret").serve_http("127.0.0.1:0".parse()?).await?;
    /// // Clients send `Authorization: Bearer s3cret`; other requests get 401.
    /// server.shutdown().await;
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_bearer_token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// Renamed to [`with_bearer_token`](Self::with_bearer_token).
    #[deprecated(since = "0.1.0", note = "renamed to `with_bearer_token`")]
    pub fn bearer_token(self, token: impl Into<String>) -> Self {
        self.with_bearer_token(token)
    }

    /// Protects the HTTP server with OAuth: access tokens issued by the given authorization
    /// servers, checked by its [`TokenVerifier`](super::TokenVerifier), and the
    /// protected-resource metadata that tells clients where to get them (see
    /// [`ProtectedResource`]). Replaces a [`with_bearer_token`](Self::with_bearer_token).
    ///
    /// ```
    /// use hpd_agent::mcp::{McpServer, ProtectedResource, StaticTokenVerifier};
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// let server = McpServer::new(agent)
    ///     .with_oauth(ProtectedResource::new("https://auth.example.com", StaticTokenVerifier::new("t0ken-t0ken")))
    ///     .serve_http("127.0.0.1:0".parse()?)
    ///     .await?;
    /// let refused = reqwest::Client::new().post(server.url()).body("{}").send().await?;
    /// assert_eq!(refused.status(), 401);
    /// let challenge = refused.headers()["www-authenticate"].to_str()?;
    /// assert!(challenge.contains("/.well-known/oauth-protected-resource/mcp"));
    /// server.shutdown().await;
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_oauth(mut self, resource: ProtectedResource) -> Self {
        self.oauth = Some(resource);
        self
    }

    /// Renamed to [`with_oauth`](Self::with_oauth).
    #[deprecated(since = "0.1.0", note = "renamed to `with_oauth`")]
    pub fn oauth(self, resource: ProtectedResource) -> Self {
        self.with_oauth(resource)
    }

    /// Serves HTTP without a bearer token: anyone who can reach the port may call the tools.
    ///
    /// ```
    /// use hpd_agent::mcp::McpServer;
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// // Only for a port nobody else can reach.
    /// let server = McpServer::new(agent).with_unauthenticated_access().serve_http("127.0.0.1:0".parse()?).await?;
    /// server.shutdown().await;
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_unauthenticated_access(mut self) -> Self {
        self.unauthenticated = true;
        self
    }

    /// Renamed to [`with_unauthenticated_access`](Self::with_unauthenticated_access).
    #[deprecated(since = "0.1.0", note = "renamed to `with_unauthenticated_access`")]
    pub fn allow_unauthenticated(self) -> Self {
        self.with_unauthenticated_access()
    }

    /// Also accepts requests whose `Origin` is `origin` (`scheme://host[:port]`), besides
    /// loopback origins.
    ///
    /// ```
    /// use hpd_agent::mcp::McpServer;
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// // A browser app served from this origin may call the tools.
    /// let server = McpServer::new(agent).with_bearer_token("t").with_allowed_origin("https://app.example.com");
    /// # drop(server);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_allowed_origin(mut self, origin: impl Into<String>) -> Self {
        self.origins.push(origin.into());
        self
    }

    /// Renamed to [`with_allowed_origin`](Self::with_allowed_origin).
    #[deprecated(since = "0.1.0", note = "renamed to `with_allowed_origin`")]
    pub fn allow_origin(self, origin: impl Into<String>) -> Self {
        self.with_allowed_origin(origin)
    }

    /// The hosts (`host` or `host:port`) the `Host` header may name; default `localhost`,
    /// `127.0.0.1` and `::1`.
    ///
    /// ```
    /// use hpd_agent::mcp::McpServer;
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// // Behind a reverse proxy that forwards `Host: tools.internal`.
    /// let server = McpServer::new(agent).with_bearer_token("t").with_allowed_hosts(["tools.internal", "localhost"]);
    /// # drop(server);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_allowed_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.hosts = Some(hosts.into_iter().map(Into::into).collect());
        self
    }

    /// Renamed to [`with_allowed_hosts`](Self::with_allowed_hosts).
    #[deprecated(since = "0.1.0", note = "renamed to `with_allowed_hosts`")]
    pub fn allowed_hosts<I, S>(self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.with_allowed_hosts(hosts)
    }

    /// How long a request's headers may take to arrive, from the connection's first byte or
    /// the end of the previous request; default 10 seconds. A client that takes longer (a
    /// slow-loris attack holds connections this way) is disconnected.
    ///
    /// ```
    /// use std::time::Duration;
    /// use hpd_agent::mcp::McpServer;
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// let server = McpServer::new(agent).with_bearer_token("t").with_header_read_timeout(Duration::from_secs(5));
    /// # drop(server);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_header_read_timeout(mut self, timeout: Duration) -> Self {
        self.limits.header_read = timeout;
        self
    }

    /// Renamed to [`with_header_read_timeout`](Self::with_header_read_timeout).
    #[deprecated(since = "0.1.0", note = "renamed to `with_header_read_timeout`")]
    pub fn header_read_timeout(self, timeout: Duration) -> Self {
        self.with_header_read_timeout(timeout)
    }

    /// How long a connection may go without a byte read or written before it is closed;
    /// default 60 seconds. Open SSE streams stay open: the server sends them keep-alive
    /// pings every 15 seconds, so keep this longer than that.
    ///
    /// ```
    /// use std::time::Duration;
    /// use hpd_agent::mcp::McpServer;
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// let server = McpServer::new(agent).with_bearer_token("t").with_idle_timeout(Duration::from_secs(120));
    /// # drop(server);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_idle_timeout(mut self, timeout: Duration) -> Self {
        self.limits.idle = timeout;
        self
    }

    /// Renamed to [`with_idle_timeout`](Self::with_idle_timeout).
    #[deprecated(since = "0.1.0", note = "renamed to `with_idle_timeout`")]
    pub fn idle_timeout(self, timeout: Duration) -> Self {
        self.with_idle_timeout(timeout)
    }

    /// How many connections may be open at once; default 1024. Connections beyond it are
    /// closed as they arrive, and a warning says so (once until the count drops again).
    ///
    /// ```
    /// use hpd_agent::mcp::McpServer;
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// let server = McpServer::new(agent).with_bearer_token("t").with_max_connections(256);
    /// # drop(server);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_max_connections(mut self, max: usize) -> Self {
        self.limits.max_connections = max;
        self
    }

    /// Renamed to [`with_max_connections`](Self::with_max_connections).
    #[deprecated(since = "0.1.0", note = "renamed to `with_max_connections`")]
    pub fn max_connections(self, max: usize) -> Self {
        self.with_max_connections(max)
    }

    /// Serves a resource at a fixed URI (`resources/list`, `resources/read`,
    /// `resources/subscribe`). Reading a URI the server has neither as a resource nor through
    /// a template is answered with the protocol's resource-not-found error, carrying the URI.
    ///
    /// ```
    /// use hpd_agent::mcp::{McpHarness, McpServer, ServedResource};
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient, chat::ContentPart};
    ///
    /// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// let server = McpServer::new(agent)
    ///     .with_resource(ServedResource::text("docs://readme", "readme", "Run `make`.").with_description("How to build"))
    ///     .with_bearer_token("t")
    ///     .serve_http("127.0.0.1:0".parse()?)
    ///     .await?;
    /// let client = McpHarness::http("Docs", server.url()).with_header("Authorization", "Bearer t").connect_client().await?;
    /// assert_eq!(client.list_resources().await?[0].uri, "docs://readme");
    /// assert_eq!(
    ///     client.read_resource("docs://readme").await?,
    ///     [ContentPart::text_resource("docs://readme", Some("text/plain"), "Run `make`.")]
    /// );
    /// server.shutdown().await;
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_resource(mut self, resource: ServedResource) -> Self {
        self.catalog.add_resource(resource);
        self
    }

    /// Serves every URI that matches a URI template (`resources/templates/list`,
    /// `resources/read`, completion of its variables). A URI that is also a resource is read
    /// from the resource; one that matches several templates from the first registered.
    ///
    /// ```
    /// use hpd_agent::mcp::{McpServer, ProviderError, ResourceBody, ServedResourceTemplate};
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// let server = McpServer::new(agent).with_resource_template(ServedResourceTemplate::new(
    ///     "orders://{id}",
    ///     "order",
    ///     |request| async move {
    ///         let id: u32 = request.variable("id").unwrap_or_default().parse()
    ///             .map_err(|_| ProviderError::InvalidArgument("an order id is a number".into()))?;
    ///         Ok(ResourceBody::text(format!("order {id}: shipped")))
    ///     },
    /// ));
    /// # drop(server);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_resource_template(mut self, template: ServedResourceTemplate) -> Self {
        self.catalog.add_template(template);
        self
    }

    /// Serves a prompt (`prompts/list`, `prompts/get`, completion of its arguments). A prompt
    /// that asks the client ([`PromptRequest`](super::PromptRequest#asking-the-client)) is
    /// served as a function that asks is: requests to the client on the session revisions,
    /// `input_required` rounds on 2026-07-28.
    ///
    /// ```
    /// use hpd_agent::chat::ContentPart;
    /// use hpd_agent::mcp::{McpServer, PromptArgument, PromptMessage, ServedPrompt};
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// let review = ServedPrompt::new("review", "Reviews a diff", |request| async move {
    ///     let diff = request.argument("diff").unwrap_or_default().to_owned();
    ///     Ok(vec![PromptMessage::user(ContentPart::text(format!("Review this diff:\n{diff}")))])
    /// })
    /// .with_argument(PromptArgument::required("diff", "The unified diff"));
    /// let server = McpServer::new(agent).with_prompt(review);
    /// # drop(server);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_prompt(mut self, prompt: ServedPrompt) -> Self {
        self.catalog.add_prompt(prompt);
        self
    }

    /// The caching hint of `resources/list`, `resources/templates/list` and `prompts/list`
    /// results on 2026-07-28. Without one they are sent with `ttlMs: 0` and
    /// `cacheScope: "private"` (never reuse), the protocol layer's safe default; since what is
    /// registered here does not change while the server runs, a longer public hint is usually
    /// right. `tools/list` keeps that default: harnesses built at run time change it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use hpd_agent::mcp::{CacheHint, McpServer};
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// let server = McpServer::new(agent).with_list_cache_hint(CacheHint::public(Duration::from_secs(3600)));
    /// # drop(server);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_list_cache_hint(mut self, hint: CacheHint) -> Self {
        self.catalog.set_list_cache(hint);
        self
    }

    /// The handle through which the application says that a served resource changed, so
    /// subscribed clients get `notifications/resources/updated`. Every clone of the server
    /// (and every handle) reaches the same sessions.
    ///
    /// ```
    /// use hpd_agent::mcp::{McpServer, ServedResource};
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// let server = McpServer::new(agent).with_resource(ServedResource::text("app://config", "config", "{}"));
    /// let notifier = server.resource_notifier();
    /// notifier.updated("app://config");
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    #[must_use]
    pub fn resource_notifier(&self) -> ResourceNotifier {
        self.catalog.notifier()
    }

    /// Whether `function` runs as an MCP task (the 2026-07-28 tasks extension; see
    /// [`TaskSupport`]); every function is [`Forbidden`](TaskSupport::Forbidden) unless set
    /// here. A call that runs as a task answers at once with the task (`resultType: "task"`);
    /// the client polls `tasks/get` for its status and, once it is `completed`, its result
    /// (an error result too: `failed` is for protocol-level failures), answers the
    /// function's asks ([`FunctionContext::elicit`](crate::FunctionContext::elicit) and the
    /// others; the task is `input_required` meanwhile) with `tasks/update`, and cancels it
    /// with `tasks/cancel`, which cancels the call as a cancelled run does (the function sees
    /// its [`cancellation_token`](crate::FunctionContext::cancellation_token)). The function's
    /// progress reports become the task's status message. The server declares the
    /// extension once a function may run as a task.
    ///
    /// Task state lives in this server process, shared by all its sessions and stateless
    /// requests, for [`with_task_ttl`](Self::with_task_ttl) from a task's creation (see
    /// [`with_max_tasks`](Self::with_max_tasks) for the bound). `function` is the name a
    /// client calls (a collapsed member's name also when it is called through the call tool).
    ///
    /// ```
    /// use hpd_agent::mcp::{McpServer, TaskSupport};
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// let server = McpServer::new(agent)
    ///     .with_task_support("render_video", TaskSupport::Required)
    ///     .with_task_support("search", TaskSupport::Optional);
    /// # drop(server);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_task_support(mut self, function: impl Into<String>, support: TaskSupport) -> Self {
        self.tasks.functions.insert(
            function.into(),
            FunctionTasks {
                support,
                after_input: false,
            },
        );
        self
    }

    /// As [`with_task_support`](Self::with_task_support), but a call of `function` gathers
    /// its input before it becomes a task: it runs as an ordinary 2026-07-28 call, whose
    /// asks are answered in `input_required` rounds of the request (the multi round-trip
    /// flow), until the function calls
    /// [`FunctionContext::continue_as_task`](crate::FunctionContext::continue_as_task). There
    /// the request is answered with the task, and the call goes on as that task (its later
    /// asks wait for `tasks/update`). A call that ends before is answered with its result.
    /// For functions that ask a question up front and then work for long, so the client
    /// answers the question with the request instead of through a task.
    ///
    /// ```
    /// use hpd_agent::mcp::{McpServer, TaskSupport};
    /// use hpd_agent::tool::Elicitation;
    /// use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// let deploy = Tool::new("deploy", "Deploys a release", json!({"type": "object"}), |_, ctx| async move {
    ///     let form = json!({"type": "object", "properties": {"go": {"type": "boolean"}}, "required": ["go"]});
    ///     let answer = match ctx.elicit(Elicitation::form("Deploy now?", form)).await {
    ///         Ok(answer) => answer,
    ///         Err(error) => return ToolResult::error(error.to_string()),
    ///     };
    ///     if answer.field("go") != Some(&json!(true)) {
    ///         return ToolResult::ok("not deployed");
    ///     }
    ///     ctx.continue_as_task(); // the long part runs as a task
    ///     tokio::time::sleep(std::time::Duration::from_secs(60)).await;
    ///     ToolResult::ok("deployed")
    /// });
    /// let agent = AgentBuilder::new()
    ///     .with_harness(HarnessBuilder::new("Ops").with_tool(deploy).build()?)
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// let server = McpServer::new(agent).with_task_after_input("deploy", TaskSupport::Optional);
    /// # drop(server);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_task_after_input(
        mut self,
        function: impl Into<String>,
        support: TaskSupport,
    ) -> Self {
        self.tasks.functions.insert(
            function.into(),
            FunctionTasks {
                support,
                after_input: true,
            },
        );
        self
    }

    /// How long a task is kept from its creation (its `ttlMs`;
    /// [`DEFAULT_TASK_TTL`](super::DEFAULT_TASK_TTL), one hour, by default). When it is
    /// up the task is removed, and a call still running is cancelled: set it longer than the
    /// longest call plus the time a client takes to fetch the result.
    ///
    /// ```
    /// use std::time::Duration;
    /// use hpd_agent::mcp::McpServer;
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// let server = McpServer::new(agent).with_task_ttl(Duration::from_secs(15 * 60));
    /// # drop(server);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_task_ttl(mut self, ttl: Duration) -> Self {
        self.tasks.ttl = ttl;
        self
    }

    /// The most tasks the server keeps at once, running or finished
    /// ([`DEFAULT_MAX_TASKS`](super::DEFAULT_MAX_TASKS) by default), so clients cannot fill
    /// its memory: a call that would make one more is refused with a JSON-RPC error
    /// (`-32603`) that says so, before the function runs.
    ///
    /// ```
    /// use hpd_agent::mcp::McpServer;
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// let server = McpServer::new(agent).with_max_tasks(100);
    /// # drop(server);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_max_tasks(mut self, max: usize) -> Self {
        self.tasks.max_tasks = max;
        self
    }

    /// The task settings checked: each named function exists, the bound and the time are
    /// not zero.
    fn task_store(&self, shutdown: CancellationToken) -> Result<Arc<TaskStore>, McpError> {
        let invalid = |message: String| McpError::Invalid {
            server: self.identity.name.clone(),
            message,
        };
        if self.tasks.max_tasks == 0 {
            return Err(invalid("max_tasks must be at least 1".to_owned()));
        }
        if self.tasks.ttl.is_zero() {
            return Err(invalid("the task TTL must be longer than zero".to_owned()));
        }
        if !self.tasks.functions.is_empty() {
            let known = self.agent.flat_tool_session().visible_tool_names();
            let mut named: Vec<&String> = self.tasks.functions.keys().collect();
            named.sort();
            for name in named {
                if !known.contains(name) {
                    return Err(invalid(format!(
                        "with_task_support names the function '{name}', which the agent does not have; its functions are: {}",
                        known.join(", ")
                    )));
                }
            }
        }
        Ok(Arc::new(TaskStore::new(self.tasks.clone(), shutdown)))
    }

    /// The registrations checked, for serving.
    fn served_catalog(&self) -> Result<Arc<ServedCatalog>, McpError> {
        self.catalog
            .clone()
            .validate()
            .map(Arc::new)
            .map_err(|message| McpError::Invalid {
                server: self.identity.name.clone(),
                message,
            })
    }

    /// Serves one session on this process's stdin and stdout until the client closes it.
    /// Nothing else may write to stdout meanwhile (log to stderr).
    ///
    /// # Errors
    ///
    /// [`McpError::Invalid`] when the registered resources, templates or prompts do not fit
    /// together (see [`serve_http`](Self::serve_http)); [`McpError::Serve`] when the session
    /// cannot start (e.g. the client sent no `initialize`) or its transport fails.
    ///
    /// ```no_run
    /// use hpd_agent::mcp::McpServer;
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// // `no_run`: an MCP client starts this program and talks to it on stdin and stdout.
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// McpServer::new(agent).serve_stdio().await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn serve_stdio(self) -> Result<(), McpError> {
        let catalog = self.served_catalog()?;
        let tasks = self.task_store(CancellationToken::new())?;
        let tools = self
            .agent
            .served_tool_session(self.flat, &PreparedTools::default());
        serve::serve_stdio(tools, Arc::new(self.identity), catalog, tasks).await
    }

    /// Binds `addr` and serves streamable HTTP sessions (every path is the MCP endpoint) in
    /// the background until the returned [`McpHttpServer`] is shut down or dropped.
    ///
    /// # Errors
    ///
    /// [`McpError::Invalid`] without a bearer token or [`with_oauth`](Self::with_oauth) (and without
    /// [`with_unauthenticated_access`](Self::with_unauthenticated_access)), with an empty token or an
    /// origin that is not `scheme://host[:port]`, or when the registered resources,
    /// templates and prompts do not fit together (a URI, template or prompt name registered
    /// twice, a URI template with an unsupported form, a completion for an argument or
    /// variable that does not exist); [`McpError::Serve`] when `addr` cannot be bound.
    ///
    /// ```
    /// use hpd_agent::mcp::McpServer;
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// let server = McpServer::new(agent).with_bearer_token("token").serve_http("127.0.0.1:0".parse()?).await?;
    /// assert!(server.url().starts_with("http://127.0.0.1:"));
    /// server.shutdown().await;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn serve_http(self, addr: SocketAddr) -> Result<McpHttpServer, McpError> {
        let invalid = |message: &str| McpError::Invalid {
            server: self.identity.name.clone(),
            message: message.to_owned(),
        };
        let token = match (&self.token, self.unauthenticated) {
            // OAuth replaces the static token.
            _ if self.oauth.is_some() => None,
            (Some(token), _) if token.trim().is_empty() => {
                return Err(invalid("the bearer token is empty"));
            }
            (Some(token), _) => Some(token.clone()),
            (None, true) => None,
            (None, false) => {
                return Err(invalid(
                    "serve_http needs a bearer token: call bearer_token(..) or oauth(..), or allow_unauthenticated() to serve the tools to anyone who can reach the port",
                ));
            }
        };
        let catalog = self.served_catalog()?;
        if self.limits.max_connections == 0 {
            return Err(invalid("max_connections must be at least 1"));
        }
        if self.limits.header_read.is_zero() || self.limits.idle.is_zero() {
            return Err(invalid(
                "the header-read and idle timeouts must be longer than zero",
            ));
        }
        let mut allowed_origins = Vec::with_capacity(self.origins.len());
        for origin in &self.origins {
            match parse_origin(origin) {
                Some(parsed) => allowed_origins.push(parsed),
                None => {
                    return Err(invalid(&format!(
                        "the origin '{origin}' is not of the form scheme://host[:port]"
                    )));
                }
            }
        }
        let guard = Guard {
            token,
            allowed_origins,
            oauth: None,
        };
        let shutdown = CancellationToken::new();
        let tasks = self.task_store(shutdown.child_token())?;
        let agent = self.agent;
        let flat = self.flat;
        let session_token = shutdown.clone();
        // A request of the stateless revision is a session of its own: the prepared toolset is
        // shared between them.
        let prepared = PreparedTools::default();
        let serving = serve::serve_http(
            addr,
            move || {
                agent
                    .served_tool_session(flat, &prepared)
                    .with_cancellation(session_token.child_token())
            },
            Arc::new(self.identity),
            catalog,
            tasks,
            serve::HttpFront {
                guard,
                limits: self.limits,
                oauth: self.oauth,
                allowed_hosts: self.hosts,
            },
            shutdown,
        )
        .await?;
        tracing::info!(target: "hpd_agent::mcp", addr = %serving.local_addr, "serving MCP over HTTP");
        Ok(McpHttpServer { serving })
    }
}

/// A running streamable HTTP MCP server (see [`McpServer::serve_http`]). Dropping it stops the
/// server.
///
/// ```
/// use hpd_agent::mcp::{McpHarness, McpServer};
/// use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
/// use serde_json::json;
///
/// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let hello = Tool::new("hello", "Says hello", json!({"type": "object"}), |_, _| async { ToolResult::ok("hello") });
/// let agent = AgentBuilder::new()
///     .with_harness(HarnessBuilder::new("Greeter").with_tool(hello).build()?)
///     .with_chat_client(ScriptedChatClient::new())
///     .build()?;
/// let server = McpServer::new(agent).with_bearer_token("t").serve_http("127.0.0.1:0".parse()?).await?;
/// let remote = McpHarness::http("Remote", server.url()).with_header("Authorization", "Bearer t").connect().await?;
/// assert_eq!(remote.tool_names(), ["hello"]);
/// server.shutdown().await;
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct McpHttpServer {
    serving: serve::HttpServing,
}

impl McpHttpServer {
    /// The bound address (with the port the system chose for port 0).
    ///
    /// ```
    /// use hpd_agent::mcp::McpServer;
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// let server = McpServer::new(agent).with_bearer_token("t").serve_http("127.0.0.1:0".parse()?).await?;
    /// assert_ne!(server.local_addr().port(), 0); // the port the system chose
    /// server.shutdown().await;
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn local_addr(&self) -> SocketAddr {
        self.serving.local_addr
    }

    /// The endpoint URL, `http://{local_addr}/mcp`.
    ///
    /// ```
    /// use hpd_agent::mcp::McpServer;
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// let server = McpServer::new(agent).with_bearer_token("t").serve_http("127.0.0.1:0".parse()?).await?;
    /// assert_eq!(server.url(), format!("http://{}/mcp", server.local_addr()));
    /// server.shutdown().await;
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.serving.local_addr)
    }

    /// Stops accepting connections, ends the sessions and waits for the server task.
    ///
    /// ```
    /// use hpd_agent::mcp::McpServer;
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// let server = McpServer::new(agent).with_bearer_token("t").serve_http("127.0.0.1:0".parse()?).await?;
    /// let addr = server.local_addr();
    /// server.shutdown().await;
    /// assert!(tokio::net::TcpStream::connect(addr).await.is_err()); // the port is closed
    /// # Ok(())
    /// # }
    /// ```
    pub async fn shutdown(mut self) {
        self.serving.shutdown.cancel();
        if let Some(task) = self.serving.task.take() {
            let _ = task.await;
        }
    }

    /// Waits until the server stops (it runs until shut down or dropped).
    ///
    /// ```no_run
    /// use hpd_agent::mcp::McpServer;
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// // `no_run`: it serves until the process is stopped.
    /// let agent = AgentBuilder::new().with_chat_client(ScriptedChatClient::new()).build()?;
    /// let server = McpServer::new(agent).with_bearer_token(std::env::var("MCP_TOKEN")?).serve_http("127.0.0.1:8765".parse()?).await?;
    /// println!("serving on {}", server.url());
    /// server.wait().await;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn wait(mut self) {
        if let Some(task) = self.serving.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for McpHttpServer {
    fn drop(&mut self) {
        self.serving.shutdown.cancel();
    }
}

/// 32 random bytes from the operating system; should it fail, from the standard library's
/// randomly seeded hasher (itself seeded from the operating system).
fn random_key() -> [u8; 32] {
    let mut key = [0_u8; 32];
    if let Err(error) = getrandom::fill(&mut key) {
        use std::hash::BuildHasher;
        tracing::warn!(target: "hpd_agent::mcp", %error, "the OS random source failed; the request state key comes from the hasher's seed");
        for (i, chunk) in key.chunks_mut(8).enumerate() {
            let word = std::collections::hash_map::RandomState::new().hash_one(i);
            chunk.copy_from_slice(&word.to_le_bytes());
        }
    }
    key
}
