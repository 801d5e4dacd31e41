#[tool_harness(nmae = "tools")]
impl Tools {
    /// Counts.
    #[ai_function(descripton = "Counts.")]
    fn count(&mut self, #[ai_description("How many.")] n: u32) -> u32 {
        n
    }
}
