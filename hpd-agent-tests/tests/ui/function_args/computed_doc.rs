use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[tool_harness]
impl Tools {
    #[doc = concat!("Pings ", "a host.")]
    #[ai_function]
    fn ping(&self) {}
}

fn main() {}
