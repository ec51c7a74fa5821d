//! Result validation (docs/design.md, "Result validation"): after a tool answers, check
//! that the answer is consistent and matches the output schema before anyone relies on it.
//! An answer that fails is `invalid_output`: not retried, but counted by the breaker (a
//! tool returning garbage is unhealthy). Also warns about results that are null or slow.

use serde_json::Value;

use crate::error::{ErrorKind, ToolError};
use crate::schema::Schema;

/// Check a successful answer. The consistency rules apply to data shaped
/// like a result envelope, with both a boolean `success` and an `error` field:
/// `success: true` with an error is inconsistent; `success: false` is the tool
/// reporting a failure (`failed` with its error text), and `success: false` with an
/// empty error is inconsistent. Data with only one of the two fields (an `echo` of
/// `{"success": false}`) is left alone.
pub fn check_output(data: Value, schema: Option<&Schema>) -> Result<Value, ToolError> {
    if let Some(obj) = data.as_object().filter(|o| o.contains_key("error")) {
        let error_text = obj.get("error").filter(|e| !is_empty(e)).map(|e| match e {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
        match (obj.get("success"), error_text) {
            (Some(Value::Bool(true)), Some(err)) => {
                return Err(inconsistent(format!(
                    "data says success: true but carries an error: {err}"
                )));
            }
            (Some(Value::Bool(false)), Some(err)) => return Err(ToolError::failed(err)),
            (Some(Value::Bool(false)), None) => {
                return Err(inconsistent(
                    "data says success: false but gives no error message".into(),
                ));
            }
            _ => {}
        }
    }
    if let Some(schema) = schema {
        schema.check(&data, ErrorKind::InvalidOutput, "result")?;
    }
    Ok(data)
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        _ => false,
    }
}

fn inconsistent(message: String) -> ToolError {
    ToolError::new(ErrorKind::InvalidOutput, message).with_code("inconsistent_result")
}

/// Warnings about a success that is valid but suspicious: null data, or slower than
/// `slow_warn_ms` (0 = never).
pub fn warnings(data: &Value, duration_ms: u64, slow_warn_ms: u64) -> Vec<String> {
    let mut out = Vec::new();
    if data.is_null() {
        out.push("tool succeeded but returned null data".to_string());
    }
    if slow_warn_ms > 0 && duration_ms > slow_warn_ms {
        out.push(format!(
            "slow call: {duration_ms} ms (warning threshold {slow_warn_ms} ms)"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn success_true_with_an_error_is_inconsistent() {
        let e = check_output(json!({"success": true, "error": "boom"}), None).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidOutput);
    }

    #[test]
    fn success_false_with_an_error_is_a_domain_failure() {
        let e = check_output(json!({"success": false, "error": "no such user"}), None).unwrap_err();
        assert_eq!(
            (e.kind, e.message.as_str()),
            (ErrorKind::Failed, "no such user")
        );
    }

    #[test]
    fn success_false_without_an_error_is_inconsistent() {
        let e = check_output(json!({"success": false, "error": null}), None).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidOutput);
    }

    #[test]
    fn data_without_an_error_field_is_not_an_envelope() {
        assert!(check_output(json!({"success": false}), None).is_ok());
        assert!(check_output(json!({"success": true, "value": 1}), None).is_ok());
    }

    #[test]
    fn data_against_the_output_schema() {
        let schema = Schema::compile(&json!({"type": "object", "required": ["sum"]})).unwrap();
        assert!(check_output(json!({"sum": 1}), Some(&schema)).is_ok());
        let e = check_output(json!({"total": 1}), Some(&schema)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidOutput);
    }

    #[test]
    fn null_and_slow_results_warn() {
        assert_eq!(warnings(&json!(null), 10, 5_000).len(), 1);
        assert_eq!(warnings(&json!(1), 6_000, 5_000).len(), 1);
        assert!(warnings(&json!(1), 6_000, 0).is_empty());
    }
}
