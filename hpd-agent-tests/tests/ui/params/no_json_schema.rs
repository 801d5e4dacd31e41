use hpd_agent::prelude::*;

#[derive(serde::Deserialize)]
struct Query {
    text: String,
}

#[derive(Default)]
struct Tools;

#[tool_harness]
impl Tools {
    #[ai_function]
    fn search(&self, query: Query) -> String {
        query.text
    }
}

fn main() {}
