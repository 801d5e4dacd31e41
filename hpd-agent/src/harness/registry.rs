//! The link-time registry of tool harnesses: the macro contract.
//!
//! Every `#[tool_harness]` or `#[collapse]` impl block emits one [`HarnessEntry`] (the static
//! description of its members), wraps it in a [`HarnessInfo`] and submits that through
//! `inventory`. None of this is public API except [`HarnessInfo`]'s methods: the entry types
//! are reached only through `crate::__private`, so what the macros emit can change with the
//! macros, in any release.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use super::ToolHarness;
use super::names::fold;
use crate::__private::Seal;
use crate::chat::{ToolAnnotations, ToolDefinition};
use crate::error::{BuildError, ConstructError, HydrateError, RegistryError};
use crate::middleware::Middleware;
use crate::tool::{CallParts, Function, Invoke, Started, SubAgent};

/// A harness instance, type-erased. The generated code downcasts it back to the harness type.
pub type HarnessObject = Arc<dyn Any + Send + Sync>;

// Not public API. Used by generated code.
/// Calls member `index` of a harness instance with the arguments text the model sent.
///
/// A synchronous method runs at once and returns its result; an `async` one returns its
/// future. An [`ArgumentsError`] when the arguments do not match the parameters (the body does
/// not run then).
#[doc(hidden)]
pub type InvokeFn = fn(&HarnessObject, usize, &str, &CallParts<'_>) -> Started;

/// The static description of one member of a macro harness (an `#[ai_function]` or a
/// `#[sub_agent]` method), emitted by the macros.
#[derive(Debug)]
pub struct FunctionSpec {
    /// The tool name.
    pub name: &'static str,
    /// The description with metadata placeholders rendered empty (used without metadata).
    pub description: &'static str,
    /// Timeout of the body in milliseconds, if any.
    pub timeout_ms: Option<u64>,
    /// Whether calls wait for a person's approval (`#[ai_function(requires_approval)]`).
    pub requires_approval: bool,
    /// What the function does to its environment (`#[ai_function(read_only)]`,
    /// `#[ai_function(destructive)]`, ...).
    pub annotations: ToolAnnotations,
    /// Builds the parameter schema. Called once per harness per process.
    pub schema: fn() -> Value,
    /// Builds the output schema: the schema of a `Serialize + JsonSchema` return type when it
    /// describes an object, else `None`. Called once per harness per process.
    pub output_schema: fn() -> Option<Value>,
    /// For a `#[sub_agent]` method: calls it on an instance.
    pub sub_agent: Option<fn(&HarnessObject) -> SubAgent>,
}

/// Collapse data of a `#[collapse]` harness.
#[derive(Debug, Clone, Copy)]
pub struct CollapseSpec {
    /// The container description.
    pub description: &'static str,
    /// Text appended to the container call result, if any.
    pub function_result: Option<&'static str>,
    /// Instructions active while the container is expanded, if any.
    pub system_prompt: Option<&'static str>,
}

/// How the registry creates a harness.
#[derive(Debug, Clone, Copy)]
pub enum ConstructorSpec {
    /// `fn new(config: C) -> Self`: the config comes from JSON or code (`{}` when none is given).
    Config {
        /// The config type's name, for error messages.
        type_name: &'static str,
        /// Deserializes a config and builds the harness.
        construct: fn(&Value) -> Result<HarnessObject, HydrateError>,
    },
    /// `fn new() -> Self` or `Default`.
    Plain(fn() -> HarnessObject),
}

/// The metadata type of a harness declared with `metadata = Type`.
#[derive(Debug, Clone, Copy)]
pub struct MetadataSpec {
    /// The metadata type's name, for error messages.
    pub type_name: &'static str,
    /// Deserializes metadata from JSON.
    pub parse: fn(&Value) -> Result<Arc<dyn Any + Send + Sync>, HydrateError>,
}

/// A scoped middleware type declared with `#[collapse(..., middlewares = [Type])]`.
#[derive(Debug, Clone, Copy)]
pub struct ScopedMiddlewareSpec {
    /// The type's name as written in the attribute (last path segment); config keys match it
    /// case-insensitively.
    pub name: &'static str,
    /// The config type's name when the middleware takes a config.
    pub config_type: Option<&'static str>,
    /// Checks a config without creating the middleware.
    pub validate: fn(&Value) -> Result<(), HydrateError>,
    /// Creates a fresh instance from a config (`{}` when none is given).
    pub create: fn(&Value) -> Result<Arc<dyn Middleware>, HydrateError>,
}

/// Everything the runtime needs to know about one harness. Emitted by the macros as a `static`;
/// holds only const data and `fn` pointers.
pub struct HarnessEntry {
    /// The harness name (the type's name unless `name = "..."`).
    pub name: &'static str,
    /// The Rust type, as `module::path::Type`.
    pub rust_type: &'static str,
    /// The members, in declaration order.
    pub functions: &'static [FunctionSpec],
    /// Collapse data when the harness is `#[collapse]`d.
    pub collapse: Option<CollapseSpec>,
    /// How the registry creates it.
    pub constructor: ConstructorSpec,
    /// The metadata type, if declared.
    pub metadata: Option<MetadataSpec>,
    /// Attribute-declared scoped middleware, in attribute order, each behind a `fn`: whether a
    /// type is created from a config or by `Default` is picked by a trait method call, which
    /// cannot run in a `static` initializer. See [`HarnessEntry::scoped_middleware_specs`].
    pub scoped_middlewares: &'static [fn() -> ScopedMiddlewareSpec],
    /// Calls a member.
    pub invoke: InvokeFn,
    /// Evaluates the `condition` of member `index` against metadata (true without metadata).
    pub condition: fn(Option<&(dyn Any + Send + Sync)>, usize) -> bool,
    /// Renders the description of member `index` from metadata; `None` means the static one.
    pub describe: fn(Option<&(dyn Any + Send + Sync)>, usize) -> Option<String>,
    /// The harness type's `TypeId`.
    pub type_id: fn() -> TypeId,
}

impl fmt::Debug for HarnessEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HarnessEntry")
            .field("name", &self.name)
            .field("rust_type", &self.rust_type)
            .field(
                "functions",
                &self.functions.iter().map(|s| s.name).collect::<Vec<_>>(),
            )
            .field("collapsed", &self.collapse.is_some())
            .finish_non_exhaustive()
    }
}

impl HarnessEntry {
    /// The member names (functions and sub-agents), in declaration order.
    pub fn function_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.functions.iter().map(|f| f.name)
    }

    /// Whether the harness is declared with `#[collapse]`.
    #[must_use]
    pub fn is_collapsed(&self) -> bool {
        self.collapse.is_some()
    }

    /// The attribute-declared scoped middleware, in attribute order.
    pub fn scoped_middleware_specs(&self) -> impl Iterator<Item = ScopedMiddlewareSpec> + '_ {
        self.scoped_middlewares.iter().map(|spec| spec())
    }

    /// Whether `fn new(config: C)` builds it.
    #[must_use]
    pub fn takes_config(&self) -> bool {
        matches!(self.constructor, ConstructorSpec::Config { .. })
    }
}

/// The `inventory` item a harness submits.
// Not public API. Used by generated code.
#[doc(hidden)]
#[derive(Debug)]
pub struct HarnessRegistration(pub &'static HarnessInfo);

inventory::collect!(HarnessRegistration);

/// A harness declared with `#[tool_harness]` or `#[collapse("...")]`: its name, Rust type and
/// functions, as the macros declared them.
///
/// Every such harness has one, made by the macros; [`HarnessInfo::of`] gives the one of a type,
/// [`HarnessInfo::find`] the one a JSON config's name means, and [`HarnessInfo::linked`] every
/// one linked into the program.
///
/// ```
/// use hpd_agent::prelude::*;
/// use hpd_agent::harness::HarnessInfo;
///
/// #[derive(Default)]
/// pub struct Oven;
///
/// #[tool_harness]
/// impl Oven {
///     /// Preheats the oven.
///     #[ai_function]
///     fn preheat(&self, celsius: u32) -> String { format!("{celsius} °C") }
/// }
///
/// let info = HarnessInfo::of::<Oven>();
/// assert_eq!((info.name(), info.is_collapsed()), ("Oven", false));
/// assert_eq!(info.function_names().collect::<Vec<_>>(), ["preheat"]);
/// assert_eq!(info.schemas()[0]["required"], serde_json::json!(["celsius"]));
/// // Config names harnesses case-insensitively.
/// assert!(std::ptr::eq(HarnessInfo::find("oven")?, info));
/// # Ok::<(), hpd_agent::BuildError>(())
/// ```
pub struct HarnessInfo {
    entry: &'static HarnessEntry,
    schemas: OnceLock<Box<[Arc<Value>]>>,
    output_schemas: OnceLock<Box<[Option<Arc<Value>>]>>,
}

impl fmt::Debug for HarnessInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HarnessInfo")
            .field("name", &self.entry.name)
            .field("rust_type", &self.entry.rust_type)
            .field("functions", &self.function_names().collect::<Vec<_>>())
            .field("collapsed", &self.is_collapsed())
            .finish()
    }
}

impl HarnessInfo {
    // Not public API. Used by generated code.
    #[doc(hidden)]
    #[must_use]
    pub const fn new(entry: &'static HarnessEntry) -> Self {
        HarnessInfo {
            entry,
            schemas: OnceLock::new(),
            output_schemas: OnceLock::new(),
        }
    }

    /// The harness of a Rust type, taken from the type itself (no lookup by name).
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::harness::HarnessInfo;
    ///
    /// #[derive(Default)]
    /// pub struct Scale;
    ///
    /// #[tool_harness(name = "kitchen_scale")]
    /// impl Scale {
    ///     /// The weight in grams.
    ///     #[ai_function]
    ///     fn weigh(&self) -> u32 { 500 }
    /// }
    ///
    /// let info = HarnessInfo::of::<Scale>();
    /// assert_eq!(info.name(), "kitchen_scale");
    /// assert!(info.rust_type().ends_with("::Scale"));
    /// ```
    #[must_use]
    pub fn of<T: ToolHarness>() -> &'static HarnessInfo {
        T::__harness_info(Seal::new())
    }

    /// The harness a name means, as a JSON config or
    /// [`AgentBuilder::with_tool_harness_reference`](crate::AgentBuilder::with_tool_harness_reference) names it:
    /// case-insensitively, among the harnesses linked into the program.
    ///
    /// # Errors
    ///
    /// [`BuildError::UnknownHarness`] when no linked harness has the name, listing those that
    /// do exist; [`BuildError::Registry`] when two linked harnesses have it (their names differ
    /// only in case), naming both Rust types. An agent that registers them by type is not
    /// affected; only a lookup by name is ambiguous.
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::BuildError;
    /// use hpd_agent::harness::HarnessInfo;
    ///
    /// #[derive(Default)]
    /// pub struct Compass;
    ///
    /// #[tool_harness]
    /// impl Compass {
    ///     /// The heading in degrees.
    ///     #[ai_function]
    ///     fn heading(&self) -> u16 { 90 }
    /// }
    ///
    /// assert_eq!(HarnessInfo::find("COMPASS")?.name(), "Compass");
    /// let error = HarnessInfo::find("Sextant").unwrap_err();
    /// assert!(matches!(error, BuildError::UnknownHarness { .. }), "{error}");
    /// assert!(error.to_string().contains("Compass"), "{error}"); // the known ones are listed
    /// # Ok::<(), BuildError>(())
    /// ```
    pub fn find(name: &str) -> Result<&'static HarnessInfo, BuildError> {
        Registry::global().lookup(name)
    }

    /// Every harness linked into the program, sorted by name (then Rust type).
    ///
    /// A harness in a library crate is linked once the binary uses an item of that crate (see
    /// the [module docs](crate::harness#harnesses-in-library-crates)).
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::harness::HarnessInfo;
    ///
    /// #[derive(Default)]
    /// pub struct Mailbox;
    ///
    /// #[tool_harness]
    /// impl Mailbox {
    ///     /// Sends mail.
    ///     #[ai_function]
    ///     fn send_mail(&self) {}
    /// }
    ///
    /// assert!(HarnessInfo::linked().any(|info| info.name() == "Mailbox"));
    /// ```
    pub fn linked() -> impl Iterator<Item = &'static HarnessInfo> {
        Registry::global().harnesses.iter().copied()
    }

    // Not public API: the macro contract.
    pub(crate) fn entry(&self) -> &'static HarnessEntry {
        self.entry
    }

    /// The harness name (the type's name, or `name = "..."` of the attribute).
    #[must_use]
    pub fn name(&self) -> &'static str {
        self.entry.name
    }

    /// The Rust type's path, like `my_crate::tools::Clipboard`.
    #[must_use]
    pub fn rust_type(&self) -> &'static str {
        self.entry.rust_type
    }

    /// Whether it is declared with `#[collapse("...")]`.
    #[must_use]
    pub fn is_collapsed(&self) -> bool {
        self.entry.is_collapsed()
    }

    /// Whether it is built from a config, by a constructor `fn new(config: C) -> Self`.
    #[must_use]
    pub fn takes_config(&self) -> bool {
        self.entry.takes_config()
    }

    /// The tool names of its members (`#[ai_function]` and `#[sub_agent]` methods), in
    /// declaration order.
    pub fn function_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.entry.function_names()
    }

    /// The parameter schemas of the members, in declaration order, built on first use and
    /// shared afterwards.
    pub fn schemas(&self) -> &[Arc<Value>] {
        self.schemas.get_or_init(|| {
            self.entry
                .functions
                .iter()
                .map(|f| Arc::new((f.schema)()))
                .collect()
        })
    }

    /// The output schemas of the members (`None` for a member without one), in declaration
    /// order, built on first use and shared afterwards.
    pub fn output_schemas(&self) -> &[Option<Arc<Value>>] {
        self.output_schemas.get_or_init(|| {
            self.entry
                .functions
                .iter()
                .map(|f| (f.output_schema)().map(Arc::new))
                .collect()
        })
    }

    /// The callable functions of a new instance, made as a registration without options makes
    /// it (`fn new()` or `Default`; a config constructor gets `{}`), without metadata: the
    /// `#[ai_function]` members whose condition holds then, in declaration order.
    /// (`#[sub_agent]` members become tools when an agent is built, since they need its chat
    /// client.)
    ///
    /// # Errors
    ///
    /// The config constructor does not accept `{}`.
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::harness::HarnessInfo;
    ///
    /// #[derive(Default)]
    /// pub struct Sundial;
    ///
    /// #[tool_harness]
    /// impl Sundial {
    ///     /// The solar time.
    ///     #[ai_function]
    ///     fn sun_time(&self) -> String { "noon".into() }
    /// }
    ///
    /// let functions = HarnessInfo::of::<Sundial>().functions()?;
    /// assert_eq!(functions[0].name(), "sun_time");
    /// # Ok::<(), hpd_agent::error::ConstructError>(())
    /// ```
    pub fn functions(&self) -> Result<Vec<Function>, ConstructError> {
        let instance = self.construct(None)?;
        Ok(self.instance_functions(&instance, None))
    }

    /// The `#[ai_function]` members of an instance whose condition holds for `metadata`.
    pub(crate) fn instance_functions(
        &self,
        instance: &HarnessObject,
        metadata: Option<&(dyn Any + Send + Sync)>,
    ) -> Vec<Function> {
        self.members(instance, metadata)
            .into_iter()
            .filter_map(|member| match member {
                Member::Function(function) => Some(function),
                Member::SubAgent(_) => None,
            })
            .collect()
    }

    /// Every member of an instance whose condition holds, in declaration order.
    pub(crate) fn members(
        &self,
        instance: &HarnessObject,
        metadata: Option<&(dyn Any + Send + Sync)>,
    ) -> Vec<Member> {
        let schemas = self.schemas();
        let output_schemas = self.output_schemas();
        self.entry
            .functions
            .iter()
            .enumerate()
            .filter(|(index, _)| (self.entry.condition)(metadata, *index))
            .map(|(index, spec)| {
                if let Some(make) = spec.sub_agent {
                    return Member::SubAgent(SubAgentMember {
                        name: spec.name,
                        make,
                        instance: Arc::clone(instance),
                    });
                }
                let description = (self.entry.describe)(metadata, index)
                    .unwrap_or_else(|| spec.description.to_owned());
                let body = MacroBody {
                    instance: Arc::clone(instance),
                    index,
                    invoke: self.entry.invoke,
                };
                Member::Function(
                    Function::new(
                        self.entry.name,
                        ToolDefinition {
                            name: spec.name.to_owned(),
                            description,
                            parameters: Arc::clone(&schemas[index]),
                            output_schema: output_schemas[index].clone(),
                            annotations: spec.annotations,
                        },
                        spec.timeout_ms.map(std::time::Duration::from_millis),
                        Arc::new(body),
                    )
                    .with_approval(spec.requires_approval),
                )
            })
            .collect()
    }

    /// Creates an instance with the registry's constructor; `config` goes to a config
    /// constructor (`{}` when `None`).
    ///
    /// # Errors
    ///
    /// The config does not deserialize, or a config was given to a harness without a config
    /// constructor.
    pub(crate) fn construct(
        &self,
        config: Option<&Value>,
    ) -> Result<HarnessObject, ConstructError> {
        match (self.entry.constructor, config) {
            (ConstructorSpec::Plain(_), Some(_)) => Err(ConstructError::ConfigNotAccepted {
                harness: self.entry.name,
            }),
            (ConstructorSpec::Plain(make), None) => Ok(make()),
            (ConstructorSpec::Config { construct, .. }, config) => {
                let empty = Value::Object(serde_json::Map::new());
                construct(config.unwrap_or(&empty)).map_err(|source| ConstructError::Config {
                    harness: self.entry.name,
                    source,
                })
            }
        }
    }
}

/// A member of a macro harness instance.
pub(crate) enum Member {
    /// An `#[ai_function]`, ready to call.
    Function(Function),
    /// A `#[sub_agent]` method, not called yet.
    SubAgent(SubAgentMember),
}

/// A `#[sub_agent]` member of a harness instance.
pub(crate) struct SubAgentMember {
    /// The member (tool) name.
    pub(crate) name: &'static str,
    make: fn(&HarnessObject) -> SubAgent,
    instance: HarnessObject,
}

impl SubAgentMember {
    /// Calls the method and names the sub-agent after the member.
    ///
    /// # Errors
    ///
    /// The method panicked.
    pub(crate) fn declare(&self) -> Result<SubAgent, ConstructError> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (self.make)(&self.instance)))
            .map(|sub_agent| sub_agent.renamed(self.name))
            .map_err(|_| ConstructError::SubAgentPanicked { member: self.name })
    }
}

/// The body of an `#[ai_function]`: the generated dispatcher called with the member's index.
struct MacroBody {
    instance: HarnessObject,
    index: usize,
    invoke: InvokeFn,
}

impl Invoke for MacroBody {
    fn invoke(&self, arguments: &str, call: &CallParts<'_>) -> Started {
        (self.invoke)(&self.instance, self.index, arguments, call)
    }
}

/// The harnesses linked into the program, found by name for config.
///
/// Names are not checked against each other here: two linked harnesses whose names differ only
/// in case make a lookup of that name ambiguous, and an agent that uses both fails to build,
/// but agents that use neither, or register them by type, are not affected.
pub(crate) struct Registry {
    /// Sorted by name, then Rust type.
    harnesses: Vec<&'static HarnessInfo>,
    /// Folded name to the positions of the harnesses of that name (more than one: ambiguous).
    by_name: HashMap<String, Vec<usize>>,
}

impl Registry {
    /// The registry of every harness linked into this program, built on first use.
    pub(crate) fn global() -> &'static Registry {
        static GLOBAL: OnceLock<Registry> = OnceLock::new();
        GLOBAL.get_or_init(|| {
            let mut harnesses: Vec<&'static HarnessInfo> = inventory::iter::<HarnessRegistration>
                .into_iter()
                .map(|r| r.0)
                .collect();
            harnesses.sort_by(|a, b| {
                (a.entry.name, a.entry.rust_type).cmp(&(b.entry.name, b.entry.rust_type))
            });
            // One entry per type, even if a registration were submitted twice.
            harnesses.dedup_by(|a, b| std::ptr::eq(*a, *b));
            let mut by_name: HashMap<String, Vec<usize>> = HashMap::with_capacity(harnesses.len());
            for (index, info) in harnesses.iter().enumerate() {
                by_name
                    .entry(fold(info.entry.name))
                    .or_default()
                    .push(index);
            }
            Registry { harnesses, by_name }
        })
    }

    /// The harness of a name, case-insensitively.
    ///
    /// # Errors
    ///
    /// No harness has the name, or two have it.
    pub(crate) fn lookup(&self, name: &str) -> Result<&'static HarnessInfo, BuildError> {
        match self.by_name.get(&fold(name)).map(Vec::as_slice) {
            Some(&[only]) => Ok(self.harnesses[only]),
            Some(&[first, second, ..]) => {
                let (first, second) = (self.harnesses[first].entry, self.harnesses[second].entry);
                Err(BuildError::Registry(RegistryError::DuplicateName {
                    first_name: first.name,
                    first_type: first.rust_type,
                    second_name: second.name,
                    second_type: second.rust_type,
                }))
            }
            _ => Err(BuildError::UnknownHarness {
                harness: name.to_owned(),
                known: self.names(),
            }),
        }
    }

    /// Every harness name, sorted, comma-separated (for error messages).
    pub(crate) fn names(&self) -> String {
        let mut names: Vec<&str> = self.harnesses.iter().map(|h| h.entry.name).collect();
        names.dedup();
        names.join(", ")
    }
}
