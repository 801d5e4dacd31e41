// One type has at most one annotated impl block: the second one conflicts with the first
// (rustc E0119 on `ToolHarness`, spanned at each block's type); merge the two blocks.
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
