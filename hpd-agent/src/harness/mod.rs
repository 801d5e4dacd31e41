//! Harnesses: groups of tools an agent registers as a unit, declared in Rust with the macros
//! ([`ToolHarness`], described by [`HarnessInfo`]) or built at run time
//! ([`HarnessBuilder`] gives a [`DynamicHarness`]).
//!
//! ```
//! use hpd_agent::prelude::*;
//! use hpd_agent::{AgentBuilder, HarnessBuilder, ScriptedChatClient, Tool, ToolResult};
//! use serde_json::json;
//!
//! // Declared in Rust ...
//! #[derive(Default)]
//! pub struct Clipboard;
//!
//! #[collapse("Clipboard access")]
//! impl Clipboard {
//!     /// Reads the clipboard.
//!     #[ai_function]
//!     fn paste(&self) -> String { "copied text".into() }
//! }
//!
//! // ... or built at run time.
//! let beep = Tool::new("beep", "Beeps", json!({"type": "object"}), |_, _| async { ToolResult::ok("beep") });
//! let speaker = HarnessBuilder::new("Speaker").with_tool(beep).build()?;
//!
//! let agent = AgentBuilder::new()
//!     .with_tool_harness::<Clipboard>()
//!     .with_harness(speaker)
//!     .with_chat_client(ScriptedChatClient::new())
//!     .build()?;
//! assert_eq!(agent.initial_tool_names(), ["beep", "Clipboard", "call_function"]);
//! # Ok::<(), hpd_agent::BuildError>(())
//! ```

//!
//! # Harnesses in library crates
//!
//! `inventory` entries live in the object file of the crate that declares them. A harness in a
//! library crate is found by name once that crate is linked into the final binary, which happens
//! when the binary uses any item of the library. Code that registers harnesses only by name
//! (JSON config, [`AgentBuilder::with_tool_harness_reference`](crate::AgentBuilder::with_tool_harness_reference)) may use
//! nothing of the library; then write `use my_harnesses as _;` in the binary (or call any
//! function of it) so the linker keeps it. The `harness-library` example crate shows this.
//! Registration by type (`with_tool_harness::<T>()`) needs no registry: it takes the harness
//! from the type.
//!
//! # Names
//!
//! Harness names are compared case-insensitively, but only among the harnesses one agent uses
//! and the names its config looks up: two harnesses elsewhere in the program whose names differ
//! only in case affect no agent that uses neither of them.

mod dynamic;
pub(crate) mod names;
pub(crate) mod registry;
mod tool;
mod tool_list;

pub use dynamic::{DynamicHarness, HarnessBuilder};
pub use registry::HarnessInfo;
pub use tool::{IntoToolSchema, Tool};
pub use tool_list::ToolListUpdater;

/// A type whose annotated impl block declares model-callable functions.
///
/// Implemented by `#[tool_harness]` and `#[collapse("...")]`, and sealed: a hidden required
/// method belongs to the macros' contract, so only the macros implement it. What the macros
/// declared is read through [`HarnessInfo::of`].
///
/// ```
/// use hpd_agent::prelude::*;
/// use hpd_agent::ToolHarness;
///
/// #[derive(Default)]
/// struct WeatherLookup;
///
/// #[tool_harness]
/// impl WeatherLookup {
///     /// Gets the current weather for a city.
///     #[ai_function]
///     fn get_weather(&self, city: String) -> String {
///         format!("It is sunny in {city}.")
///     }
/// }
///
/// fn tool_names<T: ToolHarness>() -> Vec<&'static str> {
///     hpd_agent::harness::HarnessInfo::of::<T>().function_names().collect()
/// }
/// assert_eq!(tool_names::<WeatherLookup>(), ["get_weather"]);
/// ```
pub trait ToolHarness: Send + Sync + Sized + 'static {
    /// The metadata type declared with `metadata = Type` (an uninhabited type when none).
    type Metadata: Send + Sync + 'static;
    /// The parameter of the config constructor `fn new(config: C)` (uninhabited when none).
    type Config;

    /// Builds the harness from a config with its config constructor.
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    ///
    /// #[derive(serde::Deserialize)]
    /// pub struct UnitConfig {
    ///     metric: bool,
    /// }
    ///
    /// pub struct Units {
    ///     metric: bool,
    /// }
    ///
    /// #[tool_harness]
    /// impl Units {
    ///     pub fn new(config: UnitConfig) -> Self {
    ///         Units { metric: config.metric }
    ///     }
    ///
    ///     /// The unit of length.
    ///     #[ai_function]
    ///     fn length_unit(&self) -> &'static str { if self.metric { "m" } else { "ft" } }
    /// }
    ///
    /// // The generated impl calls the config constructor.
    /// let units = <Units as ToolHarness>::from_config(UnitConfig { metric: true });
    /// assert_eq!(units.length_unit(), "m");
    /// ```
    fn from_config(config: Self::Config) -> Self;

    // Not public API. Used by generated code: the harness's description, a static the macros
    // emit next to the type.
    #[doc(hidden)]
    fn __harness_info(seal: crate::__private::Seal) -> &'static HarnessInfo;
}
