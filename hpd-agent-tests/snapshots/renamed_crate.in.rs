#[collapse("Clock operations", crate = "agents")]
impl Clock {
    /// The current hour.
    #[ai_function]
    fn hour(&self, #[ai_description("Hours to add.")] offset: u8) -> u8 {
        (12 + offset) % 24
    }
}
