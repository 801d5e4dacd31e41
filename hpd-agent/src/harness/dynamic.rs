//! Harnesses built at run time: [`HarnessBuilder`] gives a [`DynamicHarness`] made of
//! [`Tool`]s, each a name, a description, a JSON parameter schema and an async handler.
//!
//! A dynamic harness behaves like a macro harness in every respect: it is registered with
//! [`AgentBuilder::with_harness`](crate::AgentBuilder::with_harness) (or for one run with
//! [`AgentRunConfig::with_harness`](crate::AgentRunConfig::with_harness)), collapses behind a
//! container, is recovered by bare and qualified names, can be selected, never-collapsed or
//! uncollapsed, carries scoped middleware, and its tool names take part in the duplicate-name
//! rules.
//!
//! # Tool lists that change
//!
//! Some harnesses get their tools from elsewhere (an MCP server, a plugin host) and the list can
//! change while an agent lives. Two hooks serve them:
//!
//! - [`DynamicHarness::updater`] gives a [`ToolListUpdater`] that replaces the tool list. An
//!   agent takes each turn's tool list when the turn starts, so a replacement applies from the
//!   next turn on and a turn always sees one stable list. The updater holds the list weakly,
//!   so a notification handler may hold it without keeping the harness alive.
//! - [`HarnessBuilder::before_turn`] registers an async hook that runs at the start of every
//!   turn of every agent the harness is registered with (and when a
//!   [`ToolSession`](crate::agent::ToolSession) refreshes), before the turn's tool list is taken: a
//!   source can reconnect there and replace its list.
//!
//! A source of tools (an MCP client is one) is then a function that builds a dynamic harness:
//! its handlers forward calls to the source, its notification handler holds an updater, and its
//! `before_turn` hook restarts a crashed source once.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//!
//! use hpd_agent::{
//!     AgentBuilder, BuildError, ChatResponse, harness::DynamicHarness, HarnessBuilder, ScriptedChatClient,
//!     Tool, ToolCall, ToolResult,
//! };
//! use serde_json::json;
//!
//! /// Stands in for a connection to a server that lists tools and may go down.
//! #[derive(Default)]
//! struct Connection {
//!     up: bool,
//!     restarts: u32,
//! }
//!
//! fn tool(name: &str, connection: &Arc<Mutex<Connection>>) -> Tool {
//!     let connection = Arc::clone(connection);
//!     let tool_name = name.to_owned();
//!     Tool::new(name, "A remote tool", json!({"type": "object"}), move |_, _| {
//!         let up = connection.lock().unwrap().up;
//!         let tool_name = tool_name.clone();
//!         async move {
//!             if up {
//!                 ToolResult::ok(format!("{tool_name} ran"))
//!             } else {
//!                 ToolResult::error("Error: server 'Remote' is not running")
//!             }
//!         }
//!     })
//! }
//!
//! fn connect(connection: Arc<Mutex<Connection>>) -> Result<DynamicHarness, BuildError> {
//!     connection.lock().unwrap().up = true;
//!     let hook_connection = Arc::clone(&connection);
//!     HarnessBuilder::new("Remote")
//!         .with_collapse("Tools of a remote server")
//!         .with_tool(tool("fetch", &connection))
//!         .before_turn(move || {
//!             let connection = Arc::clone(&hook_connection);
//!             async move {
//!                 let mut connection = connection.lock().unwrap();
//!                 if !connection.up && connection.restarts == 0 {
//!                     connection.restarts += 1;
//!                     connection.up = true;
//!                 }
//!             }
//!         })
//!         .build()
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let connection = Arc::new(Mutex::new(Connection::default()));
//! let remote = connect(Arc::clone(&connection))?;
//! let model = ScriptedChatClient::with_replies([
//!     ChatResponse::tool_calls(vec![ToolCall::new("c1", "Remote.fetch", "{}")]),
//!     ChatResponse::text("one"),
//!     ChatResponse::tool_calls(vec![ToolCall::new("c2", "Remote.store", "{}")]),
//!     ChatResponse::text("two"),
//! ]);
//! let agent = AgentBuilder::new()
//!     .with_harness(remote.clone())
//!     .with_chat_client(model.clone())
//!     .build()?;
//! let mut session = agent.session();
//! session.run("first").await?;
//!
//! // The server announces a new list, then goes down: the next turn restarts it and sees the
//! // new list.
//! remote.updater().replace(vec![tool("fetch", &connection), tool("store", &connection)])?;
//! connection.lock().unwrap().up = false;
//! session.run("second").await?;
//! assert_eq!(connection.lock().unwrap().restarts, 1);
//! let requests = model.requests();
//! assert_eq!(requests[0].tools[0].description, "Tools of a remote server (functions: fetch)");
//! assert_eq!(
//!     requests[2].tools[0].description,
//!     "Tools of a remote server (functions: fetch, store)"
//! );
//! # Ok(())
//! # }
//! ```

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;

use super::names::{is_valid, same};
use super::tool::{HandlerBody, Tool, checked};
use super::tool_list::{ListState, ToolList, ToolListUpdater};
use crate::chat::ToolDefinition;
use crate::error::BuildError;
use crate::middleware::Middleware;
use crate::middleware::pipeline::{MakeMiddleware, ScopedSource};
use crate::tool::Function;

type BeforeTurn = Arc<dyn Fn() -> BoxFuture<'static, ()> + Send + Sync>;

/// Collapse data of a harness built at run time.
#[derive(Debug, Clone)]
pub(crate) struct DynamicCollapse {
    pub(crate) description: String,
    pub(crate) function_result: Option<String>,
    pub(crate) system_prompt: Option<String>,
}

/// Builds a [`DynamicHarness`].
///
/// ```
/// use hpd_agent::{HarnessBuilder, Middleware, Tool, ToolResult};
/// use serde_json::json;
///
/// #[derive(Default)]
/// struct Audit;
/// impl Middleware for Audit {}
///
/// let forecast = Tool::new(
///     "forecast",
///     "Forecast for a city",
///     json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
///     |args, _ctx| async move { ToolResult::ok(format!("sunny in {}", args["city"])) },
/// );
/// let weather = HarnessBuilder::new("Weather")
///     .with_collapse("Weather lookups")
///     .with_system_prompt("Report temperatures in °C.")
///     .with_tool(forecast)
///     .with_scoped_middleware_factory(Audit::default)
///     .build()
///     .unwrap();
/// assert_eq!(weather.tool_names(), ["forecast"]);
///
/// let error = HarnessBuilder::new("bad name").build().unwrap_err();
/// assert_eq!(error.to_string(), "invalid harness name 'bad name': names must match [A-Za-z0-9_-]{1,64}");
/// ```
#[must_use]
pub struct HarnessBuilder {
    name: String,
    collapse: Option<String>,
    function_result: Option<String>,
    system_prompt: Option<String>,
    tools: Vec<Tool>,
    scoped: Vec<ScopedSource>,
    before_turn: Option<BeforeTurn>,
}

impl fmt::Debug for HarnessBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HarnessBuilder")
            .field("name", &self.name)
            .field("collapse", &self.collapse)
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

impl HarnessBuilder {
    /// A plain harness named `name` without tools.
    ///
    /// ```
    /// use hpd_agent::HarnessBuilder;
    ///
    /// let empty = HarnessBuilder::new("Plugins").build()?;
    /// assert!(!empty.is_collapsed() && empty.tool_names().is_empty());
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn new(name: impl Into<String>) -> Self {
        HarnessBuilder {
            name: name.into(),
            collapse: None,
            function_result: None,
            system_prompt: None,
            tools: Vec::new(),
            scoped: Vec::new(),
            before_turn: None,
        }
    }

    /// Collapses the harness behind a container described by `description`.
    ///
    /// ```
    /// use hpd_agent::{HarnessBuilder, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// let ping = Tool::new("ping", "Answers pong", json!({"type": "object"}), |_, _| async { ToolResult::ok("pong") });
    /// let net = HarnessBuilder::new("Net").with_collapse("Network checks").with_tool(ping).build()?;
    /// assert!(net.is_collapsed());
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_collapse(mut self, description: impl Into<String>) -> Self {
        self.collapse = Some(description.into());
        self
    }

    /// Renamed to [`with_collapse`](Self::with_collapse).
    #[deprecated(since = "0.1.0", note = "renamed to `with_collapse`")]
    pub fn collapse(self, description: impl Into<String>) -> Self {
        self.with_collapse(description)
    }

    /// Text appended to the container call's result (collapsed harnesses only).
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let ping = Tool::new("ping", "Answers pong", json!({"type": "object"}), |_, _| async { ToolResult::ok("pong") });
    /// let net = HarnessBuilder::new("Net").with_collapse("Network").with_function_result("Ping before anything else.").with_tool(ping).build()?;
    /// let agent = AgentBuilder::new().with_harness(net).with_chat_client(ScriptedChatClient::new()).build()?;
    /// let opened = agent.tool_session().call_tool("c1", "Net", "{}").await?;
    /// assert!(opened.result.text.starts_with("Net expanded. Available functions: ping\n\n"));
    /// assert!(opened.result.text.ends_with("\n\nPing before anything else."));
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_function_result(mut self, text: impl Into<String>) -> Self {
        self.function_result = Some(text.into());
        self
    }

    /// Renamed to [`with_function_result`](Self::with_function_result).
    #[deprecated(since = "0.1.0", note = "renamed to `with_function_result`")]
    pub fn function_result(self, text: impl Into<String>) -> Self {
        self.with_function_result(text)
    }

    /// Instructions active while the container is expanded (collapsed harnesses only).
    ///
    /// ```
    /// use hpd_agent::{AgentBuilder, ChatMessage, ChatResponse, HarnessBuilder, ScriptedChatClient, Tool, ToolCall, ToolResult};
    /// use serde_json::json;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let ping = Tool::new("ping", "Answers pong", json!({"type": "object"}), |_, _| async { ToolResult::ok("pong") });
    /// let net = HarnessBuilder::new("Net").with_collapse("Network").with_system_prompt("Never ping more than once.").with_tool(ping).build()?;
    /// let model = ScriptedChatClient::with_replies([
    ///     ChatResponse::tool_calls(vec![ToolCall::new("c1", "Net", "{}")]),
    ///     ChatResponse::text("Ready."),
    /// ]);
    /// let agent = AgentBuilder::new().with_harness(net).with_chat_client(model.clone()).build()?;
    /// agent.run("Check the network").await?;
    /// let requests = model.requests();
    /// // In the default `fixed` layout the container's answer carries it (in a note in the
    /// // user's turn, the default `container_notes`), and the system text never changes (in
    /// // `hide` it joins the system text while the container is expanded).
    /// assert!(!requests[0].instructions.contains("Never ping"));
    /// let Some(ChatMessage::User { content: note }) = requests[1].messages.last() else {
    ///     panic!("a note ends the second request");
    /// };
    /// assert!(note.contains("## Active container instructions\n\n### Net\nNever ping more than once."));
    /// assert_eq!(requests[1].instructions, requests[0].instructions);
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_system_prompt(mut self, text: impl Into<String>) -> Self {
        self.system_prompt = Some(text.into());
        self
    }

    /// Renamed to [`with_system_prompt`](Self::with_system_prompt).
    #[deprecated(since = "0.1.0", note = "renamed to `with_system_prompt`")]
    pub fn system_prompt(self, text: impl Into<String>) -> Self {
        self.with_system_prompt(text)
    }

    /// Adds a tool.
    ///
    /// ```
    /// use hpd_agent::{HarnessBuilder, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// let time = Tool::new("time", "The time", json!({"type": "object"}), |_, _| async { ToolResult::ok("12:00") });
    /// let date = Tool::new("date", "The date", json!({"type": "object"}), |_, _| async { ToolResult::ok("1 Dec") });
    /// let clock = HarnessBuilder::new("Calendar").with_tool(time).with_tool(date).build()?;
    /// assert_eq!(clock.tool_names(), ["time", "date"]);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_tool(mut self, tool: Tool) -> Self {
        self.tools.push(tool);
        self
    }

    /// Renamed to [`with_tool`](Self::with_tool).
    #[deprecated(since = "0.1.0", note = "renamed to `with_tool`")]
    pub fn tool(self, tool: Tool) -> Self {
        self.with_tool(tool)
    }

    /// Adds tools.
    ///
    /// ```
    /// use hpd_agent::{HarnessBuilder, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// // E.g. one tool per operation of an API description.
    /// let operations = ["list_users", "get_user", "create_user"];
    /// let tools = operations.iter().map(|op| {
    ///     let op = op.to_string();
    ///     Tool::new(op.clone(), format!("Calls {op}"), json!({"type": "object"}), move |_, _| {
    ///         let op = op.clone();
    ///         async move { ToolResult::ok(format!("{op}: ok")) }
    ///     })
    /// });
    /// let api = HarnessBuilder::new("UsersApi").with_collapse("The users API").with_tools(tools).build()?;
    /// assert_eq!(api.tool_names(), operations);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_tools(mut self, tools: impl IntoIterator<Item = Tool>) -> Self {
        self.tools.extend(tools);
        self
    }

    /// Renamed to [`with_tools`](Self::with_tools).
    #[deprecated(since = "0.1.0", note = "renamed to `with_tools`")]
    pub fn tools(self, tools: impl IntoIterator<Item = Tool>) -> Self {
        self.with_tools(tools)
    }

    /// Adds a scoped middleware instance, shared by every expansion (and every agent the harness
    /// is registered with). Scoped middleware sees only this harness's calls, plus the turn,
    /// iteration and batch hooks while the harness is expanded (all turn when its tools are
    /// visible without expansion).
    ///
    /// ```
    /// use hpd_agent::{async_trait, AgentBuilder, HarnessBuilder, Middleware};
    /// use hpd_agent::middleware::{FunctionCall, MiddlewareError};
    /// use hpd_agent::{ScriptedChatClient, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// struct Deny;
    ///
    /// #[async_trait]
    /// impl Middleware for Deny {
    ///     async fn before_function(&self, call: &mut FunctionCall) -> Result<(), MiddlewareError> {
    ///         call.block("Error: maintenance window");
    ///         Ok(())
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let tool = |name: &str| Tool::new(name, "A tool", json!({"type": "object"}), |_, _| async { ToolResult::ok("ran") });
    /// let agent = AgentBuilder::new()
    ///     .with_harness(HarnessBuilder::new("Db").with_tool(tool("query")).with_scoped_middleware(Deny).build()?)
    ///     .with_harness(HarnessBuilder::new("Web").with_tool(tool("fetch")).build()?)
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// let tools = agent.tool_session();
    /// assert_eq!(tools.call_tool("c1", "query", "{}").await?.result.text, "Error: maintenance window");
    /// assert_eq!(tools.call_tool("c2", "fetch", "{}").await?.result.text, "ran"); // other harnesses unaffected
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_scoped_middleware(mut self, middleware: impl Middleware) -> Self {
        self.scoped.push(ScopedSource::Shared(Arc::new(middleware)));
        self
    }

    /// Renamed to [`with_scoped_middleware`](Self::with_scoped_middleware).
    #[deprecated(since = "0.1.0", note = "renamed to `with_scoped_middleware`")]
    pub fn scoped_middleware(self, middleware: impl Middleware) -> Self {
        self.with_scoped_middleware(middleware)
    }

    /// Adds a shared scoped middleware instance.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use hpd_agent::{HarnessBuilder, Middleware};
    ///
    /// struct Audit;
    /// impl Middleware for Audit {}
    ///
    /// let audit: Arc<dyn Middleware> = Arc::new(Audit);
    /// let a = HarnessBuilder::new("A").with_shared_scoped_middleware(audit.clone()).build()?;
    /// let b = HarnessBuilder::new("B").with_shared_scoped_middleware(audit).build()?;
    /// # drop((a, b));
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_shared_scoped_middleware(mut self, middleware: Arc<dyn Middleware>) -> Self {
        self.scoped.push(ScopedSource::Shared(middleware));
        self
    }

    /// Renamed to [`with_shared_scoped_middleware`](Self::with_shared_scoped_middleware).
    #[deprecated(since = "0.1.0", note = "renamed to `with_shared_scoped_middleware`")]
    pub fn shared_scoped_middleware(self, middleware: Arc<dyn Middleware>) -> Self {
        self.with_shared_scoped_middleware(middleware)
    }

    /// Adds a scoped middleware created afresh by `make` at each expansion (and at each turn
    /// start when the tools are visible without expansion), like a type declared in
    /// `#[collapse(middlewares = [...])]`.
    ///
    /// ```
    /// use std::time::Instant;
    /// use hpd_agent::{HarnessBuilder, Middleware};
    ///
    /// struct PerExpansion {
    ///     opened: Instant, // a new instance, so a new time, at every expansion
    /// }
    /// impl Middleware for PerExpansion {}
    ///
    /// let harness = HarnessBuilder::new("Tracked")
    ///     .with_collapse("Tracked tools")
    ///     .with_scoped_middleware_factory(|| PerExpansion { opened: Instant::now() })
    ///     .build()?;
    /// # let _ = |m: PerExpansion| m.opened;
    /// # drop(harness);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    pub fn with_scoped_middleware_factory<M, F>(mut self, make: F) -> Self
    where
        M: Middleware,
        F: Fn() -> M + Send + Sync + 'static,
    {
        let make: MakeMiddleware = Arc::new(move || Ok(Arc::new(make()) as Arc<dyn Middleware>));
        self.scoped.push(ScopedSource::Fresh {
            name: Arc::from(super::names::short_type_name::<M>()),
            make,
        });
        self
    }

    /// Renamed to [`with_scoped_middleware_factory`](Self::with_scoped_middleware_factory).
    #[deprecated(since = "0.1.0", note = "renamed to `with_scoped_middleware_factory`")]
    pub fn scoped_middleware_factory<M, F>(self, make: F) -> Self
    where
        M: Middleware,
        F: Fn() -> M + Send + Sync + 'static,
    {
        self.with_scoped_middleware_factory(make)
    }

    /// Runs `hook` at the start of every turn, before the turn's tool list is taken (see the
    /// [crate docs](crate#dynamic-harnesses)). A source that lost its connection can reconnect here and replace
    /// the tool list through a [`ToolListUpdater`]; the hook cannot fail a turn (a panic in it
    /// is reported through `tracing`).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use hpd_agent::{AgentBuilder, ChatResponse, HarnessBuilder, ScriptedChatClient};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let turns = Arc::new(AtomicUsize::new(0));
    /// let seen = turns.clone();
    /// let source = HarnessBuilder::new("Remote")
    ///     .before_turn(move || {
    ///         let seen = seen.clone();
    ///         async move {
    ///             seen.fetch_add(1, Ordering::SeqCst); // e.g. reconnect and replace the tool list
    ///         }
    ///     })
    ///     .build()?;
    /// let model = ScriptedChatClient::with_replies([ChatResponse::text("a"), ChatResponse::text("b")]);
    /// let agent = AgentBuilder::new().with_harness(source).with_chat_client(model).build()?;
    /// agent.run("one").await?;
    /// agent.run("two").await?;
    /// assert_eq!(turns.load(Ordering::SeqCst), 2);
    /// # Ok(())
    /// # }
    /// ```
    pub fn before_turn<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.before_turn = Some(Arc::new(move || Box::pin(hook())));
        self
    }

    /// Checks the harness and builds it.
    ///
    /// # Errors
    ///
    /// [`BuildError::InvalidName`] for a harness or tool name outside `[A-Za-z0-9_-]{1,64}`,
    /// [`BuildError::DuplicateTool`] for two tools of one name, [`BuildError::InvalidSchema`]
    /// for a schema that is not a JSON object schema, [`BuildError::NotCollapsed`] for
    /// `system_prompt` or `function_result` on a plain harness.
    ///
    /// ```
    /// use hpd_agent::{BuildError, HarnessBuilder, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// let tool = |name: &str| Tool::new(name, "", json!({"type": "object"}), |_, _| async { ToolResult::ok("") });
    /// let twice = HarnessBuilder::new("Twice").with_tool(tool("a")).with_tool(tool("a")).build();
    /// assert!(matches!(twice, Err(BuildError::DuplicateTool { .. })));
    /// let plain_with_prompt = HarnessBuilder::new("Plain").with_system_prompt("Be careful.").build();
    /// assert!(matches!(plain_with_prompt, Err(BuildError::NotCollapsed { .. })));
    /// ```
    pub fn build(self) -> Result<DynamicHarness, BuildError> {
        if !is_valid(&self.name) {
            return Err(BuildError::InvalidName {
                what: "harness",
                name: self.name,
            });
        }
        let collapse = match self.collapse {
            Some(description) => Some(DynamicCollapse {
                description,
                function_result: self.function_result,
                system_prompt: self.system_prompt,
            }),
            None => {
                let option = if self.system_prompt.is_some() {
                    Some("system_prompt")
                } else if self.function_result.is_some() {
                    Some("function_result")
                } else {
                    None
                };
                if let Some(option) = option {
                    return Err(BuildError::NotCollapsed {
                        harness: self.name,
                        option,
                    });
                }
                None
            }
        };
        let list = ToolList {
            state: Mutex::new(ListState {
                generation: 0,
                tools: checked(&self.name, self.tools)?,
            }),
        };
        Ok(DynamicHarness {
            core: Arc::new(Core {
                name: Arc::from(self.name.as_str()),
                collapse,
                scoped: self.scoped,
                list: Arc::new(list),
                before_turn: self.before_turn,
            }),
            selection: None,
        })
    }
}

struct Core {
    name: Arc<str>,
    collapse: Option<DynamicCollapse>,
    scoped: Vec<ScopedSource>,
    list: Arc<ToolList>,
    before_turn: Option<BeforeTurn>,
}

/// A harness built at run time by [`HarnessBuilder`].
///
/// Cheap to clone (one `Arc`): clones share the tools, the scoped middleware and the tool list.
/// Register it with [`AgentBuilder::with_harness`](crate::AgentBuilder::with_harness) or, for
/// one run, [`AgentRunConfig::with_harness`](crate::AgentRunConfig::with_harness).
/// Registering the same harness (or clones of it) twice merges the registrations like
/// registering a macro harness twice; registering two different harnesses of one name fails the
/// build.
///
/// ```
/// use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
/// use serde_json::json;
///
/// let tool = |name: &str| Tool::new(name, "", json!({"type": "object"}), |_, _| async { ToolResult::ok("") });
/// let files = HarnessBuilder::new("Files").with_collapse("File access").with_tool(tool("read")).with_tool(tool("write")).build()?;
/// // Clones share the tool list; a selection registers part of it.
/// let agent = AgentBuilder::new()
///     .with_harness(files.select(["read"])?)
///     .with_chat_client(ScriptedChatClient::new())
///     .build()?;
/// assert_eq!(agent.tool_session().visible_tools()[0].description, "File access (functions: read)");
/// assert_eq!(files.tool_names(), ["read", "write"]);
/// # Ok::<(), hpd_agent::BuildError>(())
/// ```
#[derive(Clone)]
pub struct DynamicHarness {
    core: Arc<Core>,
    /// The selected tool names, `None` for every tool.
    selection: Option<Arc<[String]>>,
}

impl fmt::Debug for DynamicHarness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DynamicHarness")
            .field("name", &self.core.name)
            .field("collapsed", &self.core.collapse.is_some())
            .field("tools", &self.tool_names())
            .field("selection", &self.selection)
            .finish_non_exhaustive()
    }
}

impl DynamicHarness {
    /// The harness name.
    ///
    /// ```
    /// use hpd_agent::HarnessBuilder;
    ///
    /// assert_eq!(HarnessBuilder::new("Files").build()?.name(), "Files");
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    #[must_use]
    pub fn name(&self) -> &str {
        &self.core.name
    }

    /// Whether it is collapsed behind a container.
    ///
    /// ```
    /// use hpd_agent::HarnessBuilder;
    ///
    /// assert!(HarnessBuilder::new("Files").with_collapse("File access").build()?.is_collapsed());
    /// assert!(!HarnessBuilder::new("Files").build()?.is_collapsed());
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    #[must_use]
    pub fn is_collapsed(&self) -> bool {
        self.core.collapse.is_some()
    }

    /// The names of its current tools, in order (all of them, whatever the selection).
    ///
    /// ```
    /// use hpd_agent::{HarnessBuilder, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// let tool = |name: &str| Tool::new(name, "", json!({"type": "object"}), |_, _| async { ToolResult::ok("") });
    /// let h = HarnessBuilder::new("Files").with_tool(tool("read")).with_tool(tool("write")).build()?;
    /// assert_eq!(h.select(["write"])?.tool_names(), ["read", "write"]); // all, whatever the selection
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    #[must_use]
    pub fn tool_names(&self) -> Vec<String> {
        let (_, tools) = self.core.list.snapshot();
        tools.iter().map(|t| t.name.clone()).collect()
    }

    /// The same harness registering only these tools (by name or as `Harness.tool`). Selecting
    /// tools of a collapsed harness keeps it collapsed behind a container that lists only
    /// them. When the tool list changes later, selected names that are gone are left out.
    ///
    /// ```
    /// use hpd_agent::{HarnessBuilder, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// let tool = |name: &str| Tool::new(name, "", json!({"type": "object"}), |_, _| async { ToolResult::ok("") });
    /// let h = HarnessBuilder::new("Weather").with_tool(tool("forecast")).with_tool(tool("alerts")).build().unwrap();
    /// assert!(h.select(["forecast"]).is_ok());
    /// assert_eq!(
    ///     h.select(["radar"]).unwrap_err().to_string(),
    ///     "function 'radar' not found in harness 'Weather'; available: forecast, alerts"
    /// );
    /// ```
    ///
    /// # Errors
    ///
    /// [`BuildError::UnknownFunction`] for a name the harness does not have,
    /// [`BuildError::WrongHarness`] for a qualified name of another harness.
    pub fn select<I, S>(&self, names: I) -> Result<DynamicHarness, BuildError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let available = self.tool_names();
        let mut selected: Vec<String> = Vec::new();
        for name in names {
            let name: String = name.into();
            let function = match name.split_once('.') {
                Some((harness, function)) => {
                    if !same(harness, self.name()) {
                        return Err(BuildError::WrongHarness {
                            reference: name.clone(),
                            named: harness.to_owned(),
                            harness: self.name().to_owned(),
                        });
                    }
                    function.to_owned()
                }
                None => name,
            };
            if !available.contains(&function) {
                return Err(BuildError::UnknownFunction {
                    function,
                    harness: self.name().to_owned(),
                    available: available.join(", "),
                });
            }
            if !selected.contains(&function) {
                selected.push(function);
            }
        }
        Ok(DynamicHarness {
            core: Arc::clone(&self.core),
            selection: Some(selected.into()),
        })
    }

    /// A handle that replaces the tool list (see [`ToolListUpdater`]).
    ///
    /// ```
    /// use hpd_agent::{HarnessBuilder, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// let tool = |name: &str| Tool::new(name, "", json!({"type": "object"}), |_, _| async { ToolResult::ok("") });
    /// let remote = HarnessBuilder::new("Remote").with_tool(tool("a")).build()?;
    /// let updater = remote.updater(); // hand it to the code that hears about changes
    /// assert!(updater.replace(vec![tool("b")])?);
    /// assert_eq!(remote.tool_names(), ["b"]);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    #[must_use]
    pub fn updater(&self) -> ToolListUpdater {
        ToolListUpdater {
            list: Arc::downgrade(&self.core.list),
            harness: Arc::clone(&self.core.name),
        }
    }

    /// How many times the tool list was replaced.
    ///
    /// ```
    /// use hpd_agent::{HarnessBuilder, Tool, ToolResult};
    /// use serde_json::json;
    ///
    /// let tool = |name: &str| Tool::new(name, "", json!({"type": "object"}), |_, _| async { ToolResult::ok("") });
    /// let remote = HarnessBuilder::new("Remote").build()?;
    /// assert_eq!(remote.generation(), 0);
    /// remote.updater().replace(vec![tool("a")])?;
    /// assert_eq!(remote.generation(), 1);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    #[must_use]
    pub fn generation(&self) -> u64 {
        self.core.list.snapshot().0
    }

    /// Whether `other` is this harness or a clone of it (whatever the selections).
    pub(crate) fn same_harness(&self, other: &DynamicHarness) -> bool {
        Arc::ptr_eq(&self.core, &other.core)
    }

    pub(crate) fn selection(&self) -> Option<&[String]> {
        self.selection.as_deref()
    }

    pub(crate) fn shared_name(&self) -> &Arc<str> {
        &self.core.name
    }

    pub(crate) fn collapse_data(&self) -> Option<&DynamicCollapse> {
        self.core.collapse.as_ref()
    }

    pub(crate) fn scoped_sources(&self) -> &[ScopedSource] {
        &self.core.scoped
    }

    /// Runs the `before_turn` hook, if any. A hook that panics is reported through `tracing`
    /// and the turn goes on.
    pub(crate) async fn before_turn(&self) {
        use futures::FutureExt as _;
        use std::panic::AssertUnwindSafe;
        let Some(hook) = &self.core.before_turn else {
            return;
        };
        let ran = match std::panic::catch_unwind(AssertUnwindSafe(|| hook())) {
            Ok(future) => AssertUnwindSafe(future).catch_unwind().await,
            Err(payload) => Err(payload),
        };
        if ran.is_err() {
            tracing::error!(
                target: "hpd_agent",
                harness = %self.core.name,
                "the before_turn hook panicked; the turn goes on"
            );
        }
    }

    /// Whether the harness has a `before_turn` hook.
    pub(crate) fn has_before_turn(&self) -> bool {
        self.core.before_turn.is_some()
    }

    /// The current tools as catalog entries (only `selection` when given, in tool-list order),
    /// with the generation of the list they come from, and every current tool name.
    pub(crate) fn functions(
        &self,
        selection: Option<&[String]>,
    ) -> (u64, Vec<Function>, Vec<String>) {
        let (generation, tools) = self.core.list.snapshot();
        let functions = tools
            .iter()
            .filter(|t| selection.is_none_or(|s| s.contains(&t.name)))
            .map(|tool| {
                Function::new(
                    Arc::clone(&self.core.name),
                    ToolDefinition {
                        name: tool.name.clone(),
                        description: tool.description.clone(),
                        parameters: Arc::new(tool.schema.clone()),
                        output_schema: tool.output_schema.clone(),
                        annotations: tool.annotations,
                    },
                    tool.timeout,
                    Arc::new(HandlerBody(Arc::clone(&tool.handler))),
                )
                .with_approval(tool.requires_approval)
            })
            .collect();
        let names = tools.iter().map(|t| t.name.clone()).collect();
        (generation, functions, names)
    }
}
