use hpd_agent::prelude::*;

struct Tools {
    prefix: String,
}

#[tool_harness]
impl Tools {
    #[ai_function]
    fn greet(&self, name: String) -> String {
        format!("{}{name}", self.prefix)
    }
}

fn main() {}
