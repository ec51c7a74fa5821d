//! The result budget over MCP, as the official Python SDK client sees it and a
//! real tokenizer counts it (cl100k, peers/budget_check.py): a 600 KB page's
//! HTML, the text of a long page, a large HTTP body and a large imported
//! tool's output each arrive within `max_result_tokens` (25 000 by default
//! over MCP) with a notice, `axon_result_more` walks the rest page by page
//! until the whole result has been read, and Axon's token estimate is within
//! 10 % of the tokenizer's count.

mod common;
use common::repo_root;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

const BUDGET: f64 = 25_000.0;

/// About 600 KB of page: paragraphs, then a table.
fn big_page() -> String {
    let mut html = String::from(
        "<!doctype html><html><head><title>Catalogue</title></head><body><h1>Catalogue</h1>\n",
    );
    for i in 0..2_500 {
        html.push_str(&format!(
            "<p class=\"item\" data-sku=\"sku-{i}\">Item {i}: a sturdy walking boot in brown leather, waterproof, with a cushioned sole. <a href=\"/items/{i}\">Details</a></p>\n"
        ));
    }
    html.push_str("<table>\n");
    for i in 0..1_200 {
        html.push_str(&format!(
            "<tr><td>{i}</td><td>Warehouse {}</td><td>{} in stock</td></tr>\n",
            i % 17,
            i * 3 % 101
        ));
    }
    html.push_str("</table><p id=\"last\">The very last line</p></body></html>\n");
    html
}

/// A site with the big page and a big JSON API.
async fn site() -> String {
    use axum::response::Html;
    use axum::routing::get;
    let page = big_page();
    let rows: Vec<Value> = (0..6_000)
        .map(|i| json!({"id": i, "name": format!("customer {i}"), "city": "Lyon", "balance": i * 13 % 1000}))
        .collect();
    let app = axum::Router::new()
        .route("/big.html", get(move || async move { Html(page) }))
        .route(
            "/api/rows",
            get(move || async move { axum::Json(Value::Array(rows)) }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

/// `axon.toml`: a store of its own, and the big-result server imported.
fn config_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("axon-budget-{}", ulid::Ulid::new()));
    std::fs::create_dir_all(&dir).unwrap();
    let python = repo_root().join("peers/venv/bin/python");
    assert!(
        python.exists(),
        "the Python MCP SDK is not installed: run scripts/peers"
    );
    let text = format!(
        "[store]\npath = {:?}\n[[mcp.servers]]\nname = \"big\"\ncommand = {:?}\nargs = [{:?}]\n",
        dir.join("axon.db").display().to_string(),
        python.display().to_string(),
        repo_root()
            .join("peers/big_result_server.py")
            .display()
            .to_string()
    );
    std::fs::write(dir.join("axon.toml"), text).unwrap();
    dir
}

/// The whole data of a call, as history keeps it.
fn whole(dir: &Path, call_id: &str) -> Value {
    let out = axon_testkit::command(env!("CARGO_BIN_EXE_axon"))
        .arg("--config")
        .arg(dir.join("axon.toml"))
        .args(["history", call_id, "--json"])
        .env_remove("AXON_CONFIG")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let entries: Value = serde_json::from_slice(&out.stdout).unwrap();
    entries[0]["data"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_results_arrive_within_the_budget_and_the_rest_is_paged() {
    let site = site().await;
    let dir = config_dir();
    let calls = json!([
        {"tool": "browser_navigate", "args": {"url": format!("{site}/big.html")}},
        {"tool": "browser_get_page_html", "args": {}, "query": "The very last line"},
        {"tool": "browser_get_text", "args": {"selector": "body"}, "query": "Item 2499:"},
        {"tool": "http_request", "args": {"method": "GET", "url": format!("{site}/api/rows")}, "query": "customer 5999"},
        {"tool": "big__report", "args": {"rows": 9000}, "query": "row 8999:"},
    ]);
    let calls_file = dir.join("calls.json");
    std::fs::write(&calls_file, calls.to_string()).unwrap();
    let out = tokio::process::Command::from(axon_testkit::command(
        repo_root().join("peers/venv/bin/python"),
    ))
    .arg(repo_root().join("peers/budget_check.py"))
    .arg(&calls_file)
    .arg(env!("CARGO_BIN_EXE_axon"))
    .arg("--config")
    .arg(dir.join("axon.toml"))
    .env_remove("AXON_CONFIG")
    .output()
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "the client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut figures = Vec::new();
    for entry in report.as_array().unwrap().iter().skip(1) {
        let tool = entry["tool"].as_str().unwrap();
        assert!(entry.get("rejected").is_none(), "{tool}: {entry}");
        let pages = entry["pages"].as_array().unwrap();
        let cut = &pages[0]["cut"];
        assert!(cut.is_object(), "{tool} was not cut: {}", pages[0]["text"]);
        assert_eq!(pages.len() as u64, cut["pages"].as_u64().unwrap(), "{tool}");
        assert!(pages.len() >= 2, "{tool}");
        let mut real = 0;
        for (n, page) in pages.iter().enumerate() {
            assert_eq!(page["is_error"], false, "{tool} page {}: {page}", n + 1);
            let tokens = page["tokens"].as_u64().unwrap();
            real += tokens;
            assert!(
                tokens as f64 <= BUDGET * 1.1,
                "{tool} page {} holds {tokens} tokens",
                n + 1
            );
            let notice = page["notice"].as_str().unwrap();
            assert!(
                notice.contains("axon_result_more")
                    && notice.contains(cut["handle"].as_str().unwrap()),
                "{notice}"
            );
        }
        // The estimate of the whole against the tokenizer's count of every page.
        let estimate = cut["total_tokens"].as_u64().unwrap();
        let ratio = estimate as f64 / real as f64;
        figures.push(format!(
            "{tool}: {} pages, cl100k {real}, estimate {estimate} ({ratio:.3})",
            pages.len()
        ));
        assert!(
            (0.9..=1.1).contains(&ratio),
            "{tool}: estimate {estimate} vs cl100k {real}"
        );
        // The pages together are the whole result.
        let call_id = cut["handle"].as_str().unwrap().rsplit_once('.').unwrap().0;
        let data = whole(&dir, call_id);
        let texts: Vec<&str> = pages.iter().map(|p| p["text"].as_str().unwrap()).collect();
        match tool {
            "browser_get_page_html" => assert_eq!(texts.concat(), data["html"].as_str().unwrap()),
            "browser_get_text" => assert_eq!(texts.concat(), data["text"].as_str().unwrap()),
            // Its server answers structured content, `{"result": text}`: a
            // text block of JSON, each page's holding a part of the text.
            "big__report" => {
                let parts: Vec<String> = texts
                    .iter()
                    .map(|t| {
                        serde_json::from_str::<Value>(t).unwrap()["result"]
                            .as_str()
                            .unwrap()
                            .to_string()
                    })
                    .collect();
                assert_eq!(
                    parts.concat(),
                    data["result"].as_str().unwrap(),
                    "{data:.200}"
                );
            }
            _ => {
                let items: usize = texts
                    .iter()
                    .map(|t| {
                        serde_json::from_str::<Value>(t).unwrap()["json"]
                            .as_array()
                            .unwrap()
                            .len()
                    })
                    .sum();
                assert_eq!(items, data["json"].as_array().unwrap().len());
            }
        }
        // A query finds the part that holds the text.
        let query = &entry["query"];
        assert!(
            query["cut"]["matches"].as_u64() >= Some(1),
            "{tool}: {query}"
        );
        let needle = calls[figures.len()]["query"].as_str().unwrap();
        assert!(
            query["text"].as_str().unwrap().contains(needle),
            "{tool}: {query}"
        );
    }
    eprintln!("{}", figures.join("\n"));
}
