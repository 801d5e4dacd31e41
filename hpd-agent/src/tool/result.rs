//! What a tool call returns to the model ([`ToolResult`]) and why a call failed
//! ([`FunctionFailure`]).

use std::time::Duration;

use serde_json::Value;

use crate::chat::{ContentPart, ResourceContents, text_form};

/// The result of a tool call as the model sees it: an ordered list of content parts (text,
/// images, audio, resources), an optional structured JSON value, and an error flag.
///
/// - [`text`](Self::text) is always the result's *text form*: what a reader that takes text
///   only gets (a text-only model, the [`ToolCallFinished`](crate::AgentEvent::ToolCallFinished)
///   event, the token estimate). For a plain text result it is the whole result.
/// - [`parts`](Self::parts) holds the ordered parts when the result is more than one text
///   (empty otherwise). The constructors keep `text` equal to the parts' text form
///   ([`ContentPart::text_form`] of each, joined with newlines, then the structured value as
///   JSON unless a text part already says the same).
/// - [`structured`](Self::structured) is a JSON value the tool returns besides its content (an
///   MCP server sends it as `structuredContent`; a model gets it as JSON text).
///
/// **The text wins.** A middleware that rewrites `text` of a result with parts directly (instead
/// of through [`map_text`](Self::map_text)) makes the parts stale: the runtime then sends the
/// rewritten text alone, so a redaction can never be bypassed by the parts.
///
/// ```
/// use hpd_agent::ToolResult;
/// use hpd_agent::chat::ContentPart;
/// use serde_json::json;
///
/// let ok = ToolResult::ok("sunny");
/// assert!(!ok.is_error && ok.parts.is_empty());
/// let failed = ToolResult::error("no such city");
/// assert_eq!((failed.text.as_str(), failed.is_error), ("no such city", true));
///
/// let chart = ToolResult::from_parts([ContentPart::text("The chart:"), ContentPart::image("image/png", vec![1, 2, 3])])
///     .with_structured(json!({"max": 3}));
/// assert_eq!(chart.text, "The chart:\n[image: image/png, 3 bytes]\n{\"max\":3}");
/// assert_eq!(chart.parts.len(), 2);
/// ```
///
/// It serializes with serde; `parts` and `structured` are left out when empty, so a result of
/// the old `{"text", "is_error"}` form reads as a plain text result.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct ToolResult {
    /// The text form of the result (the whole result when [`parts`](Self::parts) is empty).
    pub text: String,
    /// Whether it reports an error.
    pub is_error: bool,
    /// The ordered content parts, when the result is more than one text; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<ContentPart>,
    /// A structured value the tool returned besides its content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured: Option<Value>,
}

impl ToolResult {
    /// A successful result.
    ///
    /// ```
    /// use hpd_agent::ToolResult;
    ///
    /// let result = ToolResult::ok("42");
    /// assert_eq!((result.text.as_str(), result.is_error), ("42", false));
    /// ```
    #[must_use]
    pub fn ok(text: impl Into<String>) -> Self {
        ToolResult {
            text: text.into(),
            is_error: false,
            parts: Vec::new(),
            structured: None,
        }
    }

    /// An error result.
    ///
    /// ```
    /// use hpd_agent::ToolResult;
    ///
    /// let result = ToolResult::error("Error: no such city");
    /// assert_eq!((result.text.as_str(), result.is_error), ("Error: no such city", true));
    /// ```
    #[must_use]
    pub fn error(text: impl Into<String>) -> Self {
        ToolResult {
            is_error: true,
            ..ToolResult::ok(text)
        }
    }

    /// A successful result of these parts, in order. A single text part (or none) gives a
    /// plain text result.
    ///
    /// ```
    /// use hpd_agent::ToolResult;
    /// use hpd_agent::chat::ContentPart;
    ///
    /// let shot = ToolResult::from_parts([ContentPart::image("image/png", vec![0; 4])]);
    /// assert_eq!(shot.text, "[image: image/png, 4 bytes]");
    /// assert_eq!(ToolResult::from_parts([ContentPart::text("hi")]), ToolResult::ok("hi"));
    /// ```
    #[must_use]
    pub fn from_parts(parts: impl IntoIterator<Item = ContentPart>) -> Self {
        let mut result = ToolResult::ok(String::new());
        result.parts = parts.into_iter().collect();
        result.normalise();
        result
    }

    /// A successful result holding one image.
    ///
    /// ```
    /// use hpd_agent::ToolResult;
    ///
    /// let result = ToolResult::image("image/jpeg", vec![0xff, 0xd8]);
    /// assert!(result.parts[0].is_image());
    /// ```
    #[must_use]
    pub fn image(mime_type: impl Into<String>, data: impl Into<bytes::Bytes>) -> Self {
        ToolResult::from_parts([ContentPart::image(mime_type, data)])
    }

    /// A successful result holding a structured value, with its compact JSON as the text.
    ///
    /// ```
    /// use hpd_agent::ToolResult;
    /// use serde_json::json;
    ///
    /// let result = ToolResult::structured(json!({"temperature": 21}));
    /// assert_eq!(result.text, r#"{"temperature":21}"#);
    /// assert_eq!(result.structured, Some(json!({"temperature": 21})));
    /// ```
    #[must_use]
    pub fn structured(value: Value) -> Self {
        ToolResult::ok(String::new()).with_structured(value)
    }

    /// The result with this structured value; the text form gains its JSON unless a text part
    /// already says the same.
    ///
    /// ```
    /// use hpd_agent::ToolResult;
    /// use serde_json::json;
    ///
    /// let result = ToolResult::ok("21 degrees").with_structured(json!({"temperature": 21}));
    /// assert_eq!(result.text, "21 degrees\n{\"temperature\":21}");
    /// let same = ToolResult::ok(r#"{"temperature": 21}"#).with_structured(json!({"temperature": 21}));
    /// assert_eq!(same.text, r#"{"temperature": 21}"#);
    /// ```
    #[must_use]
    pub fn with_structured(mut self, value: Value) -> Self {
        let mut parts = self.take_content();
        self.structured = Some(value);
        self.parts = std::mem::take(&mut parts);
        self.normalise();
        self
    }

    /// The result with one more part after the others.
    ///
    /// ```
    /// use hpd_agent::ToolResult;
    /// use hpd_agent::chat::ContentPart;
    ///
    /// let result = ToolResult::ok("Here it is:").with_part(ContentPart::audio("audio/wav", vec![0; 2]));
    /// assert_eq!(result.text, "Here it is:\n[audio: audio/wav, 2 bytes]");
    /// assert_eq!(result.parts.len(), 2);
    /// ```
    #[must_use]
    pub fn with_part(mut self, part: ContentPart) -> Self {
        let mut parts = self.take_content();
        parts.push(part);
        self.parts = parts;
        self.normalise();
        self
    }

    /// The same result flagged as an error.
    ///
    /// ```
    /// use hpd_agent::ToolResult;
    ///
    /// assert!(ToolResult::image("image/png", vec![1]).into_error().is_error);
    /// ```
    #[must_use]
    pub fn into_error(mut self) -> Self {
        self.is_error = true;
        self
    }

    /// Rewrites every text of the result (each text part, the text of embedded text
    /// resources, and the text form) with `f`: the way for middleware to redact or reword a
    /// result that may hold parts.
    ///
    /// ```
    /// use hpd_agent::ToolResult;
    /// use hpd_agent::chat::ContentPart;
    ///
    /// let mut result = ToolResult::from_parts([ContentPart::text("card 4111"), ContentPart::image("image/png", vec![1])]);
    /// result.map_text(|t| t.replace("4111", "[card]"));
    /// assert_eq!(result.text, "card [card]\n[image: image/png, 1 bytes]");
    /// assert_eq!(result.parts[0], ContentPart::text("card [card]"));
    /// ```
    pub fn map_text(&mut self, mut f: impl FnMut(&str) -> String) {
        if self.parts.is_empty() {
            self.text = f(&self.text);
            return;
        }
        for part in &mut self.parts {
            match part {
                ContentPart::Text { text }
                | ContentPart::Resource {
                    contents: ResourceContents::Text(text),
                    ..
                } => *text = f(text),
                _ => {}
            }
        }
        self.text = text_form(&self.parts, self.structured.as_ref());
    }

    /// The ordered parts the result consists of: [`parts`](Self::parts), or the text as one
    /// part when it has none (no part for an empty text). When the text was rewritten without
    /// [`map_text`](Self::map_text), the text alone (see the type's docs).
    ///
    /// ```
    /// use hpd_agent::ToolResult;
    /// use hpd_agent::chat::ContentPart;
    ///
    /// assert_eq!(ToolResult::ok("hi").content(), vec![ContentPart::text("hi")]);
    /// let mut shot = ToolResult::image("image/png", vec![1]);
    /// assert!(shot.content()[0].is_image());
    /// shot.text = "[redacted]".into();
    /// assert_eq!(shot.content(), vec![ContentPart::text("[redacted]")]);
    /// ```
    #[must_use]
    pub fn content(&self) -> Vec<ContentPart> {
        if !self.parts.is_empty() && self.parts_current() {
            return self.parts.clone();
        }
        if self.text.is_empty() {
            Vec::new()
        } else {
            vec![ContentPart::text(self.text.clone())]
        }
    }

    /// Whether the parts still say what the text says (no middleware rewrote `text` alone).
    pub(crate) fn parts_current(&self) -> bool {
        self.text == text_form(&self.parts, self.structured.as_ref())
    }

    /// Drops parts that no longer match the text (see the type's docs), so the text is what
    /// every reader gets.
    pub(crate) fn settle(&mut self) {
        if !self.parts.is_empty() && !self.parts_current() {
            tracing::debug!("a tool result's text was rewritten; its parts are dropped");
            self.parts.clear();
        }
    }

    /// The parts the result consists of, taken out (the text as one part when it has none).
    fn take_content(&mut self) -> Vec<ContentPart> {
        if self.parts.is_empty() {
            let text = std::mem::take(&mut self.text);
            // The text form of a structured value alone is its JSON, not a part.
            let structured_only = self
                .structured
                .as_ref()
                .is_some_and(|s| text == text_form(&[], Some(s)));
            if text.is_empty() || structured_only {
                Vec::new()
            } else {
                vec![ContentPart::text(text)]
            }
        } else {
            std::mem::take(&mut self.parts)
        }
    }

    /// A tool result within the limits: parts whose text was rewritten alone are dropped (the
    /// text wins), each part is limited (texts cut, media over the size cap replaced by a
    /// text that says so), a structured value too long for the text limit is dropped, and the
    /// text form is cut.
    pub(crate) fn limited(self, limits: &crate::config::Limits) -> ToolResult {
        let mut result = self;
        result.settle();
        let max = limits.max_tool_result_bytes;
        if result
            .structured
            .as_ref()
            .is_some_and(|s| s.to_string().len() > max)
        {
            // Its JSON stays in the text form, cut like any text.
            if !result.parts.is_empty()
                && let Some(structured) = result.structured.take()
                && !crate::chat::repeated_in(&result.parts, &structured)
            {
                result.parts.push(ContentPart::text(structured.to_string()));
            }
            result.structured = None;
        }
        if result.parts.is_empty() {
            result.text = crate::config::cut_text(std::mem::take(&mut result.text), max);
            return result;
        }
        for part in &mut result.parts {
            match part {
                ContentPart::Text { text }
                | ContentPart::Resource {
                    contents: ResourceContents::Text(text),
                    ..
                } => *text = crate::config::cut_text(std::mem::take(text), max),
                _ => {
                    if let Some(data) = part.media_bytes()
                        && data.len() > limits.max_tool_result_media_bytes
                    {
                        let described = part.text_form();
                        let described = described.trim_end_matches(']');
                        *part = ContentPart::text(format!(
                            "{described}, not sent: over the limit of {} bytes]",
                            limits.max_tool_result_media_bytes
                        ));
                    }
                }
            }
        }
        result.text = crate::config::cut_text(
            crate::chat::text_form(&result.parts, result.structured.as_ref()),
            max,
        );
        result
    }

    /// Sets the text form from the parts; a single text part (or none) becomes plain text.
    fn normalise(&mut self) {
        self.text = text_form(&self.parts, self.structured.as_ref());
        // With a structured value a lone text part stays a part, so the text form (text, then
        // JSON) is never read back as one text.
        if self.structured.is_none()
            && self.parts.len() <= 1
            && self.parts.iter().all(|p| p.as_text().is_some())
        {
            self.parts.clear();
        }
    }
}

/// Why a function call failed, as `on_error` middleware hooks see it.
///
/// ```
/// use hpd_agent::prelude::*;
/// use hpd_agent::harness::HarnessInfo;
/// use hpd_agent::tool::FunctionFailure;
///
/// #[derive(Default)]
/// pub struct Parser;
///
/// #[tool_harness]
/// impl Parser {
///     /// Parses a number.
///     #[ai_function]
///     fn parse_number(&self, text: String) -> Result<i64, String> {
///         text.trim().parse().map_err(|_| format!("'{text}' is not a number"))
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let parse = &HarnessInfo::of::<Parser>().functions()?[0];
/// let failure = parse.run("c1", r#"{"text": "x"}"#, Default::default()).await.unwrap_err();
/// assert_eq!(failure, FunctionFailure::Returned("'x' is not a number".into()));
/// assert_eq!(parse.failure_result(&failure).text, "Error: 'x' is not a number");
/// let failure = parse.run("c2", r#"{"txt": "1"}"#, Default::default()).await.unwrap_err();
/// assert!(matches!(failure, FunctionFailure::InvalidArguments(_)));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FunctionFailure {
    /// The arguments did not match the parameters; the body did not run.
    InvalidArguments(String),
    /// The body returned `Err`; the text is the error's `Display`.
    Returned(String),
    /// The body of a tool built at run time returned an error [`ToolResult`]; the model gets
    /// it as it is.
    Reported(ToolResult),
    /// The body panicked (the payload is never reported).
    Panicked,
    /// The body exceeded its timeout.
    TimedOut(Duration),
}

impl FunctionFailure {
    /// The result the model sees for this failure of a call of the tool `name`.
    ///
    /// ```
    /// use hpd_agent::tool::FunctionFailure;
    ///
    /// let result = FunctionFailure::Panicked.result_for("add");
    /// assert_eq!(result.text, "Error: function 'add' panicked");
    /// assert!(result.is_error);
    /// ```
    #[must_use]
    pub fn result_for(&self, name: &str) -> ToolResult {
        match self {
            FunctionFailure::Reported(result) => result.clone(),
            other => ToolResult::error(other.text_for(name)),
        }
    }

    /// [`result_for`](Self::result_for), taking the failure: the one conversion of a call's
    /// outcome into what the model sees (a reported result is moved, not copied).
    pub(crate) fn into_result(self, name: &str) -> ToolResult {
        match self {
            FunctionFailure::Reported(result) => result,
            other => ToolResult::error(other.text_for(name)),
        }
    }

    /// The error text of a failure other than a reported result.
    fn text_for(&self, name: &str) -> String {
        match self {
            FunctionFailure::InvalidArguments(message) => {
                format!("Invalid arguments for '{name}': {message}")
            }
            FunctionFailure::Returned(message) => format!("Error: {message}"),
            FunctionFailure::Reported(result) => result.text.clone(),
            FunctionFailure::Panicked => format!("Error: function '{name}' panicked"),
            FunctionFailure::TimedOut(d) => {
                format!(
                    "Error: function '{name}' timed out after {} ms",
                    d.as_millis()
                )
            }
        }
    }
}

/// An image a function returns: its MIME type and encoded bytes. An `#[ai_function]` that
/// returns one (or `Result<Image, E>`) gives a result with one image part.
///
/// ```
/// use hpd_agent::prelude::*;
/// use hpd_agent::harness::HarnessInfo;
/// use hpd_agent::tool::Image;
///
/// #[derive(Default)]
/// pub struct Camera;
///
/// #[tool_harness]
/// impl Camera {
///     /// Takes a picture.
///     #[ai_function]
///     fn snapshot(&self) -> Image {
///         Image::png(vec![0x89, b'P', b'N', b'G'])
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let snapshot = &HarnessInfo::of::<Camera>().functions()?[0];
/// let result = snapshot.call("c1", "{}", Default::default()).await;
/// assert_eq!(result.text, "[image: image/png, 4 bytes]");
/// assert!(result.parts[0].is_image());
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Image {
    /// Its MIME type, e.g. `image/png`.
    pub mime_type: String,
    /// The encoded image.
    pub data: bytes::Bytes,
}

impl Image {
    /// An image of this MIME type.
    ///
    /// ```
    /// let webp = hpd_agent::tool::Image::new("image/webp", vec![1, 2]);
    /// assert_eq!(webp.mime_type, "image/webp");
    /// ```
    #[must_use]
    pub fn new(mime_type: impl Into<String>, data: impl Into<bytes::Bytes>) -> Self {
        Image {
            mime_type: mime_type.into(),
            data: data.into(),
        }
    }

    /// A PNG image.
    ///
    /// ```
    /// assert_eq!(hpd_agent::tool::Image::png(vec![]).mime_type, "image/png");
    /// ```
    #[must_use]
    pub fn png(data: impl Into<bytes::Bytes>) -> Self {
        Image::new("image/png", data)
    }

    /// A JPEG image.
    ///
    /// ```
    /// assert_eq!(hpd_agent::tool::Image::jpeg(vec![]).mime_type, "image/jpeg");
    /// ```
    #[must_use]
    pub fn jpeg(data: impl Into<bytes::Bytes>) -> Self {
        Image::new("image/jpeg", data)
    }
}

/// Audio a function returns: its MIME type and encoded bytes (one audio part).
///
/// ```
/// use hpd_agent::tool::{Audio, IntoToolResult};
///
/// let result = Audio::new("audio/wav", vec![0; 44]).into_tool_result();
/// assert_eq!(result.text, "[audio: audio/wav, 44 bytes]");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Audio {
    /// Its MIME type, e.g. `audio/wav`.
    pub mime_type: String,
    /// The encoded audio.
    pub data: bytes::Bytes,
}

impl Audio {
    /// Audio of this MIME type.
    ///
    /// ```
    /// assert_eq!(hpd_agent::tool::Audio::new("audio/mpeg", vec![]).mime_type, "audio/mpeg");
    /// ```
    #[must_use]
    pub fn new(mime_type: impl Into<String>, data: impl Into<bytes::Bytes>) -> Self {
        Audio {
            mime_type: mime_type.into(),
            data: data.into(),
        }
    }
}

/// A value that is a whole tool result: what an `#[ai_function]` may return besides
/// serializable values, and what a run-time [`Tool`](crate::Tool)'s handler returns.
///
/// Implemented for [`ToolResult`], [`ContentPart`], `Vec<ContentPart>`, [`Image`] and [`Audio`].
/// A function returning a type that implements it gets exactly that result (never a JSON text
/// of it); implement it for a type of your own to choose its parts.
///
/// ```
/// use hpd_agent::ToolResult;
/// use hpd_agent::chat::ContentPart;
/// use hpd_agent::tool::IntoToolResult;
///
/// struct Chart { title: String, png: Vec<u8> }
///
/// impl IntoToolResult for Chart {
///     fn into_tool_result(self) -> ToolResult {
///         ToolResult::from_parts([ContentPart::text(self.title), ContentPart::image("image/png", self.png)])
///     }
/// }
///
/// let result = Chart { title: "Sales".into(), png: vec![1] }.into_tool_result();
/// assert_eq!(result.text, "Sales\n[image: image/png, 1 bytes]");
/// ```
pub trait IntoToolResult {
    /// The result.
    fn into_tool_result(self) -> ToolResult;
}

impl IntoToolResult for ToolResult {
    fn into_tool_result(self) -> ToolResult {
        self
    }
}

impl IntoToolResult for ContentPart {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::from_parts([self])
    }
}

impl IntoToolResult for Vec<ContentPart> {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::from_parts(self)
    }
}

impl IntoToolResult for Image {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::from_parts([ContentPart::Image {
            mime_type: self.mime_type,
            data: self.data,
        }])
    }
}

impl IntoToolResult for Audio {
    fn into_tool_result(self) -> ToolResult {
        ToolResult::from_parts([ContentPart::Audio {
            mime_type: self.mime_type,
            data: self.data,
        }])
    }
}
