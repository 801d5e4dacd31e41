//! A decoder for server-sent events (the `text/event-stream` format every streaming provider
//! uses), fed with raw byte chunks as they come off the connection.
//!
//! ```
//! use hpd_agent::providers::sse::{Flow, SseDecoder};
//!
//! let mut decoder = SseDecoder::default();
//! let mut seen = Vec::new();
//! // The chunk boundaries fall anywhere, even inside a field name.
//! for piece in [&b"da"[..], b"ta: {\"a\":1}\n", b"\nevent: ping\n\ndata: [DONE]\n\n"] {
//!     let flow = decoder.push(piece, &mut |event| {
//!         let done = event.data == "[DONE]";
//!         seen.push((event.event, event.data));
//!         Ok(if done { Flow::Done } else { Flow::Continue })
//!     })?;
//!     if flow == Flow::Done {
//!         break;
//!     }
//! }
//! assert_eq!(seen, [
//!     (String::new(), "{\"a\":1}".to_owned()),
//!     ("ping".to_owned(), String::new()),
//!     (String::new(), "[DONE]".to_owned()),
//! ]);
//! # Ok::<(), hpd_agent::chat::ChatError>(())
//! ```

use crate::chat::ChatError;

/// Whether a stream goes on after an event.
///
/// ```
/// use hpd_agent::providers::sse::{Flow, SseDecoder};
///
/// let mut decoder = SseDecoder::default();
/// let mut count = 0;
/// let flow = decoder.push(b"data: 1\n\ndata: [DONE]\n\ndata: never read\n\n", &mut |event| {
///     count += 1;
///     Ok(if event.data == "[DONE]" { Flow::Done } else { Flow::Continue })
/// })?;
/// assert_eq!((flow, count), (Flow::Done, 2)); // stopped at `Done`
/// # Ok::<(), hpd_agent::chat::ChatError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Read on.
    Continue,
    /// The stream is complete; stop reading.
    Done,
}

/// One server-sent event, with the fields providers use.
///
/// ```
/// use hpd_agent::providers::sse::{Flow, SseDecoder, SseEvent};
///
/// let mut events = Vec::new();
/// SseDecoder::default().push(b"event: error\nerror: slot unavailable\ndata: a\ndata: b\n\n", &mut |event| {
///     events.push(event);
///     Ok(Flow::Continue)
/// })?;
/// let [SseEvent { event, data, error, .. }] = events.as_slice() else { panic!("one event") };
/// assert_eq!((event.as_str(), data.as_str()), ("error", "a\nb"));
/// assert_eq!(error.as_deref(), Some("slot unavailable"));
/// # Ok::<(), hpd_agent::chat::ChatError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SseEvent {
    /// The `event` field; empty when absent.
    pub event: String,
    /// The `data` fields, joined with `\n`.
    pub data: String,
    /// The non-standard `error` fields (llama.cpp sends its stream errors in one), joined with
    /// `\n`.
    pub error: Option<String>,
}

/// Decodes server-sent events from raw byte chunks.
///
/// Hand-written because it must keep the non-standard `error:` field that llama.cpp sends its
/// stream errors in, which standard decoders drop. Comments and the `id` and `retry` fields are
/// ignored. Lines end with `\r\n`, `\n` or `\r`, and may be split anywhere between chunks (a
/// `\r\n` pair too). A byte order mark is skipped at the very start only. An event is
/// dispatched at the empty line that ends it; one left unfinished when the bytes end is never
/// dispatched.
///
/// ```
/// use hpd_agent::providers::sse::{Flow, SseDecoder};
///
/// let mut decoder = SseDecoder::default();
/// let mut data = Vec::new();
/// // A line split between two chunks.
/// for chunk in [&b"data: hel"[..], b"lo\n\n"] {
///     decoder.push(chunk, &mut |event| {
///         data.push(event.data);
///         Ok(Flow::Continue)
///     })?;
/// }
/// assert_eq!(data, ["hello"]);
/// # Ok::<(), hpd_agent::chat::ChatError>(())
/// ```
#[derive(Debug, Default)]
pub struct SseDecoder {
    /// The bytes of the unfinished line.
    line: Vec<u8>,
    /// The last byte was `\r`: a `\n` right after it ends no second line.
    after_cr: bool,
    /// The first line was seen (a byte order mark is only skipped there).
    started: bool,
    /// The event being built.
    event: SseEvent,
    has_data: bool,
    has_fields: bool,
}

impl SseDecoder {
    /// Decodes `bytes`, passing each complete event to `on_event`; stops at the first
    /// [`Flow::Done`] or error and returns it.
    ///
    /// # Errors
    ///
    /// [`ChatError::Malformed`] when a line is not valid UTF-8; any error `on_event` returns.
    ///
    /// ```
    /// use hpd_agent::chat::ChatError;
    /// use hpd_agent::providers::sse::SseDecoder;
    ///
    /// let mut decoder = SseDecoder::default();
    /// let result = decoder.push(b"data: {oops\n\n", &mut |event| {
    ///     serde_json::from_str::<serde_json::Value>(&event.data).map_err(|e| ChatError::Malformed(e.to_string()))?;
    ///     Ok(hpd_agent::providers::sse::Flow::Continue)
    /// });
    /// assert!(matches!(result, Err(ChatError::Malformed(_))));
    /// ```
    pub fn push(
        &mut self,
        mut bytes: &[u8],
        on_event: &mut dyn FnMut(SseEvent) -> Result<Flow, ChatError>,
    ) -> Result<Flow, ChatError> {
        while let Some(&first) = bytes.first() {
            if std::mem::take(&mut self.after_cr) && first == b'\n' {
                bytes = &bytes[1..];
                continue;
            }
            let Some(end) = bytes.iter().position(|&b| b == b'\n' || b == b'\r') else {
                self.line.extend_from_slice(bytes);
                break;
            };
            self.line.extend_from_slice(&bytes[..end]);
            self.after_cr = bytes[end] == b'\r';
            bytes = &bytes[end + 1..];
            let line = std::mem::take(&mut self.line);
            let event = self.end_line(&line);
            self.line = line;
            self.line.clear();
            if let Some(event) = event?
                && on_event(event)? == Flow::Done
            {
                return Ok(Flow::Done);
            }
        }
        Ok(Flow::Continue)
    }

    /// Interprets one complete line; returns the event an empty line completes.
    fn end_line(&mut self, line: &[u8]) -> Result<Option<SseEvent>, ChatError> {
        let mut line = std::str::from_utf8(line).map_err(|e| {
            ChatError::Malformed(format!("the event stream is not valid UTF-8: {e}"))
        })?;
        if !std::mem::replace(&mut self.started, true) {
            line = line.strip_prefix('\u{feff}').unwrap_or(line);
        }
        if line.is_empty() {
            let event = std::mem::take(&mut self.event);
            self.has_data = false;
            return Ok(std::mem::take(&mut self.has_fields).then_some(event));
        }
        if line.starts_with(':') {
            return Ok(None);
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if std::mem::replace(&mut self.has_data, true) {
                    self.event.data.push('\n');
                }
                self.event.data.push_str(value);
            }
            "event" => value.clone_into(&mut self.event.event),
            "error" => match &mut self.event.error {
                Some(error) => {
                    error.push('\n');
                    error.push_str(value);
                }
                None => self.event.error = Some(value.to_owned()),
            },
            _ => return Ok(None),
        }
        self.has_fields = true;
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::collection::vec;
    use proptest::prelude::*;
    use proptest::sample::select;

    /// Decodes `body` split into pieces of `size` bytes.
    fn decode(body: &[u8], size: usize) -> (Result<Flow, ChatError>, Vec<SseEvent>) {
        let mut decoder = SseDecoder::default();
        let mut events = Vec::new();
        for piece in body.chunks(size) {
            let flow = decoder.push(piece, &mut |event| {
                let done = event.data == "[DONE]";
                events.push(event);
                Ok(if done { Flow::Done } else { Flow::Continue })
            });
            if !matches!(flow, Ok(Flow::Continue)) {
                return (flow, events);
            }
        }
        (Ok(Flow::Continue), events)
    }

    fn event(event: &str, data: &str, error: Option<&str>) -> SseEvent {
        SseEvent {
            event: event.into(),
            data: data.into(),
            error: error.map(str::to_owned),
        }
    }

    #[test]
    fn sse_decoder_reads_fields_across_any_split() {
        let body = "\u{feff}: comment\r\ndata: {\"a\":\r\ndata:1}\r\nid: 7\r\nretry: 10\r\n\r\n\
                    event: error\rdata: é\r\r\
                    error: {\"message\":\"x\"}\n\n\
                    unknown: y\n\n\
                    event: ping\n\n\
                    data\n\n\
                    data: [DONE]\n\ndata: after\n\n";
        for size in 1..=body.len() {
            let (flow, events) = decode(body.as_bytes(), size);
            assert_eq!(flow.unwrap(), Flow::Done, "pieces of {size}");
            assert_eq!(
                events,
                [
                    event("", "{\"a\":\n1}", None),
                    event("error", "é", None),
                    event("", "", Some("{\"message\":\"x\"}")),
                    event("ping", "", None),
                    event("", "", None),
                    event("", "[DONE]", None),
                ],
                "pieces of {size}"
            );
        }
        // An event without its closing empty line is not dispatched.
        let (flow, events) = decode(b"data: 1\n\ndata: 2\n", 4);
        assert_eq!(flow.unwrap(), Flow::Continue);
        assert_eq!(events, [event("", "1", None)]);
        // A byte order mark is only skipped at the very start.
        let (_, events) = decode("data: 1\n\n\u{feff}data: 2\n\n".as_bytes(), 3);
        assert_eq!(events, [event("", "1", None)]);
        let (flow, _) = decode(b"data: \xff\n\n", 100);
        assert!(matches!(flow, Err(ChatError::Malformed(_))), "{flow:?}");
    }

    proptest! {
        #[test]
        fn sse_decoding_does_not_depend_on_how_the_bytes_are_split(
            tokens in vec(
                select(&["data", "event", "error", "id", ":", " ", "x", "é", "[DONE]",
                         "\n", "\r", "\r\n", "\u{feff}"][..]),
                0..40,
            ),
            size in 1usize..8,
        ) {
            let body = tokens.concat();
            let whole = decode(body.as_bytes(), body.len().max(1));
            let split = decode(body.as_bytes(), size);
            prop_assert_eq!(format!("{whole:?}"), format!("{split:?}"));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in vec(any::<u8>(), 0..200), size in 1usize..16) {
            let _ = decode(&bytes, size);
        }
    }
}
