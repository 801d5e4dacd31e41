//! What the stream decoders' tests share: feeding events without a connection, random JSON
//! built from an API's field names and type names, and the check every random stream must
//! pass.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::Value;

use crate::chat::{ChatError, ChatResponse};

use super::http::StreamParser;
use super::sse::{Flow, SseEvent};

/// Feeds `parser` the `data` of one event each, stopping at [`Flow::Done`], and finishes it.
pub(crate) fn feed_data<P: StreamParser>(
    mut parser: P,
    events: &[String],
) -> Result<ChatResponse, ChatError> {
    let sink = |_: &str| {};
    for data in events {
        let event = SseEvent {
            data: data.clone(),
            ..SseEvent::default()
        };
        if parser.feed_event(&event, &sink)? == Flow::Done {
            return parser.finish(true);
        }
    }
    parser.finish(false)
}

/// Random JSON whose object keys are `keys` and whose strings are often one of `types`, so a
/// decoder meets its own field names with values of every kind.
pub(crate) fn json_values(
    keys: &'static [&'static str],
    types: &'static [&'static str],
) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (0u64..4).prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        select(types).prop_map(Value::from),
        "[a-z{}\\[\\]\":,]{0,6}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 40, 5, move |inner| {
        prop_oneof![
            vec(inner.clone(), 0..3).prop_map(Value::Array),
            vec((select(keys), inner), 0..5).prop_map(|fields| {
                Value::Object(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
            }),
        ]
    })
}

/// What any stream of `events` gives `parser` is an error or a response whose tool calls all
/// have an id and a name; and no event, read as a whole body by `parse_body`, panics.
pub(crate) fn check_events<P: StreamParser>(
    parser: P,
    events: &[String],
    parse_body: fn(&str, u16) -> Result<ChatResponse, ChatError>,
) {
    if let Ok(response) = feed_data(parser, events) {
        for call in &response.tool_calls {
            assert!(!call.id.is_empty() && !call.name.is_empty(), "{call:?}");
        }
    }
    for data in events {
        let _ = parse_body(data, 200);
    }
}
