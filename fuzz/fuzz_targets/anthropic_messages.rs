//! The Anthropic Messages parsers (`hpd_agent::fuzzing::anthropic_stream` and `_body`) on
//! any bytes: see `common::check` for what is checked.
#![no_main]

mod common;

use hpd_agent::fuzzing::{anthropic_body, anthropic_stream};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    common::check(data, anthropic_stream, anthropic_body, true);
});
