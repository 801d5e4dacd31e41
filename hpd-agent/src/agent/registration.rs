//! Harness registrations as the builder and run configs collect them, and how they merge and
//! resolve into built harnesses.

use std::any::Any;
use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::sync::Arc;

use serde_json::Value;

use crate::collapse::{DynamicSource, GroupExtras, Part};
use crate::config::ToolHarnessReference;
use crate::error::BuildError;
use crate::harness::HarnessInfo;
use crate::harness::names::{fold, same};
use crate::harness::registry::{HarnessObject, Member, Registry};
use crate::harness::{DynamicHarness, ToolHarness};
use crate::middleware::Middleware;
use crate::middleware::pipeline::{MakeMiddleware, ScopedSource};
use crate::tool::SubAgent;
use crate::tool::catalog::{CollapseText, Group};

/// Which functions of a harness are registered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Selection {
    All,
    Functions(Vec<String>),
}

impl Selection {
    fn merge(&mut self, other: Selection) {
        match (&mut *self, other) {
            (Selection::All, _) => {}
            (this, Selection::All) => *this = Selection::All,
            (Selection::Functions(mine), Selection::Functions(theirs)) => {
                for f in theirs {
                    if !mine.contains(&f) {
                        mine.push(f);
                    }
                }
            }
        }
    }
}

/// Where the harness instance comes from.
#[derive(Clone)]
pub(crate) enum InstanceSource {
    /// The registry's constructor (a config constructor gets `{}`).
    Registry,
    /// A JSON config for the config constructor.
    Json(Value),
    /// A pre-built instance (or one built from a typed config).
    Object(HarnessObject),
}

/// Where the metadata comes from.
#[derive(Clone)]
pub(crate) enum MetadataSource {
    None,
    Json(Value),
    Object(Arc<dyn Any + Send + Sync>),
}

/// One harness registration, before resolution.
#[derive(Clone)]
pub(crate) struct Registration {
    /// The harness name as given (resolved case-insensitively).
    pub(crate) name: String,
    /// The macro harness: from the Rust type of a registration by type, or the one harness a
    /// name means (`None` for a name no linked harness has, or two have: resolving it reports
    /// that).
    pub(crate) info: Option<&'static HarnessInfo>,
    /// Set for a harness built at run time.
    pub(crate) dynamic: Option<DynamicHarness>,
    pub(crate) selection: Selection,
    pub(crate) instance: InstanceSource,
    pub(crate) metadata: MetadataSource,
    pub(crate) middleware_configs: BTreeMap<String, Value>,
    pub(crate) scoped: Vec<Arc<dyn Middleware>>,
    /// Functions whose calls wait for approval, besides those declared so.
    pub(crate) approval: Vec<String>,
}

impl Registration {
    pub(crate) fn for_type<T: ToolHarness>(selection: Selection) -> Self {
        let info = HarnessInfo::of::<T>();
        Registration {
            name: info.name().to_owned(),
            info: Some(info),
            dynamic: None,
            selection,
            instance: InstanceSource::Registry,
            metadata: MetadataSource::None,
            middleware_configs: BTreeMap::new(),
            scoped: Vec::new(),
            approval: Vec::new(),
        }
    }

    pub(crate) fn from_reference(reference: &ToolHarnessReference) -> Self {
        Registration {
            name: reference.name.clone(),
            info: Registry::global().lookup(&reference.name).ok(),
            dynamic: None,
            selection: reference
                .functions
                .clone()
                .map_or(Selection::All, Selection::Functions),
            instance: reference
                .config
                .clone()
                .map_or(InstanceSource::Registry, InstanceSource::Json),
            metadata: reference
                .metadata
                .clone()
                .map_or(MetadataSource::None, MetadataSource::Json),
            middleware_configs: reference.middleware_configs.clone(),
            scoped: Vec::new(),
            approval: reference.requires_approval.clone(),
        }
    }

    /// A harness built at run time, with its selection.
    pub(crate) fn for_dynamic(harness: DynamicHarness) -> Self {
        Registration {
            name: harness.name().to_owned(),
            info: None,
            selection: harness
                .selection()
                .map_or(Selection::All, |names| Selection::Functions(names.to_vec())),
            dynamic: Some(harness),
            instance: InstanceSource::Registry,
            metadata: MetadataSource::None,
            middleware_configs: BTreeMap::new(),
            scoped: Vec::new(),
            approval: Vec::new(),
        }
    }

    /// Registrations of one key merge. A macro harness's key is its name and Rust type, so that
    /// a config entry naming it merges with its registrations by type, while another type of
    /// the same name (case-insensitively) is reported as a clash. A harness built at run time has
    /// a key of its own (its clones share it), so that a Rust harness or another run-time
    /// harness of the same name is reported as a duplicate instead of being merged with it.
    fn key(&self) -> String {
        match &self.dynamic {
            Some(harness) => format!(
                "{}\u{0}{:p}",
                fold(harness.name()),
                std::sync::Arc::as_ptr(harness.shared_name())
            ),
            None => match self.info {
                Some(info) => format!("{}\u{0}{}", fold(info.name()), info.rust_type()),
                None => fold(&self.name),
            },
        }
    }

    /// Merges a later registration of the same harness into this one.
    fn merge(&mut self, later: Registration) {
        if self.info.is_none() {
            self.info = later.info;
        }
        self.selection.merge(later.selection);
        if !matches!(later.instance, InstanceSource::Registry) {
            self.instance = later.instance;
        }
        if !matches!(later.metadata, MetadataSource::None) {
            self.metadata = later.metadata;
        }
        for (key, value) in later.middleware_configs {
            insert_middleware_config(&mut self.middleware_configs, key, value);
        }
        self.scoped.extend(later.scoped);
        for function in later.approval {
            if !self.approval.contains(&function) {
                self.approval.push(function);
            }
        }
    }
}

/// Sets a middleware config, replacing one whose key differs only in case (keys match
/// middleware type names case-insensitively).
fn insert_middleware_config(configs: &mut BTreeMap<String, Value>, key: String, value: Value) {
    configs.retain(|existing, _| !same(existing, &key));
    configs.insert(key, value);
}

/// The registrations of one harness: the config's entry and what builder calls added.
#[derive(Clone)]
struct Slot {
    key: String,
    config: Option<Registration>,
    code: Option<Registration>,
}

impl Slot {
    fn merged(&self) -> Registration {
        match (&self.config, &self.code) {
            (Some(config), Some(code)) => {
                let mut merged = config.clone();
                merged.merge(code.clone());
                merged
            }
            (Some(only), None) | (None, Some(only)) => only.clone(),
            (None, None) => unreachable!("a slot holds at least one registration"),
        }
    }
}

fn merge_into(part: &mut Option<Registration>, registration: Registration) {
    match part {
        Some(existing) => existing.merge(registration),
        None => *part = Some(registration),
    }
}

/// An ordered set of registrations: a harness keeps the position of its first registration.
///
/// A config entry and builder calls for the same harness are kept apart, so that
/// [`replace_config`](Self::replace_config) replaces the config entry only; they merge (builder
/// calls after the config) when the agent is built.
#[derive(Clone, Default)]
pub(crate) struct Registrations {
    items: Vec<Slot>,
}

impl Registrations {
    fn slot(&mut self, key: String) -> &mut Slot {
        let index = match self.items.iter().position(|s| s.key == key) {
            Some(index) => index,
            None => {
                self.items.push(Slot {
                    key,
                    config: None,
                    code: None,
                });
                self.items.len() - 1
            }
        };
        &mut self.items[index]
    }

    /// Adds a builder call's registration.
    pub(crate) fn add(&mut self, registration: Registration) {
        let key = registration.key();
        merge_into(&mut self.slot(key).code, registration);
    }

    /// Adds a config entry.
    pub(crate) fn add_config(&mut self, registration: Registration) {
        let key = registration.key();
        merge_into(&mut self.slot(key).config, registration);
    }

    /// Replaces the config entry of the same name entirely (or adds it).
    pub(crate) fn replace_config(&mut self, registration: Registration) {
        let key = registration.key();
        self.slot(key).config = Some(registration);
    }

    /// Registers every function of `T`.
    pub(crate) fn add_harness<T: ToolHarness>(&mut self) {
        self.add(Registration::for_type::<T>(Selection::All));
    }

    /// Registers `T` with options.
    pub(crate) fn add_with<T: ToolHarness>(
        &mut self,
        options: impl FnOnce(HarnessOptions<T>) -> HarnessOptions<T>,
    ) {
        self.add(options(HarnessOptions::new()).registration);
    }

    /// Registers a harness by config reference (as a builder call, not as a config entry).
    pub(crate) fn add_reference(&mut self, reference: &ToolHarnessReference) {
        self.add(Registration::from_reference(reference));
    }

    /// Registers a harness built at run time.
    pub(crate) fn add_dynamic(&mut self, harness: DynamicHarness) {
        self.add(Registration::for_dynamic(harness));
    }

    /// How many harnesses are registered.
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Each harness's registration, config entry and builder calls merged, in order.
    pub(crate) fn merged(&self) -> impl Iterator<Item = Registration> + '_ {
        self.items.iter().map(Slot::merged)
    }
}

/// Options for one harness registration, given to
/// [`AgentBuilder::with_tool_harness_options`](crate::AgentBuilder::with_tool_harness_options).
///
/// ```
/// use hpd_agent::prelude::*;
/// use hpd_agent::{AgentBuilder, Middleware, ScriptedChatClient};
///
/// #[derive(Default)]
/// struct Db;
///
/// #[collapse("Database operations")]
/// impl Db {
///     /// Runs a query.
///     #[ai_function]
///     fn query(&self, sql: String) -> String { format!("ran {sql}") }
/// }
///
/// struct Audit;
/// impl Middleware for Audit {}
///
/// let agent = AgentBuilder::new()
///     .with_chat_client(ScriptedChatClient::new())
///     .with_tool_harness_options::<Db>(|o| o.with_scoped_middleware(Audit))
///     .build()
///     .unwrap();
/// # drop(agent);
/// ```
pub struct HarnessOptions<T: ToolHarness> {
    pub(crate) registration: Registration,
    _harness: PhantomData<fn() -> T>,
}

impl<T: ToolHarness> HarnessOptions<T> {
    pub(crate) fn new() -> Self {
        HarnessOptions {
            registration: Registration::for_type::<T>(Selection::All),
            _harness: PhantomData,
        }
    }

    /// Adds a scoped middleware instance (shared across expansions; runs after the
    /// attribute-declared ones). Also allowed on a plain harness, where it is active all turn.
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::{AgentBuilder, Middleware, ScriptedChatClient};
    /// use hpd_agent::middleware::{FunctionCall, MiddlewareError};
    ///
    /// #[derive(Default)]
    /// pub struct Payments;
    ///
    /// #[collapse("Payments")]
    /// impl Payments {
    ///     /// Refunds an order.
    ///     #[ai_function]
    ///     fn refund(&self, order: String) -> String { format!("refunded {order}") }
    /// }
    ///
    /// struct NoRefunds;
    ///
    /// #[async_trait]
    /// impl Middleware for NoRefunds {
    ///     async fn before_function(&self, call: &mut FunctionCall) -> Result<(), MiddlewareError> {
    ///         call.block_default(); // sees only calls of `Payments`
    ///         Ok(())
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let agent = AgentBuilder::new()
    ///     .with_tool_harness_options::<Payments>(|o| o.with_scoped_middleware(NoRefunds))
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// let tools = agent.tool_session();
    /// tools.call_tool("c1", "Payments", "{}").await?;
    /// let outcome = tools.call_tool("c2", "refund", r#"{"order": "A1"}"#).await?;
    /// assert_eq!(outcome.result.text, "Function 'refund' was blocked");
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn with_scoped_middleware(mut self, middleware: impl Middleware) -> Self {
        self.registration.scoped.push(Arc::new(middleware));
        self
    }

    /// Renamed to [`with_scoped_middleware`](Self::with_scoped_middleware).
    #[deprecated(since = "0.1.0", note = "renamed to `with_scoped_middleware`")]
    pub fn add_scoped_middleware(self, middleware: impl Middleware) -> Self {
        self.with_scoped_middleware(middleware)
    }

    /// Sets the harness metadata (conditions and description templates use it).
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// #[derive(serde::Deserialize)]
    /// pub struct Tier {
    ///     premium: bool,
    /// }
    ///
    /// #[derive(Default)]
    /// pub struct Support;
    ///
    /// #[tool_harness(metadata = Tier)]
    /// impl Support {
    ///     /// Opens a ticket.
    ///     #[ai_function]
    ///     fn open_ticket(&self, text: String) -> String { text }
    ///     /// Calls the customer back.
    ///     #[ai_function(condition = metadata.premium)]
    ///     fn call_back(&self) -> String { "scheduled".into() }
    /// }
    ///
    /// let free = AgentBuilder::new()
    ///     .with_tool_harness_options::<Support>(|o| o.with_metadata(Tier { premium: false }))
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// assert_eq!(free.initial_tool_names(), ["open_ticket"]);
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    #[must_use]
    pub fn with_metadata(mut self, metadata: T::Metadata) -> Self {
        self.registration.metadata = MetadataSource::Object(Arc::new(metadata));
        self
    }

    /// Renamed to [`with_metadata`](Self::with_metadata).
    #[deprecated(since = "0.1.0", note = "renamed to `with_metadata`")]
    pub fn metadata(self, metadata: T::Metadata) -> Self {
        self.with_metadata(metadata)
    }

    /// Builds the harness with its config constructor from this config.
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// #[derive(serde::Deserialize)]
    /// pub struct LimitConfig {
    ///     max: u32,
    /// }
    ///
    /// pub struct Limited {
    ///     max: u32,
    /// }
    ///
    /// #[tool_harness]
    /// impl Limited {
    ///     pub fn new(config: LimitConfig) -> Self {
    ///         Limited { max: config.max }
    ///     }
    ///
    ///     /// The limit.
    ///     #[ai_function]
    ///     fn limit(&self) -> u32 { self.max }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let agent = AgentBuilder::new()
    ///     .with_tool_harness_options::<Limited>(|o| o.with_config(LimitConfig { max: 5 }))
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// assert_eq!(agent.tool_session().call_tool("c1", "limit", "{}").await?.result.text, "5");
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn with_config(mut self, config: T::Config) -> Self {
        self.registration.instance = InstanceSource::Object(Arc::new(T::from_config(config)));
        self
    }

    /// Renamed to [`with_config`](Self::with_config).
    #[deprecated(since = "0.1.0", note = "renamed to `with_config`")]
    pub fn config(self, config: T::Config) -> Self {
        self.with_config(config)
    }

    /// Uses this pre-built instance.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// #[derive(Default)]
    /// pub struct Visits {
    ///     count: AtomicU32,
    /// }
    ///
    /// #[tool_harness]
    /// impl Visits {
    ///     /// Counts a visit.
    ///     #[ai_function]
    ///     fn visit(&self) -> u32 { self.count.fetch_add(1, Ordering::SeqCst) + 1 }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let agent = AgentBuilder::new()
    ///     .with_tool_harness_options::<Visits>(|o| o.with_instance(Visits { count: AtomicU32::new(41) }).with_functions(["visit"]))
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// assert_eq!(agent.tool_session().call_tool("c1", "visit", "{}").await?.result.text, "42");
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn with_instance(mut self, instance: T) -> Self {
        self.registration.instance = InstanceSource::Object(Arc::new(instance));
        self
    }

    /// Renamed to [`with_instance`](Self::with_instance).
    #[deprecated(since = "0.1.0", note = "renamed to `with_instance`")]
    pub fn instance(self, instance: T) -> Self {
        self.with_instance(instance)
    }

    /// Sets the config of an attribute-declared scoped middleware, by its type name
    /// (case-insensitive). It is validated at build.
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::{AgentBuilder, Middleware};
    /// use hpd_agent::middleware::{ConfigurableMiddleware, FunctionCall, MiddlewareError};
    /// use hpd_agent::ScriptedChatClient;
    /// use serde_json::json;
    ///
    /// #[derive(serde::Deserialize)]
    /// pub struct QuotaConfig {
    ///     calls: u32,
    /// }
    ///
    /// pub struct Quota {
    ///     calls: u32,
    /// }
    /// #[async_trait]
    /// impl Middleware for Quota {
    ///     async fn before_function(&self, call: &mut FunctionCall) -> Result<(), MiddlewareError> {
    ///         if self.calls == 0 {
    ///             call.block("Error: quota used up");
    ///         }
    ///         Ok(())
    ///     }
    /// }
    /// impl ConfigurableMiddleware for Quota {
    ///     type Config = QuotaConfig;
    ///     fn from_config(config: QuotaConfig) -> Self {
    ///         Quota { calls: config.calls }
    ///     }
    /// }
    ///
    /// #[derive(Default)]
    /// pub struct Geo;
    ///
    /// #[collapse("Geocoding", middlewares = [Quota])]
    /// impl Geo {
    ///     /// Finds a place.
    ///     #[ai_function]
    ///     fn geocode(&self, place: String) -> String { place }
    /// }
    ///
    /// // `Quota` needs `calls`; without a config, `{}` is parsed and the build fails.
    /// let ok = AgentBuilder::new()
    ///     .with_tool_harness_options::<Geo>(|o| o.with_middleware_config("Quota", json!({"calls": 10})))
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build();
    /// assert!(ok.is_ok());
    /// let missing = AgentBuilder::new()
    ///     .with_tool_harness_options::<Geo>(|o| o.with_middleware_config("Quota", json!({})))
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build();
    /// assert!(missing.is_err());
    /// ```
    #[must_use]
    pub fn with_middleware_config(mut self, middleware: impl Into<String>, config: Value) -> Self {
        insert_middleware_config(
            &mut self.registration.middleware_configs,
            middleware.into(),
            config,
        );
        self
    }

    /// Renamed to [`with_middleware_config`](Self::with_middleware_config).
    #[deprecated(since = "0.1.0", note = "renamed to `with_middleware_config`")]
    pub fn middleware_config(self, middleware: impl Into<String>, config: Value) -> Self {
        self.with_middleware_config(middleware, config)
    }

    /// Registers only these functions (by name or `Harness.function`), instead of all.
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// #[derive(Default)]
    /// pub struct Repo;
    ///
    /// #[tool_harness]
    /// impl Repo {
    ///     /// Shows the log.
    ///     #[ai_function]
    ///     fn log(&self) -> String { String::new() }
    ///     /// Shows a diff.
    ///     #[ai_function]
    ///     fn diff(&self) -> String { String::new() }
    ///     /// Pushes.
    ///     #[ai_function]
    ///     fn push(&self) -> String { String::new() }
    /// }
    ///
    /// let agent = AgentBuilder::new()
    ///     .with_tool_harness_options::<Repo>(|o| o.with_functions(["diff", "Repo.log"]))
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// assert_eq!(agent.initial_tool_names(), ["log", "diff"]); // declaration order
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    #[must_use]
    pub fn with_functions<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.registration.selection =
            Selection::Functions(names.into_iter().map(Into::into).collect());
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

    /// Makes calls of these functions wait for a person's approval, besides those the harness
    /// declares so (the code form of a config entry's `requires_approval`; see
    /// [`approval`](crate::approval)). An unknown name fails the build.
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::{AgentBuilder, ScriptedChatClient};
    ///
    /// #[derive(Default)]
    /// pub struct ApprovalShell;
    ///
    /// #[tool_harness]
    /// impl ApprovalShell {
    ///     /// Lists files.
    ///     #[ai_function]
    ///     fn ls(&self) -> String { String::new() }
    ///     /// Runs a command.
    ///     #[ai_function]
    ///     fn exec(&self, command: String) -> String { command }
    /// }
    ///
    /// let agent = AgentBuilder::new()
    ///     .with_tool_harness_options::<ApprovalShell>(|o| o.with_approval_required(["exec"]))
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build()?;
    /// # drop(agent);
    /// let unknown = AgentBuilder::new()
    ///     .with_tool_harness_options::<ApprovalShell>(|o| o.with_approval_required(["rm"]))
    ///     .with_chat_client(ScriptedChatClient::new())
    ///     .build();
    /// assert!(unknown.unwrap_err().to_string().contains("function 'rm' not found in harness 'ApprovalShell'"));
    /// # Ok::<(), hpd_agent::BuildError>(())
    /// ```
    #[must_use]
    pub fn with_approval_required<I, S>(mut self, functions: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        for function in functions {
            let function = function.into();
            if !self.registration.approval.contains(&function) {
                self.registration.approval.push(function);
            }
        }
        self
    }

    /// Renamed to [`with_approval_required`](Self::with_approval_required).
    #[deprecated(since = "0.1.0", note = "renamed to `with_approval_required`")]
    pub fn require_approval<I, S>(self, functions: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.with_approval_required(functions)
    }
}

/// A registration resolved against the registry: instance created, members selected.
pub(crate) struct ResolvedHarness {
    /// The harness with its functions (sub-agent members are not among them yet).
    pub(crate) part: Part,
    /// Sub-agent members, each with its position among all registered members.
    pub(crate) sub_agents: Vec<(usize, SubAgent)>,
}

/// Splits a `Harness.function` reference.
pub(crate) fn split_reference(reference: &str) -> Result<(&str, &str), BuildError> {
    let mut parts = reference.split('.');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(h), Some(f), None) if !h.trim().is_empty() && !f.trim().is_empty() => Ok((h, f)),
        _ => Err(BuildError::InvalidReference {
            reference: reference.to_owned(),
        }),
    }
}

/// Resolves one registration: finds the harness, checks the selection, creates the instance,
/// parses metadata, validates middleware configs and builds the members.
pub(crate) fn resolve(registration: &Registration) -> Result<ResolvedHarness, BuildError> {
    if let Some(harness) = &registration.dynamic {
        return Ok(resolve_dynamic(harness, &registration.selection));
    }
    let info = match registration.info {
        Some(info) => info,
        // The name did not resolve when it was registered: say why.
        None => Registry::global().lookup(&registration.name)?,
    };
    let entry = info.entry();

    let selected: Option<Vec<&'static str>> = match &registration.selection {
        Selection::All => None,
        Selection::Functions(names) => {
            let mut selected = Vec::with_capacity(names.len());
            for name in names {
                let function = match name.split_once('.') {
                    Some(_) => {
                        let (harness, function) = split_reference(name)?;
                        if !same(harness, entry.name) {
                            return Err(BuildError::WrongHarness {
                                reference: name.clone(),
                                named: harness.to_owned(),
                                harness: entry.name.to_owned(),
                            });
                        }
                        function
                    }
                    None => name.as_str(),
                };
                let Some(found) = entry.function_names().find(|f| *f == function) else {
                    return Err(BuildError::UnknownFunction {
                        function: function.to_owned(),
                        harness: entry.name.to_owned(),
                        available: entry.function_names().collect::<Vec<_>>().join(", "),
                    });
                };
                selected.push(found);
            }
            Some(selected)
        }
    };

    for function in &registration.approval {
        if !entry.function_names().any(|f| f == function) {
            return Err(BuildError::UnknownFunction {
                function: function.clone(),
                harness: entry.name.to_owned(),
                available: entry.function_names().collect::<Vec<_>>().join(", "),
            });
        }
    }

    let instance = match &registration.instance {
        InstanceSource::Registry => info.construct(None)?,
        InstanceSource::Json(config) => info.construct(Some(config))?,
        InstanceSource::Object(object) => Arc::clone(object),
    };

    let metadata: Option<Arc<dyn Any + Send + Sync>> = match &registration.metadata {
        MetadataSource::None => None,
        MetadataSource::Object(object) => Some(Arc::clone(object)),
        MetadataSource::Json(value) => {
            let spec = entry
                .metadata
                .ok_or_else(|| BuildError::MetadataNotAccepted {
                    harness: entry.name.to_owned(),
                })?;
            Some((spec.parse)(value).map_err(|source| BuildError::Metadata {
                harness: entry.name.to_owned(),
                source,
            })?)
        }
    };

    let specs: Vec<_> = entry.scoped_middleware_specs().collect();
    let mut configs: Vec<Option<&Value>> = vec![None; specs.len()];
    for (key, value) in &registration.middleware_configs {
        let position = specs
            .iter()
            .position(|m| m.config_type.is_some() && same(m.name, key))
            .ok_or_else(|| BuildError::UnknownMiddlewareConfig {
                harness: entry.name.to_owned(),
                key: key.clone(),
            })?;
        let spec = &specs[position];
        (spec.validate)(value).map_err(|source| BuildError::MiddlewareConfig {
            harness: entry.name.to_owned(),
            middleware: spec.name.to_owned(),
            source,
        })?;
        configs[position] = Some(value);
    }
    let empty = Value::Object(serde_json::Map::new());
    let mut scoped = Vec::with_capacity(specs.len() + registration.scoped.len());
    for (spec, config) in specs.into_iter().zip(configs) {
        let config = config.unwrap_or(&empty).clone();
        if spec.config_type.is_some() {
            // Validate the default config too, so a missing required field fails the build.
            (spec.validate)(&config).map_err(|source| BuildError::MiddlewareConfig {
                harness: entry.name.to_owned(),
                middleware: spec.name.to_owned(),
                source,
            })?;
        }
        let make: MakeMiddleware =
            Arc::new(move || (spec.create)(&config).map_err(|e| e.to_string()));
        scoped.push(ScopedSource::Fresh {
            name: Arc::from(spec.name),
            make,
        });
    }
    scoped.extend(
        registration
            .scoped
            .iter()
            .cloned()
            .map(ScopedSource::Shared),
    );

    let mut functions = Vec::new();
    let mut sub_agents = Vec::new();
    for member in info.members(&instance, metadata.as_deref()) {
        let name = match &member {
            Member::Function(f) => f.name().to_owned(),
            Member::SubAgent(s) => s.name.to_owned(),
        };
        if selected
            .as_ref()
            .is_some_and(|s| !s.contains(&name.as_str()))
        {
            continue;
        }
        match member {
            Member::Function(f) => {
                let marked = f.requires_approval() || registration.approval.contains(&name);
                functions.push(f.with_approval(marked));
            }
            Member::SubAgent(s) => {
                sub_agents.push((functions.len() + sub_agents.len(), s.declare()?));
            }
        }
    }

    let collapse = entry.collapse.map(|c| {
        Arc::new(CollapseText {
            description: c.description.to_owned(),
            function_result: c.function_result.map(str::to_owned),
            system_prompt: c.system_prompt.map(str::to_owned),
        })
    });
    Ok(ResolvedHarness {
        part: Part {
            group: Group {
                name: Arc::from(entry.name),
                collapse,
                members: functions,
                declared: entry.function_names().map(str::to_owned).collect(),
            },
            extras: GroupExtras {
                scoped,
                source: None,
                declared_by: Some(info),
            },
        },
        sub_agents,
    })
}

/// Resolves a harness built at run time with the selection of its registrations.
fn resolve_dynamic(harness: &DynamicHarness, selection: &Selection) -> ResolvedHarness {
    let selection = match selection {
        Selection::All => None,
        Selection::Functions(names) => Some(names.clone()),
    };
    let (generation, members, declared) = harness.functions(selection.as_deref());
    let collapse = harness.collapse_data().map(|c| {
        Arc::new(CollapseText {
            description: c.description.clone(),
            function_result: c.function_result.clone(),
            system_prompt: c.system_prompt.clone(),
        })
    });
    ResolvedHarness {
        part: Part {
            group: Group {
                name: Arc::clone(harness.shared_name()),
                collapse,
                members,
                declared: declared.into(),
            },
            extras: GroupExtras {
                scoped: harness.scoped_sources().to_vec(),
                declared_by: None,
                source: Some(DynamicSource {
                    harness: harness.clone(),
                    selection,
                    generation,
                }),
            },
        },
        sub_agents: Vec::new(),
    }
}
