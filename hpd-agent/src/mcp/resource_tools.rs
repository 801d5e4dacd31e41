//! A server's resources as two functions of its [`McpHarness`](super::McpHarness) the model can
//! call, `list_resources` and `read_resource`, and the requests behind them that
//! [`McpClient`](super::McpClient) shares.

use std::sync::{Arc, Weak};

use base64::Engine as _;
use rmcp::model::{ReadResourceRequestParams, ReadResourceResult, ResourceContents as McpContents};
use serde_json::{Value, json};

use super::source::Source;
use super::{McpError, ResourceInfo, ResourceTemplateInfo};
use crate::chat::ContentPart;
use crate::{Tool, ToolResult};

/// The function that lists a server's resources and URI templates, named
/// `{server}_list_resources` in the harness (the allowlist of `with_functions` names it
/// `list_resources`).
pub(crate) const LIST_RESOURCES: &str = "list_resources";
/// The function that reads one resource, named `{server}_read_resource` in the harness.
pub(crate) const READ_RESOURCE: &str = "read_resource";

/// The JSON-RPC code of a method the server does not have.
const METHOD_NOT_FOUND: i32 = -32601;

/// `resources/list`, all pages.
pub(crate) async fn list_resources(source: &Source) -> Result<Vec<ResourceInfo>, McpError> {
    let connection = source.connection("resources/list")?;
    let resources = connection
        .request("resources/list", source.timeout(), |peer| async move {
            peer.list_all_resources().await
        })
        .await?;
    Ok(resources.iter().map(ResourceInfo::from_mcp).collect())
}

/// `resources/templates/list`, all pages. A server that declares resources but has no
/// templates method has no templates.
pub(crate) async fn list_templates(source: &Source) -> Result<Vec<ResourceTemplateInfo>, McpError> {
    let connection = source.connection("resources/templates/list")?;
    let templates = match connection
        .request(
            "resources/templates/list",
            source.timeout(),
            |peer| async move { peer.list_all_resource_templates().await },
        )
        .await
    {
        Ok(templates) => templates,
        Err(McpError::Request {
            code: Some(METHOD_NOT_FOUND),
            ..
        }) => Vec::new(),
        Err(error) => return Err(error),
    };
    Ok(templates
        .iter()
        .map(ResourceTemplateInfo::from_mcp)
        .collect())
}

/// `resources/read` of `uri`, as content parts.
pub(crate) async fn read(source: &Source, uri: &str) -> Result<Vec<ContentPart>, McpError> {
    let connection = source.connection("resources/read")?;
    let result = connection
        .request("resources/read", source.timeout(), |peer| {
            let params = ReadResourceRequestParams::new(uri);
            async move { peer.read_resource(params).await }
        })
        .await?;
    Ok(parts_of(&result))
}

/// The contents of a read as content parts: text as a text resource, an image as an image
/// (so a model that sees images sees it), other binary data as a binary resource. Base64 that
/// does not decode becomes a text part saying so.
pub(crate) fn parts_of(result: &ReadResourceResult) -> Vec<ContentPart> {
    result
        .contents
        .iter()
        .map(|contents| match contents {
            McpContents::TextResourceContents {
                uri,
                mime_type,
                text,
                ..
            } => ContentPart::text_resource(uri.clone(), mime_type.as_deref(), text.clone()),
            McpContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => match decode(blob) {
                Some(data) => match mime_type.as_deref() {
                    Some(image) if image.starts_with("image/") => ContentPart::image(image, data),
                    other => ContentPart::blob_resource(uri.clone(), other, data),
                },
                None => {
                    ContentPart::text(format!("[resource: {uri}, its data is not valid base64]"))
                }
            },
            _ => ContentPart::text("[resource contents of a kind this client does not know]"),
        })
        .collect()
}

fn decode(data: &str) -> Option<Vec<u8>> {
    let compact: String = data.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    base64::engine::general_purpose::STANDARD
        .decode(compact.as_bytes())
        .ok()
}

/// The listing as the model reads it.
fn listing_text(
    resources: &[ResourceInfo],
    templates: &[ResourceTemplateInfo],
    read: &str,
) -> String {
    if resources.is_empty() && templates.is_empty() {
        return "The server lists no resources.".to_owned();
    }
    let mut text = String::new();
    if !resources.is_empty() {
        text.push_str(&format!("Resources (read one with {read}):"));
        for resource in resources {
            text.push_str(&format!("\n- {}", resource.uri));
            let mut about = vec![
                resource
                    .title
                    .clone()
                    .unwrap_or_else(|| resource.name.clone()),
            ];
            about.extend(resource.mime_type.clone());
            text.push_str(&format!(" ({})", about.join(", ")));
            if let Some(description) = &resource.description {
                text.push_str(&format!(": {}", description.trim()));
            }
        }
    }
    if !templates.is_empty() {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&format!(
            "URI templates (replace each {{...}} with a value, then {read} the URI):"
        ));
        for template in templates {
            text.push_str(&format!("\n- {}", template.uri_template));
            let mut about = vec![
                template
                    .title
                    .clone()
                    .unwrap_or_else(|| template.name.clone()),
            ];
            about.extend(template.mime_type.clone());
            text.push_str(&format!(" ({})", about.join(", ")));
            if let Some(description) = &template.description {
                text.push_str(&format!(": {}", description.trim()));
            }
        }
    }
    text
}

/// The `list_resources` function (named `name`).
pub(crate) fn list(source: &Arc<Source>, name: String) -> Tool {
    let weak: Weak<Source> = Arc::downgrade(source);
    let server = source.name().to_owned();
    let read_name = super::names::qualified_name(&server, READ_RESOURCE);
    Tool::new(
        name,
        format!(
            "Lists the resources (documents, files, data) of the MCP server '{server}' and its URI templates."
        ),
        json!({"type": "object", "properties": {}}),
        move |_arguments: Value, _ctx| {
            let source = weak.upgrade();
            let read_name = read_name.clone();
            async move {
                let Some(source) = source else {
                    return gone();
                };
                let listed = match list_resources(&source).await {
                    Ok(resources) => list_templates(&source)
                        .await
                        .map(|templates| (resources, templates)),
                    Err(error) => Err(error),
                };
                match listed {
                    Ok((resources, templates)) => {
                        ToolResult::ok(listing_text(&resources, &templates, &read_name))
                    }
                    Err(error) => ToolResult::error(format!("Error: {error}")),
                }
            }
        },
    )
}

/// The `read_resource` function (named `name`).
pub(crate) fn read_tool(source: &Arc<Source>, name: String) -> Tool {
    let weak: Weak<Source> = Arc::downgrade(source);
    let server = source.name().to_owned();
    let max_chars = source.max_result_chars();
    Tool::new(
        name,
        format!("Reads a resource of the MCP server '{server}' by its URI."),
        json!({
            "type": "object",
            "properties": {"uri": {"type": "string", "description": "The resource's URI, as listed"}},
            "required": ["uri"]
        }),
        move |arguments: Value, _ctx| {
            let source = weak.upgrade();
            let uri = arguments
                .get("uri")
                .and_then(Value::as_str)
                .map(str::to_owned);
            async move {
                let Some(source) = source else {
                    return gone();
                };
                let Some(uri) = uri else {
                    return ToolResult::error("Error: give the resource's URI as `uri`");
                };
                match read(&source, &uri).await {
                    Ok(parts) if parts.is_empty() => {
                        ToolResult::error(format!("Error: the resource {uri} has no content"))
                    }
                    Ok(parts) => {
                        let result = ToolResult::from_parts(parts);
                        let length = result.text.chars().count();
                        if length > max_chars {
                            return ToolResult::error(format!(
                                "Error: the resource {uri} has {length} characters, more than the limit of {max_chars}; it was not passed on"
                            ));
                        }
                        result
                    }
                    Err(error) => ToolResult::error(format!("Error: {error}")),
                }
            }
        },
    )
}

fn gone() -> ToolResult {
    ToolResult::error("Error: the MCP server is no longer connected (its harness was dropped)")
}
