use hpd_agent::prelude::*;
use hpd_agent::AgentConfig;

#[derive(Default)]
struct Tools;

#[collapse("Tools")]
impl Tools {
    #[sub_agent(name = "research agent")]
    fn delegate(&self) -> SubAgent {
        SubAgent::new("helper", "Helps", AgentConfig::default())
    }
}

fn main() {}
