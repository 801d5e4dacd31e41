//! The providers' response parsers without a connection, for the fuzz targets in `fuzz/`
//! (the `fuzzing` feature, which only they turn on). Not API: these functions follow the
//! parsers and may change in any release. They live apart from `__private` so that the
//! contract of the macros does not depend on the providers' wire formats.
//!
//! Each `*_stream` function builds the response of a `text/event-stream` body from the chunks
//! it arrived in, exactly as the client does with the bytes off the connection; each `*_body`
//! function parses a whole non-streamed body. `http_status` is the status the answer came
//! with (errors embedded in a 200 answer report it).

use crate::chat::{ChatError, ChatResponse, TextSink};
use crate::providers::http::parse_stream_chunks;
use crate::providers::{anthropic, openai, openai_responses};

/// An OpenAI Chat Completions stream.
///
/// # Errors
///
/// What [`OpenAiClient`](crate::providers::openai::OpenAiClient) reports for this stream.
pub fn openai_chat_stream(
    chunks: &[&[u8]],
    http_status: u16,
    text: TextSink<'_>,
) -> Result<ChatResponse, ChatError> {
    parse_stream_chunks(openai::StreamAssembler::new(http_status), chunks, text)
}

/// An OpenAI Chat Completions body.
///
/// # Errors
///
/// What [`OpenAiClient`](crate::providers::openai::OpenAiClient) reports for this body.
pub fn openai_chat_body(body: &str, http_status: u16) -> Result<ChatResponse, ChatError> {
    openai::parse_body(body, http_status)
}

/// An Anthropic Messages stream.
///
/// # Errors
///
/// What [`AnthropicClient`](crate::providers::anthropic::AnthropicClient) reports for this stream.
pub fn anthropic_stream(
    chunks: &[&[u8]],
    http_status: u16,
    text: TextSink<'_>,
) -> Result<ChatResponse, ChatError> {
    parse_stream_chunks(anthropic::StreamAssembler::new(http_status), chunks, text)
}

/// An Anthropic Messages body.
///
/// # Errors
///
/// What [`AnthropicClient`](crate::providers::anthropic::AnthropicClient) reports for this body.
pub fn anthropic_body(body: &str, http_status: u16) -> Result<ChatResponse, ChatError> {
    anthropic::parse_body(body, http_status)
}

/// An OpenAI Responses stream.
///
/// # Errors
///
/// What [`OpenAiResponsesClient`](crate::providers::openai_responses::OpenAiResponsesClient) reports for this stream.
pub fn openai_responses_stream(
    chunks: &[&[u8]],
    http_status: u16,
    text: TextSink<'_>,
) -> Result<ChatResponse, ChatError> {
    parse_stream_chunks(
        openai_responses::StreamAssembler::new(http_status),
        chunks,
        text,
    )
}

/// An OpenAI Responses body.
///
/// # Errors
///
/// What [`OpenAiResponsesClient`](crate::providers::openai_responses::OpenAiResponsesClient) reports for this body.
pub fn openai_responses_body(body: &str, http_status: u16) -> Result<ChatResponse, ChatError> {
    openai_responses::parse_body(body, http_status)
}
