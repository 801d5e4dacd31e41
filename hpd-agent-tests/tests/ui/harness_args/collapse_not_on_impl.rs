use hpd_agent::prelude::*;

#[collapse("Tools")]
fn tools() {}

fn main() {}
