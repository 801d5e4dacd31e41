//! A tool that returns an image, and one that returns a structured value.
//!
//! `plot` draws a bar chart and returns it as an `Image` (a PNG made in code below, so the
//! example needs no file): the model gets it as an image part of the tool result, which each
//! provider sends as its API defines (an `image` block in Anthropic's `tool_result`, an
//! `input_image` in a Responses `function_call_output`, a user message with an `image_url`
//! after the tool messages on Chat Completions). `stats` returns a `Serialize + JsonSchema`
//! struct: its schema becomes the function's output schema (an MCP server advertises it as
//! `outputSchema`) and the value travels as the structured result besides its JSON text.
//!
//! A scripted model plays the conversation, so it runs offline; it prints the request the
//! model got after the calls, with the image in it:
//!
//! ```text
//! cargo run -p hpd-agent-examples --example vision_tool
//! ```

use hpd_agent::prelude::*;
use hpd_agent::{
    AgentBuilder, ChatMessage, ChatResponse, ScriptedChatClient, ToolCall, tool::Image,
};
use serde::Serialize;

/// Chart tools.
#[derive(Default)]
pub struct Charts;

/// Summary figures of a series.
#[derive(Serialize, schemars::JsonSchema)]
pub struct Stats {
    /// The smallest value.
    min: u32,
    /// The largest value.
    max: u32,
    /// How many values there are.
    count: usize,
}

#[tool_harness]
impl Charts {
    /// Draws a bar chart of the values.
    #[ai_function]
    fn plot(&self, #[ai_description("The bar heights, 0 to 10.")] values: Vec<u32>) -> Image {
        Image::png(bar_chart(&values))
    }

    /// Summary figures of the values.
    #[ai_function]
    fn stats(&self, values: Vec<u32>) -> Stats {
        Stats {
            min: values.iter().copied().min().unwrap_or(0),
            max: values.iter().copied().max().unwrap_or(0),
            count: values.len(),
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let model = ScriptedChatClient::with_replies([
        ChatResponse::tool_calls(vec![
            ToolCall::new("call_1", "plot", r#"{"values": [3, 7, 5]}"#),
            ToolCall::new("call_2", "stats", r#"{"values": [3, 7, 5]}"#),
        ]),
        ChatResponse::text("The middle bar is the tallest: 7."),
    ]);
    let agent = AgentBuilder::new()
        .with_tool_harness::<Charts>()
        .with_chat_client(model.clone())
        .build()?;

    let stats = &agent.tool_session().visible_tools()[1];
    println!(
        "output schema of stats: {}",
        serde_json::to_string(
            stats
                .output_schema
                .as_deref()
                .unwrap_or(&serde_json::Value::Null)
        )?
    );

    let output = agent.run("Plot 3, 7, 5 and tell me the largest.").await?;
    println!("answer: {}", output.text);

    // The second request carries both results: the chart as an image part, the figures as
    // their JSON text and structured value.
    let requests = model.requests();
    let second = &requests[1];
    for message in &second.messages {
        if let ChatMessage::Tool {
            call_id,
            content,
            parts,
            ..
        } = message
        {
            println!("tool result {call_id}: {content}");
            for part in parts {
                println!("  part: {}", serde_json::to_string(part)?);
            }
        }
    }
    Ok(())
}

/// A 30×10 PNG: one 10-pixel-wide bar per value (height 0 to 10), blue on white.
fn bar_chart(values: &[u32]) -> Vec<u8> {
    let width = u32::try_from(values.len() * 10).unwrap_or(u32::MAX).max(1);
    png(width, 10, |x, y| {
        let height = values.get((x / 10) as usize).copied().unwrap_or(0).min(10);
        if 10 - y <= height && x % 10 != 9 {
            [40, 90, 200]
        } else {
            [255, 255, 255]
        }
    })
}

/// An 8-bit RGB PNG of `width` × `height` pixels, each `rgb(x, y)`, with uncompressed deflate
/// blocks: enough for a small chart without an image crate.
fn png(width: u32, height: u32, rgb: impl Fn(u32, u32) -> [u8; 3]) -> Vec<u8> {
    fn crc32(data: &[u8]) -> u32 {
        let mut crc = 0xFFFF_FFFF_u32;
        for &byte in data {
            crc ^= u32::from(byte);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        out.extend_from_slice(&u32::try_from(data.len()).unwrap_or(u32::MAX).to_be_bytes());
        let start = out.len();
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        let crc = crc32(&out[start..]);
        out.extend_from_slice(&crc.to_be_bytes());
    }
    let mut raw = Vec::new();
    for y in 0..height {
        raw.push(0);
        for x in 0..width {
            raw.extend_from_slice(&rgb(x, y));
        }
    }
    let mut zlib = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = raw.chunks(65_535).collect();
    for (i, block) in blocks.iter().enumerate() {
        zlib.push(u8::from(i + 1 == blocks.len()));
        let len = u16::try_from(block.len()).unwrap_or(u16::MAX);
        zlib.extend_from_slice(&len.to_le_bytes());
        zlib.extend_from_slice(&(!len).to_le_bytes());
        zlib.extend_from_slice(block);
    }
    let (mut a, mut b) = (1_u32, 0_u32);
    for &byte in &raw {
        a = (a + u32::from(byte)) % 65_521;
        b = (b + a) % 65_521;
    }
    zlib.extend_from_slice(&((b << 16) | a).to_be_bytes());
    let mut header = Vec::new();
    header.extend_from_slice(&width.to_be_bytes());
    header.extend_from_slice(&height.to_be_bytes());
    header.extend_from_slice(&[8, 2, 0, 0, 0]);
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut out, b"IHDR", &header);
    chunk(&mut out, b"IDAT", &zlib);
    chunk(&mut out, b"IEND", &[]);
    out
}
