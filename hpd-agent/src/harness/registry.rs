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
//!
//! ```
//! use hpd_agent::prelude::*;
//! use hpd_agent::{AgentBuilder, AgentConfig, Registry, ScriptedChatClient};
//!
//! #[derive(Default)]
//! pub struct Printer;
//!
//! #[tool_harness]
//! impl Printer {
//!     /// Prints a document.
//!     #[ai_function]
//!     fn print_document(&self, name: String) -> String { format!("printed {name}") }
//! }
//!
//! // The macro registered `Printer` at link time: config can name it.
//! assert!(Registry::global().get("Printer").is_some());
//! let config = AgentConfig::from_json(r#"{"tool_harnesses": ["Printer"]}"#)?;
//! let agent = AgentBuilder::from_config(config).with_chat_client(ScriptedChatClient::new()).build()?;
//! assert_eq!(agent.initial_tool_names(), ["print_document"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

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
///
/// ```
/// use std::sync::Arc;
/// use hpd_agent::prelude::*;
/// use hpd_agent::Registry;
/// use hpd_agent::registry::HarnessObject;
///
/// #[derive(Default)]
/// pub struct Thermometer;
///
/// #[tool_harness]
/// impl Thermometer {
///     /// The temperature.
///     #[ai_function]
///     fn read_temperature(&self) -> f32 { 21.5 }
/// }
///
/// let info = Registry::global().get("Thermometer").unwrap();
/// let instance: HarnessObject = info.construct(None)?;
/// assert!(instance.downcast_ref::<Thermometer>().is_some());
/// let own: HarnessObject = Arc::new(Thermometer); // or an instance made by hand
/// assert_eq!(info.functions(&own, None)[0].name(), "read_temperature");
/// # Ok::<(), hpd_agent::ConstructError>(())
/// ```
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
///
/// ```
/// use hpd_agent::prelude::*;
///
/// #[derive(Default)]
/// pub struct Converter;
///
/// #[tool_harness]
/// impl Converter {
///     /// Celsius to Fahrenheit.
///     #[ai_function(name = "c_to_f", timeout_ms = 100)]
///     fn celsius_to_fahrenheit(&self, celsius: f64) -> f64 { celsius * 1.8 + 32.0 }
/// }
///
/// let spec = &Converter::harness_entry().functions[0];
/// assert_eq!((spec.name, spec.description, spec.timeout_ms), ("c_to_f", "Celsius to Fahrenheit.", Some(100)));
/// assert_eq!((spec.schema)()["required"], serde_json::json!(["celsius"]));
/// assert!(spec.sub_agent.is_none());
/// ```
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
    /// Builds the parameter schema. Called once per harness per process.
    pub schema: fn() -> Value,
    /// Builds the output schema: the schema of a `Serialize + JsonSchema` return type when it
    /// describes an object, else `None`. Called once per harness per process.
    pub output_schema: fn() -> Option<Value>,
    /// For a `#[sub_agent]` method: calls it on an instance.
    pub sub_agent: Option<fn(&HarnessObject) -> SubAgent>,
}

/// Collapse data of a `#[collapse]` harness.
///
/// ```
/// use hpd_agent::prelude::*;
///
/// #[derive(Default)]
/// pub struct Crm;
///
/// #[collapse("Customer records", system_prompt = "Never share emails.")]
/// impl Crm {
///     /// Finds a customer.
///     #[ai_function]
///     fn find_customer(&self, name: String) -> String { name }
/// }
///
/// let collapse = Crm::harness_entry().collapse.as_ref().unwrap();
/// assert_eq!(collapse.description, "Customer records");
/// assert_eq!(collapse.system_prompt, Some("Never share emails."));
/// assert_eq!(collapse.function_result, None);
/// ```
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
///
/// ```
/// use hpd_agent::prelude::*;
/// use hpd_agent::registry::ConstructorSpec;
///
/// #[derive(serde::Deserialize)]
/// pub struct BankConfig {
///     currency: String,
/// }
///
/// pub struct Bank {
///     currency: String,
/// }
///
/// #[tool_harness]
/// impl Bank {
///     pub fn new(config: BankConfig) -> Self {
///         Bank { currency: config.currency }
///     }
///
///     /// The account currency.
///     #[ai_function]
///     fn currency(&self) -> String { self.currency.clone() }
/// }
///
/// let entry = Bank::harness_entry();
/// assert!(matches!(entry.constructor, ConstructorSpec::Config { type_name: "BankConfig", .. }));
/// assert!(entry.takes_config());
/// ```
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
///
/// ```
/// use hpd_agent::prelude::*;
///
/// #[derive(serde::Deserialize)]
/// pub struct Region {
///     eu: bool,
/// }
///
/// #[derive(Default)]
/// pub struct Shipping;
///
/// #[tool_harness(metadata = Region)]
/// impl Shipping {
///     /// Ships inside the EU.
///     #[ai_function(condition = metadata.eu)]
///     fn ship_eu(&self) -> String { "shipped".into() }
/// }
///
/// let spec = Shipping::harness_entry().metadata.as_ref().unwrap();
/// assert_eq!(spec.type_name, "Region");
/// assert!((spec.parse)(&serde_json::json!({"eu": true})).is_ok());
/// assert!((spec.parse)(&serde_json::json!({"eu": "yes"})).is_err());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct MetadataSpec {
    /// The metadata type's name, for error messages.
    pub type_name: &'static str,
    /// Deserializes metadata from JSON.
    pub parse: fn(&Value) -> Result<Arc<dyn Any + Send + Sync>, HydrateError>,
}

/// A scoped middleware type declared with `#[collapse(..., middlewares = [Type])]`.
///
/// ```
/// use hpd_agent::prelude::*;
/// use hpd_agent::Middleware;
///
/// #[derive(Default)]
/// pub struct Tracer;
/// impl Middleware for Tracer {}
///
/// #[derive(Default)]
/// pub struct Traced;
///
/// #[collapse("Traced tools", middlewares = [Tracer])]
/// impl Traced {
///     /// Does nothing.
///     #[ai_function]
///     fn noop(&self) {}
/// }
///
/// let spec = Traced::harness_entry().scoped_middleware_specs().next().unwrap();
/// assert_eq!((spec.name, spec.config_type), ("Tracer", None)); // created with `Default`
/// assert!((spec.create)(&serde_json::json!({})).is_ok());
/// ```
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
///
/// ```
/// use hpd_agent::prelude::*;
///
/// #[derive(Default)]
/// pub struct Translator;
///
/// #[collapse("Translation", name = "translate")]
/// impl Translator {
///     /// Translates to French.
///     #[ai_function]
///     fn to_french(&self, text: String) -> String { text }
/// }
///
/// let entry = Translator::harness_entry();
/// assert_eq!(entry.name, "translate");
/// assert!(entry.rust_type.ends_with("::Translator"));
/// assert!(entry.is_collapsed() && !entry.takes_config());
/// assert_eq!(entry.function_names().collect::<Vec<_>>(), ["to_french"]);
/// ```
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
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::AgentConfig;
    ///
    /// #[derive(Default)]
    /// pub struct Library;
    ///
    /// #[tool_harness]
    /// impl Library {
    ///     /// Finds a book.
    ///     #[ai_function]
    ///     fn find_book(&self, title: String) -> String { title }
    ///
    ///     #[sub_agent(name = "librarian")]
    ///     fn librarian(&self) -> SubAgent {
    ///         SubAgent::new("librarian", "Answers questions about books.", AgentConfig::default())
    ///     }
    /// }
    ///
    /// assert_eq!(Library::harness_entry().function_names().collect::<Vec<_>>(), ["find_book", "librarian"]);
    /// ```
    pub fn function_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.functions.iter().map(|f| f.name)
    }

    /// Whether the harness is declared with `#[collapse]`.
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    ///
    /// #[derive(Default)]
    /// pub struct Lamp;
    ///
    /// #[tool_harness]
    /// impl Lamp {
    ///     /// Turns the lamp on.
    ///     #[ai_function]
    ///     fn lamp_on(&self) {}
    /// }
    ///
    /// assert!(!Lamp::harness_entry().is_collapsed());
    /// ```
    #[must_use]
    pub fn is_collapsed(&self) -> bool {
        self.collapse.is_some()
    }

    /// The attribute-declared scoped middleware, in attribute order.
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    ///
    /// #[derive(Default)]
    /// pub struct Doorbell;
    ///
    /// #[collapse("Doorbell")]
    /// impl Doorbell {
    ///     /// Rings.
    ///     #[ai_function]
    ///     fn ring(&self) {}
    /// }
    ///
    /// assert_eq!(Doorbell::harness_entry().scoped_middleware_specs().count(), 0);
    /// ```
    pub fn scoped_middleware_specs(&self) -> impl Iterator<Item = ScopedMiddlewareSpec> + '_ {
        self.scoped_middlewares.iter().map(|spec| spec())
    }

    /// Whether `fn new(config: C)` builds it.
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    ///
    /// #[derive(Default)]
    /// pub struct Kettle;
    ///
    /// #[tool_harness]
    /// impl Kettle {
    ///     /// Boils water.
    ///     #[ai_function]
    ///     fn boil(&self) {}
    /// }
    ///
    /// assert!(!Kettle::harness_entry().takes_config()); // created with `Default`
    /// ```
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
///
/// ```
/// use hpd_agent::prelude::*;
/// use hpd_agent::Registry;
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
/// let info = Registry::global().get("oven").unwrap(); // names match case-insensitively
/// assert_eq!(info.name(), "Oven");
/// assert_eq!(info.schemas()[0]["required"], serde_json::json!(["celsius"]));
/// ```
#[derive(Debug)]
pub struct HarnessInfo {
    entry: &'static HarnessEntry,
    schemas: OnceLock<Box<[Arc<Value>]>>,
    output_schemas: OnceLock<Box<[Option<Arc<Value>>]>>,
}

impl HarnessInfo {
    /// The static entry.
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::Registry;
    ///
    /// #[derive(Default)]
    /// pub struct Fridge;
    ///
    /// #[tool_harness]
    /// impl Fridge {
    ///     /// The temperature inside.
    ///     #[ai_function]
    ///     fn fridge_temperature(&self) -> i32 { 4 }
    /// }
    ///
    /// let info = Registry::global().get("Fridge").unwrap();
    /// assert!(std::ptr::eq(info.entry(), Fridge::harness_entry()));
    /// ```
    #[must_use]
    pub fn entry(&self) -> &'static HarnessEntry {
        self.entry
    }

    /// The harness name.
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::Registry;
    ///
    /// #[derive(Default)]
    /// pub struct Toaster;
    ///
    /// #[tool_harness(name = "toaster")]
    /// impl Toaster {
    ///     /// Toasts.
    ///     #[ai_function]
    ///     fn toast(&self) {}
    /// }
    ///
    /// assert_eq!(Registry::global().get("TOASTER").unwrap().name(), "toaster");
    /// ```
    #[must_use]
    pub fn name(&self) -> &'static str {
        self.entry.name
    }

    /// The parameter schemas of the members, built on first use and shared afterwards.
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::Registry;
    ///
    /// #[derive(Default)]
    /// pub struct Blender;
    ///
    /// #[tool_harness]
    /// impl Blender {
    ///     /// Blends for a while.
    ///     #[ai_function]
    ///     fn blend(&self, seconds: u32, speed: Option<u8>) -> String { format!("{seconds} s at {speed:?}") }
    /// }
    ///
    /// let info = Registry::global().get("Blender").unwrap();
    /// let schema = &info.schemas()[0];
    /// assert_eq!(schema["required"], serde_json::json!(["seconds"])); // `Option` is not required
    /// assert!(std::sync::Arc::ptr_eq(schema, &info.schemas()[0])); // built once, shared
    /// ```
    pub fn schemas(&self) -> &[Arc<Value>] {
        self.schemas.get_or_init(|| {
            self.entry
                .functions
                .iter()
                .map(|f| Arc::new((f.schema)()))
                .collect()
        })
    }

    /// The output schemas of the members (`None` for a member without one), built on first use
    /// and shared afterwards.
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::Registry;
    ///
    /// #[derive(serde::Serialize, schemars::JsonSchema)]
    /// pub struct Reading { celsius: f64 }
    ///
    /// #[derive(Default)]
    /// pub struct HygroStation;
    ///
    /// #[tool_harness]
    /// impl HygroStation {
    ///     /// Reads the temperature.
    ///     #[ai_function]
    ///     fn read(&self) -> Reading { Reading { celsius: 21.5 } }
    ///     /// Says hello.
    ///     #[ai_function]
    ///     fn hello(&self) -> String { "hello".into() }
    /// }
    ///
    /// let info = Registry::global().get("HygroStation").unwrap();
    /// let schema = info.output_schemas()[0].as_ref().unwrap();
    /// assert_eq!(schema["properties"]["celsius"]["type"], "number");
    /// assert!(info.output_schemas()[1].is_none()); // a string is not an object
    /// ```
    pub fn output_schemas(&self) -> &[Option<Arc<Value>>] {
        self.output_schemas.get_or_init(|| {
            self.entry
                .functions
                .iter()
                .map(|f| (f.output_schema)().map(Arc::new))
                .collect()
        })
    }

    /// Builds the functions of an instance: `#[ai_function]` members whose condition holds for
    /// `metadata`, in declaration order, with rendered descriptions. (`#[sub_agent]` members
    /// become tools when an agent is built, since they need the agent's chat client.)
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::Registry;
    ///
    /// #[derive(serde::Deserialize)]
    /// pub struct Plan {
    ///     pro: bool,
    /// }
    ///
    /// #[derive(Default)]
    /// pub struct Reports;
    ///
    /// #[tool_harness(metadata = Plan)]
    /// impl Reports {
    ///     /// A daily report.
    ///     #[ai_function]
    ///     fn daily(&self) -> String { "daily".into() }
    ///     /// A yearly report.
    ///     #[ai_function(condition = metadata.pro)]
    ///     fn yearly(&self) -> String { "yearly".into() }
    /// }
    ///
    /// let info = Registry::global().get("Reports").unwrap();
    /// let instance = info.construct(None)?;
    /// let free = Plan { pro: false };
    /// let names = |fs: Vec<hpd_agent::Function>| fs.iter().map(|f| f.name().to_owned()).collect::<Vec<_>>();
    /// assert_eq!(names(info.functions(&instance, Some(&free))), ["daily"]);
    /// assert_eq!(names(info.functions(&instance, None)), ["daily", "yearly"]); // no metadata: conditions hold
    /// # Ok::<(), hpd_agent::ConstructError>(())
    /// ```
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
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::Registry;
    /// use serde_json::json;
    ///
    /// #[derive(serde::Deserialize)]
    /// pub struct PagerConfig {
    ///     team: String,
    /// }
    ///
    /// pub struct Pager {
    ///     team: String,
    /// }
    ///
    /// #[tool_harness]
    /// impl Pager {
    ///     pub fn new(config: PagerConfig) -> Self {
    ///         Pager { team: config.team }
    ///     }
    ///
    ///     /// Pages the on-call person.
    ///     #[ai_function]
    ///     fn page(&self) -> String { format!("paged {}", self.team) }
    /// }
    ///
    /// let info = Registry::global().get("Pager").unwrap();
    /// assert!(info.construct(Some(&json!({"team": "infra"}))).is_ok());
    /// assert!(info.construct(None).is_err()); // `{}` has no `team`
    /// ```
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
///
/// ```
/// use hpd_agent::prelude::*;
/// use hpd_agent::Registry;
///
/// #[derive(Default)]
/// pub struct Compass;
///
/// #[tool_harness]
/// impl Compass {
///     /// The heading.
///     #[ai_function]
///     fn heading(&self) -> u16 { 90 }
/// }
///
/// let registry = Registry::global();
/// assert!(registry.validate().is_ok());
/// assert!(registry.names().contains(&"Compass"));
/// assert_eq!(registry.get("compass").unwrap().name(), "Compass");
/// ```
#[derive(Debug)]
pub struct Registry {
    harnesses: Vec<HarnessInfo>,
    by_name: HashMap<String, usize>,
    conflicts: Vec<RegistryError>,
}

impl Registry {
    /// The registry of every harness linked into this program, built on first use.
    ///
    /// ```
    /// use hpd_agent::Registry;
    ///
    /// // Every harness linked into the program, also those of library crates it links.
    /// for info in Registry::global().iter() {
    ///     let _ = (info.name(), info.entry().functions.len());
    /// }
    /// ```
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
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::{Registry, RegistryError};
    ///
    /// #[derive(Default)]
    /// pub struct Mailbox;
    /// #[tool_harness(name = "mail")]
    /// impl Mailbox {
    ///     /// Sends a mail.
    ///     #[ai_function]
    ///     fn send_mail(&self) {}
    /// }
    ///
    /// #[derive(Default)]
    /// pub struct MailArchive;
    /// #[tool_harness(name = "MAIL_ARCHIVE")]
    /// impl MailArchive {
    ///     /// Searches old mail.
    ///     #[ai_function]
    ///     fn search_archive(&self) {}
    /// }
    ///
    /// // A registry of chosen entries, e.g. to check a set of harnesses in a test.
    /// let registry = Registry::from_entries([Mailbox::harness_entry(), MailArchive::harness_entry()]);
    /// assert_eq!(registry.names(), ["MAIL_ARCHIVE", "mail"]);
    /// assert!(registry.conflicts().is_empty());
    /// // One name twice (or two names that differ only in case) is a conflict.
    /// let clash = Registry::from_entries([Mailbox::harness_entry(), Mailbox::harness_entry()]);
    /// assert!(matches!(clash.validate(), Err(RegistryError::DuplicateName { .. })));
    /// ```
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
                output_schemas: OnceLock::new(),
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
    ///
    /// ```
    /// use hpd_agent::Registry;
    ///
    /// // An agent build fails when the registry has conflicts; check them early at start-up.
    /// if let Err(conflict) = Registry::global().validate() {
    ///     eprintln!("harness names clash: {conflict}");
    /// }
    /// ```
    pub fn validate(&self) -> Result<(), RegistryError> {
        self.conflicts.first().map_or(Ok(()), |e| Err(e.clone()))
    }

    /// Every conflict found while building the registry.
    ///
    /// ```
    /// use hpd_agent::Registry;
    ///
    /// for conflict in Registry::global().conflicts() {
    ///     eprintln!("{conflict}");
    /// }
    /// assert!(Registry::global().conflicts().is_empty());
    /// ```
    #[must_use]
    pub fn conflicts(&self) -> &[RegistryError] {
        &self.conflicts
    }

    /// Finds a harness by name, case-insensitively.
    ///
    /// ```
    /// use hpd_agent::Registry;
    ///
    /// assert!(Registry::global().get("NoHarnessOfThisName").is_none());
    /// ```
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&HarnessInfo> {
        self.by_name.get(&fold(name)).map(|&i| &self.harnesses[i])
    }

    /// Finds the harness of a Rust type.
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::Registry;
    ///
    /// #[derive(Default)]
    /// pub struct Sundial;
    ///
    /// #[tool_harness]
    /// impl Sundial {
    ///     /// The time by the sun.
    ///     #[ai_function]
    ///     fn sun_time(&self) -> String { "noon".into() }
    /// }
    ///
    /// let info = Registry::global().get_entry(Sundial::harness_entry()).unwrap();
    /// assert_eq!(info.name(), "Sundial");
    /// ```
    #[must_use]
    pub fn get_entry(&self, entry: &'static HarnessEntry) -> Option<&HarnessInfo> {
        self.get(entry.name).filter(|info| {
            std::ptr::eq(info.entry, entry) || (info.entry.type_id)() == (entry.type_id)()
        })
    }

    /// Every harness name, sorted.
    ///
    /// ```
    /// use hpd_agent::Registry;
    ///
    /// let names = Registry::global().names();
    /// assert!(names.windows(2).all(|w| w[0] <= w[1])); // sorted
    /// ```
    #[must_use]
    pub fn names(&self) -> Vec<&'static str> {
        self.harnesses.iter().map(|h| h.entry.name).collect()
    }

    /// Every harness, sorted by name.
    ///
    /// ```
    /// use hpd_agent::Registry;
    ///
    /// // List the catalog, e.g. for an admin page.
    /// let catalog: Vec<String> = Registry::global()
    ///     .iter()
    ///     .map(|info| format!("{} ({} functions)", info.name(), info.entry().functions.len()))
    ///     .collect();
    /// assert_eq!(catalog.len(), Registry::global().names().len());
    /// ```
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
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    /// use hpd_agent::Registry;
    ///
    /// #[derive(Default)]
    /// pub struct Abacus;
    ///
    /// #[tool_harness]
    /// impl Abacus {
    ///     /// Counts beads.
    ///     #[ai_function]
    ///     fn count_beads(&self, rows: u32) -> u32 { rows * 10 }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let functions = Registry::global().instantiate::<Abacus>()?;
    /// let result = functions[0].call("c1", r#"{"rows": 3}"#, Default::default()).await;
    /// assert_eq!(result.text, "30");
    /// # Ok(())
    /// # }
    /// ```
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
