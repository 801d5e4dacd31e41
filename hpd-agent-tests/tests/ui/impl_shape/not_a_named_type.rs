use hpd_agent::prelude::*;

#[tool_harness]
impl (u8, u8) {
    #[ai_function]
    fn ping(&self) {}
}

fn main() {}
