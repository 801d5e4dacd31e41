//! A tool harness defined in a library crate: [`UnitConverter`].
//!
//! `#[tool_harness]` registers the harness through `inventory`, whose entries live in this
//! crate's object code. The linker only keeps that code when the final binary uses something of
//! this crate. A binary that names the harness only by string (`"UnitConverter"` in an
//! `AgentConfig` JSON, or `with_tool_harness_reference`) may use nothing
//! of it, so it must say that it links the crate:
//!
//! ```
//! use harness_library as _; // keeps the crate, and so its harnesses, in the binary
//!
//! let info = hpd_agent::harness::HarnessInfo::find("UnitConverter").expect("linked");
//! let names: Vec<_> = info.function_names().collect();
//! assert_eq!(names, ["celsius_to_fahrenheit", "kilometres_to_miles"]);
//! ```
//!
//! Code that refers to the type (`with_tool_harness::<UnitConverter>()`) links the crate anyway.

use hpd_agent::prelude::*;

/// Converts between units.
#[derive(Debug, Default)]
pub struct UnitConverter;

#[tool_harness]
impl UnitConverter {
    /// Converts a temperature from degrees Celsius to degrees Fahrenheit.
    #[ai_function]
    fn celsius_to_fahrenheit(
        &self,
        #[ai_description("The temperature in degrees Celsius.")] celsius: f64,
    ) -> f64 {
        celsius * 9.0 / 5.0 + 32.0
    }

    /// Converts a distance from kilometres to miles.
    #[ai_function]
    fn kilometres_to_miles(
        &self,
        #[ai_description("The distance in kilometres.")] kilometres: f64,
    ) -> f64 {
        kilometres / 1.609_344
    }
}
