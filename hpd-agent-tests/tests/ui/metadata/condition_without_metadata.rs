use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[tool_harness]
impl Tools {
    /// Searches with Tavily.
    #[ai_function(condition = metadata.has_tavily)]
    fn tavily(&self, query: String) -> String {
        query
    }
}

fn main() {}
