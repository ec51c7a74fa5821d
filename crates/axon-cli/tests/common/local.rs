//! An `axon` of the test's own: a config file and a SQLite store in a
//! directory of their own, and the commands run on them (each a process, as
//! a person in a terminal would run them).

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

/// A config and a store.
pub struct Local {
    /// Holds `axon.toml` and `axon.db`.
    pub dir: PathBuf,
}

impl Local {
    /// A new directory with `config` as its `axon.toml`.
    pub fn new(config: &str) -> Local {
        let dir = std::env::temp_dir().join(format!("axon-local-{}", ulid::Ulid::new()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("axon.toml"), config).unwrap();
        Local { dir }
    }

    /// `axon --config <its config> ARGS`, on its store.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = axon_testkit::command(env!("CARGO_BIN_EXE_axon"));
        c.arg("--config")
            .arg(self.dir.join("axon.toml"))
            .args(args)
            .env("AXON_STORE_PATH", self.dir.join("axon.db"))
            .env_remove("AXON_CONFIG");
        c
    }

    /// Run `axon ARGS` to the end.
    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    /// Run `axon ARGS`; its stdout as JSON.
    pub fn json(&self, args: &[&str]) -> Value {
        stdout_json(&self.run(args))
    }
}

/// A finished command's stdout as one JSON document (the panic shows both
/// streams).
pub fn stdout_json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}
