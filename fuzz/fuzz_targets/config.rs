//! An `axon.toml`, parsed and checked as `axon config check` does: any bytes
//! give a config or an error naming what is wrong, never a panic; and a config
//! that is accepted shows (`axon config show`) as TOML that reads back.
#![no_main]

use axon_cli::config::Config;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Config::from_text(text) {
        Ok(config) => {
            let shown = config.show();
            if let Err(e) = Config::parse(&shown) {
                panic!("axon config show wrote TOML that does not read back: {e}\n{shown}");
            }
            let _ = config.secrets();
            let _ = config.mcp.filter();
        }
        Err(e) => assert!(!e.0.is_empty(), "an empty config error"),
    }
});
