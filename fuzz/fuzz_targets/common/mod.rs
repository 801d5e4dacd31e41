//! What the provider targets share: feeding one input to a provider's stream or body parser
//! and checking what every answer must satisfy.

use std::sync::Mutex;

use hpd_agent::{ChatResponse, chat::ChatError, chat::TextSink};

/// A provider's stream parser: the chunks of a `text/event-stream` body, the HTTP status.
pub type StreamFn = fn(&[&[u8]], u16, TextSink<'_>) -> Result<ChatResponse, ChatError>;
/// A provider's body parser: a whole non-streamed body, the HTTP status.
pub type BodyFn = fn(&str, u16) -> Result<ChatResponse, ChatError>;

/// The first byte picks the parser (bit 0: body or stream), the chunk size of the stream
/// (bits 1-6) and the status (bit 7: 200 or 500); the rest is the body.
///
/// Checks: nothing panics; a stream gives the same result and the same streamed text however
/// its bytes are split into chunks; when `sink_is_text`, the streamed text of a successful
/// stream is its response text; every tool call of a response has a name and an id.
pub fn check(data: &[u8], stream: StreamFn, body: BodyFn, sink_is_text: bool) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let status = if mode & 0x80 == 0 { 200 } else { 500 };
    if mode & 1 == 0 {
        let Ok(text) = std::str::from_utf8(rest) else {
            return;
        };
        check_response(&body(text, status));
        return;
    }
    let size = usize::from((mode >> 1) & 0x3f) + 1;
    let (whole, whole_text) = run_stream(stream, &[rest], status);
    let chunks: Vec<&[u8]> = rest.chunks(size).collect();
    let (split, split_text) = run_stream(stream, &chunks, status);
    assert_eq!(
        format!("{whole:?}"),
        format!("{split:?}"),
        "the result depends on the chunk size {size}"
    );
    assert_eq!(
        whole_text, split_text,
        "the streamed text depends on the chunk size {size}"
    );
    if sink_is_text && let Ok(response) = &whole {
        assert_eq!(
            whole_text,
            response.text.as_deref().unwrap_or_default(),
            "the streamed text is not the response text"
        );
    }
    check_response(&whole);
}

fn run_stream(
    stream: StreamFn,
    chunks: &[&[u8]],
    status: u16,
) -> (Result<ChatResponse, ChatError>, String) {
    let streamed = Mutex::new(String::new());
    let sink = |delta: &str| streamed.lock().unwrap().push_str(delta);
    let result = stream(chunks, status, &sink);
    (result, streamed.into_inner().unwrap())
}

fn check_response(result: &Result<ChatResponse, ChatError>) {
    match result {
        Ok(response) => {
            for call in &response.tool_calls {
                assert!(
                    !call.name.is_empty(),
                    "a tool call without a name: {response:?}"
                );
                assert!(
                    !call.id.is_empty(),
                    "a tool call without an id: {response:?}"
                );
            }
        }
        Err(error) => assert!(!error.to_string().is_empty(), "an error without a message"),
    }
}
