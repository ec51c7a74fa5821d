//! Pinned imports against text Axon did not write: the tool definitions of
//! five published MCP servers (tests/fixtures/published_tools.json, listed
//! from their npm packages before the poisoning rules were written: see
//! tests/fixtures/README.md) raise no flag that would hold them, and a real
//! server (server-everything) lists the same definitions at every start, so
//! pinning it holds nothing.

use std::sync::Arc;

mod common;

use common::everything;
use std::path::PathBuf;

use axon_mcp_client::import_pinned;
use axon_mcp_client::pin::{self, MemoryPins, PinStatus, PinStore};
use serde_json::{Value, json};

fn fixture() -> Vec<Value> {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/published_tools.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn published_servers_tools_raise_no_flag_that_holds() {
    let tools = fixture();
    assert_eq!(tools.len(), 62);
    let mut notes = Vec::new();
    for tool in &tools {
        let definition = json!({
            "name": tool["name"],
            "title": tool["title"],
            "description": tool["description"],
            "input_schema": tool["inputSchema"],
            "output_schema": tool["outputSchema"],
            "annotations": tool["annotations"],
        });
        let flags = pin::flags::scan(&definition);
        assert!(
            !pin::flags::any_holds(&flags),
            "{}/{}: {flags:?}",
            tool["server"],
            tool["name"]
        );
        notes.extend(
            flags
                .into_iter()
                .map(|f| format!("{}: {}", tool["name"], f.rule)),
        );
    }
    // The one very long description among them is shown, not held.
    assert_eq!(notes, ["\"sequentialthinking\": long_description"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_server_lists_the_same_definitions_at_every_start() {
    let pins: Arc<dyn PinStore> = Arc::new(MemoryPins::default());
    let first = import_pinned(everything(), &pins).await.unwrap();
    assert!(first.len() >= 10);
    assert!(first.iter().all(|tool| !tool.is_held()));
    let again = import_pinned(everything(), &pins).await.unwrap();
    assert!(again.iter().all(|tool| !tool.is_held()));
    let stored = pins.list().await.unwrap();
    assert_eq!(stored.len(), first.len());
    assert!(stored.iter().all(|pin| pin.status() == PinStatus::Pinned));
}
