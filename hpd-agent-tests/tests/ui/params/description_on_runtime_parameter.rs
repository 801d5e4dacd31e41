use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[tool_harness]
impl Tools {
    #[ai_function]
    fn whoami(&self, #[ai_description("The call.")] ctx: &FunctionContext) -> String {
        ctx.call_id().to_owned()
    }
}

fn main() {}
