use hpd_agent::prelude::*;

#[derive(Default)]
struct Audit;

impl hpd_agent::Middleware for Audit {}

#[derive(Default)]
struct Tools;

#[collapse("Tools", middlewares = Audit)]
impl Tools {
    #[ai_function]
    fn ping(&self) {}
}

fn main() {}
