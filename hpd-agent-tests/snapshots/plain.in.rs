#[tool_harness]
impl WeatherTools {
    /// Gets the current weather for a city.
    #[ai_function(name = "get_weather")]
    fn get_weather(&self, #[ai_description("The city to get weather for.")] city: String) -> String {
        format!("It is sunny in {city}.")
    }

    /// Gets a forecast for a city.
    #[ai_function(timeout_ms = 5000, read_only, open_world = false)]
    async fn get_forecast(&self, city: String, days: u32, ctx: &FunctionContext) -> Result<String, String> {
        Ok(format!("{days}-day forecast for {city} ({}).", ctx.call_id()))
    }
}
