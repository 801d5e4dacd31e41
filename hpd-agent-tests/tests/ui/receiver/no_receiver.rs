use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[tool_harness]
impl Tools {
    #[ai_function]
    fn ping() -> String {
        "pong".to_owned()
    }
}

fn main() {}
