//! The `axon` command's configuration as a library, so that what reads
//! `axon.toml` can be tested and fuzzed from outside the binary
//! (`fuzz/fuzz_targets/config.rs`). The commands themselves live in `main.rs`.

pub mod config;
