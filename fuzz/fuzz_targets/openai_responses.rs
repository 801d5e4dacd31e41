//! The OpenAI Responses parsers (`hpd_agent::fuzzing::openai_responses_stream` and `_body`) on
//! any bytes: see `common::check` for what is checked.
#![no_main]

mod common;

use hpd_agent::fuzzing::{openai_responses_body, openai_responses_stream};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    common::check(data, openai_responses_stream, openai_responses_body, false);
});
