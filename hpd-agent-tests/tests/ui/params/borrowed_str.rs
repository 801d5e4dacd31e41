use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[tool_harness]
impl Tools {
    #[ai_function]
    fn echo(&self, text: &str) -> String {
        text.to_owned()
    }
}

fn main() {}
