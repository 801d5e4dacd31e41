use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[tool_harness]
impl Tools {
    #[ai_function(read_only = "yes")]
    fn list_all(&self) {}
}

fn main() {}
