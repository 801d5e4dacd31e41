//! `AgentConfig::from_json` on any bytes: never panics, and every config it accepts serializes
//! to canonical JSON that parses back to the same config and serializes byte for byte again.
#![no_main]

use hpd_agent::AgentConfig;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(config) = AgentConfig::from_json(text) {
        let canonical = config.to_json();
        let again = AgentConfig::from_json(&canonical)
            .unwrap_or_else(|e| panic!("canonical form does not parse: {e}\n{canonical}"));
        assert_eq!(again, config, "round trip changed the config");
        assert_eq!(again.to_json(), canonical, "canonical form is not stable");
    }
});
