use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[tool_harness("Tools")]
impl Tools {
    #[ai_function]
    fn ping(&self) {}
}

fn main() {}
