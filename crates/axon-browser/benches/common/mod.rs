//! What the browser benches that time whole tool calls share: how they start.

/// Run `bench` on a two-thread runtime (the machine's cores), only when
/// invoked as a bench: `cargo test --benches` runs these binaries without
/// `--bench`, and a browser bench must then do nothing.
pub fn run_as_bench<F: std::future::Future>(bench: impl FnOnce() -> F) {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    rt.block_on(bench());
}
