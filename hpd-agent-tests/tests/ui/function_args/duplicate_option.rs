use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[tool_harness]
impl Tools {
    #[ai_function(timeout_ms = 100, timeout_ms = 200)]
    fn ping(&self) {}
}

fn main() {}
