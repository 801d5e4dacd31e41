//! Harnesses: groups of tools an agent registers as a unit, declared in Rust with the macros
//! ([`ToolHarness`], found through the link-time [`registry`]) or built at run time
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

mod dynamic;
pub(crate) mod names;
pub mod registry;
mod tool;
mod tool_list;

pub use dynamic::{DynamicHarness, HarnessBuilder};
pub use tool::{IntoToolSchema, Tool};
pub use tool_list::ToolListUpdater;

use registry::HarnessEntry;

/// A type whose annotated impl block declares model-callable functions.
///
/// Implemented by `#[tool_harness]` and `#[collapse("...")]`; never implement it by hand.
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
/// assert_eq!(WeatherLookup::harness_entry().name, "WeatherLookup");
/// ```
pub trait ToolHarness: Send + Sync + Sized + 'static {
    /// The metadata type declared with `metadata = Type` (an uninhabited type when none).
    type Metadata: Send + Sync + 'static;
    /// The parameter of the config constructor `fn new(config: C)` (uninhabited when none).
    type Config;

    /// The registry entry of this harness.
    ///
    /// ```
    /// use hpd_agent::prelude::*;
    ///
    /// #[derive(Default)]
    /// pub struct Scale;
    ///
    /// #[tool_harness]
    /// impl Scale {
    ///     /// The weight in grams.
    ///     #[ai_function]
    ///     fn weigh(&self) -> u32 { 500 }
    /// }
    ///
    /// let entry = Scale::harness_entry();
    /// assert_eq!((entry.name, entry.functions.len()), ("Scale", 1));
    /// ```
    fn harness_entry() -> &'static HarnessEntry;

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
}
