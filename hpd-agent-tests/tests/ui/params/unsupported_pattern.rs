use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[tool_harness]
impl Tools {
    #[ai_function]
    fn add(&self, (a, b): (i64, i64)) -> i64 {
        a + b
    }
}

fn main() {}
