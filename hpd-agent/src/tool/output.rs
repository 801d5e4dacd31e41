//! The result text of a value a function returned: a JSON string without its quotes, `null` as
//! the empty string, anything else as compact JSON.
//!
//! Scalars (the common case: numbers, strings, booleans, unit, `None`) are written directly.
//! Everything else goes through a [`serde_json::Value`], as it always has: the value's maps
//! then come out in the `Value`'s key order, which is part of what the model sees.

use serde::Serialize;
use serde::ser::{self, Impossible};
use serde_json::Value;

/// The result text of `value`.
///
/// # Errors
///
/// The value does not serialize.
pub(crate) fn result_text<T: Serialize + ?Sized>(value: &T) -> Result<String, String> {
    match value.serialize(Scalar) {
        Ok(text) => Ok(text),
        // Not a scalar, or its `Serialize` failed: the general way gives the text (or the
        // error) it always gave.
        Err(NotScalar) => through_value(value),
    }
}

/// The result of a `Serialize + JsonSchema` value: its result text, and the value as the
/// structured result when it serializes to a JSON object (the text is then its compact JSON).
///
/// # Errors
///
/// The value does not serialize.
pub(crate) fn structured_output<T: Serialize + ?Sized>(
    value: &T,
) -> Result<crate::ToolResult, String> {
    if let Ok(text) = value.serialize(Scalar) {
        return Ok(crate::ToolResult::ok(text));
    }
    match serde_json::to_value(value) {
        Ok(object @ Value::Object(_)) => Ok(crate::ToolResult::structured(object)),
        Ok(Value::String(s)) => Ok(crate::ToolResult::ok(s)),
        Ok(Value::Null) => Ok(crate::ToolResult::ok(String::new())),
        Ok(other) => serde_json::to_string(&other)
            .map(crate::ToolResult::ok)
            .map_err(|e| format!("the function result could not be serialized: {e}")),
        Err(e) => Err(format!("the function result could not be serialized: {e}")),
    }
}

/// The JSON schema of `T` when it describes an object: inlined like parameter schemas (no
/// `$schema`, `title` or `$defs`), for MCP's `outputSchema`.
pub(crate) fn object_schema<T: schemars::JsonSchema>() -> Option<Value> {
    let schema = crate::__private::parameters_schema_of::<T>();
    (schema.get("type").and_then(Value::as_str) == Some("object")).then_some(schema)
}

fn through_value<T: Serialize + ?Sized>(value: &T) -> Result<String, String> {
    match serde_json::to_value(value) {
        Ok(Value::String(s)) => Ok(s),
        Ok(Value::Null) => Ok(String::new()),
        // The same text as `Value`'s `Display`, without the formatter in between.
        Ok(other) => serde_json::to_string(&other)
            .map_err(|e| format!("the function result could not be serialized: {e}")),
        Err(e) => Err(format!("the function result could not be serialized: {e}")),
    }
}

/// The value is not a scalar written here (or its `Serialize` reported an error).
#[derive(Debug)]
struct NotScalar;

impl std::fmt::Display for NotScalar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not a scalar")
    }
}

impl std::error::Error for NotScalar {}

impl ser::Error for NotScalar {
    fn custom<M: std::fmt::Display>(_: M) -> Self {
        NotScalar
    }
}

/// Writes a scalar the way `serde_json::to_value` followed by the result rules would.
struct Scalar;

fn json<T: Serialize>(value: T) -> Result<String, NotScalar> {
    serde_json::to_string(&value).map_err(|_| NotScalar)
}

impl ser::Serializer for Scalar {
    type Ok = String;
    type Error = NotScalar;
    type SerializeSeq = Impossible<String, NotScalar>;
    type SerializeTuple = Impossible<String, NotScalar>;
    type SerializeTupleStruct = Impossible<String, NotScalar>;
    type SerializeTupleVariant = Impossible<String, NotScalar>;
    type SerializeMap = Impossible<String, NotScalar>;
    type SerializeStruct = Impossible<String, NotScalar>;
    type SerializeStructVariant = Impossible<String, NotScalar>;

    fn serialize_bool(self, v: bool) -> Result<String, NotScalar> {
        Ok(if v { "true" } else { "false" }.to_owned())
    }

    fn serialize_i8(self, v: i8) -> Result<String, NotScalar> {
        json(v)
    }

    fn serialize_i16(self, v: i16) -> Result<String, NotScalar> {
        json(v)
    }

    fn serialize_i32(self, v: i32) -> Result<String, NotScalar> {
        json(v)
    }

    fn serialize_i64(self, v: i64) -> Result<String, NotScalar> {
        json(v)
    }

    fn serialize_u8(self, v: u8) -> Result<String, NotScalar> {
        json(v)
    }

    fn serialize_u16(self, v: u16) -> Result<String, NotScalar> {
        json(v)
    }

    fn serialize_u32(self, v: u32) -> Result<String, NotScalar> {
        json(v)
    }

    fn serialize_u64(self, v: u64) -> Result<String, NotScalar> {
        json(v)
    }

    // 128-bit integers outside the 64-bit range do not fit a `Value`; the general way says so.
    fn serialize_i128(self, _: i128) -> Result<String, NotScalar> {
        Err(NotScalar)
    }

    fn serialize_u128(self, _: u128) -> Result<String, NotScalar> {
        Err(NotScalar)
    }

    // A `Value` holds an `f32` as an `f64`, which prints differently; the general way keeps that.
    fn serialize_f32(self, _: f32) -> Result<String, NotScalar> {
        Err(NotScalar)
    }

    fn serialize_f64(self, v: f64) -> Result<String, NotScalar> {
        // A `Value` turns a non-finite number into `null`, which is the empty text.
        if v.is_finite() {
            json(v)
        } else {
            Ok(String::new())
        }
    }

    fn serialize_char(self, v: char) -> Result<String, NotScalar> {
        Ok(v.to_string())
    }

    fn serialize_str(self, v: &str) -> Result<String, NotScalar> {
        Ok(v.to_owned())
    }

    fn serialize_bytes(self, _: &[u8]) -> Result<String, NotScalar> {
        Err(NotScalar)
    }

    fn serialize_none(self) -> Result<String, NotScalar> {
        Ok(String::new())
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<String, NotScalar> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<String, NotScalar> {
        Ok(String::new())
    }

    fn serialize_unit_struct(self, _: &'static str) -> Result<String, NotScalar> {
        Ok(String::new())
    }

    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<String, NotScalar> {
        Ok(variant.to_owned())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<String, NotScalar> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<String, NotScalar> {
        Err(NotScalar)
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, NotScalar> {
        Err(NotScalar)
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, NotScalar> {
        Err(NotScalar)
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, NotScalar> {
        Err(NotScalar)
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, NotScalar> {
        Err(NotScalar)
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, NotScalar> {
        Err(NotScalar)
    }

    fn serialize_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, NotScalar> {
        Err(NotScalar)
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, NotScalar> {
        Err(NotScalar)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// What the result text always was: `to_value`, then the string / null / JSON rules.
    fn reference<T: Serialize>(value: &T) -> Result<String, String> {
        match serde_json::to_value(value) {
            Ok(Value::String(s)) => Ok(s),
            Ok(Value::Null) => Ok(String::new()),
            Ok(other) => Ok(other.to_string()),
            Err(e) => Err(format!("the function result could not be serialized: {e}")),
        }
    }

    fn same<T: Serialize>(value: T) {
        assert_eq!(result_text(&value), reference(&value));
    }

    #[derive(Serialize)]
    struct Person {
        name: &'static str,
        age: u8,
    }

    #[derive(Serialize)]
    struct Wrapper(i64);

    #[derive(Serialize)]
    struct Empty;

    #[derive(Serialize)]
    enum Shape {
        Dot,
        Circle(f64),
        Rect { w: u32, h: u32 },
    }

    struct Failing;

    impl Serialize for Failing {
        fn serialize<S: ser::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            Err(ser::Error::custom("no way"))
        }
    }

    #[test]
    fn scalars_read_as_they_always_did() {
        same(5_i64);
        same(-7_i8);
        same(u64::MAX);
        same(i64::MIN);
        same(true);
        same(false);
        same(0.1_f64);
        same(1e300_f64);
        same(-0.0_f64);
        same(f64::NAN);
        same(f64::INFINITY);
        same(0.1_f32);
        same(f32::NAN);
        same(7_i128);
        same(u128::MAX);
        same('x');
        same("sunny");
        same(String::from("with \"quotes\" and\nnewline"));
        same(());
        same(None::<i64>);
        same(Some(3_u8));
        same(Some("text"));
        same(Wrapper(4));
        same(Empty);
        same(Shape::Dot);
        assert_eq!(result_text(&"sunny").as_deref(), Ok("sunny"));
        assert_eq!(result_text(&()).as_deref(), Ok(""));
        assert_eq!(result_text(&5_i64).as_deref(), Ok("5"));
    }

    #[test]
    fn compound_values_read_as_they_always_did() {
        same(Person {
            name: "Ada",
            age: 36,
        });
        same(vec![1, 2, 3]);
        same((1, "two"));
        same(Shape::Circle(1.5));
        same(Shape::Rect { w: 2, h: 3 });
        same(BTreeMap::from([(2, "b"), (1, "a")]));
        same(serde_json::json!({"z": 1, "a": [null, 2.5]}));
        same(vec![0.1_f32]);
        same(b"bytes".to_vec());
    }

    #[test]
    fn failing_values_give_the_same_error() {
        same(Failing);
        same(Some(Failing));
        same(vec![Failing]);
        same(BTreeMap::from([(vec![1], 2)]));
        assert!(
            result_text(&Failing)
                .unwrap_err()
                .starts_with("the function result could not be serialized: ")
        );
    }
}
