//! `axon`: call a tool, run a plan, and see afterwards what happened and why.
//!
//! Exit codes (docs/design.md, "CLI"): 0 success, 1 the call or plan failed, 2 bad input or
//! usage, 3 infrastructure (store, browser, upstream config) unusable.

mod approval_commands;
mod output;
mod pin_commands;
mod plans;
mod telemetry;
mod wiring;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use axon_core::{CancellationToken, ErrorKind, ToolCall};
use axon_plan::{Plan, PlanRunner, RunOptions};
use clap::{Parser, Subcommand, ValueEnum};
use serde_json::{Map, Value};
use tracing::Instrument;

use axon_cli::config::Config;
use plans::GraphArg;
use wiring::{Imports, executor, open_store, plan_tools, runner};

#[derive(Parser)]
#[command(
    name = "axon",
    version,
    about = "Execute AI agents' tool calls reliably: call tools, run plans, read history."
)]
struct Cli {
    /// Config file (axon.toml); none is needed for the defaults.
    #[arg(long, global = true, env = "AXON_CONFIG")]
    config: Option<PathBuf>,
    /// Machine output: one JSON document on stdout and nothing else.
    #[arg(long, global = true)]
    json: bool,
    /// More logging on stderr (-v info, -vv debug).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Only errors on stderr.
    #[arg(short, long, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Call one tool through the policy pipeline.
    Call {
        /// The tool's name (see `axon tools`).
        tool: String,
        /// Arguments as a JSON object.
        #[arg(long)]
        args: Option<String>,
        /// Arguments as key=value (a value that parses as JSON is used as JSON).
        #[arg(value_name = "KEY=VALUE")]
        pairs: Vec<String>,
        /// Group the call with others in history.
        #[arg(long)]
        correlation_id: Option<String>,
    },
    /// Run a plan (YAML or JSON); a run id seen before resumes that run.
    Run {
        /// The plan file.
        plan: PathBuf,
        /// Run id (a new one when absent).
        #[arg(long)]
        run_id: Option<String>,
        /// Print the plan's DAG (Graphviz dot or Mermaid) instead of running it.
        #[arg(long, value_enum)]
        graph: Option<GraphArg>,
        /// Once the run ends, write it to FILE as a plan that replays it without
        /// a translator (as `axon plan from-run` does).
        #[arg(long, value_name = "FILE")]
        record: Option<PathBuf>,
    },
    /// Work with plans made from runs.
    Plan {
        #[command(subcommand)]
        action: PlanAction,
    },
    /// Check a plan without running it.
    Validate {
        /// The plan file.
        plan: PathBuf,
    },
    /// List the tools; `--changed` lists the imported tools held for a
    /// changed or flagged definition, with their diffs.
    Tools {
        /// table, json, openai (function-calling schemas) or mcp (tools/list).
        #[arg(long, value_enum, default_value_t = ToolsFormat::Table)]
        format: ToolsFormat,
        /// Only the held tools: status, flags and the diff from the accepted
        /// definition (docs/security.md, "Pinned imports").
        #[arg(long)]
        changed: bool,
        #[command(subcommand)]
        action: Option<ToolsAction>,
    },
    /// Calls waiting for a person (`approval` policy): list the pending ones,
    /// approve or deny one.
    Approvals {
        /// Every approval kept, decided ones too.
        #[arg(long)]
        all: bool,
        #[command(subcommand)]
        action: Option<ApprovalAction>,
    },
    /// Show what happened: a call id, a run id or a correlation id.
    History {
        /// The id.
        id: String,
    },
    /// Per-tool figures from history.
    Stats,
    /// Serve every tool (and run_plan) to an MCP client over stdio.
    Mcp {
        /// Optional tool groups to serve too, comma-separated (pdf,
        /// testing, storage, vision), as `[mcp] caps`.
        #[arg(long, value_delimiter = ',')]
        caps: Vec<String>,
    },
    /// Serve the HTTP API, /healthz and /metrics.
    Serve {
        /// Address to bind (default from config: 127.0.0.1:7878; port 0 picks one).
        #[arg(long)]
        bind: Option<String>,
    },
    /// Print the HTTP API's OpenAPI 3.1 document (what `GET /openapi.json` serves).
    Openapi,
    /// Check or show the configuration.
    Config {
        #[command(subcommand)]
        action: ConfigAction,
    },
}

#[derive(Subcommand)]
enum PlanAction {
    /// A finished run as a plan that replays it without a translator: each
    /// `browser_act` step that succeeded becomes the browser call it made,
    /// with the step itself as its fallback (docs/browser-act.md, "Replay").
    FromRun {
        /// The run id.
        run_id: String,
        /// Write the plan here instead of printing it.
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum ToolsAction {
    /// Accept a held tool's definition as listed now (read its diff first:
    /// `axon tools --changed`).
    Accept {
        /// The tool (`<server>__<tool>`).
        name: String,
        /// Accept only if the definition is still this one (the fingerprint
        /// `--changed` shows).
        #[arg(long)]
        fingerprint: Option<String>,
    },
}

#[derive(Subcommand)]
enum ApprovalAction {
    /// Let the call run, with its arguments or with `--args`.
    Approve {
        /// The approval's id (the call id `axon approvals` shows).
        id: String,
        /// Run it with these arguments instead (a JSON object, checked
        /// against the tool's schema).
        #[arg(long)]
        args: Option<String>,
        /// A comment for history.
        #[arg(long)]
        comment: Option<String>,
    },
    /// Fail the call `approval_denied`.
    Deny {
        /// The approval's id.
        id: String,
        /// Why (the caller is told).
        #[arg(long)]
        comment: Option<String>,
    },
}

#[derive(Subcommand)]
enum ConfigAction {
    /// Validate a config file (or the one in use).
    Check {
        /// The file; `--config`/`AXON_CONFIG` when absent.
        file: Option<PathBuf>,
    },
    /// Print the effective configuration, secrets masked.
    Show,
}

#[derive(Clone, Copy, ValueEnum)]
enum ToolsFormat {
    Table,
    Json,
    Openai,
    Mcp,
}

/// How `axon` exits (docs/design.md, "CLI").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Exit {
    /// The call or plan succeeded, or the command did what it was asked.
    Success = 0,
    /// The call or plan failed.
    Failed = 1,
    /// Bad input or usage: the user can fix the command.
    Usage = 2,
    /// Infrastructure unusable: the store, the browser, an upstream's config.
    Infra = 3,
}

/// A second Ctrl-C during `axon run`: out at once, as shells report a SIGINT.
const INTERRUPTED: i32 = 130;

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(exit as u8)
    }
}

/// Why the command stopped: the exit code and what to tell the user.
struct Fail(Exit, String);

type Outcome = Result<Exit, Fail>;

fn usage(msg: impl Into<String>) -> Fail {
    Fail(Exit::Usage, msg.into())
}

fn infra(msg: impl Into<String>) -> Fail {
    Fail(Exit::Infra, msg.into())
}

/// The binary's allocator: mimalloc, not the system's. `axon serve` answers
/// from a multi-threaded runtime, where glibc's allocator makes one thread
/// wait on another's arena to free what it allocated (a response built on one
/// worker, dropped on another; spans built by a call, freed by the exporter's
/// thread): with mimalloc the HTTP server serves 23 % more calls a second and
/// a call sampled by OpenTelemetry costs 30 % less (docs/benchmarks.md,
/// "HTTP server" and "Tracing"). The library leaves the choice to the program
/// that embeds it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // `axon history ID | head` closes our stdout early: end quietly like any Unix
    // tool instead of panicking in println!. Rust ignores SIGPIPE by default.
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any thread exists; restoring a
    // signal's default disposition has no other effect on the process.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let runtime = match runtime_for(&cli.command) {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("axon: cannot start the runtime: {e}");
            return Exit::Infra.into();
        }
    };
    match runtime.block_on(dispatch(cli)) {
        Ok(exit) => exit.into(),
        Err(Fail(exit, message)) => {
            eprintln!("axon: {message}");
            exit.into()
        }
    }
}

/// The runtime a command runs on. `axon mcp` serves one client over stdin and
/// stdout: each message wakes one task after another, and on a current-thread
/// runtime those hand-offs stay on one thread instead of waking a second
/// worker through the kernel (10–20 % less CPU per call, measured with
/// `benches/mcp_cpu/run.py`; docs/benchmarks.md). Everything else (the HTTP
/// server's many connections, a plan's parallel steps) gets two workers,
/// one per core of the machines Axon is sized for; `TOKIO_WORKER_THREADS`
/// is not read.
fn runtime_for(command: &Command) -> std::io::Result<tokio::runtime::Runtime> {
    match command {
        Command::Mcp { .. } => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
        _ => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build(),
    }
}

async fn dispatch(cli: Cli) -> Outcome {
    let config = Config::load(cli.config.as_deref()).map_err(|e| usage(e.to_string()))?;
    let telemetry =
        telemetry::init(&config, cli.verbose, cli.quiet).map_err(|e| usage(e.to_string()))?;
    // A call or a run is one trace, continuing the caller's when `TRACEPARENT`
    // is set (OpenTelemetry's carrier between processes); a server's requests
    // and an MCP session's calls each start their own.
    let label = match &cli.command {
        Command::Call { .. } => Some("axon call"),
        Command::Run { .. } => Some("axon run"),
        _ => None,
    };
    let span = match label {
        Some(label) => {
            let get = |key: &str| std::env::var(key.to_ascii_uppercase()).ok();
            axon_core::trace::open_root(&get, || tracing::debug_span!("cli", otel.name = label))
        }
        None => tracing::Span::none(),
    };
    let outcome = command(cli, config).instrument(span.clone()).await;
    telemetry.shutdown(span).await;
    outcome
}

async fn command(cli: Cli, config: Config) -> Outcome {
    let ui = output::Ui {
        json: cli.json,
        quiet: cli.quiet,
    };
    // A process that serves only its user reaches private addresses unless
    // told not to; `axon serve` decides again once it knows whom it serves.
    axon_core::network::deny_private(!config.allow_private(false));
    axon_core::network::set_rules(config.network.rules().map_err(|e| usage(e.to_string()))?);
    match cli.command {
        Command::Call {
            tool,
            args,
            pairs,
            correlation_id,
        } => call(&config, ui, tool, args, pairs, correlation_id).await,
        Command::Run {
            plan,
            graph: Some(format),
            ..
        } => plans::graph(&config, ui, &plan, format).await,
        Command::Run {
            plan,
            run_id,
            record,
            ..
        } => plans::run(&config, ui, &plan, run_id, record.as_deref()).await,
        Command::Plan {
            action: PlanAction::FromRun { run_id, out },
        } => {
            let store = open_store(&config).await?;
            let compiled = plans::replay_plan(&store, &run_id).await;
            store.upkeep.close().await;
            plans::write_replay(ui, &compiled?, out.as_deref())?;
            Ok(Exit::Success)
        }
        Command::Validate { plan } => plans::validate(&config, ui, &plan).await,
        Command::Tools {
            action: Some(ToolsAction::Accept { name, fingerprint }),
            ..
        } => pin_commands::accept(&config, ui, &name, fingerprint.as_deref()).await,
        Command::Tools { changed: true, .. } => pin_commands::changed(&config, ui).await,
        Command::Tools { format, .. } => tools(&config, ui, format).await,
        Command::Approvals { all, action } => {
            approval_commands::run(&config, ui, all, action).await
        }
        Command::History { id } => history(&config, ui, &id).await,
        Command::Stats => stats(&config, ui).await,
        Command::Serve { bind } => serve(&config, ui, bind).await,
        Command::Mcp { caps } => mcp(&config, caps, ui).await,
        Command::Openapi => {
            output::print_json(axon_server::openapi_document());
            Ok(Exit::Success)
        }
        Command::Config { action } => match action {
            ConfigAction::Check { file } => {
                let path = file
                    .or(cli.config)
                    .ok_or_else(|| usage("config check: name a file (or set --config)"))?;
                let checked = Config::load(Some(&path)).map_err(|e| usage(e.to_string()))?;
                // An issuer down now is a warning: it may be up when serving.
                for (i, issuer) in checked.server.auth.issuers.iter().enumerate() {
                    let options = checked.server.auth.options(&([127, 0, 0, 1], 0).into());
                    let Some(options) = options.issuers.get(i) else {
                        continue;
                    };
                    if let Err(e) = axon_server::probe_issuer(options).await {
                        ui.note(&format!(
                            "warning: server.auth.issuers[{i}] ({}): {e}; tokens are refused (503) until it answers",
                            issuer.issuer
                        ));
                    }
                }
                ui.note(&format!("{}: ok", path.display()));
                Ok(Exit::Success)
            }
            ConfigAction::Show => {
                print!("{}", config.show());
                Ok(Exit::Success)
            }
        },
    }
}

fn parse_args(args: Option<String>, pairs: Vec<String>) -> Result<Value, Fail> {
    let mut map = match args {
        None => Map::new(),
        Some(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err(usage("--args must be a JSON object")),
            Err(e) => return Err(usage(format!("--args is not valid JSON: {e}"))),
        },
    };
    for pair in pairs {
        let (key, raw) = pair
            .split_once('=')
            .ok_or_else(|| usage(format!("{pair:?}: arguments are key=value")))?;
        let value = serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()));
        map.insert(key.to_string(), value);
    }
    Ok(Value::Object(map))
}

async fn call(
    config: &Config,
    ui: output::Ui,
    tool: String,
    args: Option<String>,
    pairs: Vec<String>,
    correlation_id: Option<String>,
) -> Outcome {
    let args = parse_args(args, pairs)?;
    let store = open_store(config).await?;
    let tools = [tool.clone()];
    let executor = executor(config, ui, Some(store.clone()), Imports::For(&tools)).await?;
    let mut call = ToolCall::new(tool, args);
    call.correlation_id = correlation_id.map(Into::into);
    // A call that waits for a person says so, and how to decide.
    call.events = Some(Arc::new(move |event| {
        if let axon_core::CallEvent::AwaitingApproval {
            call_id, reason, ..
        } = event
        {
            ui.warn(&format!(
                "waiting for approval ({reason}): axon approvals approve {call_id} (or deny)"
            ));
        }
    }));
    let result = executor.call(call).await;
    store.upkeep.close().await;
    output::call_result(ui, &result);
    Ok(match &result.error {
        None => Exit::Success,
        Some(e) if matches!(e.kind, ErrorKind::InvalidArguments | ErrorKind::UnknownTool) => {
            Exit::Usage
        }
        Some(_) => Exit::Failed,
    })
}

async fn tools(config: &Config, ui: output::Ui, format: ToolsFormat) -> Outcome {
    // The store too, so that imports are checked against their pins and a
    // held tool lists as held.
    let store = open_store(config).await?;
    let executor = executor(config, ui, Some(store.clone()), Imports::All).await;
    store.upkeep.close().await;
    let specs = executor?.registry().specs();
    match format {
        ToolsFormat::Table => output::tools_table(&specs),
        ToolsFormat::Json => output::print_json(&specs),
        ToolsFormat::Openai => output::print_json(&output::openai_tools(&specs)),
        ToolsFormat::Mcp => output::print_json(&output::mcp_tools(&specs)),
    }
    Ok(Exit::Success)
}

async fn history(config: &Config, ui: output::Ui, id: &str) -> Outcome {
    let store = open_store(config).await?;
    let found = if let Some(entry) = store
        .history
        .by_call_id(id)
        .await
        .map_err(|e| infra(e.to_string()))?
    {
        output::history_calls(ui, id, &[entry]);
        true
    } else if let Some(run) = store
        .runs
        .load(id)
        .await
        .map_err(|e| infra(e.to_string()))?
    {
        // A run's calls share its id as their correlation id.
        let calls = store
            .history
            .by_correlation(id)
            .await
            .map_err(|e| infra(e.to_string()))?;
        output::history_run(ui, &run, &calls);
        true
    } else {
        let entries = store
            .history
            .by_correlation(id)
            .await
            .map_err(|e| infra(e.to_string()))?;
        let found = !entries.is_empty();
        if found {
            output::history_calls(ui, id, &entries);
        }
        found
    };
    store.upkeep.close().await;
    if found {
        Ok(Exit::Success)
    } else {
        Err(usage(format!(
            "no call, run or correlation id {id:?} in {}",
            store.health.describe()
        )))
    }
}

async fn stats(config: &Config, ui: output::Ui) -> Outcome {
    let store = open_store(config).await?;
    let stats = store
        .figures
        .tool_stats()
        .await
        .map_err(|e| infra(e.to_string()))?;
    let executor = executor(config, ui, None, Imports::None).await?;
    // The latency figures and `"auto"` values come from history: this process
    // has observed nothing itself.
    wiring::seed_latencies(&executor, store.latencies.as_ref()).await;
    store.upkeep.close().await;
    // The breakers a server uses: the cluster's, when a shared store holds
    // them. This process's own are freshly built and say nothing.
    let mut breakers = Vec::with_capacity(stats.len());
    let clustered = wiring::shared(config).await?.is_some();
    for s in &stats {
        breakers.push(match clustered {
            true => executor.cluster_breaker_state(&s.tool).await,
            false => None,
        });
    }
    output::stats(ui, &stats, &breakers, &executor);
    Ok(Exit::Success)
}

async fn serve(config: &Config, ui: output::Ui, bind: Option<String>) -> Outcome {
    let bind = bind.unwrap_or_else(|| config.server.bind.clone());
    // A host name (`localhost:7878`) resolves; the first address is bound.
    let addr: std::net::SocketAddr = match bind.parse() {
        Ok(addr) => addr,
        Err(_) => tokio::net::lookup_host(bind.as_str())
            .await
            .ok()
            .and_then(|mut addrs| addrs.next())
            .ok_or_else(|| {
                usage(format!(
                    "--bind {bind:?}: not an address (host:port, such as 127.0.0.1:7878 or localhost:7878)"
                ))
            })?,
    };
    let tokens = config
        .server
        .tokens
        .iter()
        .enumerate()
        .map(|(i, t)| t.resolve(i))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| usage(e.to_string()))?;
    // Before anything is built: an address the server would refuse.
    let mut options = axon_server::ServerOptions {
        auth_tokens: config.server.auth_tokens.clone(),
        tokens,
        idp: config.server.auth.options(&addr),
        ..axon_server::ServerOptions::default()
    };
    options
        .check_bind(&addr)
        .map_err(|e| usage(e.to_string()))?;
    // The recorder must exist before the executor registers its metric handles.
    let metrics = axon_server::install_prometheus().map_err(|e| infra(e.to_string()))?;
    let (runner, store) = runner(config, ui, Imports::All).await?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| infra(format!("cannot bind {addr}: {e}")))?;
    let local = listener
        .local_addr()
        .map_err(|e| infra(format!("cannot read the bound address: {e}")))?;
    // No tool call of this process reaches its own API, nor, when it serves
    // others, what sits behind it (docs/security.md).
    axon_core::network::register_own_port(local.port());
    let serves_others =
        !local.ip().is_loopback() || !options.tokens.is_empty() || !options.idp.issuers.is_empty();
    // The default resource is the address bound (port 0 picks one).
    options.idp = config.server.auth.options(&local);
    axon_core::network::deny_private(!config.allow_private(serves_others));
    options = axon_server::ServerOptions {
        body_limit_bytes: config.server.body_limit_bytes as usize,
        shutdown_grace: std::time::Duration::from_millis(config.server.shutdown_grace_ms),
        header_timeout: std::time::Duration::from_millis(config.server.header_timeout_ms.max(1)),
        mcp_tools: config.mcp.filter(),
        allowed_hosts: config.server.host_names(&local),
        allowed_origins: config.server.allowed_origins.clone(),
        max_runs: config.server.max_runs,
        max_queued_runs: config.server.max_queued_runs,
        max_mcp_sessions: config.mcp.max_sessions.unwrap_or(1024),
        tenant_share_percent: config.server.tenant_share_percent,
        mcp_session_idle: std::time::Duration::from_millis(
            config.mcp.session_idle_ms.unwrap_or(300_000),
        ),
        ..options
    };
    let mut server = axon_server::Server::new(runner, &store, options)
        .with_metrics(metrics)
        .with_frames(wiring::frame_store(config))
        .taking_over_runs(config.takeover());
    if let Some(check) = wiring::shared_health() {
        server = server.with_component("shared", check);
    }
    // One line on stdout, so scripts and tests learn the port when it was 0.
    println!("axon: listening on http://{local}");
    if !ui.quiet {
        eprintln!(
            "axon: history in {}; Ctrl-C stops (runs in flight finish or are checkpointed)",
            store.health.describe()
        );
    }
    server
        .serve(listener, shutdown_signal())
        .await
        .map_err(|e| infra(format!("server failed: {e}")))?;
    store.upkeep.close().await;
    Ok(Exit::Success)
}

/// Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

async fn mcp(config: &Config, caps: Vec<String>, ui: output::Ui) -> Outcome {
    let mut filter = config.mcp.filter();
    for cap in caps {
        if !axon_core::CAPABILITIES.iter().any(|(name, _)| *name == cap) {
            let known: Vec<&str> = axon_core::CAPABILITIES.iter().map(|(n, _)| *n).collect();
            return Err(usage(format!(
                "--caps: no capability {cap:?} (there are: {})",
                known.join(", ")
            )));
        }
        filter.caps.push(cap);
    }
    let (runner, store) = runner(config, ui, Imports::All).await?;
    // stdout carries the protocol; logs go to stderr (telemetry::init).
    let served = axon_mcp_server::serve_stdio(runner, &axon_core::Caller::process(filter)).await;
    store.upkeep.close().await;
    served.map_err(|e| infra(e.to_string()))?;
    Ok(Exit::Success)
}
