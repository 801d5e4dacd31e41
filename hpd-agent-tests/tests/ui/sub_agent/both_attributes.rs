use hpd_agent::prelude::*;
use hpd_agent::AgentConfig;

#[derive(Default)]
struct Tools;

#[collapse("Tools")]
impl Tools {
    #[ai_function]
    #[sub_agent]
    fn helper(&self) -> SubAgent {
        SubAgent::new("helper", "Helps", AgentConfig::default())
    }
}

fn main() {}
