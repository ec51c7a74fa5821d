//! Canonical JSON and its SHA-256: the cache key of a call (`tool + sha256(args)`) and
//! the `response_digest` of a result. Keys are sorted explicitly, so the digest does
//! not depend on how a map happened to be built or on serde_json's features.

use std::io::Write;

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Write `value` as canonical JSON: objects with sorted keys, no whitespace.
pub fn write_canonical<W: Write>(value: &Value, out: &mut W) -> std::io::Result<()> {
    match value {
        Value::Object(map) => {
            out.write_all(b"{")?;
            // serde_json's default map iterates in key order; a build with
            // `preserve_order` (some dependency may turn it on) does not. Sort
            // only when the order is not already the canonical one, so that the
            // common case allocates nothing.
            let sorted = map.keys().zip(map.keys().skip(1)).all(|(a, b)| a < b);
            let mut entry = |i: usize, key: &String, value: &Value| {
                if i > 0 {
                    out.write_all(b",")?;
                }
                serde_json::to_writer(&mut *out, key)?;
                out.write_all(b":")?;
                write_canonical(value, out)
            };
            if sorted {
                for (i, (key, value)) in map.iter().enumerate() {
                    entry(i, key, value)?;
                }
            } else {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort_unstable();
                for (i, key) in keys.into_iter().enumerate() {
                    entry(i, key, &map[key])?;
                }
            }
            out.write_all(b"}")
        }
        Value::Array(items) => {
            out.write_all(b"[")?;
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                write_canonical(item, out)?;
            }
            out.write_all(b"]")
        }
        scalar => serde_json::to_writer(out, scalar).map_err(std::io::Error::from),
    }
}

/// Canonical JSON as a string.
pub fn to_canonical_string(value: &Value) -> String {
    let mut buf = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = write_canonical(value, &mut buf);
    String::from_utf8(buf).unwrap_or_default()
}

struct HashWriter<'a>(&'a mut Sha256);

impl Write for HashWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// SHA-256 of the canonical JSON of `value`, without building the text.
pub fn sha256(value: &Value) -> [u8; 32] {
    let mut hasher = Sha256::new();
    // Hashing cannot fail.
    let _ = write_canonical(value, &mut HashWriter(&mut hasher));
    hasher.finalize().into()
}

/// A SHA-256 as 64 lower-case hex digits, kept on the stack: cache keys and
/// response digests are written on every call, and need no allocation of
/// their own for it.
pub struct Hex([u8; 64]);

impl Hex {
    /// The hex digits of `digest`.
    pub fn of(digest: [u8; 32]) -> Hex {
        let mut hex = [0u8; 64];
        // 32 bytes always fit 64 hex digits.
        let _ = hex::encode_to_slice(digest, &mut hex);
        Hex(hex)
    }

    /// The digits as text.
    pub fn as_str(&self) -> &str {
        // Hex digits are ASCII.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

/// Lower-case hex SHA-256 of the canonical JSON of `value`.
pub fn sha256_hex(value: &Value) -> String {
    Hex::of(sha256(value)).as_str().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_does_not_change_the_canonical_form() {
        let a: Value = serde_json::from_str(r#"{"b":1,"a":{"y":[1,2],"x":"s"}}"#).unwrap();
        let b = json!({"a": {"x": "s", "y": [1, 2]}, "b": 1});
        assert_eq!(
            to_canonical_string(&a),
            r#"{"a":{"x":"s","y":[1,2]},"b":1}"#
        );
        assert_eq!(sha256_hex(&a), sha256_hex(&b));
    }

    #[test]
    fn digest_of_empty_object_is_the_sha256_of_braces() {
        assert_eq!(
            crate::ResponseDigest::of(&json!({})).to_string(),
            "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
    }
}
