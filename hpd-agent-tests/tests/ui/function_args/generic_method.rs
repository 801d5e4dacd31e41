use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[tool_harness]
impl Tools {
    #[ai_function]
    fn echo<T: ToString>(&self, value: T) -> String {
        value.to_string()
    }
}

fn main() {}
