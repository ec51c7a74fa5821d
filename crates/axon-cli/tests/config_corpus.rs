//! The config fuzz target's corpus (`fuzz/corpus/config`, grown by
//! `scripts/fuzz config`), replayed through the loader on every test run: each
//! input is a config or an error, never a panic, and an accepted config shows as
//! TOML that reads back. The hand-written seeds say what they must give.

use axon_cli::config::Config;

fn corpus() -> Vec<(String, Vec<u8>)> {
    let dir = axon_testkit::repo_root().join("fuzz/corpus/config");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect()
}

#[test]
fn every_corpus_input_is_a_config_or_an_error_and_shows_back() {
    let inputs = corpus();
    assert!(inputs.len() >= 9, "the seeds are there");
    let mut accepted = 0;
    for (name, bytes) in &inputs {
        let Ok(text) = std::str::from_utf8(bytes) else {
            continue;
        };
        match Config::from_text(text) {
            Ok(config) => {
                accepted += 1;
                let shown = config.show();
                if let Err(e) = Config::parse(&shown) {
                    panic!("{name}: `config show` does not read back: {e}\n{shown}");
                }
            }
            Err(e) => assert!(!e.0.is_empty(), "{name}: an empty error"),
        }
    }
    assert!(accepted >= 2, "the good seeds at least");
}

#[test]
fn the_seeds_give_what_they_say() {
    let inputs = corpus();
    let seed = |name: &str| {
        let (_, bytes) = inputs.iter().find(|(n, _)| n == name).unwrap();
        Config::from_text(std::str::from_utf8(bytes).unwrap())
    };
    let full = seed("seed-full.toml").unwrap();
    assert_eq!(full.history.durability, "async");
    assert!(!full.show().contains("s3cret-token"));
    assert!(!full.show().contains("Bearer abc"));
    seed("seed-mcp.toml").unwrap();
    seed("seed-empty.toml").unwrap();
    for (name, key) in [
        ("seed-bad-policy.toml", "tools.echo.retry.max_attempts"),
        ("seed-bad-backend.toml", "history.backend"),
        ("seed-empty-token.toml", "server.auth_tokens[0]"),
        ("seed-bad-secret.toml", "secrets.PW"),
        ("seed-dup-server.toml", "mcp.servers"),
        ("seed-bad-breaker.toml", "defaults.breaker.window_ms"),
    ] {
        let err = seed(name).unwrap_err().0;
        assert!(err.starts_with(key), "{name}: {err}");
    }
}
