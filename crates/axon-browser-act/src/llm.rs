//! The LLM translator: the execution agent's prompt to any OpenAI-compatible
//! chat-completions endpoint (OpenAI, Ollama, vLLM, llama.cpp's server), the
//! reply parsed and validated strictly.
//!
//! The model is called through the core pipeline as the `llm_chat` tool, on an
//! executor of its own that shares the process's breakers and the caller's
//! history store: its timeout, retries (a 429's `Retry-After` honoured) and
//! breaker are the same policies every tool gets, and each call is in history
//! under the step's correlation id. An invalid reply (not one JSON object, a
//! disallowed action, a target the snapshot lacks) is sent back once with the
//! reason; a second invalid reply fails the step with `ambiguous_step`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use axon_core::{
    Annotations, ErrorKind, Executor, HistoryStore, ToolCall, ToolContext, ToolError, ToolRegistry,
    tool_fn,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::prompt::{SYSTEM_PROMPT, user_prompt};
use super::{Action, ActionArgs, ActionKind, ActionTranslator, Decision, StepInput, validate};

/// `[llm]` in `axon.toml`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmConfig {
    /// The API root, up to `/v1` (`https://api.openai.com/v1`,
    /// `http://127.0.0.1:11434/v1` for Ollama).
    pub base_url: String,
    /// The model name.
    pub model: String,
    /// The environment variable holding the API key (none: no key sent). The
    /// key itself never goes in the config file.
    pub api_key_env: Option<String>,
    /// Sampling temperature (0: the same page and step give the same action).
    pub temperature: f64,
    /// The reply's token limit.
    pub max_tokens: u32,
    /// One model call's hard timeout.
    pub timeout_ms: u64,
    /// Attempts per model call (timeouts, 5xx, 429 are retried).
    pub max_attempts: u32,
    /// How the request asks for output in the reply's JSON schema:
    /// `json_schema` (OpenAI's `response_format`, the default), `json_object`
    /// (`{"type": "json_object", "schema": …}`, what llama.cpp's server
    /// takes) or `none`. A server that refuses the format (HTTP 400, 422 or
    /// 500 to a request carrying it) is asked again at once with the next
    /// one, and the process keeps to what worked.
    pub response_format: ResponseFormat,
    /// The older switch: `false` is `response_format = "none"`.
    pub json_schema: bool,
    /// Which translator `browser_act` uses when `[llm]` is set: `auto` (the
    /// default: the heuristic acts when its confidence is at least
    /// `auto_threshold`, the model decides otherwise, and neither sure is an
    /// `ambiguous_step` with candidates; `act::AutoTranslator`) or `llm`
    /// (the model decides every step).
    pub translator: Translator,
    /// The heuristic's confidence from which `auto` acts without the model.
    pub auto_threshold: f64,
}

/// `[llm] translator`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Translator {
    /// The model decides every step.
    Llm,
    /// The heuristic when it is sure, the model otherwise (the default: a
    /// step the heuristic is sure of costs no completion).
    #[default]
    Auto,
}

/// How a chat request asks for structured output (`[llm] response_format`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResponseFormat {
    /// `{"type": "json_schema", "json_schema": {"name", "schema", "strict"}}`.
    #[default]
    JsonSchema,
    /// `{"type": "json_object", "schema": …}` (llama.cpp's server; others
    /// ignore the schema and still answer JSON).
    JsonObject,
    /// No `response_format`: the prompt alone asks for the JSON object.
    None,
}

impl ResponseFormat {
    const ALL: [ResponseFormat; 3] = [
        ResponseFormat::JsonSchema,
        ResponseFormat::JsonObject,
        ResponseFormat::None,
    ];

    fn name(self) -> &'static str {
        match self {
            ResponseFormat::JsonSchema => "json_schema",
            ResponseFormat::JsonObject => "json_object",
            ResponseFormat::None => "none",
        }
    }

    /// The request's `response_format` member.
    fn body(self) -> Option<Value> {
        match self {
            ResponseFormat::JsonSchema => Some(json!({
                "type": "json_schema",
                "json_schema": {"name": "browser_action", "schema": reply_schema(), "strict": true},
            })),
            ResponseFormat::JsonObject => {
                Some(json!({"type": "json_object", "schema": reply_schema()}))
            }
            ResponseFormat::None => None,
        }
    }

    /// What to ask next when a server refuses this one.
    fn fallback(self) -> Option<ResponseFormat> {
        match self {
            ResponseFormat::JsonSchema => Some(ResponseFormat::JsonObject),
            ResponseFormat::JsonObject => Some(ResponseFormat::None),
            ResponseFormat::None => None,
        }
    }
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            base_url: String::new(),
            model: String::new(),
            api_key_env: None,
            temperature: 0.0,
            max_tokens: 500,
            timeout_ms: 30_000,
            max_attempts: 3,
            response_format: ResponseFormat::JsonSchema,
            json_schema: true,
            translator: Translator::Llm,
            auto_threshold: super::AUTO_THRESHOLD,
        }
    }
}

impl LlmConfig {
    /// Whether the config is usable; the error names the field.
    pub fn check(&self) -> Result<(), LlmConfigError> {
        let bad = |field, problem: String| LlmConfigError::Field { field, problem };
        let parsed = url::Url::parse(&self.base_url).map_err(|e| bad("base_url", e.to_string()))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(bad("base_url", format!("{} is not http(s)", self.base_url)));
        }
        if self.model.trim().is_empty() {
            return Err(bad("model", "is empty".into()));
        }
        if !(0.0..=1.0).contains(&self.auto_threshold) {
            return Err(bad(
                "auto_threshold",
                format!("{} is not between 0 and 1", self.auto_threshold),
            ));
        }
        Ok(())
    }
}

/// What keeps `[llm]` from making a translator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LlmConfigError {
    /// A key under `[llm]` is wrong: `llm.<field>: <problem>`.
    Field {
        /// The key (`base_url`, `model`, `auto_threshold`, `api_key_env`).
        field: &'static str,
        /// What is wrong with its value.
        problem: String,
    },
    /// The model's executor could not be built.
    Executor(String),
}

impl std::fmt::Display for LlmConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LlmConfigError::Field { field, problem } => write!(f, "llm.{field}: {problem}"),
            LlmConfigError::Executor(why) => write!(f, "llm: {why}"),
        }
    }
}

impl std::error::Error for LlmConfigError {}

/// `llm_chat` arguments: the conversation so far.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChatArgs {
    /// `{"role": "system"|"user"|"assistant", "content": "…"}` messages.
    pub messages: Vec<Message>,
}

/// One chat message.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Message {
    /// `system`, `user` or `assistant`.
    pub role: String,
    /// The text.
    pub content: String,
}

/// The model's reply.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ChatReply {
    /// The assistant message's text.
    pub content: String,
    /// How the request asked for JSON (`json_schema`, `json_object`, `none`):
    /// the configured format, or the one a refusal fell back to.
    pub response_format: &'static str,
}

/// The schema the reply must follow, for endpoints with structured output.
/// A `Retry-After` in seconds, as the model endpoint wrote it: `None` for
/// what is not a duration ("inf", "-1", "NaN", a date), which would panic as
/// one.
fn retry_after(header: &str) -> Option<Duration> {
    let seconds = header.trim().parse::<f64>().ok()?;
    Duration::try_from_secs_f64(seconds).ok()
}

fn reply_schema() -> Value {
    let nullable = |t: &str| json!({"type": [t, "null"]});
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["action", "args", "status", "error_type", "message"],
        "properties": {
            "action": {"type": "string", "enum": super::ACTIONS},
            "args": {
                "type": "object",
                "additionalProperties": false,
                "required": ["url", "role", "name", "text", "direction", "key", "seconds", "ref", "onto", "accept", "index"],
                "properties": {
                    "url": nullable("string"), "role": nullable("string"), "name": nullable("string"),
                    "text": nullable("string"), "direction": nullable("string"), "key": nullable("string"),
                    "seconds": nullable("number"), "ref": nullable("string"), "onto": nullable("string"),
                    "accept": nullable("boolean"), "index": nullable("integer"),
                }
            },
            "status": {"type": "string", "enum": ["success", "failure"]},
            "error_type": {"type": "string", "enum": ["none", "element_not_found", "ambiguous_step", "tool_limit", "navigation_blocked", "dialog_open", "unknown"]},
            "message": {"type": "string"},
        }
    })
}

/// The `llm_chat` tool: one chat-completions request.
fn chat_tool(config: LlmConfig) -> impl axon_core::Tool {
    // reqwest is built without a TLS provider (ring builds faster than aws-lc on
    // small machines): install rustls' ring one for the process; again is harmless.
    let _ = rustls::crypto::ring::default_provider().install_default();
    // The model server is reached at `base_url` itself: a proxy named in the
    // environment (`HTTP_PROXY`) is not followed.
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap_or_default();
    let url = format!("{}/chat/completions", config.base_url.trim_end_matches('/'));
    let key = config
        .api_key_env
        .as_ref()
        .and_then(|var| std::env::var(var).ok());
    let first = if config.json_schema {
        config.response_format
    } else {
        ResponseFormat::None
    };
    // The format in use: the configured one until a server refuses it.
    let format = Arc::new(AtomicU8::new(first as u8));
    let config = Arc::new(config);
    tool_fn(
        "llm_chat",
        "One chat-completions request to the configured OpenAI-compatible endpoint ([llm]); browser_act's LLM translator calls it.",
        move |args: ChatArgs, _ctx: ToolContext| {
            let (client, url, key, config, format) =
                (client.clone(), url.clone(), key.clone(), config.clone(), format.clone());
            async move {
                let (response, used) = loop {
                    let used = ResponseFormat::ALL[usize::from(format.load(Ordering::Relaxed)).min(2)];
                    let mut body = json!({
                        "model": config.model,
                        "messages": args.messages,
                        "temperature": config.temperature,
                        "max_tokens": config.max_tokens,
                    });
                    if let Some(asked) = used.body() {
                        body["response_format"] = asked;
                    }
                    let mut request = client.post(&url).json(&body);
                    if let Some(key) = &key {
                        request = request.bearer_auth(key);
                    }
                    let response = request.send().await.map_err(|e| {
                        let kind = if e.is_connect() { ErrorKind::Unavailable } else { ErrorKind::Transient };
                        ToolError::new(kind, format!("calling the model: {}", e.without_url()))
                    })?;
                    // A refusal of the format is not a transient failure: ask
                    // again at once without it, and keep to what works.
                    let refused = matches!(response.status().as_u16(), 400 | 422 | 500);
                    match used.fallback() {
                        Some(next) if refused => {
                            tracing::warn!(
                                status = response.status().as_u16(),
                                refused = used.name(),
                                next = next.name(),
                                "the model endpoint refused response_format; asking without it"
                            );
                            format.store(next as u8, Ordering::Relaxed);
                        }
                        _ => break (response, used),
                    }
                };
                let status = response.status();
                if status.as_u16() == 429 {
                    let after = response
                        .headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .and_then(retry_after);
                    return Err(ToolError::rate_limited("the model endpoint said 429", after));
                }
                if status.is_server_error() || status.as_u16() == 408 {
                    return Err(ToolError::transient(format!("the model endpoint said {status}")));
                }
                if !status.is_success() {
                    let text = response.text().await.unwrap_or_default();
                    let text: String = text.chars().take(300).collect();
                    return Err(ToolError::failed(format!("the model endpoint said {status}: {text}"))
                        .with_code(format!("http_{}", status.as_u16())));
                }
                let reply: Value = response
                    .json()
                    .await
                    .map_err(|e| ToolError::transient(format!("the model's response is not JSON: {e}")))?;
                let content = reply["choices"][0]["message"]["content"].as_str().ok_or_else(|| {
                    ToolError::new(ErrorKind::InvalidOutput, "the response has no choices[0].message.content")
                })?;
                Ok(ChatReply { content: content.to_string(), response_format: used.name() })
            }
        },
    )
    .annotations(Annotations { read_only: true, idempotent: true, open_world: true, ..Annotations::default() })
}

/// The LLM translator (see the module docs).
pub struct LlmTranslator {
    executor: Executor,
    /// One completion's own timeout (`[llm] timeout_ms`).
    timeout: Duration,
}

/// What a step keeps back from its model call for acting and settling.
const ACT_RESERVE: Duration = Duration::from_millis(1_000);

/// Less than this left for a completion, and none is started.
const MIN_COMPLETION: Duration = Duration::from_millis(1_000);

impl std::fmt::Debug for LlmTranslator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmTranslator").finish_non_exhaustive()
    }
}

/// What the model answers: one action object (`tool`, `args`, `reasoning`).
#[derive(Debug, Deserialize)]
struct Reply {
    action: String,
    #[serde(default)]
    args: ActionArgs,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    error_type: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

impl LlmTranslator {
    /// A translator calling `config`'s endpoint; its `llm_chat` calls are
    /// recorded in `history` when given.
    pub fn new(
        config: LlmConfig,
        history: Option<Arc<dyn HistoryStore>>,
    ) -> Result<Self, LlmConfigError> {
        config.check()?;
        if let Some(var) = &config.api_key_env
            && std::env::var_os(var).is_none()
        {
            return Err(LlmConfigError::Field {
                field: "api_key_env",
                problem: format!("${var} is not set"),
            });
        }
        let timeout = Duration::from_millis(config.timeout_ms);
        let mut registry = ToolRegistry::new();
        let defaults = json!({
            "timeout_ms": config.timeout_ms,
            "retry": {"max_attempts": config.max_attempts.max(1)},
        });
        registry
            .register(chat_tool(config))
            .map_err(|e| LlmConfigError::Executor(e.to_string()))?;
        let mut builder = Executor::builder(registry).defaults(defaults);
        if let Some(history) = history {
            builder = builder.history(history);
        }
        Ok(LlmTranslator {
            executor: builder
                .build()
                .map_err(|e| LlmConfigError::Executor(e.to_string()))?,
            timeout,
        })
    }

    /// The executor the model calls go through (its history, for tests).
    pub fn executor(&self) -> &Executor {
        &self.executor
    }

    async fn chat(&self, messages: &[Message], ctx: &ToolContext) -> Result<String, ToolError> {
        let mut call = ToolCall::new("llm_chat", json!({"messages": messages}))
            .correlation_id(ctx.correlation_id());
        // The completion gets what is left of the step, less the time acting
        // takes; too little for one, and none is started: a step cut off
        // mid-completion tells the agent less than an honest refusal.
        let mut cut = None;
        if let Some(left) = ctx.remaining() {
            let budget = left.saturating_sub(ACT_RESERVE);
            if budget < MIN_COMPLETION {
                return Err(ToolError::failed(format!(
                    "not asking the model: {} ms of the step are left, and a completion needs more",
                    left.as_millis()
                ))
                .with_code("ambiguous_step"));
            }
            if budget < self.timeout {
                // Every attempt and retry of the completion within it.
                let ms = budget.as_millis() as u64;
                call = call.policy(json!({"timeout_ms": ms, "deadline_ms": ms}));
                cut = Some(ms);
            }
        }
        let result = self.executor.call(call).await;
        let data = result.into_result().map_err(|e| {
            if let Some(ms) = cut.filter(|_| e.kind == ErrorKind::Timeout) {
                return ToolError::failed(format!(
                    "the model did not answer within the {ms} ms the step had left"
                ))
                .with_code("ambiguous_step");
            }
            let message = format!("the model call failed: {}", e.message);
            ToolError { message, ..e }
        })?;
        Ok(data["content"].as_str().unwrap_or_default().to_string())
    }
}

/// A reply that parsed: an action to run, or the model's own refusal
/// (an `error_type` and a message).
enum Checked {
    Act(Box<Action>, String),
    Refused(&'static str, String),
}

/// A model navigates only where the step says. Page text can talk a model
/// into "navigate to https://attacker.example/…" on a step that asked for a
/// click, and a model that cannot find a link guesses its address; either is
/// a navigation nobody asked for. The step names an address when it holds the
/// URL itself, or its host, or the name the host is registered under ("Open
/// Wikipedia" for en.wikipedia.org; an IP address only whole).
fn asked_to_go(action: &Action, step: &str) -> Result<(), String> {
    let Some(url) = action
        .args
        .url
        .as_deref()
        .filter(|_| action.action == ActionKind::Navigate)
    else {
        return Ok(());
    };
    let step = step.to_lowercase();
    let url = url.trim().to_lowercase();
    let host = url::Url::parse(&url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_default();
    let words: Vec<&str> = step
        .split(|c: char| !c.is_alphanumeric() && c != '-')
        .collect();
    let is_ip = host.parse::<std::net::IpAddr>().is_ok() || host.starts_with('[');
    let named_host = !host.is_empty()
        && (step.contains(host.trim_start_matches("www."))
            || (!is_ip && registrable(&host).is_some_and(|name| words.contains(&name))));
    if step.contains(url.trim_end_matches('/')) || named_host {
        Ok(())
    } else {
        Err(format!(
            "navigate to {url}: the step names no address; act on DOM_SNAPSHOT instead (click the link that leads there)"
        ))
    }
}

/// The name a host is registered under: the label left of its suffix
/// ("wikipedia" in en.wikipedia.org, "bbc" in www.bbc.co.uk), never a label
/// further left, which anyone with the domain can choose
/// ("wikipedia.attacker.example" is attacker's).
fn registrable(host: &str) -> Option<&str> {
    const SECOND_LEVEL: [&str; 8] = ["co", "com", "org", "net", "gov", "ac", "edu", "ne"];
    let labels: Vec<&str> = host.rsplit('.').collect();
    let name = match labels.as_slice() {
        [_, second, third, ..] if SECOND_LEVEL.contains(second) => *third,
        [_, second, ..] => *second,
        _ => return None,
    };
    (name.len() >= 3).then_some(name)
}

/// The one JSON object in `content` (tolerating code fences around it).
fn parse_reply(content: &str) -> Result<Reply, String> {
    let start = content.find('{');
    let end = content.rfind('}');
    let (Some(start), Some(end)) = (start, end) else {
        return Err("the reply holds no JSON object".into());
    };
    serde_json::from_str::<Reply>(&content[start..=end])
        .map_err(|e| format!("the reply is not the JSON object asked for: {e}"))
}

#[async_trait]
impl ActionTranslator for LlmTranslator {
    fn name(&self) -> &'static str {
        "llm"
    }

    async fn translate(&self, input: &StepInput, ctx: &ToolContext) -> Result<Decision, ToolError> {
        let mut messages = vec![
            Message {
                role: "system".into(),
                content: SYSTEM_PROMPT.into(),
            },
            Message {
                role: "user".into(),
                content: user_prompt(input),
            },
        ];
        let mut problem = String::new();
        for attempt in 0..2 {
            let content = self.chat(&messages, ctx).await?;
            let checked = parse_reply(&content).and_then(|reply| {
                if reply.status.as_deref() == Some("failure") {
                    let code = super::error_type(reply.error_type.as_deref());
                    let message = reply
                        .message
                        .unwrap_or_else(|| "the model could not act on this step".into());
                    return Ok(Checked::Refused(code, message));
                }
                let action = Action {
                    action: ActionKind::parse(&reply.action).map_err(|e| e.to_string())?,
                    args: reply.args,
                };
                validate(&action, &input.snapshot)
                    .and_then(|()| asked_to_go(&action, &input.plan_step))
                    .map(|()| Checked::Act(Box::new(action), reply.message.unwrap_or_default()))
            });
            match checked {
                Ok(Checked::Act(action, message)) => {
                    return Ok(Decision {
                        action: *action,
                        confidence: if attempt == 0 { 0.9 } else { 0.6 },
                        message,
                    });
                }
                Ok(Checked::Refused(code, message)) => {
                    return Err(ToolError::failed(format!("the model: {message}")).with_code(code));
                }
                Err(why) => {
                    problem = why;
                    messages.push(Message {
                        role: "assistant".into(),
                        content,
                    });
                    messages.push(Message {
                        role: "user".into(),
                        content: format!("Your reply was invalid: {problem}. Reply again with exactly one JSON object as specified, using only elements from DOM_SNAPSHOT."),
                    });
                }
            }
        }
        Err(ToolError::failed(format!(
            "the model's reply was invalid twice; last: {problem}"
        ))
        .with_code("ambiguous_step"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retry_after_that_is_not_a_duration_is_none() {
        assert_eq!(retry_after(" 2.5 "), Some(Duration::from_millis(2500)));
        for bad in ["inf", "-1", "NaN", "1e400", "Wed, 21 Oct 2026 07:28:00 GMT"] {
            assert_eq!(retry_after(bad), None, "{bad}");
        }
    }

    #[test]
    fn replies_are_found_inside_fences() {
        let r = parse_reply("```json\n{\"action\": \"click\", \"args\": {\"role\": \"button\", \"name\": \"Go\"}}\n```").unwrap();
        assert_eq!(
            (r.action.as_str(), r.args.name.as_deref()),
            ("click", Some("Go"))
        );
        assert!(parse_reply("I would click the button").is_err());
        assert!(
            parse_reply("{\"args\": {}}")
                .unwrap_err()
                .contains("action")
        );
    }

    #[test]
    fn a_model_navigates_only_where_the_step_says() {
        let go = |url: &str| Action {
            action: ActionKind::Navigate,
            args: ActionArgs {
                url: Some(url.into()),
                ..ActionArgs::default()
            },
        };
        let allowed = |step: &str, url: &str| asked_to_go(&go(url), step).is_ok();
        assert!(allowed(
            "Go to https://example.org/a",
            "https://example.org/a"
        ));
        assert!(allowed("Open example.org", "https://www.example.org/"));
        assert!(allowed("Open Wikipedia", "https://en.wikipedia.org/"));
        assert!(allowed("Open the BBC", "https://www.bbc.co.uk/"));
        // A name anywhere in a host is not the host's: the registrable
        // label is (a page can say "wikipedia.attacker.example").
        assert!(!allowed(
            "Open Wikipedia",
            "https://wikipedia.attacker.example/"
        ));
        assert!(allowed("Go to 127.0.0.1:8080", "http://127.0.0.1:8080/x"));
        assert!(!allowed(
            "Click the Log in button",
            "https://attacker.example/"
        ));
        assert!(!allowed(
            "Open the pricing page",
            "https://example.org/pricing"
        ));
        // An address's numbers are not names: "0" is no host.
        assert!(!allowed("Select 0 items", "http://127.0.0.1/"));
        // Anything but a navigation is not this rule's business.
        let click = Action {
            action: ActionKind::Click,
            args: ActionArgs::default(),
        };
        assert!(asked_to_go(&click, "Click it").is_ok());
    }

    #[test]
    fn config_errors_name_the_field() {
        let bad = LlmConfig {
            base_url: "ftp://x".into(),
            model: "m".into(),
            ..LlmConfig::default()
        };
        assert!(
            bad.check()
                .unwrap_err()
                .to_string()
                .starts_with("llm.base_url")
        );
        let no_model = LlmConfig {
            base_url: "http://127.0.0.1:1/v1".into(),
            ..LlmConfig::default()
        };
        assert_eq!(
            no_model.check().unwrap_err().to_string(),
            "llm.model: is empty"
        );
        let key = LlmConfig {
            base_url: "http://127.0.0.1:1/v1".into(),
            model: "m".into(),
            api_key_env: Some("AXON_TEST_NO_SUCH_KEY".into()),
            ..LlmConfig::default()
        };
        assert!(
            key.check().is_ok(),
            "the key is checked when the translator is built"
        );
        let err = LlmTranslator::new(key, None).unwrap_err().to_string();
        assert!(err.contains("AXON_TEST_NO_SUCH_KEY"), "{err}");
    }
}
