//! MCP `tools/call` results and the project's [`ToolResult`], both ways.
//!
//! - [`from_mcp`] (the client, `McpHarness`): every content block becomes a [`ContentPart`] of
//!   the same kind, in order (text, image, audio, resource link, embedded resource), and
//!   `structuredContent` becomes the result's structured value. Base64 data that does not
//!   decode becomes a text part saying so; a block kind this client does not know becomes a
//!   text part naming it. `isError: true` makes an error result.
//! - [`to_mcp`] (the server, `McpServer`): every part becomes the content block of its kind,
//!   and an object structured value is sent as `structuredContent` with its JSON in a text
//!   block too (unless a text block already carries it), as the specification asks for
//!   clients that read only `content`.

use base64::Engine as _;
use rmcp::model::{
    CallToolResult, ContentBlock, Resource as McpResource, ResourceContents as McpResourceContents,
};
use serde_json::Value;

use crate::chat::{ContentPart, ResourceContents};
use crate::tool::ToolResult;

/// The result of an MCP call as the agent's result.
pub(crate) fn from_mcp(result: &CallToolResult) -> ToolResult {
    let parts: Vec<ContentPart> = result.content.iter().map(part_of).collect();
    let mut converted = ToolResult::from_parts(parts);
    if let Some(structured) = &result.structured_content {
        converted = converted.with_structured(structured.clone());
    }
    if result.is_error == Some(true) {
        converted = converted.into_error();
    }
    converted
}

/// The agent's result as an MCP call result, with `extra` (a note about tools that became
/// visible) as a last text block.
pub(crate) fn to_mcp(result: &ToolResult, extra: Option<String>) -> CallToolResult {
    let structured = result.structured.as_ref().filter(|s| s.is_object());
    let mut content: Vec<ContentBlock> = if result.parts.is_empty() {
        // A result that is its text (the common case): one block, made from the text directly.
        if result.text.is_empty() {
            Vec::new()
        } else {
            vec![ContentBlock::text(result.text.clone())]
        }
    } else {
        let parts = result.content();
        let mut content: Vec<ContentBlock> = parts.iter().map(block_of).collect();
        if let Some(structured) = structured
            && !crate::chat::repeated_in(&parts, structured)
        {
            content.push(ContentBlock::text(structured.to_string()));
        }
        content
    };
    if let Some(extra) = extra {
        content.push(ContentBlock::text(extra));
    }
    let mut call = if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    call.structured_content = structured.cloned();
    call
}

pub(crate) fn part_of(block: &ContentBlock) -> ContentPart {
    match block {
        ContentBlock::Text(text) => ContentPart::text(text.text.clone()),
        ContentBlock::Image(image) => match decode(&image.data) {
            Some(data) => ContentPart::image(image.mime_type.clone(), data),
            None => undecodable("image", &image.mime_type),
        },
        ContentBlock::Audio(audio) => match decode(&audio.data) {
            Some(data) => ContentPart::audio(audio.mime_type.clone(), data),
            None => undecodable("audio", &audio.mime_type),
        },
        ContentBlock::ResourceLink(link) => ContentPart::ResourceLink {
            uri: link.uri.clone(),
            name: link.name.clone(),
            mime_type: link.mime_type.clone(),
            description: link.description.clone(),
        },
        ContentBlock::Resource(embedded) => match &embedded.resource {
            McpResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                ..
            } => ContentPart::text_resource(uri.clone(), mime_type.as_deref(), text.clone()),
            McpResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => match decode(blob) {
                Some(data) => ContentPart::blob_resource(uri.clone(), mime_type.as_deref(), data),
                None => {
                    ContentPart::text(format!("[resource: {uri}, its data is not valid base64]"))
                }
            },
            _ => ContentPart::text("[embedded resource of a kind this client does not know]"),
        },
        _ => ContentPart::text("[content of a kind this client does not know]"),
    }
}

pub(crate) fn block_of(part: &ContentPart) -> ContentBlock {
    match part {
        ContentPart::Image { mime_type, data } => {
            ContentBlock::image(crate::chat::base64(data), mime_type.clone())
        }
        ContentPart::Audio { mime_type, data } => {
            ContentBlock::audio(crate::chat::base64(data), mime_type.clone())
        }
        ContentPart::ResourceLink {
            uri,
            name,
            mime_type,
            description,
        } => {
            let mut link = McpResource::new(uri.clone(), name.clone());
            link.mime_type.clone_from(mime_type);
            link.description.clone_from(description);
            ContentBlock::resource_link(link)
        }
        ContentPart::Resource {
            uri,
            mime_type,
            contents,
        } => ContentBlock::resource(match contents {
            ResourceContents::Text(text) => McpResourceContents::TextResourceContents {
                uri: uri.clone(),
                mime_type: mime_type.clone(),
                text: text.clone(),
                meta: None,
            },
            ResourceContents::Blob(data) => McpResourceContents::BlobResourceContents {
                uri: uri.clone(),
                mime_type: mime_type.clone(),
                blob: crate::chat::base64(data),
                meta: None,
            },
        }),
        // Text, and kinds added later, as their text form.
        other => ContentBlock::text(other.text_form()),
    }
}

/// Standard base64 (what MCP sends), tolerating line breaks and missing padding.
fn decode(data: &str) -> Option<Vec<u8>> {
    let compact: String = data.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    base64::engine::general_purpose::STANDARD
        .decode(compact.as_bytes())
        .or_else(|_| {
            base64::engine::general_purpose::STANDARD_NO_PAD.decode(compact.trim_end_matches('='))
        })
        .ok()
}

fn undecodable(kind: &str, mime_type: &str) -> ContentPart {
    ContentPart::text(format!(
        "[{kind}: {mime_type}, its data is not valid base64]"
    ))
}

/// The `outputSchema` of an agent tool: its output schema when it is an object schema.
pub(crate) fn output_schema(schema: Option<&Value>) -> Option<serde_json::Map<String, Value>> {
    match schema? {
        Value::Object(map) if map.get("type").and_then(Value::as_str) == Some("object") => {
            Some(map.clone())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{AudioContent, ImageContent, TextContent};
    use serde_json::json;

    fn text(t: &str) -> ContentBlock {
        ContentBlock::Text(TextContent::new(t))
    }

    #[test]
    fn text_blocks_stay_in_order() {
        let result = from_mcp(&CallToolResult::success(vec![text("one"), text("two")]));
        assert_eq!(result.text, "one\ntwo");
        assert_eq!(
            result.parts,
            vec![ContentPart::text("one"), ContentPart::text("two")]
        );
        assert_eq!(
            from_mcp(&CallToolResult::success(vec![text("only")])),
            ToolResult::ok("only")
        );
    }

    #[test]
    fn is_error_makes_an_error_result() {
        let result = from_mcp(&CallToolResult::error(vec![text("no such file")]));
        assert_eq!(
            (result.text.as_str(), result.is_error),
            ("no such file", true)
        );
    }

    #[test]
    fn structured_content_is_kept_and_its_text_not_repeated() {
        let mut result = CallToolResult::success(vec![]);
        result.structured_content = Some(json!({"temperature": 21.5, "unit": "C"}));
        let converted = from_mcp(&result);
        assert_eq!(converted.text, r#"{"temperature":21.5,"unit":"C"}"#);
        assert_eq!(converted.structured, result.structured_content);

        // The same value repeated as text is not sent twice ...
        let mut repeated = CallToolResult::success(vec![text("{\"a\": 1}")]);
        repeated.structured_content = Some(json!({"a": 1}));
        assert_eq!(from_mcp(&repeated).text, "{\"a\": 1}");

        // ... nor is a plain value some SDKs wrap as {"result": value} ...
        let mut wrapped = CallToolResult::success(vec![text("5")]);
        wrapped.structured_content = Some(json!({"result": 5}));
        assert_eq!(from_mcp(&wrapped).text, "5");

        // ... a different text is kept before the JSON.
        let mut both = CallToolResult::success(vec![text("Result:")]);
        both.structured_content = Some(json!([1, 2]));
        assert_eq!(from_mcp(&both).text, "Result:\n[1,2]");
    }

    #[test]
    fn images_audio_and_resources_become_parts() {
        let image = ContentBlock::Image(ImageContent::new("aGVsbG8=", "image/png"));
        let audio = ContentBlock::Audio(AudioContent::new("AAEC", "audio/wav"));
        let resource = ContentBlock::embedded_text("test://notes", "remember");
        let link = ContentBlock::resource_link(McpResource::new("file:///a.txt", "a.txt"));
        let result = from_mcp(&CallToolResult::success(vec![
            text("Here:"),
            image,
            audio,
            resource,
            link,
        ]));
        assert_eq!(
            result.parts,
            vec![
                ContentPart::text("Here:"),
                ContentPart::image("image/png", b"hello".to_vec()),
                ContentPart::audio("audio/wav", vec![0, 1, 2]),
                ContentPart::text_resource("test://notes", Some("text/plain"), "remember"),
                ContentPart::resource_link("file:///a.txt", "a.txt"),
            ]
        );
        assert_eq!(
            result.text,
            "Here:\n[image: image/png, 5 bytes]\n[audio: audio/wav, 3 bytes]\n\
             [resource: test://notes (text/plain)]\nremember\n[resource link: a.txt, file:///a.txt]"
        );
        let broken = ContentBlock::Image(ImageContent::new("%%%", "image/png"));
        assert_eq!(
            from_mcp(&CallToolResult::success(vec![broken])).text,
            "[image: image/png, its data is not valid base64]"
        );
    }

    #[test]
    fn results_go_back_to_mcp_with_every_part_and_the_structured_value() {
        let result = ToolResult::from_parts([
            ContentPart::text("Chart:"),
            ContentPart::image("image/png", b"hello".to_vec()),
        ])
        .with_structured(json!({"max": 3}));
        let call = to_mcp(&result, None);
        assert_eq!(call.structured_content, Some(json!({"max": 3})));
        let wire = serde_json::to_value(&call).unwrap();
        assert_eq!(
            wire["content"],
            json!([
                {"type": "text", "text": "Chart:"},
                {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
                {"type": "text", "text": "{\"max\":3}"}
            ])
        );
        // Back through the client, nothing is lost.
        let back = from_mcp(&call);
        assert_eq!(back.structured, Some(json!({"max": 3})));
        assert_eq!(
            back.parts[1],
            ContentPart::image("image/png", b"hello".to_vec())
        );

        let plain = to_mcp(
            &ToolResult::structured(json!({"a": 1})),
            Some("note".into()),
        );
        let wire = serde_json::to_value(&plain).unwrap();
        assert_eq!(
            wire["content"],
            json!([{"type": "text", "text": "{\"a\":1}"}, {"type": "text", "text": "note"}])
        );
        assert_eq!(wire["structuredContent"], json!({"a": 1}));
        // A structured value that is not an object is text only.
        let list = to_mcp(&ToolResult::structured(json!([1])), None);
        assert_eq!(list.structured_content, None);
    }

    #[test]
    fn empty_results_are_empty_text() {
        let result = from_mcp(&CallToolResult::success(vec![]));
        assert_eq!(result, ToolResult::ok(""));
    }
}
