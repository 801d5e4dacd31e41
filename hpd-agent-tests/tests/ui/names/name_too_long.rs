use hpd_agent::prelude::*;

#[derive(Default)]
struct Tools;

#[tool_harness(name = "a_harness_name_that_is_much_longer_than_the_sixty_four_characters_providers_allow")]
impl Tools {
    #[ai_function]
    fn ping(&self) {}
}

fn main() {}
