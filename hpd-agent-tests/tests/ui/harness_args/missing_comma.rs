use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[collapse("Tools" name = "tools")]
impl Tools {
    #[ai_function]
    fn ping(&self) {}
}

fn main() {}
