use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[tool_harness]
impl Tools {
    #[ai_function(read_only, destructive = true)]
    fn list_all(&self) {}
}

fn main() {}
