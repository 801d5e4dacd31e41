use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[tool_harness]
impl Tools {
    #[ai_function]
    fn search(&self, query: String) -> String {
        query
    }

    #[ai_function(name = "search")]
    fn search_news(&self, query: String) -> String {
        query
    }
}

fn main() {}
