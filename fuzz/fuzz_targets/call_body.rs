//! The body of `POST /v1/tools/{name}/call` (and each call of `/v1/calls`): the
//! call JSON, its per-call policy layered over the defaults, and its arguments
//! checked against the tool's schema. Any bytes: a call or an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(call) = serde_json::from_slice::<axon_core::ToolCall>(data) else {
        return;
    };
    if let Some(layer) = &call.policy {
        if axon_core::Policy::check_call_layer(layer).is_ok() {
            let _ = axon_core::Policy::layered([layer]);
        }
    }
    let registry = axon_core::ToolRegistry::with_utilities();
    if let Some(tool) = registry.get(&call.tool) {
        let _ = tool
            .input
            .check(&call.args, axon_core::ErrorKind::InvalidArguments, "arguments");
    }
    let _ = axon_core::redact::redact(&call.args, &["/a".into(), "/b/0".into()]);
    let _ = axon_core::redact::scrub_text(&call.tool, &["abcd".into()]);
});
