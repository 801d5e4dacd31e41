#[collapse(
    "Math operations",
    name = "Math",
    function_result = "Math tools are active.",
    system_prompt = "Use exact arithmetic.",
    middlewares = [AuditMiddleware, crate::limits::RateLimit]
)]
impl MathTools {
    fn new() -> Self {
        MathTools
    }

    /// Adds two integers.
    #[ai_function]
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }

    /// Waits, then answers.
    #[ai_function]
    async fn wait(&self, token: CancellationToken) {
        token.cancelled().await;
    }

    #[sub_agent(name = "tutor")]
    fn tutor_agent(&self) -> SubAgent {
        SubAgent::new("tutor", "Explains the arithmetic.", AgentConfig::default())
    }
}
