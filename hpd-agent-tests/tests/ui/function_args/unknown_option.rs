use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[tool_harness]
impl Tools {
    #[ai_function(descripton = "Answers pong.")]
    fn ping(&self) {}
}

fn main() {}
