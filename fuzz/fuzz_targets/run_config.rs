//! `AgentRunConfig::from_json` and `RunConfigData::from_json` on any bytes: never panic, and
//! accepted data round-trips through its canonical JSON.
#![no_main]

use hpd_agent::{AgentRunConfig, config::RunConfigData};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = AgentRunConfig::from_json(text);
    if let Ok(run) = RunConfigData::from_json(text) {
        let canonical = run.to_json();
        let again = RunConfigData::from_json(&canonical)
            .unwrap_or_else(|e| panic!("canonical form does not parse: {e}\n{canonical}"));
        assert_eq!(again, run, "round trip changed the run config");
    }
});
