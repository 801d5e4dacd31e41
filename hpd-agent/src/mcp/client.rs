//! [`McpHarness`]: an MCP server as a [`DynamicHarness`].

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use super::McpError;
use super::SamplingPolicy;
use super::answering::{AnswerSettings, Answering};
use super::connection::{Connection, Endpoint};
use super::names::is_valid_tool_name;
use super::resource_tools::{LIST_RESOURCES, READ_RESOURCE};
use super::source::{Settings, Source};
use crate::collapse::SEARCH_TOOL;
use crate::config::CALL_TOOL;
use crate::tool::{ElicitationHandler, Root};
use crate::{
    HarnessBuilder, config::McpServerConfig, config::McpTransportConfig, harness::DynamicHarness,
};

/// The call timeout when none is given.
///
/// ```
/// use std::time::Duration;
/// use hpd_agent::mcp::{McpHarness, DEFAULT_TIMEOUT};
///
/// assert_eq!(DEFAULT_TIMEOUT, Duration::from_secs(60));
/// let patient = McpHarness::stdio("Build", "build-mcp-server", ["--stdio"]).with_timeout(DEFAULT_TIMEOUT * 5);
/// # drop(patient);
/// ```
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The longest result text passed on to the model when no other limit is given.
///
/// ```
/// use hpd_agent::mcp::{McpHarness, DEFAULT_MAX_RESULT_CHARS};
///
/// assert_eq!(DEFAULT_MAX_RESULT_CHARS, 100_000);
/// let terse = McpHarness::http("Docs", "http://127.0.0.1:3000/mcp").with_max_result_chars(DEFAULT_MAX_RESULT_CHARS / 10);
/// # drop(terse);
/// ```
pub const DEFAULT_MAX_RESULT_CHARS: usize = 100_000;

/// Connects an MCP server and offers its tools as a harness, collapsed by default.
///
/// [`stdio`](Self::stdio) starts the server as a child process speaking MCP on its standard
/// streams; [`http`](Self::http) reaches a streamable HTTP endpoint. [`connect`](Self::connect)
/// runs the handshake, lists the tools and returns a [`DynamicHarness`] to register like any
/// other harness.
///
/// ```no_run
/// use hpd_agent::mcp::McpHarness;
/// use std::time::Duration;
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let files = McpHarness::stdio(
///     "Filesystem",
///     "npx",
///     ["-y", "@modelcontextprotocol/server-filesystem", "/data"],
/// )
/// .with_collapse("Read and write files")
/// .with_functions(["read_text_file", "list_directory"])
/// .with_timeout(Duration::from_secs(30))
/// .connect()
/// .await?;
/// let search = McpHarness::http("Search", "http://127.0.0.1:3000/mcp")
///     .with_header("Authorization", "Bearer my-token")
///     .without_collapse()
///     .connect()
///     .await?;
/// let agent = hpd_agent::AgentBuilder::new()
///     .with_harness(files)
///     .with_harness(search)
///     .with_openai("gpt-4o-mini")
///     .build()?;
/// # drop(agent);
/// # Ok(())
/// # }
/// # fn main() { let _ = demo(); }
/// ```
///
/// # Behaviour
///
/// - **Names.** Tools keep the server's names and schemas. A name that is not a valid tool
///   name (`[A-Za-z0-9_-]{1,64}`), that another tool of the server already took after
///   sanitising, or that a collapsing layout's own tool uses (`call_function`, which an
///   [`McpServer`](super::McpServer) serving the `fixed` layout offers, and `tool_search`), is exposed as
///   `{harness}_{tool}` with every other character replaced by `_`
///   and cut to 64 characters; calls are sent with the server's name. Two tools that still
///   collide are an error naming both. A schema without `"type"` gets `"type": "object"`; a
///   tool whose schema is not an object schema is left out with a warning in the log.
/// - **Results.** Text content is joined with newlines, `structuredContent` is added as JSON
///   (unless a text block already repeats it), images, audio and resources are described in
///   a short placeholder, and `isError: true` makes an error result. A result longer than
///   [`with_max_result_chars`](Self::with_max_result_chars) becomes an error result saying so.
/// - **Tool list changes.** When the server sends `notifications/tools/list_changed`, the
///   tools are listed again when the next turn starts, so a turn always sees one stable list.
/// - **Failures never abort a run.** A call that gets no answer within the timeout is an error
///   result naming the server; when the server then does not answer a ping either, or when it
///   exits or closes the connection, it counts as down: its calls get error results naming
///   it, and it is started (or reconnected) again once at the start of each following turn
///   until that succeeds.
/// - **Lifetime.** The harness owns the connection: when the last clone of the harness (and
///   of the agents holding it) is dropped, the session ends and a stdio server's process is
///   stopped (its stdin closed, then terminated if it lingers). Dropping needs a Tokio
///   runtime to finish that work in the background.
/// - **Server requests.** The server's sampling, elicitation and roots requests (and its
///   `input_required` results) are answered by the calling agent's handlers, after
///   [`with_sampling_policy`](Self::with_sampling_policy), and by
///   [`with_elicitation_handler`](Self::with_elicitation_handler) and
///   [`with_roots`](Self::with_roots) when set (see
///   [a client that answers servers](super#a-client-that-answers-servers)).
/// - Events and `tracing` output are those of any harness; the connection logs under the
///   target `hpd_agent::mcp`, including the server's stderr lines at debug level.
#[derive(Debug, Clone)]
#[must_use]
pub struct McpHarness {
    name: String,
    endpoint: Endpoint,
    description: Option<String>,
    functions: Option<Vec<String>>,
    timeout: Duration,
    collapse: bool,
    max_result_chars: usize,
    reserved: Vec<String>,
    resources: bool,
    /// A mistake found while building, reported by `connect`.
    misplaced: Option<String>,
    /// How the server's sampling, elicitation and roots requests are answered.
    answers: AnswerSettings,
}

impl McpHarness {
    /// A server started as `command` with `args`, speaking MCP on its stdin and stdout.
    ///
    /// ```no_run
    /// use hpd_agent::mcp::McpHarness;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), hpd_agent::mcp::McpError> {
    /// // `no_run`: it starts `uvx mcp-server-time`, which must be installed.
    /// let time = McpHarness::stdio("Time", "uvx", ["mcp-server-time"]).connect().await?;
    /// assert!(time.is_collapsed());
    /// # Ok(())
    /// # }
    /// ```
    pub fn stdio<I, S>(name: impl Into<String>, command: impl Into<String>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        McpHarness::new(
            name.into(),
            Endpoint::Stdio {
                command: command.into(),
                args: args.into_iter().map(Into::into).collect(),
                env: BTreeMap::new(),
            },
        )
    }

    /// A server at a streamable HTTP endpoint such as `http://127.0.0.1:3000/mcp`.
    ///
    /// A request that meets a connection the server (or a proxy) closed or reset before it
    /// answered is sent again on a fresh connection, up to 3 times with backoff (the default
    /// [`RetryPolicy`](crate::providers::retry::RetryPolicy)); `rmcp` itself retries no request
    /// and only reconnects the server's event stream. A call sent again may run twice on a
    /// server that did run it and then closed without answering.
    ///
    /// ```no_run
    /// use hpd_agent::mcp::McpHarness;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), hpd_agent::mcp::McpError> {
    /// // `no_run`: it needs a server listening there.
    /// let search = McpHarness::http("Search", "http://127.0.0.1:3000/mcp")
    ///     .with_header("Authorization", "Bearer my-token")
    ///     .connect()
    ///     .await?;
    /// println!("{:?}", search.tool_names());
    /// # Ok(())
    /// # }
    /// ```
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        McpHarness::new(
            name.into(),
            Endpoint::Http {
                url: url.into(),
                headers: Vec::new(),
                oauth: None,
            },
        )
    }

    fn new(name: String, endpoint: Endpoint) -> Self {
        McpHarness {
            name,
            endpoint,
            description: None,
            functions: None,
            timeout: DEFAULT_TIMEOUT,
            collapse: true,
            max_result_chars: DEFAULT_MAX_RESULT_CHARS,
            // The collapsing layouts' own tools: a server tool of one of these names (another
            // agent's `McpServer` in the `fixed` layout serves `call_function`) would clash
            // with the agent's own in `fixed` and `native`.
            reserved: vec![CALL_TOOL.to_owned(), SEARCH_TOOL.to_owned()],
            resources: true,
            misplaced: None,
            answers: AnswerSettings::default(),
        }
    }

    /// Reviews the server's sampling requests before the calling agent's model answers them:
    /// lets them through, rewrites them or refuses them (see [`SamplingPolicy`]). Without a
    /// policy every request goes to the model as the server sent it.
    ///
    /// ```
    /// use hpd_agent::async_trait;
    /// use hpd_agent::mcp::{McpHarness, SamplingPolicy};
    /// use hpd_agent::tool::{AskError, SamplingRequest};
    ///
    /// struct Refuse;
    ///
    /// #[async_trait]
    /// impl SamplingPolicy for Refuse {
    ///     async fn review(&self, server: &str, _request: SamplingRequest) -> Result<SamplingRequest, AskError> {
    ///         Err(AskError::Refused(format!("{server} may not use the model")))
    ///     }
    /// }
    ///
    /// let search = McpHarness::http("Search", "http://127.0.0.1:3000/mcp").with_sampling_policy(Refuse);
    /// # drop(search);
    /// ```
    pub fn with_sampling_policy(mut self, policy: impl SamplingPolicy + 'static) -> Self {
        self.answers.policy = Some(Arc::new(policy));
        self
    }

    /// Answers the server's elicitation requests (questions for the user) with `handler`
    /// instead of the calling agent's
    /// [elicitation handler](crate::AgentBuilder::with_elicitation_handler).
    ///
    /// ```
    /// use hpd_agent::async_trait;
    /// use hpd_agent::mcp::McpHarness;
    /// use hpd_agent::tool::{AskError, Elicitation, ElicitationAnswer, ElicitationHandler};
    ///
    /// struct Decline;
    ///
    /// #[async_trait]
    /// impl ElicitationHandler for Decline {
    ///     async fn elicit(&self, _request: &Elicitation) -> Result<ElicitationAnswer, AskError> {
    ///         Ok(ElicitationAnswer::decline())
    ///     }
    /// }
    ///
    /// let search = McpHarness::http("Search", "http://127.0.0.1:3000/mcp").with_elicitation_handler(Decline);
    /// # drop(search);
    /// ```
    pub fn with_elicitation_handler(mut self, handler: impl ElicitationHandler + 'static) -> Self {
        self.answers.elicitation = Some(Arc::new(handler));
        self
    }

    /// The roots the server gets from `roots/list`; with roots set the client declares the
    /// `roots` capability (without, it does not, and the server cannot ask).
    ///
    /// ```
    /// use hpd_agent::mcp::McpHarness;
    /// use hpd_agent::tool::Root;
    ///
    /// let files = McpHarness::stdio("Files", "npx", ["-y", "@modelcontextprotocol/server-filesystem"])
    ///     .with_roots([Root::new("file:///srv/project").with_name("project")]);
    /// # drop(files);
    /// ```
    pub fn with_roots(mut self, roots: impl IntoIterator<Item = Root>) -> Self {
        self.answers.roots = Some(roots.into_iter().collect());
        self
    }

    /// Offers the server's tools behind one container with this description, which is the
    /// default way (described then by the server's `instructions`, else by a text naming the
    /// server).
    ///
    /// ```
    /// use hpd_agent::mcp::McpHarness;
    ///
    /// let git = McpHarness::stdio("Git", "uvx", ["mcp-server-git"]).with_collapse("Git history and diffs of the repository");
    /// # drop(git);
    /// ```
    pub fn with_collapse(mut self, description: impl Into<String>) -> Self {
        self.collapse = true;
        self.description = Some(description.into());
        self
    }

    /// Offers the tools directly instead of behind a container.
    ///
    /// ```
    /// use hpd_agent::mcp::McpHarness;
    ///
    /// // A server with two tools gains little from a container.
    /// let clock = McpHarness::stdio("Clock", "uvx", ["mcp-server-time"]).without_collapse();
    /// # drop(clock);
    /// ```
    pub fn without_collapse(mut self) -> Self {
        self.collapse = false;
        self
    }

    /// Leaves the server's resources out of the harness. By default a server that has
    /// resources or resource templates (checked when connecting and whenever its tools are
    /// listed again) adds two functions to the harness: `list_resources` (its
    /// resources and URI templates, as text) and `read_resource` (`{"uri": ...}`: text
    /// content as text, images as images the model can see when its provider takes them,
    /// other binary data as a placeholder with its type and size). They sit behind the
    /// container like the tools when the harness collapses, so they cost the model nothing
    /// until it opens it. A server tool of the same name keeps its name and the function is
    /// named `{harness}_list_resources` / `{harness}_read_resource` instead. With
    /// [`with_functions`](Self::with_functions) they are offered only when the list names
    /// them (`"list_resources"`, `"read_resource"`). The application reaches resources through
    /// [`McpClient`](super::McpClient) either way.
    ///
    /// ```
    /// use hpd_agent::mcp::McpHarness;
    ///
    /// // Only the tools: the model does not browse this server's files.
    /// let files = McpHarness::stdio("Files", "npx", ["-y", "@modelcontextprotocol/server-filesystem", "/data"]).without_resources();
    /// # drop(files);
    /// ```
    pub fn without_resources(mut self) -> Self {
        self.resources = false;
        self
    }

    /// The container's description; replaced by [`with_collapse`](Self::with_collapse).
    #[deprecated(since = "0.1.0", note = "use `with_collapse(description)`")]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Offers only these tools (by the server's names). [`connect`](Self::connect) fails for a
    /// name the server does not have; a later tool list without one of them just leaves it out.
    ///
    /// ```
    /// use hpd_agent::mcp::McpHarness;
    ///
    /// let files = McpHarness::stdio("Files", "npx", ["-y", "@modelcontextprotocol/server-filesystem", "/data"])
    ///     .with_functions(["read_text_file", "list_directory"]); // read-only subset
    /// # drop(files);
    /// ```
    pub fn with_functions<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.functions = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Renamed to [`with_functions`](Self::with_functions).
    #[deprecated(since = "0.1.0", note = "renamed to `with_functions`")]
    pub fn functions<I, S>(self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.with_functions(names)
    }

    /// How long a call, the handshake or a tool listing may take (default 60 s).
    ///
    /// ```
    /// use std::time::Duration;
    /// use hpd_agent::mcp::McpHarness;
    ///
    /// let quick = McpHarness::http("Lookup", "http://127.0.0.1:3000/mcp").with_timeout(Duration::from_secs(5));
    /// # drop(quick);
    /// ```
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Renamed to [`with_timeout`](Self::with_timeout).
    #[deprecated(since = "0.1.0", note = "renamed to `with_timeout`")]
    pub fn timeout(self, timeout: Duration) -> Self {
        self.with_timeout(timeout)
    }

    /// `false` offers the tools directly; replaced by [`without_collapse`](Self::without_collapse)
    /// (collapsing is the default).
    #[deprecated(
        since = "0.1.0",
        note = "use `without_collapse()` for `collapse(false)`; collapsing is the default"
    )]
    pub fn collapse(mut self, collapse: bool) -> Self {
        self.collapse = collapse;
        self
    }

    /// Results longer than this many characters become an error result (default 100,000).
    ///
    /// ```
    /// use hpd_agent::mcp::McpHarness;
    ///
    /// let logs = McpHarness::http("Logs", "http://127.0.0.1:3000/mcp").with_max_result_chars(20_000);
    /// # drop(logs);
    /// ```
    pub fn with_max_result_chars(mut self, max: usize) -> Self {
        self.max_result_chars = max;
        self
    }

    /// Renamed to [`with_max_result_chars`](Self::with_max_result_chars).
    #[deprecated(since = "0.1.0", note = "renamed to `with_max_result_chars`")]
    pub fn max_result_chars(self, max: usize) -> Self {
        self.with_max_result_chars(max)
    }

    /// Adds an HTTP header sent with every request, e.g. `Authorization`. Only for
    /// [`http`](Self::http) servers.
    ///
    /// ```
    /// use hpd_agent::mcp::McpHarness;
    ///
    /// let token = std::env::var("SEARCH_TOKEN").unwrap_or_default();
    /// let search = McpHarness::http("Search", "https://mcp.example.invalid/mcp").with_header("Authorization", format!("Bearer {token}"));
    /// # drop(search);
    /// ```
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        match &mut self.endpoint {
            Endpoint::Http { headers, .. } => headers.push((name.into(), value.into())),
            Endpoint::Stdio { .. } => {
                self.misplaced = Some("header() is only for HTTP servers".to_owned())
            }
        }
        self
    }

    /// Renamed to [`with_header`](Self::with_header).
    #[deprecated(since = "0.1.0", note = "renamed to `with_header`")]
    pub fn header(self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.with_header(name, value)
    }

    /// Signs in with OAuth 2.1 to a server behind an authorization server (see
    /// [`McpOAuth`](super::McpOAuth)): a `401` (or a `403` asking for more scopes) makes the
    /// client discover the authorization server, identify itself, send the user through the
    /// handler's browser step and keep the tokens, refreshed as they expire. Only for
    /// [`http`](Self::http) servers.
    ///
    /// ```no_run
    /// use hpd_agent::mcp::{LoopbackRedirect, McpHarness, McpOAuth};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// // `no_run`: it signs in at a real server.
    /// let wiki = McpHarness::http("Wiki", "https://wiki.example.com/mcp")
    ///     .with_oauth(McpOAuth::new(LoopbackRedirect::bind(0).await?))
    ///     .connect()
    ///     .await?;
    /// # drop(wiki);
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_oauth(mut self, oauth: super::McpOAuth) -> Self {
        match &mut self.endpoint {
            Endpoint::Http { oauth: slot, .. } => *slot = Some(oauth),
            Endpoint::Stdio { .. } => {
                self.misplaced = Some("oauth() is only for HTTP servers".to_owned())
            }
        }
        self
    }

    /// Renamed to [`with_oauth`](Self::with_oauth).
    #[deprecated(since = "0.1.0", note = "renamed to `with_oauth`")]
    pub fn oauth(self, oauth: super::McpOAuth) -> Self {
        self.with_oauth(oauth)
    }

    /// Sets an environment variable of the server process. Only for [`stdio`](Self::stdio)
    /// servers.
    ///
    /// ```
    /// use hpd_agent::mcp::McpHarness;
    ///
    /// let github = McpHarness::stdio("GitHub", "github-mcp-server", ["stdio"])
    ///     .with_env("GITHUB_PERSONAL_ACCESS_TOKEN", std::env::var("GITHUB_TOKEN").unwrap_or_default());
    /// # drop(github);
    /// ```
    pub fn with_env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        match &mut self.endpoint {
            Endpoint::Stdio { env, .. } => {
                env.insert(key.into(), value.into());
            }
            Endpoint::Http { .. } => {
                self.misplaced = Some("env() is only for stdio servers".to_owned())
            }
        }
        self
    }

    /// Renamed to [`with_env`](Self::with_env).
    #[deprecated(since = "0.1.0", note = "renamed to `with_env`")]
    pub fn env(self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.with_env(key, value)
    }

    /// Names other tools of the agent already use: a server tool of one of these names is
    /// exposed as `{harness}_{tool}` instead.
    pub(crate) fn reserve_names(mut self, names: impl IntoIterator<Item = String>) -> Self {
        self.reserved.extend(names);
        self
    }

    /// The harness name.
    ///
    /// ```
    /// use hpd_agent::mcp::McpHarness;
    ///
    /// assert_eq!(McpHarness::stdio("Time", "uvx", ["mcp-server-time"]).name(), "Time");
    /// ```
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Starts or reaches the server, runs the handshake and lists its tools.
    ///
    /// # Errors
    ///
    /// [`McpError::Spawn`] when the command cannot be started, [`McpError::Handshake`] or
    /// [`McpError::Timeout`] when the server does not complete the handshake,
    /// [`McpError::ListTools`] when its tool list cannot be read, and [`McpError::Invalid`]
    /// for an invalid harness name, header, URL, an allowlisted function the server does not
    /// offer, or two tools whose exposed names collide.
    ///
    /// ```
    /// use hpd_agent::mcp::{McpError, McpHarness};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let error = McpHarness::stdio("Missing", "/nonexistent/mcp-server", ["--stdio"]).connect().await.unwrap_err();
    /// assert!(matches!(error, McpError::Spawn { .. }));
    /// assert!(error.to_string().starts_with("MCP server 'Missing': could not start"));
    /// # }
    /// ```
    pub async fn connect(self) -> Result<DynamicHarness, McpError> {
        Ok(self.connect_client().await?.harness())
    }

    /// Connects as [`connect`](Self::connect) does, and returns the harness together with the
    /// server's resources, prompts and completion for the application (see [`McpClient`]).
    ///
    /// # Errors
    ///
    /// As [`connect`](Self::connect).
    ///
    /// ```no_run
    /// use hpd_agent::mcp::McpHarness;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), hpd_agent::mcp::McpError> {
    /// // `no_run`: it starts the reference server, which must be installed.
    /// let everything = McpHarness::stdio("Everything", "npx", ["-y", "@modelcontextprotocol/server-everything"]).connect_client().await?;
    /// for prompt in everything.list_prompts().await? {
    ///     println!("{}: {}", prompt.name, prompt.description.unwrap_or_default());
    /// }
    /// let harness = everything.harness(); // for AgentBuilder::with_harness
    /// # drop(harness);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// [`McpClient`]: super::McpClient
    pub async fn connect_client(self) -> Result<super::McpClient, McpError> {
        if let Some(message) = self.misplaced {
            return Err(McpError::Invalid {
                server: self.name,
                message,
            });
        }
        if !is_valid_tool_name(&self.name) {
            return Err(McpError::Invalid {
                server: self.name.clone(),
                message: format!(
                    "'{}' is not a valid harness name: names must match [A-Za-z0-9_-]{{1,64}}",
                    self.name
                ),
            });
        }
        let answering = Arc::new(Answering::new(self.answers.clone()));
        let connection =
            Connection::connect(&self.name, &self.endpoint, self.timeout, answering.clone())
                .await?;
        let remote = connection.list_tools(self.timeout).await?;
        if let Some(functions) = &self.functions {
            let resources = self.resources
                && connection
                    .capabilities()
                    .is_some_and(|capabilities| capabilities.resources.is_some());
            for function in functions {
                let resource_function =
                    [LIST_RESOURCES, READ_RESOURCE].contains(&function.as_str());
                let offered = remote.iter().any(|tool| &tool.name == function)
                    || (resources && resource_function);
                if !offered {
                    let available: Vec<&str> = remote.iter().map(|t| t.name.as_str()).collect();
                    return Err(McpError::Invalid {
                        server: self.name.clone(),
                        message: format!(
                            "it has no tool '{function}'; its tools: {}",
                            available.join(", ")
                        ),
                    });
                }
            }
        }
        let description = self
            .description
            .clone()
            .or_else(|| connection.instructions())
            .unwrap_or_else(|| format!("Tools of the MCP server '{}'", self.name));
        let source = Arc::new(Source::new(
            Settings {
                name: self.name.clone(),
                endpoint: self.endpoint.clone(),
                timeout: self.timeout,
                max_result_chars: self.max_result_chars,
                functions: self.functions.clone(),
                reserved: self.reserved.clone(),
                resources: self.resources,
                answering,
            },
            connection,
        ));
        if let Some(connection) = source.current_connection() {
            source.probe_resources(&connection).await;
        }
        let tools = source.tools(&remote, true)?;
        let mut builder = HarnessBuilder::new(self.name.clone()).with_tools(tools);
        if self.collapse {
            builder = builder.with_collapse(description);
        }
        // The turn hook owns the source; the tools only point to it, since the source's
        // updater holds the tool list: the harness owns the hook, so the source (and the
        // connection) lives exactly as long as the harness.
        let owner = Arc::clone(&source);
        builder = builder.before_turn(move || Arc::clone(&owner).before_turn());
        let harness = builder.build().map_err(|error| McpError::Invalid {
            server: self.name.clone(),
            message: error.to_string(),
        })?;
        source.set_updater(harness.updater());
        Ok(super::McpClient::new(harness, source))
    }
}

/// The sign-in an `auth` entry describes: a loopback redirect on its port (the authorization
/// URL printed to stderr), its client identity, scopes and token file.
fn oauth_from_config(auth: &crate::config::McpAuthConfig) -> Result<super::McpOAuth, String> {
    let redirect = super::LoopbackRedirect::bind_now(auth.redirect_port.unwrap_or(0))
        .map_err(|e| format!("the OAuth redirect port cannot be bound: {e}"))?;
    let mut oauth = super::McpOAuth::new(redirect);
    if let Some(url) = &auth.client_metadata_url {
        oauth = oauth.with_client_metadata_url(url);
    }
    if let Some(client_id) = &auth.client_id {
        oauth = oauth.with_client_id(client_id);
    }
    if let Some(secret) = &auth.client_secret {
        oauth = oauth.with_client_secret(secret);
    }
    if !auth.scopes.is_empty() {
        oauth = oauth.with_scopes(auth.scopes.iter().cloned());
    }
    if let Some(file) = &auth.token_file {
        oauth = oauth.with_token_store(super::FileTokenStore::new(file));
    }
    Ok(oauth)
}

impl From<&McpServerConfig> for McpHarness {
    /// The builder an `mcp_servers` entry describes.
    fn from(config: &McpServerConfig) -> Self {
        let mut harness = match &config.transport {
            McpTransportConfig::Stdio { command, args, env } => {
                let mut harness = McpHarness::stdio(&config.name, command, args.iter().cloned());
                for (key, value) in env {
                    harness = harness.with_env(key, value);
                }
                harness
            }
            McpTransportConfig::Http { url, headers } => {
                let mut harness = McpHarness::http(&config.name, url);
                for (name, value) in headers {
                    harness = harness.with_header(name, value);
                }
                match config.auth.as_ref().map(oauth_from_config) {
                    Some(Ok(oauth)) => harness = harness.with_oauth(oauth),
                    Some(Err(error)) => harness.misplaced = Some(error),
                    None => {}
                }
                harness
            }
        };
        if let Some(description) = &config.description {
            harness.description = Some(description.clone());
        }
        if let Some(functions) = &config.functions {
            harness = harness.with_functions(functions.iter().cloned());
        }
        if let Some(timeout_ms) = config.timeout_ms {
            harness = harness.with_timeout(Duration::from_millis(timeout_ms));
        }
        if !config.collapse {
            harness = harness.without_collapse();
        }
        if !config.roots.is_empty() {
            harness = harness.with_roots(config.roots.iter().cloned());
        }
        if !config.resources {
            harness = harness.without_resources();
        }
        harness
    }
}
