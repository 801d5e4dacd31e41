//! Arguments text of a macro-declared function (`#[tool_harness]` + `#[ai_function]`) called
//! through `Function::call`, for parameters of many types: never panics; text that is not a
//! JSON object (other than empty, blank or `null`) or does not fit the parameters gives the
//! invalid-arguments result without running the body; arguments that fit run the body with
//! exactly the values serde reads from them.
//!
//! The first byte picks the function, the rest is the arguments text. The oracle is a mirror of
//! each generated arguments struct (same fields, same serde attributes), deserialized with
//! serde_json as the documented rule reads arguments: straight from the text when that
//! succeeds (for texts that cannot reach serde_json's nesting limit), else
//! from the text read as a JSON value (where the last of duplicate keys wins and numbers are
//! what a `Value` holds). The call must succeed exactly when the mirror does, with the
//! mirror's values.
#![no_main]

use std::collections::BTreeMap;
use std::sync::OnceLock;

use hpd_agent::harness::HarnessInfo;
use hpd_agent::prelude::*;
use hpd_agent::{CancellationToken, tool::Function};
use libfuzzer_sys::fuzz_target;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Unit {
    Celsius,
    Fahrenheit,
}

// The fields are read through `Debug`.
#[allow(dead_code)]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind")]
enum Shape {
    Circle { r: f64 },
    Square { side: u32 },
}

// The fields are read through `Debug`.
#[allow(dead_code)]
#[derive(Debug, Deserialize, JsonSchema)]
struct Point {
    x: i32,
    y: i32,
}

// The fields are read through `Debug`.
#[allow(dead_code)]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
enum Either {
    Number(i64),
    Text(String),
}

#[derive(Default)]
struct Fixture;

#[tool_harness]
impl Fixture {
    /// Integers of several widths.
    #[ai_function]
    fn ints(&self, a: i64, b: u8, c: Option<u32>, d: i128) -> String {
        format!("{:?}", (a, b, c, d))
    }

    /// Floats and booleans.
    #[ai_function]
    fn floats(&self, x: f64, y: f32, flag: bool) -> String {
        format!("{:?}", (x, y, flag))
    }

    /// Text.
    #[ai_function]
    fn text(&self, s: String, c: char, tags: Vec<String>) -> String {
        format!("{:?}", (s, c, tags))
    }

    /// Enums, structs, maps and tuples.
    #[ai_function]
    fn structured(
        &self,
        unit: Unit,
        at: Point,
        shape: Shape,
        scores: BTreeMap<String, i16>,
        pairs: Vec<(u8, bool)>,
        either: Either,
    ) -> String {
        format!("{:?}", (unit, at, shape, scores, pairs, either))
    }

    /// Renamed and defaulted parameters, nested options.
    #[ai_function]
    fn attrs(
        &self,
        #[serde(rename = "kind")] r#type: String,
        #[serde(default)] count: u16,
        nested: Option<Vec<Option<Point>>>,
        raw: Value,
    ) -> String {
        format!("{:?}", (r#type, count, nested, raw))
    }

    /// No parameters.
    #[ai_function]
    fn nothing(&self) -> String {
        "nothing".to_owned()
    }

    /// An async function returning `Result`.
    #[ai_function]
    async fn fallible(&self, n: i32) -> Result<i32, String> {
        n.checked_mul(2).ok_or_else(|| "overflow".to_owned())
    }
}

// Mirrors of the generated arguments structs.
#[derive(Deserialize)]
struct Ints {
    a: i64,
    b: u8,
    c: Option<u32>,
    d: i128,
}
#[derive(Deserialize)]
struct Floats {
    x: f64,
    y: f32,
    flag: bool,
}
#[derive(Deserialize)]
struct Text {
    s: String,
    c: char,
    tags: Vec<String>,
}
#[derive(Deserialize)]
struct Structured {
    unit: Unit,
    at: Point,
    shape: Shape,
    scores: BTreeMap<String, i16>,
    pairs: Vec<(u8, bool)>,
    either: Either,
}
#[derive(Deserialize)]
struct Attrs {
    #[serde(rename = "kind")]
    r#type: String,
    #[serde(default)]
    count: u16,
    nested: Option<Vec<Option<Point>>>,
    raw: Value,
}
#[derive(Deserialize)]
struct Nothing {}
#[derive(Deserialize)]
struct Fallible {
    n: i32,
}

const NAMES: [&str; 7] = [
    "ints",
    "floats",
    "text",
    "structured",
    "attrs",
    "nothing",
    "fallible",
];

/// What the oracle expects: `Ok(text)` or `Err(())` for the invalid-arguments result; a
/// `Result` body's `Err` is `Ok` with the `Error: ` text and the error flag.
fn expected(name: &str, arguments: Input<'_>) -> Result<(String, bool), ()> {
    fn read<T: serde::de::DeserializeOwned>(arguments: Input<'_>) -> Result<T, ()> {
        match arguments {
            Input::Text(text) => serde_json::from_str(text).map_err(drop),
            Input::Value(value) => serde_json::from_value(value).map_err(drop),
        }
    }
    Ok(match name {
        "ints" => {
            let m: Ints = read(arguments)?;
            (format!("{:?}", (m.a, m.b, m.c, m.d)), false)
        }
        "floats" => {
            let m: Floats = read(arguments)?;
            (format!("{:?}", (m.x, m.y, m.flag)), false)
        }
        "text" => {
            let m: Text = read(arguments)?;
            (format!("{:?}", (m.s, m.c, m.tags)), false)
        }
        "structured" => {
            let m: Structured = read(arguments)?;
            let values = (m.unit, m.at, m.shape, m.scores, m.pairs, m.either);
            (format!("{values:?}"), false)
        }
        "attrs" => {
            let m: Attrs = read(arguments)?;
            (format!("{:?}", (m.r#type, m.count, m.nested, m.raw)), false)
        }
        "nothing" => {
            let _: Nothing = read(arguments)?;
            ("nothing".to_owned(), false)
        }
        "fallible" => {
            let m: Fallible = read(arguments)?;
            match m.n.checked_mul(2) {
                Some(n) => (n.to_string(), false),
                None => ("Error: overflow".to_owned(), true),
            }
        }
        other => unreachable!("no function {other}"),
    })
}

/// Where the mirror reads the arguments from.
enum Input<'a> {
    /// The text itself (see [`direct_text`]).
    Text(&'a str),
    /// The text read as a JSON value first.
    Value(Value),
}

/// The text the mirror first tries to read straight into the struct: the text when it starts
/// with `{`, else the trimmed text (`{}` for empty, blank or `null`); only an object, and only
/// when it is short (under 256 bytes) or has fewer than 128 opening brackets, so it cannot
/// reach serde_json's nesting limit.
fn direct_text(text: &str) -> Option<&str> {
    let text = if text.starts_with('{') {
        text
    } else {
        let trimmed = text.trim();
        if trimmed.is_empty() || trimmed == "null" {
            "{}"
        } else {
            trimmed
        }
    };
    let brackets = || text.bytes().filter(|&b| b == b'{' || b == b'[').count();
    (text.starts_with('{') && (text.len() < 256 || brackets() < 128)).then_some(text)
}

/// The arguments as the documented rule reads them: empty, blank or `null` is `{}`; anything
/// else must be a JSON object.
fn arguments_object(text: &str) -> Option<Value> {
    let trimmed = text.trim();
    if trimmed.is_empty() || trimmed == "null" {
        return Some(Value::Object(serde_json::Map::new()));
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(Value::Null) => Some(Value::Object(serde_json::Map::new())),
        Ok(value @ Value::Object(_)) => Some(value),
        _ => None,
    }
}

struct Fixed {
    runtime: tokio::runtime::Runtime,
    functions: Vec<Function>,
}

fn fixed() -> &'static Fixed {
    static FIXED: OnceLock<Fixed> = OnceLock::new();
    FIXED.get_or_init(|| Fixed {
        runtime: tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a runtime"),
        functions: HarnessInfo::of::<Fixture>()
            .functions()
            .expect("the fixture harness instantiates"),
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(arguments) = std::str::from_utf8(rest) else {
        return;
    };
    let fixed = fixed();
    let name = NAMES[usize::from(pick) % NAMES.len()];
    let function = fixed
        .functions
        .iter()
        .find(|f| f.name() == name)
        .expect("the fixture declares every name");
    let result = fixed
        .runtime
        .block_on(function.call("c1", arguments, CancellationToken::new()));
    let invalid = format!("Invalid arguments for '{name}': ");
    let direct = direct_text(arguments).and_then(|text| expected(name, Input::Text(text)).ok());
    let model = match direct {
        Some(read) => Ok(read),
        None => arguments_object(arguments)
            .ok_or(())
            .and_then(|v| expected(name, Input::Value(v))),
    };
    match model {
        Ok((text, is_error)) => {
            assert_eq!(result.text, text, "{name}({arguments})");
            assert_eq!(result.is_error, is_error, "{name}({arguments})");
        }
        Err(()) => {
            assert!(result.is_error, "{name}({arguments}) ran: {result:?}");
            assert!(
                result.text.starts_with(&invalid) && result.text.len() > invalid.len(),
                "{name}({arguments}) gave {result:?}"
            );
        }
    }
});
