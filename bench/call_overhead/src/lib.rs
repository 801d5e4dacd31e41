//! The same `add(a, b)` behind hpd-agent's macros and behind rmcp's, measured by
//! `benches/call_overhead.rs`.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};

/// `add` as an hpd-agent harness.
#[derive(Debug, Default)]
pub struct Adder;

#[hpd_agent::tool_harness]
impl Adder {
    /// Adds two integers.
    #[hpd_agent::ai_function]
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

/// The parameters of rmcp's `add` (rmcp's form: one struct, `Parameters<T>`).
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct AddArgs {
    /// The first operand.
    pub a: i64,
    /// The second operand.
    pub b: i64,
}

/// `add` as an rmcp server.
#[derive(Debug, Clone, Default)]
pub struct RmcpAdder;

#[tool_router(server_handler, vis = "pub")]
impl RmcpAdder {
    #[tool(description = "Adds two integers.")]
    fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> String {
        (a + b).to_string()
    }
}
