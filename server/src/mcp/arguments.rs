//! A tool's arguments, decoded by the tool itself.
//!
//! rmcp decodes a tool's arguments before the tool runs and answers a
//! failure with a bare JSON-RPC error (`-32602`, no `data`), so an agent
//! sending `max_tokens: "100"` got no `code` or `kind`, where every other
//! refusal carries docshelf's error body. [`Arguments`] takes whatever
//! arrives and keeps the decoding's outcome, so the tool answers a failure
//! as it answers every other error: a tool error whose structured content is
//! the body (`invalid_arguments`), which the agent can read and correct.
//! The tool's input schema is still the argument type's own.

use std::borrow::Cow;

use index_core::{ErrorBody, ErrorCode};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};

/// Arguments of type `T`, or why they did not decode as one.
pub struct Arguments<T>(Result<T, String>);

impl<T> Arguments<T> {
    /// The arguments, or the error body that refuses them: the decoder's
    /// words (they name what was expected), cut, since they can quote the
    /// value sent.
    pub fn decoded(self, tool: &str) -> Result<T, ErrorBody> {
        self.0.map_err(|why| {
            ErrorBody::new(
                ErrorCode::InvalidArguments,
                format!(
                    "the arguments of {tool} do not decode: {}",
                    index_core::validate::cut(&why, 300)
                ),
            )
        })
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Arguments<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        Ok(Self(
            serde_json::from_value(value).map_err(|e| e.to_string()),
        ))
    }
}

/// The schema of `T` itself: what agents are told to send is unchanged.
impl<T: JsonSchema> JsonSchema for Arguments<T> {
    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        T::schema_id()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        T::json_schema(generator)
    }

    fn inline_schema() -> bool {
        T::inline_schema()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize, JsonSchema)]
    struct Budget {
        #[allow(dead_code)] // read by the decoder only
        max_tokens: Option<i64>,
    }

    #[test]
    fn arguments_that_do_not_decode_are_refused_with_our_body() {
        let sent = serde_json::json!({ "max_tokens": "100" });
        let args: Arguments<Budget> = serde_json::from_value(sent).expect("anything is taken");
        let body = args
            .decoded("search_docs")
            .expect_err("a string is not a number");
        assert_eq!(body.code, ErrorCode::InvalidArguments);
        assert_eq!(body.kind, index_core::ErrorKind::BadInput);
        assert!(body.error.contains("search_docs"), "{}", body.error);
        let args: Arguments<Budget> =
            serde_json::from_value(serde_json::json!({ "max_tokens": 100 })).expect("taken");
        assert!(args.decoded("search_docs").is_ok());
    }

    #[test]
    fn the_schema_is_the_arguments_own() {
        let ours = serde_json::to_value(schemars::schema_for!(Arguments<Budget>)).expect("json");
        let theirs = serde_json::to_value(schemars::schema_for!(Budget)).expect("json");
        assert_eq!(ours, theirs);
    }
}
