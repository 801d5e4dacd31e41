//! How an MCP `tools/call` result becomes the text the model reads.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::Value;

/// The text of a call result and whether it reports an error.
///
/// Text blocks are joined with newlines. `structuredContent` is sent as compact JSON after
/// them, unless the text already carries the same value: servers are asked to repeat it as
/// text, and several wrap a plain value in a one-field object (`{"result": value}`,
/// `{"content": text}`), which counts as the same. Images, audio, resource links and embedded
/// resources become a short placeholder in square brackets. `isError: true` makes an error
/// result.
pub(crate) fn result_text(result: &CallToolResult) -> (String, bool) {
    let mut parts: Vec<String> = result.content.iter().map(block_text).collect();
    if let Some(structured) = &result.structured_content {
        let texts: Vec<&str> = result
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect();
        let joined = texts.join("\n");
        let repeated = texts
            .iter()
            .copied()
            .chain(std::iter::once(joined.as_str()))
            .any(|text| repeats(text, structured));
        if !repeated {
            parts.push(structured.to_string());
        }
    }
    (parts.join("\n"), result.is_error == Some(true))
}

/// Whether `text` already says what `structured` says: it is that JSON value, or `structured`
/// is a one-field object whose value is the text (as a string or as the JSON it parses to).
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

fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => {
            format!(
                "[image: {}, {} bytes]",
                image.mime_type,
                decoded_len(&image.data)
            )
        }
        ContentBlock::Audio(audio) => {
            format!(
                "[audio: {}, {} bytes]",
                audio.mime_type,
                decoded_len(&audio.data)
            )
        }
        ContentBlock::ResourceLink(link) => match &link.mime_type {
            Some(mime) => format!("[resource link: {} ({mime})]", link.uri),
            None => format!("[resource link: {}]", link.uri),
        },
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                format!(
                    "[embedded resource: {uri}, {} characters of text]",
                    text.chars().count()
                )
            }
            ResourceContents::BlobResourceContents { uri, blob, .. } => {
                format!("[embedded resource: {uri}, {} bytes]", decoded_len(blob))
            }
            _ => "[embedded resource]".to_owned(),
        },
        _ => "[content of a kind this client does not know]".to_owned(),
    }
}

/// The decoded size of base64 `data` (padding excluded), without decoding it.
fn decoded_len(data: &str) -> usize {
    let trimmed = data.trim_end_matches('=');
    trimmed.len() * 3 / 4
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ImageContent, TextContent};
    use serde_json::json;

    fn text(t: &str) -> ContentBlock {
        ContentBlock::Text(TextContent::new(t))
    }

    #[test]
    fn text_blocks_are_joined() {
        let result = CallToolResult::success(vec![text("one"), text("two")]);
        assert_eq!(result_text(&result), ("one\ntwo".to_owned(), false));
    }

    #[test]
    fn is_error_makes_an_error_result() {
        let result = CallToolResult::error(vec![text("no such file")]);
        assert_eq!(result_text(&result), ("no such file".to_owned(), true));
    }

    #[test]
    fn structured_content_is_sent_as_json() {
        let mut result = CallToolResult::success(vec![]);
        result.structured_content = Some(json!({"temperature": 21.5, "unit": "C"}));
        assert_eq!(result_text(&result).0, r#"{"temperature":21.5,"unit":"C"}"#);

        // The same value repeated as text is not sent twice ...
        let mut repeated = CallToolResult::success(vec![text("{\"a\": 1}")]);
        repeated.structured_content = Some(json!({"a": 1}));
        assert_eq!(result_text(&repeated).0, "{\"a\": 1}");

        // ... nor is a plain value some SDKs wrap as {"result": value} ...
        let mut wrapped = CallToolResult::success(vec![text("5")]);
        wrapped.structured_content = Some(json!({"result": 5}));
        assert_eq!(result_text(&wrapped).0, "5");

        // ... nor is a text some SDKs wrap as {"content": text} ...
        let mut text_wrapped = CallToolResult::success(vec![text("Hello, Ada!")]);
        text_wrapped.structured_content = Some(json!({"result": "Hello, Ada!"}));
        assert_eq!(result_text(&text_wrapped).0, "Hello, Ada!");

        // ... a different text is kept before the JSON.
        let mut both = CallToolResult::success(vec![text("Result:")]);
        both.structured_content = Some(json!([1, 2]));
        assert_eq!(result_text(&both).0, "Result:\n[1,2]");
    }

    #[test]
    fn other_content_becomes_a_placeholder() {
        let image = ContentBlock::Image(ImageContent::new("aGVsbG8=", "image/png"));
        let result = CallToolResult::success(vec![text("Here:"), image]);
        assert_eq!(result_text(&result).0, "Here:\n[image: image/png, 5 bytes]");
    }

    #[test]
    fn empty_results_are_empty_text() {
        let result = CallToolResult::success(vec![]);
        assert_eq!(result_text(&result), (String::new(), false));
    }
}
