use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools<T>(T);

#[tool_harness]
impl<T: Default + Send + Sync + 'static> Tools<T> {
    #[ai_function]
    fn ping(&self) {}
}

fn main() {}
