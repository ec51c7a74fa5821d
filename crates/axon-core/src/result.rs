//! The call result: the one JSON shape every face of Axon returns for a call
//! (library, CLI `--json`, HTTP, MCP `structuredContent`, history). Its fields are a
//! contract (docs/design.md, "Call result").

use std::fmt;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use smol_str::SmolStr;

use crate::error::{CallError, ToolError};

pub mod approval_note;
pub mod cut;

pub use approval_note::{ApprovalNote, ApprovalStatus};
pub use cut::{CutUnit, ResultCut};

/// A wall-clock instant, serialised as RFC 3339 UTC with milliseconds
/// (`2026-11-22T10:00:00.000Z`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub SystemTime);

impl Timestamp {
    /// Now, by the system clock, to the millisecond (the precision it is written
    /// with, so a result read back from JSON equals the original).
    pub fn now() -> Self {
        let since_epoch = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        Timestamp(SystemTime::UNIX_EPOCH + Duration::from_millis(since_epoch.as_millis() as u64))
    }

    /// Milliseconds since the Unix epoch.
    pub fn unix_ms(&self) -> u64 {
        self.0
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0)
    }

    /// From milliseconds since the Unix epoch.
    pub fn from_unix_ms(ms: u64) -> Self {
        Timestamp(SystemTime::UNIX_EPOCH + Duration::from_millis(ms))
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", humantime::format_rfc3339_millis(self.0))
    }
}

impl schemars::JsonSchema for Timestamp {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Timestamp".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "format": "date-time",
            "description": "RFC 3339, UTC, with milliseconds",
        })
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        humantime::parse_rfc3339_weak(&text)
            .map(Timestamp)
            .map_err(serde::de::Error::custom)
    }
}

/// The SHA-256 of a result's data (its canonical JSON), written
/// `sha256:<64 hex digits>`. Kept as the 32 bytes and written out only when the
/// result is serialised or displayed: every call has one, most are never
/// read, and the text would be an allocation per call (two, with history's
/// copy).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ResponseDigest(pub [u8; 32]);

impl ResponseDigest {
    /// The digest of `data` (see [`crate::canonical`]).
    pub fn of(data: &Value) -> Self {
        ResponseDigest(crate::canonical::sha256(data))
    }
}

impl fmt::Display for ResponseDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("sha256:")?;
        f.write_str(crate::canonical::Hex::of(self.0).as_str())
    }
}

impl fmt::Debug for ResponseDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

/// Text that is not a response digest: `sha256:` and 64 hex digits.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BadDigest {
    /// It does not start with `sha256:` (the text, for the message).
    #[error("a response digest starts with \"sha256:\", not {0:?}")]
    NotSha256(String),
    /// What follows `sha256:` is not 64 hex digits.
    #[error("a response digest is sha256: and 64 hex digits: {0}")]
    NotHex(#[from] hex::FromHexError),
}

impl std::str::FromStr for ResponseDigest {
    type Err = BadDigest;

    fn from_str(text: &str) -> Result<Self, BadDigest> {
        let hex = text
            .strip_prefix("sha256:")
            .ok_or_else(|| BadDigest::NotSha256(text.to_string()))?;
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(hex, &mut bytes)?;
        Ok(ResponseDigest(bytes))
    }
}

impl Serialize for ResponseDigest {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ResponseDigest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<str>::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl schemars::JsonSchema for ResponseDigest {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ResponseDigest".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": "^sha256:[0-9a-f]{64}$",
        })
    }
}

/// Where the data came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The tool ran.
    Tool,
    /// Served from the response cache.
    Cache,
}

/// Provenance of the data, for citation: where it came from, when it was
/// originally fetched (the first fetch, on a cache hit) and a digest of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Provenance {
    /// `tool` or `cache`.
    pub source: Source,
    /// When the data was fetched from the tool; null when there is no data.
    pub fetched_at: Option<Timestamp>,
    /// Whether the cache served it.
    pub cache_hit: bool,
    /// `sha256:<hex>` of the canonical JSON of `data`; null when there is no data.
    pub response_digest: Option<ResponseDigest>,
    /// Present and true when the cache served an expired entry because the tool
    /// failed (stale-if-error).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stale: bool,
    /// What `[tools.<name>.chaos]` injected into this call (latency, faults),
    /// present only when something was: an injected failure is not a real one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chaos: Vec<String>,
    /// The dependency key the call's breaker, limits, retry budget and
    /// latency were kept under (an origin, `server:<name>`, a template's
    /// value), present when it is not the tool itself (policy/dependency.rs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub dependency: Option<SmolStr>,
}

impl Provenance {
    /// Provenance of a failure: no data, nothing fetched.
    pub fn none() -> Self {
        Provenance {
            source: Source::Tool,
            fetched_at: None,
            cache_hit: false,
            response_digest: None,
            stale: false,
            chaos: Vec::new(),
            dependency: None,
        }
    }
}

/// Present when a fallback served the call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FallbackInfo {
    /// Always true (the object is absent otherwise).
    pub used: bool,
    /// Which fallback of the chain served, from 0.
    pub index: usize,
    /// The tool that was called first.
    pub primary_tool: String,
    /// Why the primary failed.
    pub primary_error: CallError,
}

/// The result of one call: success or failure, how many attempts, why each retry,
/// how long, and where the data came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CallResult {
    // The three names are `SmolStr`: a name of up to 23 bytes (a tool's,
    // most correlation ids) is kept in place, a longer one (a ULID is 26) is
    // shared, so the result, the call's scope and its history entry hold one
    // allocation between them at most.
    /// A ULID, unique per call.
    pub call_id: SmolStr,
    /// Groups calls (a plan run, a conversation); the call id when none was given.
    pub correlation_id: SmolStr,
    /// The tool that was asked for (the primary, even when a fallback served).
    pub tool: SmolStr,
    /// Whether `data` holds a result.
    pub success: bool,
    /// The tool's data; null on failure.
    pub data: Value,
    /// Why it failed; null on success.
    pub error: Option<CallError>,
    /// Attempts made on the primary tool (0 when the cache served or nothing ran).
    pub attempts: u32,
    /// One entry per retry: `"<kind>: <message>"` of the attempt that failed.
    pub retry_reasons: Vec<String>,
    /// The delay slept before each retry, in ms.
    pub retry_delays_ms: Vec<u64>,
    /// When the call started.
    pub started_at: Timestamp,
    /// How long the whole call took, in ms.
    pub duration_ms: u64,
    // Boxed: rare, and a third of the size of a result, which every call
    // moves several times.
    /// Set when a fallback served.
    pub fallback: Option<Box<FallbackInfo>>,
    /// Where the data came from.
    pub provenance: Provenance,
    // Boxed: rare, like the fallback.
    /// Set when the data was cut to the result budget (`max_result_tokens`):
    /// what is shown, what was left out, and the handle to the rest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<Box<ResultCut>>,
    /// Set when the call waited for a person (crate::approval): who decided,
    /// when, and whether the arguments were edited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Box<ApprovalNote>>,
}

impl CallResult {
    /// Whether the call needed more than one attempt.
    pub fn was_retried(&self) -> bool {
        !self.retry_reasons.is_empty()
    }

    /// The data, or the error as a [`ToolError`] (handy in `?` chains).
    pub fn into_result(self) -> Result<Value, ToolError> {
        match self.error {
            None => Ok(self.data),
            Some(e) => Err(ToolError {
                kind: e.kind,
                code: e.code,
                message: e.message,
                retry_after: e.retry_after_ms.map(Duration::from_millis),
                before_acting: false,
                pointer: e.pointer,
                choices: None,
            }
            .with_candidates(e.candidates)
            .with_steps(e.steps)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_written_and_read_as_sha256_hex() {
        let d = ResponseDigest::of(&serde_json::json!({}));
        let text = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a";
        assert_eq!(d.to_string(), text);
        assert_eq!(serde_json::to_value(d).unwrap(), serde_json::json!(text));
        let back: ResponseDigest = serde_json::from_value(serde_json::json!(text)).unwrap();
        assert_eq!(back, d);
        let bad = serde_json::from_value::<ResponseDigest>(serde_json::json!("md5:00"));
        assert!(bad.unwrap_err().to_string().contains("sha256:"));
    }

    #[test]
    fn timestamps_round_trip_as_rfc3339_millis() {
        let t = Timestamp::from_unix_ms(1_795_341_600_123);
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(json, "\"2026-11-22T10:00:00.123Z\"");
        let back: Timestamp = serde_json::from_str(&json).unwrap();
        assert_eq!(back, t);
    }
}
