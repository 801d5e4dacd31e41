use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[tool_harness]
impl Tools {
    #[ai_function(description = "Search the web with {metadata.provider}.")]
    fn search(&self, query: String) -> String {
        query
    }
}

fn main() {}
