use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[tool_harness]
impl Tools {
    /// Waits.
    #[ai_function]
    async fn wait(&self, token: &CancellationToken) {
        token.cancelled().await;
    }
}

fn main() {}
