use hpd_agent::prelude::*;

struct Report {
    text: String,
}

#[derive(Default)]
struct Tools;

#[tool_harness]
impl Tools {
    #[ai_function]
    fn report(&self) -> Report {
        Report { text: String::new() }
    }
}

fn main() {}
