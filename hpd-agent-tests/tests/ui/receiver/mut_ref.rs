use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools {
    count: u32,
}

#[tool_harness]
impl Tools {
    #[ai_function]
    fn count(&mut self) -> u32 {
        self.count += 1;
        self.count
    }
}

fn main() {}
