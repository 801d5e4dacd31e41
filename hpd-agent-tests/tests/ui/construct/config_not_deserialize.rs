use hpd_agent::prelude::*;

struct Settings {
    limit: u32,
}

struct Tools {
    limit: u32,
}

#[tool_harness]
impl Tools {
    fn new(config: Settings) -> Self {
        Tools { limit: config.limit }
    }

    #[ai_function]
    fn limit(&self) -> u32 {
        self.limit
    }
}

fn main() {}
