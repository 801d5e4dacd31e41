use hpd_agent::prelude::*;
use hpd_agent::AgentConfig;

#[derive(Default)]
struct Tools;

#[collapse("Tools")]
impl Tools {
    #[sub_agent]
    fn helper(&self, topic: String) -> SubAgent {
        SubAgent::new(topic, "Helps", AgentConfig::default())
    }
}

fn main() {}
