//! A plan document (YAML or JSON), parsed and validated as `axon run` and
//! `POST /v1/runs` do: any bytes give a plan or an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(plan) = axon_plan::Plan::parse(text) {
        let registry = axon_core::ToolRegistry::with_utilities();
        if let Err(errors) = axon_plan::validate(&plan, &registry) {
            // Every problem names a field.
            assert!(errors.0.iter().all(|p| !p.field.is_empty()));
        }
        let _ = axon_plan::secrets::stored_plan(&plan);
    }
});
