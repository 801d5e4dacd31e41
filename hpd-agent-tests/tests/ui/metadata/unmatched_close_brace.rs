use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[tool_harness]
impl Tools {
    #[ai_function(description = "Returns results}.")]
    fn search(&self, query: String) -> String {
        query
    }
}

fn main() {}
