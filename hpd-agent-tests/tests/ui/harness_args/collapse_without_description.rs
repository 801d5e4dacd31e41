use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[collapse(system_prompt = "Be careful.")]
impl Tools {
    #[ai_function]
    fn ping(&self) {}
}

fn main() {}
