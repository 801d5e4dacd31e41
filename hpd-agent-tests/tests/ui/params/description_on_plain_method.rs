use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[tool_harness]
impl Tools {
    #[ai_function]
    fn ping(&self) {}

    fn helper(&self, #[ai_description("Not a tool parameter.")] text: String) -> String {
        text
    }
}

fn main() {}
