use hpd_agent::prelude::*;

#[derive(serde::Deserialize)]
struct SearchMetadata {
    provider: String,
}

#[derive(Default)]
struct Tools;

#[tool_harness(metadata = SearchMetadata)]
impl Tools {
    #[ai_function(description = "Search the web with {metadata.provder}.")]
    fn search(&self, query: String) -> String {
        query
    }
}

fn main() {}
