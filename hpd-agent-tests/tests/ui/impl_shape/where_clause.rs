use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[tool_harness]
impl Tools
where
    Tools: Default,
{
    #[ai_function]
    fn ping(&self) {}
}

fn main() {}
