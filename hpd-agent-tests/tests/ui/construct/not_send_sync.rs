use std::cell::Cell;

use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools {
    calls: Cell<u32>,
}

#[tool_harness]
impl Tools {
    #[ai_function]
    fn count(&self) -> u32 {
        self.calls.set(self.calls.get() + 1);
        self.calls.get()
    }
}

fn main() {}
