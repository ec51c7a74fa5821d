//! JSON Schema checks for arguments and results, with errors that name the JSON
//! pointer of the offending field — the first thing a user needs to fix a call.

use serde_json::Value;

use crate::error::{ErrorKind, ToolError};

/// A compiled JSON Schema. Compiled once at registration; checking is the hot path,
/// so the common case (valid) costs one `is_valid` walk and no allocation.
pub struct Schema {
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for Schema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Schema")
    }
}

/// A schema that does not compile, and what is wrong with it (the JSON
/// Schema validator's own error, as its source).
#[derive(Debug, thiserror::Error)]
#[error("{source}")]
pub struct SchemaError {
    #[source]
    source: Box<jsonschema::ValidationError<'static>>,
}

impl Schema {
    /// Compile a schema; the error says what is wrong with it.
    pub fn compile(schema: &Value) -> Result<Schema, SchemaError> {
        jsonschema::validator_for(schema)
            .map(|validator| Schema { validator })
            .map_err(|e| SchemaError {
                source: Box::new(e),
            })
    }

    /// Check `instance`. On failure the error has `kind`, names every bad field by its
    /// JSON pointer in the message (`/user/age: -1 is less than the minimum of 0`)
    /// and carries the first one as its [`ToolError::pointer`] (`""` for the whole
    /// value).
    pub fn check(&self, instance: &Value, kind: ErrorKind, what: &str) -> Result<(), ToolError> {
        if self.validator.is_valid(instance) {
            return Ok(());
        }
        let mut first = None;
        let problems: Vec<String> = self
            .validator
            .iter_errors(instance)
            .take(5)
            .map(|e| {
                let pointer = e.instance_path().as_str();
                first.get_or_insert_with(|| pointer.to_string());
                let pointer = if pointer.is_empty() { "/" } else { pointer };
                // jsonschema's messages quote the bad value; under a field named
                // like a secret that value may be one, so only the rule is named.
                if pointer.split('/').any(crate::redact::is_secret_field) {
                    let schema_path = e.schema_path().as_str().to_string();
                    let keyword = schema_path.rsplit('/').next().unwrap_or("schema");
                    format!("{pointer}: fails the schema's {keyword:?} rule (the value is not shown: the field holds a secret)")
                } else {
                    format!("{pointer}: {e}")
                }
            })
            .collect();
        let error = ToolError::new(kind, format!("{what} invalid at {}", problems.join("; ")));
        Err(match first {
            Some(pointer) => error.at(pointer),
            None => error,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn errors_under_secret_fields_do_not_quote_the_value() {
        let schema = Schema::compile(&json!({
            "type": "object",
            "properties": {"headers": {"type": "object", "properties": {"Authorization": {"type": "integer"}}}},
        }))
        .unwrap();
        let e = schema
            .check(
                &json!({"headers": {"Authorization": "Bearer sk-live-123"}}),
                ErrorKind::InvalidArguments,
                "arguments",
            )
            .unwrap_err();
        assert!(!e.message.contains("sk-live"), "{}", e.message);
        assert!(
            e.message.contains("/headers/Authorization") && e.message.contains("\"type\""),
            "{}",
            e.message
        );
    }

    #[test]
    fn error_names_the_json_pointer_of_the_bad_field() {
        let schema = Schema::compile(&json!({
            "type": "object",
            "properties": {"user": {"type": "object", "properties": {"age": {"type": "integer", "minimum": 0}}}},
        }))
        .unwrap();
        assert!(
            schema
                .check(
                    &json!({"user": {"age": 3}}),
                    ErrorKind::InvalidArguments,
                    "arguments"
                )
                .is_ok()
        );
        let err = schema
            .check(
                &json!({"user": {"age": -1}}),
                ErrorKind::InvalidArguments,
                "arguments",
            )
            .unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidArguments);
        assert!(err.message.contains("/user/age"), "{}", err.message);
        assert_eq!(err.pointer.as_deref(), Some("/user/age"));
    }

    #[test]
    fn a_bad_schema_is_reported_not_panicked_on() {
        assert!(Schema::compile(&json!({"type": 12})).is_err());
    }
}
