//! What a model reads of a result: the MCP text block.
//!
//! `structuredContent` carries a call's data for programs. The text block is
//! what most clients put in front of the model, so for tools whose data is
//! text for a reader — a snapshot, an element's text, a page's HTML, the
//! console, the network — it is that text as it is, not its JSON: a snapshot
//! line is `- button "Go" [ref=e12]`, not `"- button \"Go\" [ref=e12]\n"`
//! with every quote and newline escaped. A short header names the page where
//! Playwright MCP has one (URL, title), and what happened during the call
//! (answered dialogs, tabs) follows as lines. Every other tool's text block
//! stays its data as compact JSON.

use std::fmt::Write;

use serde_json::Value;

/// The text block for `tool`'s `data`, when it is text for a reader.
pub(crate) fn for_reader(tool: &str, data: &Value) -> Option<String> {
    let mut out = match tool {
        "browser_snapshot" => {
            let mut out = page_header(data);
            out.push_str(data["text"].as_str()?);
            if let Some(n) = data["truncated"].as_u64().filter(|n| *n > 0) {
                let _ = write!(
                    out,
                    "\n({n} more nodes left out: narrow with ref, depth or find)"
                );
            }
            out
        }
        "browser_get_text" => {
            // A field's value is what its reader wants (its text is empty).
            let text = data["text"].as_str()?;
            match data["value"].as_str() {
                Some(value) if text.is_empty() => value.to_string(),
                Some(value) => format!("{text}\n- value: {value}"),
                None => text.to_string(),
            }
        }
        "browser_get_page_html" => data["html"].as_str()?.to_string(),
        "browser_console_messages" => console(data["messages"].as_array()?),
        "browser_network_requests" => network(data["requests"].as_array()?),
        _ => return with_changes(data),
    };
    happened(data, &mut out);
    Some(out)
}

/// An action's data with the page's changes (`changes`, from the browser's
/// changes.rs): the rest as compact JSON, then the changes as snapshot lines
/// under `### Page`, so a model reads them as it reads a snapshot.
fn with_changes(data: &Value) -> Option<String> {
    let changes = data.get("changes")?.as_object()?;
    let mut rest = data.clone();
    if let Some(map) = rest.as_object_mut() {
        map.remove("changes");
    }
    let mut out = rest.to_string();
    out.push_str("\n### Page");
    let page = changes
        .get("page")
        .and_then(Value::as_str)
        .unwrap_or("same");
    out.push_str(match page {
        "new" => " (new)\n",
        "full" => "\n",
        "changed" => " (changes since your last snapshot)\n",
        _ => " (no change)\n",
    });
    out.push_str(&page_header(&Value::Object(changes.clone())));
    if let Some(text) = changes.get("text").and_then(Value::as_str) {
        out.push_str(text);
    }
    if let Some(removed) = changes.get("removed").and_then(Value::as_array) {
        for r in removed {
            let _ = writeln!(out, "- removed: {}", r.as_str().unwrap_or_default());
        }
    }
    if let Some(n) = changes.get("left_out").and_then(Value::as_u64) {
        let _ = writeln!(
            out,
            "({n} more lines left out: browser_snapshot reads them)"
        );
    }
    Some(out.trim_end().to_string())
}

fn page_header(data: &Value) -> String {
    let mut out = String::new();
    if let Some(url) = data["url"].as_str() {
        let _ = writeln!(out, "- Page URL: {url}");
    }
    if let Some(title) = data["title"].as_str() {
        let _ = writeln!(out, "- Page Title: {title}");
    }
    out
}

fn console(messages: &[Value]) -> String {
    if messages.is_empty() {
        return "(no console messages)".into();
    }
    let lines: Vec<String> = messages
        .iter()
        .map(|m| {
            format!(
                "[{}] {}",
                m["level"].as_str().unwrap_or("info"),
                m["text"].as_str().unwrap_or_default()
            )
        })
        .collect();
    lines.join("\n")
}

fn network(requests: &[Value]) -> String {
    if requests.is_empty() {
        return "(no requests)".into();
    }
    let lines: Vec<String> = requests
        .iter()
        .map(|r| {
            let outcome = match (&r["status"], r["failure"].as_str()) {
                (_, Some(failure)) => format!("failed: {failure}"),
                (Value::Number(status), None) => status.to_string(),
                _ => "pending".into(),
            };
            format!(
                "{} {} => {} ({})",
                r["method"].as_str().unwrap_or("GET"),
                r["url"].as_str().unwrap_or_default(),
                outcome,
                r["type"].as_str().unwrap_or("other")
            )
        })
        .collect();
    lines.join("\n")
}

/// The dialogs answered, the downloads and the tabs opened during the call,
/// as lines.
fn happened(data: &Value, out: &mut String) {
    if let Some(dialogs) = data["dialogs"].as_array() {
        for d in dialogs {
            let _ = write!(
                out,
                "\n- {} dialog {:?} was {}",
                d["type"].as_str().unwrap_or("a"),
                d["message"].as_str().unwrap_or_default(),
                d["answered"].as_str().unwrap_or("answered")
            );
        }
    }
    if let Some(downloads) = data["downloads"].as_array() {
        for d in downloads {
            let bytes = d["bytes"].as_u64().unwrap_or(0);
            let _ = match (d["state"].as_str(), d["file"].as_str()) {
                (Some("completed"), Some(file)) => {
                    write!(out, "\n- downloaded {file} ({bytes} bytes)")
                }
                (Some("in_progress"), _) => write!(
                    out,
                    "\n- downloading {} ({bytes} bytes so far)",
                    d["url"].as_str().unwrap_or_default()
                ),
                _ => write!(
                    out,
                    "\n- download of {} canceled: {}",
                    d["url"].as_str().unwrap_or_default(),
                    d["reason"].as_str().unwrap_or("no reason given")
                ),
            };
        }
    }
    if let Some(tabs) = data["tabs"].as_array() {
        out.push_str("\n### Open tabs");
        for t in tabs {
            let _ = write!(
                out,
                "\n- {}:{} [{}]({})",
                t["index"],
                if t["current"] == true {
                    " (current)"
                } else {
                    ""
                },
                t["title"].as_str().unwrap_or_default(),
                t["url"].as_str().unwrap_or_default()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_snapshot_reads_as_its_lines() {
        let data = json!({"url": "http://h/", "title": "Home", "text": "- button \"Go\" [ref=e1]\n- link \"More\" [ref=e2]", "truncated": 0});
        let text = for_reader("browser_snapshot", &data).unwrap();
        assert_eq!(
            text,
            "- Page URL: http://h/\n- Page Title: Home\n- button \"Go\" [ref=e1]\n- link \"More\" [ref=e2]"
        );
    }

    #[test]
    fn what_happened_follows_and_other_tools_stay_json() {
        let data = json!({"text": "Saved", "dialogs": [{"type": "confirm", "message": "Delete it?", "answered": "dismissed"}],
            "downloads": [{"file": "report.pdf", "url": "http://a/r", "bytes": 5, "state": "completed"},
                          {"url": "http://a/big", "bytes": 0, "state": "canceled", "reason": "too big"}],
            "tabs": [{"index": 0, "current": false, "title": "A", "url": "http://a/"}, {"index": 1, "current": true, "title": "B", "url": "http://b/"}]});
        let text = for_reader("browser_get_text", &data).unwrap();
        assert_eq!(
            text,
            "Saved\n- confirm dialog \"Delete it?\" was dismissed\n- downloaded report.pdf (5 bytes)\n- download of http://a/big canceled: too big\n### Open tabs\n- 0: [A](http://a/)\n- 1: (current) [B](http://b/)"
        );
        assert!(for_reader("browser_click", &data).is_none());
        let clicked = json!({"element": "button#go", "changes": {"page": "changed",
            "text": "- dialog \"Sure?\"\n  - button \"Yes\" [ref=e9] [new]\n", "removed": ["button \"Go\" [ref=e1]"]}});
        assert_eq!(
            for_reader("browser_click", &clicked).unwrap(),
            "{\"element\":\"button#go\"}\n### Page (changes since your last snapshot)\n- dialog \"Sure?\"\n  - button \"Yes\" [ref=e9] [new]\n- removed: button \"Go\" [ref=e1]"
        );
        let same = json!({"element": "a", "changes": {"page": "same", "text": ""}});
        assert_eq!(
            for_reader("browser_click", &same).unwrap(),
            "{\"element\":\"a\"}\n### Page (no change)"
        );
        let field = json!({"text": "", "value": "3", "element": "input#qty"});
        assert_eq!(for_reader("browser_get_text", &field).unwrap(), "3");
        let net = json!({"requests": [{"method": "GET", "url": "http://h/x", "type": "fetch", "failure": "net::ERR_CONNECTION_REFUSED"}, {"method": "POST", "url": "http://h/y", "type": "xhr", "status": 201}]});
        assert_eq!(
            for_reader("browser_network_requests", &net).unwrap(),
            "GET http://h/x => failed: net::ERR_CONNECTION_REFUSED (fetch)\nPOST http://h/y => 201 (xhr)"
        );
    }
}
