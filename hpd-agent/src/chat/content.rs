//! [`ContentPart`]: one piece of a tool result beyond plain text (an image, audio, a link to a
//! resource, an embedded resource), and the text form that stands for it where no richer form
//! can be sent.
//!
//! Binary data is held as [`Bytes`] (cheap to clone: a history sent again shares it) and
//! serialized as standard base64, so a stored session is plain JSON.

use bytes::Bytes;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// One part of a tool result, in the order the tool gave them.
///
/// A result's parts are sent to the model as each provider allows: Anthropic and the OpenAI
/// Responses API take text and images inside the tool result; Chat Completions takes text in the
/// tool message and the images in a user message after it (see
/// [`ToolImages`](crate::chat::ToolImages)). What a provider or model cannot take is sent as its
/// [text form](ContentPart::text_form) (`[image: image/png, 1234 bytes]`), never dropped
/// silently.
///
/// It serializes as an object tagged by `type`, with binary data in base64:
///
/// ```
/// use hpd_agent::chat::ContentPart;
///
/// let image = ContentPart::image("image/png", vec![0x89, b'P', b'N', b'G']);
/// assert_eq!(
///     serde_json::to_string(&image).unwrap(),
///     r#"{"type":"image","mime_type":"image/png","data":"iVBORw=="}"#
/// );
/// assert_eq!(image.text_form(), "[image: image/png, 4 bytes]");
/// assert_eq!(serde_json::from_str::<ContentPart>(r#"{"type":"text","text":"hi"}"#).unwrap(), ContentPart::text("hi"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ContentPart {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image {
        /// Its MIME type, e.g. `image/png`.
        mime_type: String,
        /// The encoded image (PNG, JPEG, ... bytes, not base64).
        #[serde(with = "base64_bytes")]
        data: Bytes,
    },
    /// Audio.
    Audio {
        /// Its MIME type, e.g. `audio/wav`.
        mime_type: String,
        /// The encoded audio.
        #[serde(with = "base64_bytes")]
        data: Bytes,
    },
    /// A link to a resource the model (or the user) can fetch; its content is not included.
    ResourceLink {
        /// The resource's URI.
        uri: String,
        /// Its name.
        name: String,
        /// Its MIME type, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// What it is.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
    /// A resource whose content is included.
    Resource {
        /// The resource's URI.
        uri: String,
        /// Its MIME type, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Its content.
        contents: ResourceContents,
    },
}

/// The content of an embedded [`ContentPart::Resource`]: text, or binary data (`blob`, base64
/// in JSON).
///
/// ```
/// use hpd_agent::chat::ResourceContents;
///
/// let text = ResourceContents::Text("# Notes".into());
/// assert_eq!(serde_json::to_string(&text).unwrap(), r##"{"text":"# Notes"}"##);
/// let blob = ResourceContents::Blob(vec![1, 2, 3].into());
/// assert_eq!(serde_json::to_string(&blob).unwrap(), r#"{"blob":"AQID"}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ResourceContents {
    /// Text content.
    Text(String),
    /// Binary content.
    Blob(#[serde(with = "base64_bytes")] Bytes),
}

impl ContentPart {
    /// A text part.
    ///
    /// ```
    /// use hpd_agent::chat::ContentPart;
    ///
    /// assert_eq!(ContentPart::text("hi").as_text(), Some("hi"));
    /// ```
    #[must_use]
    pub fn text(text: impl Into<String>) -> Self {
        ContentPart::Text { text: text.into() }
    }

    /// An image part: its MIME type and encoded bytes.
    ///
    /// ```
    /// use hpd_agent::chat::ContentPart;
    ///
    /// let png = ContentPart::image("image/png", vec![0x89, b'P', b'N', b'G']);
    /// assert!(png.is_image());
    /// ```
    #[must_use]
    pub fn image(mime_type: impl Into<String>, data: impl Into<Bytes>) -> Self {
        ContentPart::Image {
            mime_type: mime_type.into(),
            data: data.into(),
        }
    }

    /// An audio part: its MIME type and encoded bytes.
    ///
    /// ```
    /// use hpd_agent::chat::ContentPart;
    ///
    /// let wav = ContentPart::audio("audio/wav", vec![0; 44]);
    /// assert_eq!(wav.text_form(), "[audio: audio/wav, 44 bytes]");
    /// ```
    #[must_use]
    pub fn audio(mime_type: impl Into<String>, data: impl Into<Bytes>) -> Self {
        ContentPart::Audio {
            mime_type: mime_type.into(),
            data: data.into(),
        }
    }

    /// A link to a resource.
    ///
    /// ```
    /// use hpd_agent::chat::ContentPart;
    ///
    /// let link = ContentPart::resource_link("file:///report.pdf", "report.pdf");
    /// assert_eq!(link.text_form(), "[resource link: report.pdf, file:///report.pdf]");
    /// ```
    #[must_use]
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ContentPart::ResourceLink {
            uri: uri.into(),
            name: name.into(),
            mime_type: None,
            description: None,
        }
    }

    /// An embedded resource with text content.
    ///
    /// ```
    /// use hpd_agent::chat::ContentPart;
    ///
    /// let notes = ContentPart::text_resource("file:///notes.md", Some("text/markdown"), "# Notes");
    /// assert_eq!(notes.text_form(), "[resource: file:///notes.md (text/markdown)]\n# Notes");
    /// ```
    #[must_use]
    pub fn text_resource(
        uri: impl Into<String>,
        mime_type: Option<&str>,
        text: impl Into<String>,
    ) -> Self {
        ContentPart::Resource {
            uri: uri.into(),
            mime_type: mime_type.map(str::to_owned),
            contents: ResourceContents::Text(text.into()),
        }
    }

    /// An embedded resource with binary content.
    ///
    /// ```
    /// use hpd_agent::chat::ContentPart;
    ///
    /// let blob = ContentPart::blob_resource("file:///a.bin", None, vec![0; 10]);
    /// assert_eq!(blob.text_form(), "[resource: file:///a.bin, 10 bytes]");
    /// ```
    #[must_use]
    pub fn blob_resource(
        uri: impl Into<String>,
        mime_type: Option<&str>,
        data: impl Into<Bytes>,
    ) -> Self {
        ContentPart::Resource {
            uri: uri.into(),
            mime_type: mime_type.map(str::to_owned),
            contents: ResourceContents::Blob(data.into()),
        }
    }

    /// The text of a text part.
    ///
    /// ```
    /// use hpd_agent::chat::ContentPart;
    ///
    /// assert_eq!(ContentPart::text("a").as_text(), Some("a"));
    /// assert_eq!(ContentPart::audio("audio/wav", vec![]).as_text(), None);
    /// ```
    #[must_use]
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentPart::Text { text } => Some(text),
            _ => None,
        }
    }

    /// Whether this is an image part.
    ///
    /// ```
    /// use hpd_agent::chat::ContentPart;
    ///
    /// assert!(!ContentPart::text("a").is_image());
    /// ```
    #[must_use]
    pub fn is_image(&self) -> bool {
        matches!(self, ContentPart::Image { .. })
    }

    /// The binary payload of an image, audio or blob resource part, if it is one.
    ///
    /// ```
    /// use hpd_agent::chat::ContentPart;
    ///
    /// assert_eq!(ContentPart::image("image/gif", vec![1, 2]).media_bytes().map(|b| b.len()), Some(2));
    /// assert!(ContentPart::text("a").media_bytes().is_none());
    /// ```
    #[must_use]
    pub fn media_bytes(&self) -> Option<&Bytes> {
        match self {
            ContentPart::Image { data, .. } | ContentPart::Audio { data, .. } => Some(data),
            ContentPart::Resource {
                contents: ResourceContents::Blob(data),
                ..
            } => Some(data),
            _ => None,
        }
    }

    /// What a reader that takes text only gets for this part: a text part's text; for an
    /// image or audio, its MIME type and size in square brackets; for a resource link, its name
    /// and URI; for an embedded text resource, a header line with its URI and then its text;
    /// for a binary one, its URI and size.
    ///
    /// ```
    /// use hpd_agent::chat::ContentPart;
    ///
    /// assert_eq!(ContentPart::text("sunny").text_form(), "sunny");
    /// assert_eq!(ContentPart::image("image/jpeg", vec![0; 3]).text_form(), "[image: image/jpeg, 3 bytes]");
    /// ```
    #[must_use]
    pub fn text_form(&self) -> String {
        match self {
            ContentPart::Text { text } => text.clone(),
            ContentPart::Image { mime_type, data } => {
                format!("[image: {mime_type}, {} bytes]", data.len())
            }
            ContentPart::Audio { mime_type, data } => {
                format!("[audio: {mime_type}, {} bytes]", data.len())
            }
            ContentPart::ResourceLink {
                uri,
                name,
                mime_type,
                description,
            } => {
                let mut text = format!("[resource link: {name}, {uri}");
                if let Some(mime) = mime_type {
                    text.push_str(&format!(" ({mime})"));
                }
                if let Some(description) = description {
                    text.push_str(&format!(": {description}"));
                }
                text.push(']');
                text
            }
            ContentPart::Resource {
                uri,
                mime_type,
                contents,
            } => {
                let mime = mime_type
                    .as_deref()
                    .map(|m| format!(" ({m})"))
                    .unwrap_or_default();
                match contents {
                    ResourceContents::Text(text) => format!("[resource: {uri}{mime}]\n{text}"),
                    ResourceContents::Blob(data) => {
                        format!("[resource: {uri}{mime}, {} bytes]", data.len())
                    }
                }
            }
        }
    }
}

/// The text form of a result: the parts' text forms joined with newlines, then the structured
/// value as compact JSON unless a text part already says the same.
pub(crate) fn text_form(parts: &[ContentPart], structured: Option<&Value>) -> String {
    let mut texts: Vec<String> = parts.iter().map(ContentPart::text_form).collect();
    if let Some(structured) = structured
        && !repeated_in(parts, structured)
    {
        texts.push(structured.to_string());
    }
    texts.join("\n")
}

/// Whether the text parts already carry `structured`: one of them (or all of them joined) is
/// that JSON value, or `structured` is a one-field object whose value is the text (as a string
/// or as the JSON it parses to), the way several MCP SDKs wrap a plain value
/// (`{"result": value}`).
pub(crate) fn repeated_in(parts: &[ContentPart], structured: &Value) -> bool {
    let texts: Vec<&str> = parts.iter().filter_map(ContentPart::as_text).collect();
    let joined = texts.join("\n");
    texts
        .iter()
        .copied()
        .chain(std::iter::once(joined.as_str()))
        .any(|text| repeats(text, structured))
}

fn repeats(text: &str, structured: &Value) -> bool {
    let parsed = serde_json::from_str::<Value>(text).ok();
    if parsed.as_ref() == Some(structured) {
        return true;
    }
    match structured {
        Value::Object(map) if map.len() == 1 => map.values().any(|value| {
            value.as_str() == Some(text) || (parsed.is_some() && parsed.as_ref() == Some(value))
        }),
        _ => false,
    }
}

/// `data:{mime};base64,{data}`, the URL form OpenAI's image inputs take.
pub(crate) fn data_url(mime_type: &str, data: &[u8]) -> String {
    use base64::Engine as _;
    format!(
        "data:{mime_type};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(data)
    )
}

/// Standard base64 of `data`.
pub(crate) fn base64(data: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(data)
}

/// Bytes as a base64 string in JSON.
mod base64_bytes {
    use base64::Engine as _;

    use super::{Bytes, Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(data: &Bytes, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&base64::engine::general_purpose::STANDARD.encode(data))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Bytes, D::Error> {
        let text = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        base64::engine::general_purpose::STANDARD
            .decode(text.as_bytes())
            .map(Bytes::from)
            .map_err(|e| serde::de::Error::custom(format!("invalid base64 data: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parts_round_trip_through_json() {
        let parts = vec![
            ContentPart::text("Here:"),
            ContentPart::image("image/png", vec![1, 2, 3]),
            ContentPart::audio("audio/wav", vec![4]),
            ContentPart::resource_link("https://example.com/a", "a"),
            ContentPart::text_resource("file:///n.md", Some("text/markdown"), "notes"),
            ContentPart::blob_resource("file:///b", None, vec![9; 5]),
        ];
        let json = serde_json::to_string(&parts).unwrap();
        assert_eq!(
            serde_json::from_str::<Vec<ContentPart>>(&json).unwrap(),
            parts
        );
        let bad = serde_json::from_str::<ContentPart>(
            r#"{"type":"image","mime_type":"image/png","data":"%%"}"#,
        )
        .unwrap_err();
        assert!(bad.to_string().contains("invalid base64 data"), "{bad}");
    }

    #[test]
    fn tool_messages_stored_before_parts_existed_still_read() {
        use crate::ChatMessage;
        let old: ChatMessage =
            serde_json::from_str(r#"{"role":"tool","call_id":"c1","content":"5","is_error":true}"#)
                .unwrap();
        assert_eq!(old, ChatMessage::tool("c1", "5", true));
        // A text result is stored exactly as before; one with parts gains the `parts` key.
        assert_eq!(
            serde_json::to_string(&ChatMessage::tool("c1", "5", false)).unwrap(),
            r#"{"role":"tool","call_id":"c1","content":"5"}"#
        );
        let shot = ChatMessage::tool_result("c2", crate::ToolResult::image("image/png", vec![1]));
        let json = serde_json::to_string(&shot).unwrap();
        assert_eq!(
            json,
            r#"{"role":"tool","call_id":"c2","content":"[image: image/png, 1 bytes]","parts":[{"type":"image","mime_type":"image/png","data":"AQ=="}]}"#
        );
        assert_eq!(serde_json::from_str::<ChatMessage>(&json).unwrap(), shot);
        // An old stored `ToolResult` (text and flag) reads too.
        let result: crate::ToolResult =
            serde_json::from_str(r#"{"text":"ok","is_error":false}"#).unwrap();
        assert_eq!(result, crate::ToolResult::ok("ok"));
    }

    #[test]
    fn the_text_form_lists_every_part_and_the_structured_value_once() {
        let parts = [
            ContentPart::text("Chart:"),
            ContentPart::image("image/png", vec![0; 8]),
        ];
        assert_eq!(
            text_form(&parts, Some(&json!({"max": 3}))),
            "Chart:\n[image: image/png, 8 bytes]\n{\"max\":3}"
        );
        let repeated = [ContentPart::text("{\"max\": 3}")];
        assert_eq!(
            text_form(&repeated, Some(&json!({"max": 3}))),
            "{\"max\": 3}"
        );
        let wrapped = [ContentPart::text("5")];
        assert_eq!(text_form(&wrapped, Some(&json!({"result": 5}))), "5");
        assert_eq!(text_form(&[], Some(&json!([1, 2]))), "[1,2]");
    }
}

/// What a provider does with the images of tool results.
///
/// - [`Send`](ToolImages::Send) (the default): images go to the model the way its API allows:
///   inside the `tool_result` block (Anthropic), inside the `function_call_output`
///   (OpenAI Responses), or, since Chat Completions tool messages take text only, in a `user`
///   message right after the tool messages of the response, with one `image_url` part per image
///   (OpenAI Chat Completions).
/// - [`Describe`](ToolImages::Describe): for a model or server that takes no images, the tool
///   result is sent as its text form, where each image reads `[image: image/png, 1234 bytes]`.
///
/// Images of a type the API does not take (anything but PNG, JPEG, GIF and WebP), audio and
/// resources are always sent as their [text form](ContentPart::text_form); nothing is dropped
/// silently.
///
/// ```
/// use hpd_agent::providers::openai::OpenAiClient;
/// use hpd_agent::chat::ToolImages;
///
/// // A llama.cpp server without a vision projector.
/// let client = OpenAiClient::new("local", "")?.with_tool_images(ToolImages::Describe);
/// assert_eq!(client.tool_images(), ToolImages::Describe);
/// # Ok::<(), hpd_agent::chat::ChatError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolImages {
    /// Send images where the API allows them.
    #[default]
    Send,
    /// Send a text description of each image instead.
    Describe,
}

/// Whether the vision APIs take this image type (Anthropic and OpenAI both list PNG, JPEG,
/// GIF and WebP).
pub(crate) fn sendable_image(mime_type: &str) -> bool {
    matches!(
        mime_type.to_ascii_lowercase().as_str(),
        "image/png" | "image/jpeg" | "image/jpg" | "image/gif" | "image/webp"
    )
}

/// The parts of a tool result message to encode part by part, or `None` when it is sent as its
/// text form: it holds no image the vision APIs take, so the text says everything the API
/// could be sent.
pub(crate) fn parts_to_send(parts: &[ContentPart]) -> Option<&[ContentPart]> {
    parts
        .iter()
        .any(|p| matches!(p, ContentPart::Image { mime_type, .. } if sendable_image(mime_type)))
        .then_some(parts)
}
