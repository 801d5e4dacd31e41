// Not public API. Used by generated code.
//
// Everything the macros emit calls into this module by absolute path
// (`::hpd_agent::__private::...`), so behaviour lives here, in ordinary generic functions, and
// the macro crate only writes calls.

use std::any::{Any, TypeId};
use std::fmt::Display;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use crate::chat::ToolAnnotations;
pub use crate::error::HydrateError;
pub use crate::harness::ToolHarness;
pub use crate::harness::registry::{
    CollapseSpec, ConstructorSpec, FunctionSpec, HarnessEntry, HarnessInfo, HarnessObject,
    HarnessRegistration, MetadataSpec, ScopedMiddlewareSpec,
};
pub use crate::middleware::{ConfigurableMiddleware, Middleware};
pub use crate::tool::{
    BodyFuture, CallParts, FunctionContext, FunctionFailure, Started, SubAgent, ToolResult,
};
pub use inventory;
pub use schemars;
pub use serde;
pub use serde_json;
pub use tokio_util::sync::CancellationToken;

pub use std::boxed::Box;
pub use std::format;
pub use std::option::Option::{self, None, Some};
pub use std::result::Result::{self, Err, Ok};
pub use std::string::String;

/// The parameter that seals [`ToolHarness`]: its hidden required method takes one, so an impl
/// has to name this hidden module (only the macros do), and only this crate can make one to
/// call it.
#[derive(Debug)]
pub struct Seal(());

impl Seal {
    pub(crate) const fn new() -> Self {
        Seal(())
    }
}

/// What the macros emitted for a harness: the entry behind a [`HarnessInfo`] (for the tests of
/// the macro contract).
#[must_use]
pub fn entry(info: &HarnessInfo) -> &'static HarnessEntry {
    info.entry()
}

/// Creates a harness instance as a registration does: `config` goes to a config constructor
/// (`{}` when `None`).
///
/// # Errors
///
/// The config does not fit, or the harness takes none.
pub fn construct(
    info: &HarnessInfo,
    config: Option<&Value>,
) -> Result<HarnessObject, crate::error::ConstructError> {
    info.construct(config)
}

/// The `#[ai_function]` members of an instance whose condition holds for `metadata`.
#[must_use]
pub fn functions(
    info: &HarnessInfo,
    instance: &HarnessObject,
    metadata: Option<&(dyn Any + Send + Sync)>,
) -> Vec<crate::tool::Function> {
    info.instance_functions(instance, metadata)
}

/// A type that cannot be constructed: the `Metadata` or `Config` of a harness that declares none,
/// so `o.with_metadata(..)` / `o.with_config(..)` on such a harness does not compile.
/// It deserializes from nothing (every input is an error), so generic code bounded by
/// `T::Metadata: DeserializeOwned` accepts every harness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
pub enum Never {}

/// Parses the arguments text of one function call into the generated arguments struct: empty,
/// blank or `null` text counts as `{}`, anything else must be a JSON object that fits.
///
/// # Errors
///
/// [`FunctionFailure::InvalidArguments`]: the text is not a JSON object, or serde's message,
/// prefixed with the JSON path of the offending value when there is one.
pub fn parse_arguments<T: DeserializeOwned>(arguments: &str) -> Result<T, FunctionFailure> {
    crate::tool::parse_arguments(arguments).map_err(FunctionFailure::from)
}

/// The result of a returned value a function returns as text: a JSON string without quotes,
/// `null` as the empty string, anything else as compact JSON.
///
/// # Errors
///
/// The value does not serialize ([`FunctionFailure::Returned`]).
pub fn output_value<T: Serialize>(value: T) -> Result<ToolResult, FunctionFailure> {
    crate::tool::result_text(&value)
        .map(ToolResult::ok)
        .map_err(FunctionFailure::Returned)
}

/// The output schema of a member without one (a `#[sub_agent]`).
#[must_use]
pub fn no_output_schema() -> Option<Value> {
    None
}

/// The failure of a function that returned `Err(e)`: `e`'s `Display`.
pub fn returned<E: Display>(error: E) -> FunctionFailure {
    FunctionFailure::Returned(error.to_string())
}

/// How a returned value becomes a result, chosen by its type at the call site (the macro
/// writes `(&&&OutputProbe::of(&value)).__hpd_kind().output(value)`; method lookup takes the first
/// trait that applies, from the most references down):
/// 1. [`IntoToolResult`](crate::tool::IntoToolResult) types ([`ViaParts`]): that result;
/// 2. `Serialize + JsonSchema` types ([`ViaSchema`]): the text of [`output_value`] plus the
///    value as the structured result when it is a JSON object;
/// 3. `Serialize` types ([`ViaText`]): [`output_value`].
///
/// The same probe on the return *type* gives the function's output schema.
pub struct OutputProbe<T>(std::marker::PhantomData<fn() -> T>);

impl<T> OutputProbe<T> {
    /// The probe of a value's type.
    #[must_use]
    pub fn of(_: &T) -> Self {
        OutputProbe(std::marker::PhantomData)
    }

    /// The probe of a type.
    #[must_use]
    pub fn new() -> Self {
        OutputProbe(std::marker::PhantomData)
    }
}

impl<T> Default for OutputProbe<T> {
    fn default() -> Self {
        OutputProbe::new()
    }
}

/// The value is a whole result.
pub struct PartsKind;
/// The value is serialized and has a schema.
pub struct SchemaKind;
/// The value is serialized.
pub struct TextKind;

/// Step 1 of [`OutputProbe`].
pub trait ViaParts {
    /// The kind.
    fn __hpd_kind(&self) -> PartsKind {
        PartsKind
    }
}

impl<T: crate::tool::IntoToolResult> ViaParts for &&OutputProbe<T> {}

/// Step 2 of [`OutputProbe`].
pub trait ViaSchema {
    /// The kind.
    fn __hpd_kind(&self) -> SchemaKind {
        SchemaKind
    }
}

impl<T: Serialize + schemars::JsonSchema> ViaSchema for &OutputProbe<T> {}

/// Step 3 of [`OutputProbe`].
pub trait ViaText {
    /// The kind.
    fn __hpd_kind(&self) -> TextKind {
        TextKind
    }
}

impl<T> ViaText for OutputProbe<T> {}

impl PartsKind {
    /// The result.
    ///
    /// # Errors
    ///
    /// Never; the signature matches the other kinds.
    #[allow(clippy::unused_self, clippy::unnecessary_wraps)]
    pub fn output<T: crate::tool::IntoToolResult>(
        self,
        value: T,
    ) -> Result<ToolResult, FunctionFailure> {
        Ok(value.into_tool_result())
    }

    /// No output schema.
    #[must_use]
    #[allow(clippy::unused_self)]
    pub fn output_schema<T>(self, _: OutputProbe<T>) -> Option<Value> {
        None
    }
}

impl SchemaKind {
    /// The text of the value, with the value as the structured result when it is an object.
    ///
    /// # Errors
    ///
    /// The value does not serialize.
    #[allow(clippy::unused_self)]
    pub fn output<T: Serialize>(self, value: T) -> Result<ToolResult, FunctionFailure> {
        crate::tool::structured_output(&value).map_err(FunctionFailure::Returned)
    }

    /// The type's schema, when it is an object schema (the only kind MCP's `outputSchema`
    /// takes).
    #[must_use]
    #[allow(clippy::unused_self)]
    pub fn output_schema<T: schemars::JsonSchema>(self, _: OutputProbe<T>) -> Option<Value> {
        crate::tool::object_schema::<T>()
    }
}

impl TextKind {
    /// [`output_value`].
    ///
    /// # Errors
    ///
    /// The value does not serialize.
    #[allow(clippy::unused_self)]
    pub fn output<T: Serialize>(self, value: T) -> Result<ToolResult, FunctionFailure> {
        output_value(value)
    }

    /// No output schema.
    #[must_use]
    #[allow(clippy::unused_self)]
    pub fn output_schema<T>(self, _: OutputProbe<T>) -> Option<Value> {
        None
    }
}

/// The parameter schema of an arguments struct: an inlined object schema without `title`,
/// `$schema` or `$defs`; `properties` and `required` are always present.
#[must_use]
pub fn parameters_schema<T: schemars::JsonSchema>() -> Value {
    let mut value = parameters_schema_of::<T>();
    if let Value::Object(map) = &mut value {
        map.entry("type").or_insert_with(|| Value::from("object"));
        map.entry("properties")
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
        map.entry("required")
            .or_insert_with(|| Value::Array(Vec::new()));
    }
    value
}

/// The inlined schema of `T` (no `title`, `$schema` or `$defs` unless it is recursive), as
/// schemars writes it.
pub(crate) fn parameters_schema_of<T: schemars::JsonSchema>() -> Value {
    let settings = schemars::generate::SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
        s.meta_schema = None;
    });
    let schema = settings.into_generator().root_schema_for::<T>();
    let mut value = schema.to_value();
    strip_titles(&mut value);
    // Subschemas are inlined; only a recursive type leaves `$ref`s, which need their `$defs`.
    let recursive = contains_ref(&value);
    if let Value::Object(map) = &mut value {
        map.remove("$schema");
        if !recursive {
            map.remove("$defs");
            map.remove("definitions");
        }
    }
    value
}

/// Removes `title` keywords from a schema and its subschemas. Property names (`properties`,
/// `$defs` keys) and data (`default`, `examples`, `const`, `enum`) are left alone, so a field
/// called `title` survives.
fn strip_titles(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.get("title").is_some_and(Value::is_string) {
                map.remove("title");
            }
            for (key, child) in map.iter_mut() {
                match key.as_str() {
                    "default" | "examples" | "const" | "enum" => {}
                    "properties" | "$defs" | "definitions" | "patternProperties" => {
                        if let Value::Object(named) = child {
                            named.values_mut().for_each(strip_titles);
                        }
                    }
                    _ => strip_titles(child),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_titles),
        _ => {}
    }
}

fn contains_ref(value: &Value) -> bool {
    match value {
        Value::Object(map) => map
            .iter()
            .any(|(key, child)| key == "$ref" || contains_ref(child)),
        Value::Array(items) => items.iter().any(contains_ref),
        _ => false,
    }
}

/// Deserializes a user type from JSON, reporting the type and the JSON path on failure.
///
/// # Errors
///
/// The value does not deserialize into `T`.
pub fn hydrate<T: DeserializeOwned>(
    value: &Value,
    type_name: &'static str,
) -> Result<T, HydrateError> {
    serde_path_to_error::deserialize(value).map_err(|e| HydrateError {
        type_name,
        path: e.path().to_string(),
        message: e.into_inner().to_string(),
    })
}

/// Hydrates a config and calls a config constructor.
///
/// # Errors
///
/// The config does not deserialize.
pub fn construct_with_config<T, C>(
    value: &Value,
    type_name: &'static str,
    new: fn(C) -> T,
) -> Result<HarnessObject, HydrateError>
where
    T: Send + Sync + 'static,
    C: DeserializeOwned,
{
    let config = hydrate::<C>(value, type_name)?;
    Ok(Arc::new(new(config)))
}

/// The parameter schema of a sub-agent tool: one required `input` string.
#[must_use]
pub fn sub_agent_schema() -> Value {
    crate::tool::sub_agent_parameters()
}

/// Wraps a new harness instance.
pub fn object<T: Send + Sync + 'static>(value: T) -> HarnessObject {
    Arc::new(value)
}

/// Parses metadata.
///
/// # Errors
///
/// The value does not deserialize.
pub fn parse_metadata<M: DeserializeOwned + Send + Sync + 'static>(
    value: &Value,
    type_name: &'static str,
) -> Result<Arc<dyn Any + Send + Sync>, HydrateError> {
    Ok(Arc::new(hydrate::<M>(value, type_name)?))
}

/// Downcasts a harness instance to its type.
///
/// # Panics
///
/// Never for generated code: the runtime only passes instances of the entry's own type.
#[must_use]
pub fn downcast<T: Send + Sync + 'static>(instance: &HarnessObject) -> Arc<T> {
    match Arc::clone(instance).downcast::<T>() {
        Ok(this) => this,
        Err(_) => unreachable!("harness instance of the wrong type"),
    }
}

/// Borrows a harness instance as its type (for a synchronous call, which needs no `Arc` of
/// its own).
///
/// # Panics
///
/// Never for generated code: the runtime only passes instances of the entry's own type.
#[must_use]
pub fn downcast_ref<T: Send + Sync + 'static>(instance: &HarnessObject) -> &T {
    match instance.downcast_ref::<T>() {
        Some(this) => this,
        None => unreachable!("harness instance of the wrong type"),
    }
}

/// Downcasts metadata to the harness's metadata type; `None` when absent.
#[must_use]
pub fn metadata<M: 'static>(metadata: Option<&(dyn Any + Send + Sync)>) -> Option<&M> {
    metadata.and_then(|m| m.downcast_ref::<M>())
}

/// The `TypeId` of `T`.
#[must_use]
pub fn type_id<T: 'static>() -> TypeId {
    TypeId::of::<T>()
}

/// A condition function for harnesses without conditions.
#[must_use]
pub fn always(_: Option<&(dyn Any + Send + Sync)>, _: usize) -> bool {
    true
}

/// A describe function for harnesses without description templates.
#[must_use]
pub fn static_description(_: Option<&(dyn Any + Send + Sync)>, _: usize) -> Option<String> {
    None
}

/// Harness types must be `Send + Sync + 'static`.
#[diagnostic::on_unimplemented(
    message = "tool harness type `{Self}` must be `Send + Sync + 'static`",
    label = "this type is shared between concurrent calls",
    note = "wrap interior state in `std::sync::Mutex`, `RwLock` or atomics, and own it (no borrowed fields)"
)]
pub trait HarnessType: Send + Sync + 'static {}
impl<T: Send + Sync + 'static> HarnessType for T {}

/// Checks a harness type at compile time.
pub const fn assert_harness_type<T: HarnessType>() {}

/// Harnesses built by `Default` must implement it.
#[diagnostic::on_unimplemented(
    message = "the registry cannot construct tool harness `{Self}`",
    label = "no way to construct this harness",
    note = "implement or derive `Default`, or add `fn new() -> Self` or `fn new(config: C) -> Self` to the annotated impl block"
)]
pub trait DefaultConstructible: Default {}
impl<T: Default> DefaultConstructible for T {}

/// Creates a harness with `Default`.
pub fn construct_default<T: DefaultConstructible + Send + Sync + 'static>() -> HarnessObject {
    Arc::new(T::default())
}

/// Scoped middleware declared in `middlewares = [...]` must be creatable.
#[diagnostic::on_unimplemented(
    message = "scoped middleware `{Self}` cannot be constructed",
    label = "declared in `middlewares = [...]`",
    note = "implement `hpd_agent::middleware::ConfigurableMiddleware` (created from its config) or `Default` (created without one), and `hpd_agent::Middleware`"
)]
pub trait ParameterlessMiddleware: Middleware + Default {}
impl<T: Middleware + Default> ParameterlessMiddleware for T {}

/// Picks how a scoped middleware type is created: through [`ConfigurableMiddleware`] when it
/// implements it, else through `Default` (autoref specialization; the macros call
/// `(&Probe::<T>::new()).scoped_middleware_spec(name)`).
pub struct Probe<T>(std::marker::PhantomData<T>);

impl<T> Probe<T> {
    /// A probe.
    #[must_use]
    pub const fn new() -> Self {
        Probe(std::marker::PhantomData)
    }
}

impl<T> Default for Probe<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// The config path of [`Probe`].
pub trait ViaConfig {
    /// The spec of a configurable middleware.
    fn scoped_middleware_spec(&self, name: &'static str) -> ScopedMiddlewareSpec;
}

impl<T: ConfigurableMiddleware> ViaConfig for Probe<T> {
    fn scoped_middleware_spec(&self, name: &'static str) -> ScopedMiddlewareSpec {
        ScopedMiddlewareSpec {
            name,
            config_type: Some(short_type_name::<T::Config>()),
            validate: validate_middleware_config::<T>,
            create: create_configured_middleware::<T>,
        }
    }
}

/// The `Default` path of [`Probe`].
pub trait ViaDefault<T> {
    /// The spec of a parameterless middleware.
    fn scoped_middleware_spec(&self, name: &'static str) -> ScopedMiddlewareSpec
    where
        T: ParameterlessMiddleware;
}

impl<T> ViaDefault<T> for &Probe<T> {
    fn scoped_middleware_spec(&self, name: &'static str) -> ScopedMiddlewareSpec
    where
        T: ParameterlessMiddleware,
    {
        ScopedMiddlewareSpec {
            name,
            config_type: None,
            validate: |_| Ok(()),
            create: create_default_middleware::<T>,
        }
    }
}

fn validate_middleware_config<T: ConfigurableMiddleware>(
    value: &Value,
) -> Result<(), HydrateError> {
    hydrate::<T::Config>(value, short_type_name::<T::Config>()).map(drop)
}

fn create_configured_middleware<T: ConfigurableMiddleware>(
    value: &Value,
) -> Result<Arc<dyn Middleware>, HydrateError> {
    let config = hydrate::<T::Config>(value, short_type_name::<T::Config>())?;
    Ok(Arc::new(T::from_config(config)))
}

fn create_default_middleware<T: ParameterlessMiddleware>(
    _: &Value,
) -> Result<Arc<dyn Middleware>, HydrateError> {
    Ok(Arc::new(T::default()))
}

pub use crate::harness::names::short_type_name;
