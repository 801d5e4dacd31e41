use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[tool_harness]
impl Tools {
    #[ai_function]
    fn echo(&self, #[ai_description] text: String) -> String {
        text
    }
}

fn main() {}
