//! A browser run recorded as a plan and replayed without a translator, from
//! outside (`axon run --record`, `axon plan from-run`), on a real Chromium: a
//! six-step `browser_act` checkout replays with no `browser_act` call and the
//! same end state; after a restyle that keeps the visible names it still
//! replays; after a button is renamed, that step falls back to `browser_act`,
//! heals, and says so. What was typed from a secret stays a reference.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Instant;

use serde_json::Value;

const CARD: &str = "4242424242424242";

/// The checkout page; `wrap` restyles it (other structure, ids and classes,
/// the same labels), `go` names the button that reveals the order button.
fn checkout(wrap: bool, go: &str) -> String {
    let (open, close, tag) = if wrap {
        (
            "<fieldset class=\"grid\"><div class=\"row\">",
            "</div></fieldset>",
            "-restyled",
        )
    } else {
        ("", "", "")
    };
    format!(
        r#"<!doctype html><html><head><title>Checkout</title></head><body>
<h1>Checkout</h1>
{open}
<label for="n{tag}">Name</label> <input id="n{tag}">
<label for="c{tag}">Card number</label> <input id="c{tag}" type="password">
<label for="d{tag}">Delivery</label>
<select id="d{tag}"><option>Standard</option><option>Express</option></select>
<label><input type="checkbox" id="g{tag}"> Gift wrap</label>
{close}
<button type="button" onclick="document.getElementById('pay').hidden = false">{go}</button>
<div id="pay" hidden><button type="button" onclick="place()">Place order</button></div>
<p id="out"></p>
<script>
function place() {{
  const v = (p) => document.querySelector('[id^="' + p + '"]');
  document.getElementById('out').textContent = 'Order for ' + v('n').value + ', card ending '
    + v('c').value.slice(-4) + ', ' + v('d').value + (v('g').checked ? ', gift' : '');
}}
</script>
</body></html>"#
    )
}

const STEPS: [&str; 6] = [
    "Type Ada Lovelace into the Name field",
    "Type ${secret.CARD} into the Card number field",
    "Select Express in the Delivery list",
    "Check the Gift wrap checkbox",
    "Click the Continue button",
    "Click the Place order button",
];

const END: &str = "Order for Ada Lovelace, card ending 4242, Express, gift";

struct Site {
    dir: PathBuf,
}

impl Site {
    fn new() -> Site {
        let dir = std::env::temp_dir().join(format!("axon-replay-{}", ulid::Ulid::new()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("axon.toml"),
            "[browser]\nallow_file_urls = true\n[secrets]\nCARD = { env = \"AXON_TEST_CARD\" }\n",
        )
        .unwrap();
        Site { dir }
    }

    fn page(&self) -> PathBuf {
        self.dir.join("checkout.html")
    }

    fn axon(&self, args: &[&str]) -> Output {
        axon_testkit::command(env!("CARGO_BIN_EXE_axon"))
            .arg("--config")
            .arg(self.dir.join("axon.toml"))
            .args(args)
            .env("AXON_STORE_PATH", self.dir.join("axon.db"))
            .env("AXON_TEST_CARD", CARD)
            .env_remove("AXON_CONFIG")
            .output()
            .unwrap()
    }

    /// Run `plan` as `run_id`: its JSON result and how long it took.
    fn run(&self, plan: &Path, run_id: &str, extra: &[&str]) -> (Value, u128) {
        let started = Instant::now();
        let mut args = vec!["run", plan.to_str().unwrap(), "--run-id", run_id, "--json"];
        args.extend_from_slice(extra);
        let o = self.axon(&args);
        let took = started.elapsed().as_millis();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{run_id}: {}\n{}",
            String::from_utf8_lossy(&o.stderr),
            String::from_utf8_lossy(&o.stdout)
        );
        (serde_json::from_slice(&o.stdout).unwrap(), took)
    }

    /// The tools `run_id` called, from history.
    fn called(&self, run_id: &str) -> Vec<String> {
        let o = self.axon(&["history", run_id, "--json"]);
        let h: Value = serde_json::from_slice(&o.stdout).unwrap();
        h["calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["tool"].as_str().unwrap().to_string())
            .collect()
    }
}

fn end_state(result: &Value) -> &str {
    result["steps"][7]["result"]["data"]["text"]
        .as_str()
        .unwrap_or_default()
}

/// examples/replay is this test's original page and plan.
#[test]
fn the_example_is_this_checkout() {
    let root = axon_testkit::repo_root().join("examples/replay");
    let page = std::fs::read_to_string(root.join("checkout.html")).unwrap();
    assert_eq!(page, checkout(false, "Continue"));
    let plan = std::fs::read_to_string(root.join("checkout.yaml")).unwrap();
    for step in STEPS {
        assert!(plan.contains(step), "{step}");
    }
}

#[test]
fn a_recorded_browser_run_replays_without_a_translator_and_heals_when_a_page_changed() {
    let site = Site::new();
    std::fs::write(site.page(), checkout(false, "Continue")).unwrap();
    let mut plan = format!(
        "steps:\n- {{id: open, tool: browser_navigate, params: {{url: 'file://{}'}}}}\n",
        site.page().display()
    );
    for (i, step) in STEPS.iter().enumerate() {
        let after = if i == 0 {
            "open".into()
        } else {
            format!("s{}", i - 1)
        };
        plan.push_str(&format!(
            "- {{id: s{i}, tool: browser_act, params: {{plan_step: '{step}'}}, depends_on: [{after}]}}\n"
        ));
    }
    plan.push_str(
        "- {id: out, tool: browser_get_text, params: {selector: '#out'}, depends_on: [s5]}\n",
    );
    let plan_file = site.dir.join("checkout.yaml");
    std::fs::write(&plan_file, plan).unwrap();

    // The run, recorded.
    let recorded = site.dir.join("replay.yaml");
    let (first, first_ms) = site.run(
        &plan_file,
        "first",
        &["--record", recorded.to_str().unwrap()],
    );
    assert_eq!(end_state(&first), END, "{first:#}");
    let replay = std::fs::read_to_string(&recorded).unwrap();
    assert!(
        !replay.contains(CARD) && !replay.contains("***"),
        "{replay}"
    );
    assert!(replay.contains("${secret.CARD}"), "{replay}");
    let compiled: Value = serde_yaml_ng::from_str(&replay).unwrap();
    let tools: Vec<&str> = compiled["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["tool"].as_str().unwrap())
        .collect();
    assert!(!tools[1..7].contains(&"browser_act"), "{tools:?}");
    // `axon plan from-run` writes the same plan.
    let o = site.axon(&["plan", "from-run", "first"]);
    assert_eq!(String::from_utf8_lossy(&o.stdout), replay);

    // Replayed on the same page: no translator, the same end state.
    let (again, replay_ms) = site.run(&recorded, "again", &[]);
    assert_eq!(end_state(&again), END, "{again:#}");
    assert!(
        !site.called("again").iter().any(|t| t == "browser_act"),
        "{:?}",
        site.called("again")
    );

    // Restyled, the same names: still no translator.
    std::fs::write(site.page(), checkout(true, "Continue")).unwrap();
    let (restyled, _) = site.run(&recorded, "restyled", &[]);
    assert_eq!(end_state(&restyled), END, "{restyled:#}");
    assert!(!site.called("restyled").iter().any(|t| t == "browser_act"));

    // A button renamed: its step falls back to browser_act and heals.
    std::fs::write(site.page(), checkout(true, "Continue to payment")).unwrap();
    let (renamed, _) = site.run(&recorded, "renamed", &[]);
    assert_eq!(end_state(&renamed), END, "{renamed:#}");
    let healed: Vec<u64> = renamed["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["result"]["fallback"]["used"] == true)
        .map(|s| s["index"].as_u64().unwrap())
        .collect();
    assert_eq!(healed, vec![5], "only the renamed button's step heals");
    eprintln!("original run {first_ms} ms, replay {replay_ms} ms (process start included)");
}
