use std::rc::Rc;

use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[tool_harness]
impl Tools {
    #[ai_function]
    async fn count(&self) -> usize {
        let shared = Rc::new(1);
        tokio::task::yield_now().await;
        *shared
    }
}

fn main() {}
