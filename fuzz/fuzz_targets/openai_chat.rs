//! The OpenAI Chat Completions parsers (`hpd_agent::fuzzing::openai_chat_stream` and `_body`) on
//! any bytes: see `common::check` for what is checked.
#![no_main]

mod common;

use hpd_agent::fuzzing::{openai_chat_body, openai_chat_stream};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    common::check(data, openai_chat_stream, openai_chat_body, true);
});
