//! Secrets never reach history, logs or metrics (docs/design.md, "Metrics and logs").
//! Fields named like a secret, in arguments and in results' data, and fields a tool marked
//! secret at run time, are replaced by `"***"` before anything is stored.

use serde_json::Value;

/// The replacement text.
pub const REDACTED: &str = "***";

/// Whether a field name looks like it holds a secret (case-insensitive, ignoring
/// `-` and `_`): password, passwd, secret, token, api_key, authorization, cookie,
/// private_key, credential. Allocation-free: it runs on every argument of every call.
pub fn is_secret_field(name: &str) -> bool {
    const NEEDLES: [&[u8]; 9] = [
        b"password",
        b"passwd",
        b"secret",
        b"token",
        b"apikey",
        b"authorization",
        b"cookie",
        b"privatekey",
        b"credential",
    ];
    let mut buf = [0u8; 64];
    let mut len = 0;
    for b in name.bytes().filter(|b| *b != b'_' && *b != b'-') {
        if len == buf.len() {
            // Longer than any sensible field name: compare the first 64 bytes only.
            break;
        }
        buf[len] = b.to_ascii_lowercase();
        len += 1;
    }
    let norm = &buf[..len];
    NEEDLES
        .iter()
        .any(|n| norm.windows(n.len()).any(|w| w == *n))
}

/// A copy of `args` with secret-looking fields (at any depth) and the fields at
/// `pointers` replaced by `"***"`.
pub fn redact(args: &Value, pointers: &[String]) -> Value {
    redact_owned(args.clone(), pointers)
}

/// [`redact`] on a value the caller no longer needs (no copy).
pub fn redact_owned(mut args: Value, pointers: &[String]) -> Value {
    redact_in_place(&mut args);
    for pointer in pointers {
        if let Some(v) = args.pointer_mut(pointer) {
            *v = Value::String(REDACTED.into());
        }
    }
    args
}

/// Replace every occurrence of a known secret value in the strings of `value` by
/// `"***"`, whatever the field is called: what a plan's `${secret.NAME}` put into
/// a call must not come back out of history through an echo or an error message.
/// Values shorter than 4 characters are masked only where a string equals them
/// (masking every `a` in a text would hide the text, not the secret).
pub fn scrub_values(value: &mut Value, secrets: &[String]) {
    if secrets.iter().all(|s| s.is_empty()) {
        return;
    }
    match value {
        Value::String(s) => {
            if let Some(clean) = scrub_text(s, secrets) {
                *s = clean;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| scrub_values(v, secrets)),
        Value::Object(map) => map.values_mut().for_each(|v| scrub_values(v, secrets)),
        _ => {}
    }
}

/// `text` with the secrets in it replaced by `"***"`, or `None` when it holds none.
pub fn scrub_text(text: &str, secrets: &[String]) -> Option<String> {
    let mut out: Option<String> = None;
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        let current = out.as_deref().unwrap_or(text);
        if current == secret {
            out = Some(REDACTED.to_string());
        } else if secret.chars().count() >= 4 && current.contains(secret.as_str()) {
            out = Some(current.replace(secret.as_str(), REDACTED));
        }
    }
    out
}

/// Whether [`redact_owned`] without pointers would change `value`: some field
/// named like a secret holds text, a list or an object. Lets the executor
/// record most results as they are, without a copy.
pub fn needs_redaction(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.iter().any(|(key, v)| {
            (is_secret_field(key) && (v.is_string() || v.is_array() || v.is_object()))
                || needs_redaction(v)
        }),
        Value::Array(items) => items.iter().any(needs_redaction),
        _ => false,
    }
}

fn redact_in_place(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                // Secrets are text (or hold text); a flag or a count under such a
                // name (`password: true`, `snapshot_tokens: 812`) is not one.
                if is_secret_field(key) && (v.is_string() || v.is_array() || v.is_object()) {
                    *v = Value::String(REDACTED.into());
                } else {
                    redact_in_place(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_in_place),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secret_fields_are_masked_at_any_depth() {
        let args = json!({
            "user": "ada", "password": "hunter2",
            "headers": {"Authorization": "Bearer x", "accept": "json"},
            "items": [{"api_key": "k"}], "refresh-token": "t"
        });
        let r = redact(&args, &[]);
        assert_eq!(r["user"], "ada");
        assert_eq!(r["password"], REDACTED);
        assert_eq!(r["headers"]["Authorization"], REDACTED);
        assert_eq!(r["headers"]["accept"], "json");
        assert_eq!(r["items"][0]["api_key"], REDACTED);
        assert_eq!(r["refresh-token"], REDACTED);
    }

    #[test]
    fn flags_and_counts_named_like_secrets_are_kept() {
        let data = json!({"password": true, "snapshot_tokens": 812, "token": null, "cookies": [{"value": "v"}]});
        assert!(needs_redaction(&data));
        assert!(!needs_redaction(
            &json!({"password": true, "snapshot_tokens": 812, "token": null})
        ));
        assert!(needs_redaction(&json!([{"a": {"api_key": "k"}}])));
        let r = redact(&data, &[]);
        assert_eq!(r["password"], true);
        assert_eq!(r["snapshot_tokens"], 812);
        assert_eq!(r["token"], Value::Null);
        assert_eq!(r["cookies"], REDACTED);
    }

    #[test]
    fn known_secret_values_are_scrubbed_wherever_they_appear() {
        let mut v =
            json!({"echo": "key=abcd1234&x=1", "n": ["abcd1234"], "short": "ab", "word": "tab"});
        scrub_values(&mut v, &["abcd1234".into(), "ab".into()]);
        assert_eq!(
            v,
            json!({"echo": "key=***&x=1", "n": ["***"], "short": "***", "word": "tab"})
        );
        assert_eq!(scrub_text("nothing here", &["abcd1234".into()]), None);
    }

    #[test]
    fn pointers_marked_by_a_tool_are_masked() {
        let r = redact(
            &json!({"selector": "#pw", "text": "s3cret"}),
            &["/text".into()],
        );
        assert_eq!(r, json!({"selector": "#pw", "text": "***"}));
    }
}
