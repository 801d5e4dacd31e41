use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[tool_harness]
impl Tools {
    #[ai_function]
    fn echo(
        &self,
        #[ai_description("The text.")]
        #[ai_description("The text to echo.")]
        text: String,
    ) -> String {
        text
    }
}

fn main() {}
