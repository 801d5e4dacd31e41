use hpd_agent::prelude::*;

trait Ping {
    fn ping(&self);
}

#[derive(Default)]
struct Tools;

#[tool_harness]
impl Ping for Tools {
    #[ai_function]
    fn ping(&self) {}
}

fn main() {}
