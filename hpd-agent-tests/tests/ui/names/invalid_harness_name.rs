use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[tool_harness(name = "my tools")]
impl Tools {
    #[ai_function]
    fn ping(&self) {}
}

fn main() {}
