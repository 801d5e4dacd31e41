use hpd_agent::prelude::*;

#[derive(serde::Deserialize)]
struct Meta {
    provider: String,
}

#[derive(Default)]
struct Tools;

#[tool_harness(metadata = Meta)]
impl Tools {
    #[ai_function(condition = metadata.provider)]
    fn search(&self, query: String) -> String {
        query
    }
}

fn main() {}
