//! The PostgreSQL the store, cluster and approval tests use: the local
//! server (`AXON_TEST_POSTGRES_URL`, default
//! `postgres://postgres@127.0.0.1:5432/test`), a schema of each test's own.

use std::process::Command;

pub use axon_testkit::postgres_url;

/// A new schema name, `<prefix>_<ulid>`.
pub fn schema(prefix: &str) -> String {
    format!("{prefix}_{}", ulid::Ulid::new().to_string().to_lowercase())
}

/// Drop `schema` and everything in it (with psql, as a person would).
pub fn drop_schema(schema: &str) {
    let out = Command::new("psql")
        .arg(postgres_url())
        .args(["-qc", &format!("DROP SCHEMA IF EXISTS {schema} CASCADE")])
        .output()
        .expect("psql runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
