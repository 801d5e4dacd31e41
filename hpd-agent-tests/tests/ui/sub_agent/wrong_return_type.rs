use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[collapse("Tools")]
impl Tools {
    #[sub_agent]
    fn helper(&self) -> String {
        "not a sub-agent".to_owned()
    }
}

fn main() {}
