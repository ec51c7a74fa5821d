//! A string parameter with templates, parsed and rendered against step data: a
//! template is a value or an error naming the template, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::json;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let step = json!({"a": [1, {"b": "x"}, [2, 3]], "s": "text", "n": null, "o": {"k": [{"v": 1}]}});
    let secret = json!("s3cret");
    let lookup = |source: &axon_plan::template::TemplateSource| match source {
        axon_plan::template::TemplateSource::Secret(_) => Some(&secret),
        _ => Some(&step),
    };
    if let Ok(t) = axon_plan::template::Template::parse(text) {
        let _ = t.render(&lookup);
        for r in t.references() {
            let _ = axon_plan::secrets::reference_pointer(r);
        }
    }
    let _ = axon_plan::template::resolve(&json!({"p": text, "q": [text]}), &lookup);
});
