use hpd_agent::prelude::*;

struct Audit {
    level: String,
}

impl hpd_agent::Middleware for Audit {}

#[derive(Default)]
struct Tools;

#[collapse("Tools", middlewares = [Audit])]
impl Tools {
    #[ai_function]
    fn ping(&self) {}
}

fn main() {}
