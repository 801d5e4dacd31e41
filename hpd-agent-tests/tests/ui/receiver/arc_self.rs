use std::sync::Arc;

use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[tool_harness]
impl Tools {
    #[ai_function]
    fn ping(self: Arc<Self>) {}
}

fn main() {}
