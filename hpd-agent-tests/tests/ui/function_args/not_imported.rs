// `#[ai_function]` resolves like any attribute even though the impl macro removes it.
use hpd_agent::tool_harness;

#[derive(Default)]
struct Tools;

#[tool_harness]
impl Tools {
    #[ai_function]
    fn ping(&self) {}
}

fn main() {}
