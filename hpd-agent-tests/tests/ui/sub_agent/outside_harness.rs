use hpd_agent::{AgentConfig, SubAgent, sub_agent};

struct Tools;

impl Tools {
    #[sub_agent]
    fn helper(&self) -> SubAgent {
        SubAgent::new("helper", "Helps", AgentConfig::default())
    }
}

fn main() {
    let _ = Tools.helper();
}
