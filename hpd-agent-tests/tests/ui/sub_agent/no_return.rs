use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[collapse("Tools")]
impl Tools {
    #[sub_agent]
    fn helper(&self) {}
}

fn main() {}
