// Independent mistakes are reported together, each at its own span.
use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[tool_harness(nmae = "tools")]
impl Tools {
    #[ai_function(descripton = "Pings.")]
    fn ping(&mut self) {}

    #[ai_function(name = "bad name")]
    fn pong(&self, (a, b): (u8, u8)) -> u8 {
        a + b
    }
}

fn main() {}
