use hpd_agent::prelude::*;

#[tool_harness]
struct Tools;

fn main() {}
