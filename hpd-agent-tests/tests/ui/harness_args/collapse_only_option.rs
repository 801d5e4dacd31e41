use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[tool_harness(system_prompt = "Only containers have one.")]
impl Tools {
    #[ai_function]
    fn ping(&self) {}
}

fn main() {}
