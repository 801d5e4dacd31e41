use hpd_agent::prelude::*;
use hpd_agent::AgentConfig;

#[derive(Default)]
struct Tools;

#[collapse("Tools")]
impl Tools {
    /// Helps directly.
    #[ai_function]
    fn helper(&self) -> String {
        String::new()
    }

    #[sub_agent(name = "helper")]
    fn delegate(&self) -> SubAgent {
        SubAgent::new("helper", "Helps", AgentConfig::default())
    }
}

fn main() {}
