// A mistake in the harness gives one error, not a second one where the type is registered.
use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[tool_harness]
impl Tools {
    /// Pings.
    #[ai_function(descripton = "typo")]
    fn ping(&self) {}
}

fn main() {
    let _builder = hpd_agent::AgentBuilder::new().with_tool_harness::<Tools>();
}
