//! The HTTP providers against real HTTP servers on loopback: `wiremock` for whole responses,
//! and a small hand-written server (std threads) for streams that arrive in pieces, stall or
//! break.

mod anthropic;
mod faults;
mod keep_alive;
mod openai_errors;
mod openai_options;
mod openai_requests;
mod openai_responses;
mod openai_streams;
mod support;
