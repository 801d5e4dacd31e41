use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[collapse("Tools", name = "first", name = "second")]
impl Tools {
    #[ai_function]
    fn ping(&self) {}
}

fn main() {}
