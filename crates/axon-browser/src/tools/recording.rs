//! `browser_recording` (MCP capability `recording`): a session's filmstrip
//! (crate::recording) exported as one self-contained HTML file in the files
//! folder — every frame's screenshot with the action's element boxed, the
//! action and its masked arguments, the URL, the error, the console errors
//! and failed requests of that step — to open in any browser, offline.
//!
//! Why HTML and not a Playwright trace (issue 63 asked for one if it can be
//! met honestly): a trace file is the zip of Playwright's own event log —
//! its recorder's action and DOM-snapshot events, versioned with Playwright
//! and undocumented — which Axon does not produce (it drives CDP itself);
//! writing one would be an imitation that the next viewer release may
//! misread. The report holds only what Axon saw.
//!
//! Everything in the report came from pages, which are hostile: every text
//! is HTML-escaped, and the file's Content-Security-Policy allows no script
//! and no request (its images are `data:` URLs).

use std::sync::Arc;

use axon_core::{RegistryError, ToolContext, ToolError, ToolRegistry};
use base64::Engine;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::read_only;
use crate::recording::Frame;
use crate::session::Browsers;

/// `browser_recording` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordingArgs {
    /// A file name in the files folder (default `recording.html`).
    pub path: Option<String>,
    /// Replace a file of that name.
    #[serde(default)]
    pub overwrite: bool,
}

async fn export(b: &Browsers, args: RecordingArgs, ctx: &ToolContext) -> Result<Value, ToolError> {
    let name = args.path.unwrap_or_else(|| "recording.html".into());
    let dir = b.files(ctx, "/path")?;
    dir.resolve("/path", &name)?;
    let Some(frames) = b.frames(ctx).await? else {
        return Err(ToolError::failed(
            "this session does not record: open one with browser_session_new {record: \"always\"} or \"on_failure\", or set [browser] record",
        )
        .with_code("not_recording"));
    };
    let failed = frames.iter().filter(|f| !f.ok).count();
    let html = report(&frames);
    let written = dir
        .write("/path", &name, html.into_bytes(), args.overwrite)
        .await?;
    Ok(json!({
        "path": written.name, "bytes": written.bytes,
        "frames": frames.len(), "failed": failed,
    }))
}

/// `text` safe in HTML text and attribute values.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font:14px system-ui,sans-serif;margin:1em;color:#222}\
.strip{display:flex;gap:4px;overflow-x:auto;padding-bottom:8px}\
.strip a{border:2px solid #ccc;display:block}.strip a.failed{border-color:#c00}\
.strip img{height:60px;display:block}\
.frame{border:1px solid #ccc;margin:1em 0;padding:.5em 1em}.frame.failed{border-color:#c00;background:#fff5f5}\
.shot{position:relative;display:inline-block}.shot img{display:block;border:1px solid #999}\
.box{position:absolute;border:2px solid #e0a000;box-shadow:0 0 0 2px rgba(255,255,255,.8)}\
pre{white-space:pre-wrap;background:#f4f4f4;padding:.4em}.error{color:#c00}";

/// The whole report: a strip of thumbnails, then one section per frame.
fn report(frames: &[Frame]) -> String {
    let mut html = String::from(
        "<!doctype html><html><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'\">\
         <title>Axon browser recording</title><style>",
    );
    html.push_str(STYLE);
    html.push_str("</style></head><body><h1>Browser recording</h1>");
    html.push_str(&format!(
        "<p>{} frames, {} failed. Each is the page right after its action; the box is the element the action took.</p><div class=\"strip\">",
        frames.len(),
        frames.iter().filter(|f| !f.ok).count()
    ));
    for f in frames {
        let class = if f.ok { "" } else { " class=\"failed\"" };
        let thumb = image(f).unwrap_or_default();
        html.push_str(&format!(
            "<a href=\"#frame-{}\"{class} title=\"{}\">{thumb}</a>",
            f.seq,
            escape(&f.tool)
        ));
    }
    html.push_str("</div>");
    for f in frames {
        html.push_str(&section(f));
    }
    html.push_str("</body></html>");
    html
}

/// The frame's image as an `<img>`, when it has one.
fn image(f: &Frame) -> Option<String> {
    let bytes = f.image.as_ref()?;
    let data = base64::engine::general_purpose::STANDARD.encode(bytes);
    Some(format!(
        "<img alt=\"frame {}\" src=\"data:image/jpeg;base64,{data}\">",
        f.seq
    ))
}

/// One frame's section.
fn section(f: &Frame) -> String {
    let class = if f.ok { "frame" } else { "frame failed" };
    let args = serde_json::to_string_pretty(&f.args).unwrap_or_default();
    let mut s = format!(
        "<section class=\"{class}\" id=\"frame-{}\"><h2>#{} {} <small>at {} ms</small></h2><p>{}</p><pre>{}</pre>",
        f.seq,
        f.seq,
        escape(&f.tool),
        f.at_ms,
        escape(&f.url),
        escape(&args)
    );
    if let Some(e) = &f.error {
        s.push_str(&format!(
            "<p class=\"error\">{}: {}</p>",
            escape(e["code"].as_str().unwrap_or("error")),
            escape(e["message"].as_str().unwrap_or_default())
        ));
    }
    for (title, notes) in [
        ("Console errors", &f.console_errors),
        ("Failed requests", &f.failed_requests),
    ] {
        if !notes.is_empty() {
            let items: String = notes
                .iter()
                .map(|n| format!("<li>{}</li>", escape(n)))
                .collect();
            s.push_str(&format!("<p>{title}:</p><ul>{items}</ul>"));
        }
    }
    if let Some(img) = image(f) {
        let boxed = f.target.map(|r| {
            format!(
                "<div class=\"box\" style=\"left:{:.0}px;top:{:.0}px;width:{:.0}px;height:{:.0}px\"></div>",
                r.x * f.scale,
                r.y * f.scale,
                r.width * f.scale,
                r.height * f.scale
            )
        });
        s.push_str(&format!(
            "<div class=\"shot\">{img}{}</div>",
            boxed.unwrap_or_default()
        ));
    }
    s.push_str("</section>");
    s
}

/// Register this file's tool.
pub(super) fn register(
    registry: &mut ToolRegistry,
    browsers: &Arc<Browsers>,
) -> Result<(), RegistryError> {
    browser_tool!(
        registry,
        browsers,
        "browser_recording",
        read_only(),
        "Writes the session's filmstrip (a frame per action: screenshot, element, URL, errors) as one HTML file in the files folder (path, default recording.html).",
        export
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recording::Rect;

    #[test]
    fn page_text_is_escaped_and_the_report_runs_no_script() {
        let frame = Frame {
            seq: 1,
            call_id: "c1".into(),
            previous: None,
            at_ms: 5,
            tool: "browser_click".into(),
            args: json!({"name": "<img src=x onerror=alert(1)>"}),
            ok: false,
            error: Some(json!({"code": "disabled", "message": "<script>alert(2)</script>"})),
            url: "http://x/?q=\"><script>".into(),
            target: Some(Rect {
                x: 10.0,
                y: 20.0,
                width: 30.0,
                height: 40.0,
            }),
            scale: 0.5,
            shot_at_ms: Some(7),
            console_errors: vec!["<b>boom</b>".into()],
            failed_requests: Vec::new(),
            image: Some(vec![0xff, 0xd8, 0xff]),
            shot: true,
        };
        let html = report(&[frame]);
        assert!(
            !html.contains("<script>") && !html.contains("<img src=x"),
            "{html}"
        );
        assert!(html.contains("&lt;script&gt;alert(2)"));
        assert!(html.contains("default-src 'none'"));
        assert!(
            html.contains("left:5px;top:10px;width:15px;height:20px"),
            "the box at the image's scale"
        );
        assert!(html.contains("class=\"frame failed\""));
    }
}
