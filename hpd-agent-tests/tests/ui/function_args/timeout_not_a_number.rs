use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[tool_harness]
impl Tools {
    #[ai_function(timeout_ms = "5s")]
    fn ping(&self) {}
}

fn main() {}
