use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[tool_harness]
impl Tools {
    #[ai_function(requires_approval, requires_approval = false)]
    fn delete_all(&self) {}
}

fn main() {}
