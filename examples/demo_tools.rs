//! The demo's harnesses, shared by the `demo` and `mcp_server` examples: a collapsed
//! `MathTools` and a plain `WeatherTools`.

use hpd_agent::prelude::*;

/// Arithmetic, collapsed behind one `MathTools` container.
#[derive(Default)]
pub struct MathTools;

#[collapse(
    "Math operations",
    function_result = "Math tools are active.",
    system_prompt = "Use exact arithmetic and show units when relevant."
)]
impl MathTools {
    /// Adds two integers.
    #[ai_function]
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }

    /// Multiplies two integers.
    #[ai_function]
    fn multiply(&self, a: i64, b: i64) -> i64 {
        a * b
    }
}

/// Weather lookups, always visible.
#[derive(Default)]
pub struct WeatherTools;

#[tool_harness]
impl WeatherTools {
    /// Gets the current weather for a city.
    #[ai_function(name = "get_weather")]
    fn get_weather(
        &self,
        #[ai_description("The city to get weather for.")] city: String,
    ) -> String {
        format!("It is sunny in {city}.")
    }
}
