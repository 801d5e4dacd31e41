use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[tool_harness]
impl Tools {
    #[ai_function]
    fn ping(&self) {}
}

#[tool_harness]
impl Tools {
    #[ai_function]
    fn pong(&self) {}
}

fn main() {}
