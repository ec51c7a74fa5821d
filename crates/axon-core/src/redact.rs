//! Secrets never reach history, logs or metrics (docs/design.md, "Metrics and logs").
//! Fields named like a secret, in arguments and in results' data, and fields a tool marked
//! secret at run time, are replaced by `"***"` before anything is stored; so are the
//! values of secret-named query parameters and the password of any URL in a string
//! (`https://u:pw@host/x?token=…&key=…`).

use serde_json::Value;

/// The replacement text.
pub const REDACTED: &str = "***";

/// Whether a field name looks like it holds a secret (case-insensitive, ignoring
/// `-` and `_`). Anywhere in the name: password, passwd, pwd, passphrase, secret,
/// token, api_key, authorization, bearer, cookie, private_key, credential,
/// session_id, session_key, jwt. At its end only (so that `author`, `side` and
/// `footprint` stay readable): auth (`basic_auth`), sid (`phpsessid`), otp
/// (`totp`). A bare `session` is not one: it names a browser session handle,
/// which a run's later steps and its resumption read back from history.
/// Allocation-free: it runs on every argument of every call.
pub fn is_secret_field(name: &str) -> bool {
    const NEEDLES: [&[u8]; 15] = [
        b"password",
        b"passwd",
        b"pwd",
        b"passphrase",
        b"secret",
        b"token",
        b"apikey",
        b"authorization",
        b"bearer",
        b"cookie",
        b"privatekey",
        b"credential",
        b"sessionid",
        b"sessionkey",
        b"jwt",
    ];
    const ENDINGS: [&[u8]; 3] = [b"auth", b"sid", b"otp"];
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
        || ENDINGS.iter().any(|e| norm.ends_with(e))
}

/// Whether a URL query parameter named `name` holds a secret: a secret-like
/// field name, or one of the names APIs put keys and signatures under.
fn is_secret_param(name: &str) -> bool {
    is_secret_field(name)
        || ["key", "sig", "signature", "code", "auth"]
            .iter()
            .any(|k| name.eq_ignore_ascii_case(k))
}

/// `text` with the password of each URL in it and the values of its
/// secret-named query parameters masked, or `None` when there is none.
pub fn mask_urls(text: &str) -> Option<String> {
    if !text.contains("://") {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at + 3);
        out.push_str(before);
        // The URL runs to the first whitespace or quote.
        let end = after
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>'))
            .unwrap_or(after.len());
        let (url, tail) = after.split_at(end);
        let masked = mask_url(url);
        changed |= masked != url;
        out.push_str(&masked);
        rest = tail;
    }
    out.push_str(rest);
    changed.then_some(out)
}

/// One URL after its `scheme://`: userinfo's password and secret query values masked.
fn mask_url(url: &str) -> String {
    let authority_end = url.find(['/', '?', '#']).unwrap_or(url.len());
    let (authority, path) = url.split_at(authority_end);
    let mut out = String::with_capacity(url.len());
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            match userinfo.split_once(':') {
                Some((user, _)) => {
                    out.push_str(user);
                    out.push(':');
                    out.push_str(REDACTED);
                }
                None => out.push_str(userinfo),
            }
            out.push('@');
            out.push_str(host);
        }
        None => out.push_str(authority),
    }
    let (before_query, query_and_fragment) = match path.find('?') {
        Some(q) => path.split_at(q + 1),
        None => return out + path,
    };
    out.push_str(before_query);
    let (query, fragment) = match query_and_fragment.find('#') {
        Some(f) => query_and_fragment.split_at(f),
        None => (query_and_fragment, ""),
    };
    for (i, pair) in query.split('&').enumerate() {
        if i > 0 {
            out.push('&');
        }
        match pair.split_once('=') {
            Some((name, _)) if is_secret_param(name) => {
                out.push_str(name);
                out.push('=');
                out.push_str(REDACTED);
            }
            _ => out.push_str(pair),
        }
    }
    out.push_str(fragment);
    out
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

/// `secrets` and the forms a call's way out and back turns them into: a
/// query value URL-encoded (`+` for a space, `%40` for `@`), what a URL parser
/// makes of it in a path, a query, a fragment or a password, JSON and HTML
/// escaping. An upstream that echoes the URL it was sent (`?q=p%40ss`), or an
/// error quoting an encoded body, would otherwise carry the secret past
/// [`scrub_values`]. Each form once, the secrets themselves first.
pub fn with_encoded_forms(secrets: Vec<String>) -> Vec<String> {
    let mut out = Vec::with_capacity(secrets.len() * 2);
    for secret in &secrets {
        for form in std::iter::once(secret.clone()).chain(encoded_forms(secret)) {
            if !form.is_empty() && !out.contains(&form) {
                out.push(form);
            }
        }
    }
    out
}

/// The encoded forms of `secret` that differ from it.
fn encoded_forms(secret: &str) -> Vec<String> {
    let unreserved = |b: u8| b.is_ascii_alphanumeric() || b"-._~".contains(&b);
    if secret.bytes().all(unreserved) {
        return Vec::new();
    }
    let mut forms = vec![
        url::form_urlencoded::byte_serialize(secret.as_bytes()).collect::<String>(),
        secret
            .bytes()
            .map(|b| match unreserved(b) {
                true => char::from(b).to_string(),
                false => format!("%{b:02X}"),
            })
            .collect(),
    ];
    if let Ok(mut url) = url::Url::parse("http://h/") {
        url.set_path(secret);
        forms.push(url.path().trim_start_matches('/').to_string());
        url.set_query(Some(secret));
        forms.extend(url.query().map(str::to_string));
        url.set_fragment(Some(secret));
        forms.extend(url.fragment().map(str::to_string));
        if url.set_password(Some(secret)).is_ok() {
            forms.extend(url.password().map(str::to_string));
        }
    }
    if let Ok(json) = serde_json::to_string(secret) {
        forms.push(json[1..json.len() - 1].to_string());
    }
    forms.push(
        secret
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
            .replace('\'', "&#39;"),
    );
    forms.retain(|form| form != secret);
    forms
}

/// Whether [`redact_owned`] without pointers would change `value`: some field
/// named like a secret holds text, a list or an object. Lets the executor
/// record most results as they are, without a copy.
pub fn needs_redaction(value: &Value) -> bool {
    match value {
        Value::String(text) => text.contains("://") && mask_urls(text).is_some(),
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
        Value::String(text) => {
            if let Some(masked) = mask_urls(text) {
                *text = masked;
            }
        }
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
    fn a_secret_is_scrubbed_in_the_forms_encoders_make_of_it() {
        let secret = "p@ss w/rd&x=1\"é";
        let forms = with_encoded_forms(vec![secret.into(), "plain-1234".into()]);
        let mut echoed = url::Url::parse("http://h/a").unwrap();
        echoed.query_pairs_mut().append_pair("q", secret);
        echoed.set_path(&format!("/p/{secret}"));
        echoed.set_fragment(Some(secret));
        let _ = echoed.set_password(Some(secret));
        let body = json!({"key": secret}).to_string();
        for text in [
            echoed.to_string(),
            format!("sent {body}"),
            format!(
                "<b>{}</b>",
                secret.replace('&', "&amp;").replace('"', "&quot;")
            ),
            "plain-1234".into(),
        ] {
            let clean = scrub_text(&text, &forms).unwrap_or_else(|| panic!("kept: {text}"));
            assert!(
                !clean.contains("ss w") && !clean.contains("ss%20w") && !clean.contains("ss+w"),
                "{clean}"
            );
        }
        assert_eq!(
            with_encoded_forms(vec!["plain-1234".into()]),
            vec!["plain-1234".to_string()]
        );
    }

    #[test]
    fn the_names_issue_36_found_are_masked_and_lookalikes_are_not() {
        for name in [
            "pwd",
            "user_pwd",
            "auth",
            "basic-auth",
            "X-Auth",
            "bearer",
            "bearer_token",
            "sessionid",
            "JSESSIONID",
            "session_key",
            "sid",
            "PHPSESSID",
            "jwt",
            "id_jwt",
            "otp",
            "totp",
            "passphrase",
        ] {
            assert!(is_secret_field(name), "{name} is not masked");
        }
        for name in [
            "author",
            "authors",
            "side",
            "footprint",
            "session",
            "sessions",
            "otp_length_hint",
        ] {
            assert!(!is_secret_field(name), "{name} is masked");
        }
    }

    #[test]
    fn secrets_in_urls_are_masked_wherever_the_url_is() {
        let args = json!({
            "url": "https://api.example/v1/x?token=t0k&page=2&access_token=a&key=k#frag",
            "note": "see http://ada:hunter2@host:8080/p?q=1 and more",
            "plain": "https://example.com/search?q=rust",
        });
        assert!(needs_redaction(&args));
        let r = redact(&args, &[]);
        assert_eq!(
            r["url"],
            "https://api.example/v1/x?token=***&page=2&access_token=***&key=***#frag"
        );
        assert_eq!(r["note"], "see http://ada:***@host:8080/p?q=1 and more");
        assert_eq!(r["plain"], "https://example.com/search?q=rust");
        assert!(!needs_redaction(
            &json!({"plain": "https://example.com/search?q=rust"})
        ));
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
