//! The link-time registry of tool harnesses.
//!
//! Every `#[tool_harness]` or `#[collapse]` impl block submits one [`HarnessEntry`] through
//! `inventory`. [`Registry::global`] collects them once, lazily, and finds them by name
//! (case-insensitively).
//!
//! # Harnesses in library crates
//!
//! `inventory` entries live in the object file of the crate that declares them. A harness in a
//! library crate is found once that crate is linked into the final binary, which happens when the
//! binary uses any item of the library. Code that registers harnesses only by name (JSON config,
//! [`AgentBuilder::with_tool_ref`](crate::AgentBuilder::with_tool_ref)) may use nothing of the
//! library; then write `use my_harnesses as _;` in the binary (or call any function of it) so the
//! linker keeps it. The `harness-library` example crate shows this.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use super::names::fold;
use crate::chat::ToolDefinition;
use crate::error::{ConstructError, HydrateError, RegistryError};
use crate::middleware::Middleware;
use crate::tool::{
    ArgumentsError, CallParts, Function, FunctionFailure, Invoke, Invoked, Started, SubAgent,
};

/// A harness instance, type-erased. The generated code downcasts it back to the harness type.
pub type HarnessObject = Arc<dyn Any + Send + Sync>;

// Not public API. Used by generated code.
/// Calls member `index` of a harness instance with the arguments text the model sent.
///
/// A synchronous method runs at once and returns its result; an `async` one returns its
/// future. An [`ArgumentsError`] when the arguments do not match the parameters (the body does
/// not run then).
#[doc(hidden)]
pub type InvokeFn =
    fn(&HarnessObject, usize, &str, &CallParts<'_>) -> Result<Started, ArgumentsError>;

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
    /// Builds the parameter schema. Called once per harness per process.
    pub schema: fn() -> Value,
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
pub struct HarnessRegistration(pub &'static HarnessEntry);

inventory::collect!(HarnessRegistration);

/// A registered harness with its lazily built, shared parameter schemas.
#[derive(Debug)]
pub struct HarnessInfo {
    entry: &'static HarnessEntry,
    schemas: OnceLock<Box<[Arc<Value>]>>,
}

impl HarnessInfo {
    /// The static entry.
    #[must_use]
    pub fn entry(&self) -> &'static HarnessEntry {
        self.entry
    }

    /// The harness name.
    #[must_use]
    pub fn name(&self) -> &'static str {
        self.entry.name
    }

    /// The parameter schemas of the members, built on first use and shared afterwards.
    pub fn schemas(&self) -> &[Arc<Value>] {
        self.schemas.get_or_init(|| {
            self.entry
                .functions
                .iter()
                .map(|f| Arc::new((f.schema)()))
                .collect()
        })
    }

    /// Builds the functions of an instance: `#[ai_function]` members whose condition holds for
    /// `metadata`, in declaration order, with rendered descriptions. (`#[sub_agent]` members
    /// become tools when an agent is built, since they need the agent's chat client.)
    #[must_use]
    pub fn functions(
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
                Member::Function(Function::new(
                    self.entry.name,
                    ToolDefinition {
                        name: spec.name.to_owned(),
                        description,
                        parameters: Arc::clone(&schemas[index]),
                    },
                    spec.timeout_ms.map(std::time::Duration::from_millis),
                    Arc::new(body),
                ))
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
    pub fn construct(&self, config: Option<&Value>) -> Result<HarnessObject, ConstructError> {
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
    fn invoke(&self, arguments: &str, call: &CallParts<'_>) -> Result<Invoked, ArgumentsError> {
        Ok(
            match (self.invoke)(&self.instance, self.index, arguments, call)? {
                Started::Done(outcome) => Invoked::Done(outcome.map_err(FunctionFailure::Returned)),
                Started::Running(body) => Invoked::Running(Box::pin(async move {
                    body.await.map_err(FunctionFailure::Returned)
                })),
            },
        )
    }
}

/// The set of harnesses linked into the program, found by name.
#[derive(Debug)]
pub struct Registry {
    harnesses: Vec<HarnessInfo>,
    by_name: HashMap<String, usize>,
    conflicts: Vec<RegistryError>,
}

impl Registry {
    /// The registry of every harness linked into this program, built on first use.
    pub fn global() -> &'static Registry {
        static GLOBAL: OnceLock<Registry> = OnceLock::new();
        GLOBAL.get_or_init(|| {
            Registry::from_entries(
                inventory::iter::<HarnessRegistration>
                    .into_iter()
                    .map(|r| r.0),
            )
        })
    }

    /// Builds a registry from entries (sorted by name; case-insensitive duplicates recorded).
    #[must_use]
    pub fn from_entries(entries: impl IntoIterator<Item = &'static HarnessEntry>) -> Registry {
        let mut entries: Vec<&'static HarnessEntry> = entries.into_iter().collect();
        entries.sort_by(|a, b| a.name.cmp(b.name).then(a.rust_type.cmp(b.rust_type)));
        let mut harnesses = Vec::with_capacity(entries.len());
        let mut by_name = HashMap::with_capacity(entries.len());
        let mut conflicts = Vec::new();
        for entry in entries {
            let key = fold(entry.name);
            if let Some(&existing) = by_name.get(&key) {
                let first: &HarnessInfo = &harnesses[existing];
                conflicts.push(RegistryError::DuplicateName {
                    first_name: first.entry.name,
                    first_type: first.entry.rust_type,
                    second_name: entry.name,
                    second_type: entry.rust_type,
                });
                continue;
            }
            by_name.insert(key, harnesses.len());
            harnesses.push(HarnessInfo {
                entry,
                schemas: OnceLock::new(),
            });
        }
        Registry {
            harnesses,
            by_name,
            conflicts,
        }
    }

    /// Checks the registry: every pair of harness names that differ only in case is an error.
    ///
    /// # Errors
    ///
    /// The first conflict found.
    pub fn validate(&self) -> Result<(), RegistryError> {
        self.conflicts.first().map_or(Ok(()), |e| Err(e.clone()))
    }

    /// Every conflict found while building the registry.
    #[must_use]
    pub fn conflicts(&self) -> &[RegistryError] {
        &self.conflicts
    }

    /// Finds a harness by name, case-insensitively.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&HarnessInfo> {
        self.by_name.get(&fold(name)).map(|&i| &self.harnesses[i])
    }

    /// Finds the harness of a Rust type.
    #[must_use]
    pub fn get_entry(&self, entry: &'static HarnessEntry) -> Option<&HarnessInfo> {
        self.get(entry.name).filter(|info| {
            std::ptr::eq(info.entry, entry) || (info.entry.type_id)() == (entry.type_id)()
        })
    }

    /// Every harness name, sorted.
    #[must_use]
    pub fn names(&self) -> Vec<&'static str> {
        self.harnesses.iter().map(|h| h.entry.name).collect()
    }

    /// Every harness, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = &HarnessInfo> {
        self.harnesses.iter()
    }

    /// Creates `T` with its registry constructor (a config constructor gets `{}`) and returns
    /// its functions, without metadata.
    ///
    /// # Errors
    ///
    /// `T` is not in the registry (its harness name is taken by another type), or its config
    /// does not parse from `{}`.
    pub fn instantiate<T: super::ToolHarness>(&self) -> Result<Vec<Function>, ConstructError> {
        let entry = T::harness_entry();
        let info = self
            .get_entry(entry)
            .ok_or_else(|| ConstructError::NotRegistered {
                harness: entry.name,
                known: self.names().join(", "),
            })?;
        let instance = info.construct(None)?;
        Ok(info.functions(&instance, None))
    }
}
