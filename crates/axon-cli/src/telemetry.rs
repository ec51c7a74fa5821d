//! Logs and traces: the `tracing` subscriber the `axon` command installs.
//!
//! Log lines go to stderr as text or JSON (`[log]`). With `[telemetry]` on (or
//! the standard `OTEL_EXPORTER_OTLP_*` variables set), the spans Axon's crates
//! open (docs/telemetry.md: `run_plan`, `step`, `execute_tool`, `attempt`,
//! `browser.*`, `tools/call` to and from MCP servers, HTTP server and client)
//! are exported over OTLP, HTTP/protobuf or gRPC, and W3C trace context crosses
//! every boundary Axon has (`axon_core::trace`).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axon_cli::config::{Config, LogFormat, OtlpProtocol, TelemetryConfig};
use axon_core::trace::sampling::HeadSampler;
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::{TraceContextExt, TracerProvider as _};
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{Sampler, SdkTracerProvider};
use tracing::level_filters::LevelFilter;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// What must be flushed before the process ends.
pub struct Telemetry {
    provider: Option<SdkTracerProvider>,
    closed: Closed,
}

/// How long the end of the command waits for its root span to close.
const ROOT_WAIT: Duration = Duration::from_secs(2);

impl Telemetry {
    /// Export the spans still buffered, the command's `root` (`axon run`,
    /// `axon call`) among them; bounded: a collector that went away does not
    /// hold the command's exit for long.
    ///
    /// A span ends when its last handle goes, and the command's future is not
    /// the only holder: sqlx's SQLite worker thread keeps the span that was
    /// current when a query was sent until it has finished with the query,
    /// after it answered. The root can therefore end on that thread after the
    /// command returned; spans that end once the exporter has stopped are
    /// lost (one CI run lost `axon run` so). So the exporter stops only once
    /// the root has ended, or after [`ROOT_WAIT`].
    pub async fn shutdown(self, root: tracing::Span) {
        let Some(provider) = self.provider else {
            return;
        };
        if let Some(id) = root.id() {
            self.closed.watch(&id);
            drop(root);
            let _ = tokio::time::timeout(ROOT_WAIT, self.closed.0.notified.notified()).await;
        }
        let flush = tokio::task::spawn_blocking(move || provider.shutdown());
        match tokio::time::timeout(Duration::from_secs(5), flush).await {
            Ok(Ok(Ok(()))) => {}
            Ok(Ok(Err(e))) => eprintln!("axon: telemetry: exporting the last spans failed: {e}"),
            _ => eprintln!("axon: telemetry: the collector did not take the last spans in 5 s"),
        }
    }
}

/// Telemetry could not be set up as configured; the message names the
/// `[telemetry]` key or variable at fault (a usage error: the command does
/// not run).
#[derive(Debug)]
pub struct TelemetryError(String);

impl std::fmt::Display for TelemetryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TelemetryError {}

/// Install the logger and, when telemetry is on, the OTLP exporter and the trace
/// context propagator. An error names the `[telemetry]` key or variable at fault.
pub fn init(config: &Config, verbose: u8, quiet: bool) -> Result<Telemetry, TelemetryError> {
    let filter = log_filter(config, verbose, quiet);
    let fmt = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let fmt = if config.log.format == LogFormat::Json {
        fmt.json().with_filter(filter).boxed()
    } else {
        fmt.with_filter(filter).boxed()
    };
    let Some(export) = Export::resolve(&config.telemetry).map_err(TelemetryError)? else {
        tracing_subscriber::registry().with(fmt).init();
        return Ok(Telemetry {
            provider: None,
            closed: Closed::default(),
        });
    };
    let provider = export.provider().map_err(TelemetryError)?;
    // Spans of Axon's crates at every level (they are debug spans, so that the
    // log lines at info do not carry them) in the traces sampled when they
    // start (axon_core::trace::sampling), their events at info and above.
    let sampler = HeadSampler::new(export.sampling_ratio);
    let otel = tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("axon"))
        .with_threads(false)
        .with_location(false)
        .with_tracked_inactivity(false)
        .with_filter(sampler);
    // The gate outermost: no span of an unsampled trace is built, for any
    // layer. `Closed` hears a span's close after the OpenTelemetry layer has
    // handed it to the exporter.
    let closed = Closed::default();
    tracing_subscriber::registry()
        .with(fmt)
        .with(otel)
        .with(sampler.gate())
        .with(closed.clone())
        .init();
    axon_core::trace::install(Box::new(W3c(TraceContextPropagator::new())));
    Ok(Telemetry {
        provider: Some(provider),
        closed,
    })
}

/// A layer that tells when one span, the command's root, has closed.
#[derive(Clone, Default)]
struct Closed(Arc<Watched>);

#[derive(Default)]
struct Watched {
    /// The span waited for (`0`: none; span ids are never 0).
    id: AtomicU64,
    notified: tokio::sync::Notify,
}

impl Closed {
    /// Wait for `id` from now on; call while its span is still held.
    fn watch(&self, id: &tracing::span::Id) {
        self.0.id.store(id.into_u64(), Ordering::SeqCst);
    }
}

impl<S: tracing::Subscriber> Layer<S> for Closed {
    fn on_close(&self, id: tracing::span::Id, _: tracing_subscriber::layer::Context<'_, S>) {
        let id = id.into_u64();
        if self.0.id.load(Ordering::Relaxed) == id
            && self
                .0
                .id
                .compare_exchange(id, 0, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        {
            // A permit: `shutdown` may start waiting after this.
            self.0.notified.notify_one();
        }
    }
}

fn log_filter(config: &Config, verbose: u8, quiet: bool) -> EnvFilter {
    EnvFilter::builder()
        .with_default_directive(LevelFilter::WARN.into())
        .parse(directives(config, verbose, quiet))
        .unwrap_or_else(|_| EnvFilter::new("warn"))
}

/// The filter's directives: the level asked for, with the chatty libraries
/// capped.
fn directives(config: &Config, verbose: u8, quiet: bool) -> String {
    let level = match (quiet, verbose) {
        (true, _) => "error".to_string(),
        (false, 0) => config.log.level.clone(),
        (false, 1) => "info".to_string(),
        (false, _) => "debug".to_string(),
    };
    // Libraries that log whole messages at debug (rmcp: every JSON-RPC request
    // and response, with a plan's passwords in it; sqlx: statements) stay at
    // info unless the filter names them itself: secrets never reach the logs.
    // Never above the level asked for: `-q` silences them too.
    let cap = match level.as_str() {
        "off" | "error" | "warn" => level.as_str(),
        _ => "info",
    };
    let mut directives = level.clone();
    for target in [
        "rmcp",
        "sqlx",
        "hyper",
        "h2",
        "reqwest",
        "opentelemetry",
        "tonic",
    ] {
        if !directives.contains(target) {
            directives.push_str(&format!(",{target}={cap}"));
        }
    }
    // chromiumoxide warns about every DevTools event newer than its protocol
    // ("WS Invalid message"): noise, unless asked for with -vv. Its
    // connection handler logs an error each time Chromium closes (every
    // `axon run` with a browser ends with "WS Connection error:
    // ResetWithoutClosingHandshake"); a browser that dies mid-call is Axon's
    // own error and log line, so the handler is heard from with -v.
    if !directives.contains("chromiumoxide") {
        let chromium = match verbose {
            0 => "error,chromiumoxide::handler=off",
            1 => "error",
            _ => "info",
        };
        directives.push_str(&format!(",chromiumoxide={chromium}"));
    }
    directives
}

/// Where and how spans are exported, resolved from `[telemetry]` and the
/// standard variables.
struct Export {
    /// Set in `[telemetry]`; else the exporter reads the variables itself.
    endpoint: Option<String>,
    protocol: OtlpProtocol,
    service_name: String,
    sampling_ratio: f64,
}

impl Export {
    /// `None` when telemetry is off: turned off, `OTEL_SDK_DISABLED=true`,
    /// `OTEL_TRACES_EXPORTER=none`, or no endpoint anywhere.
    fn resolve(config: &TelemetryConfig) -> Result<Option<Export>, String> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        if config.enabled == Some(false)
            || var("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"))
            || var("OTEL_TRACES_EXPORTER").is_some_and(|v| v == "none")
        {
            return Ok(None);
        }
        let from_env = var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            .or_else(|| var("OTEL_EXPORTER_OTLP_ENDPOINT"))
            .is_some();
        if config.otlp_endpoint.is_none() && !from_env {
            if config.enabled == Some(true) {
                return Err("telemetry.enabled: true, but no collector is named: set telemetry.otlp_endpoint or OTEL_EXPORTER_OTLP_ENDPOINT".into());
            }
            return Ok(None);
        }
        let protocol = match config.protocol {
            Some(p) => p,
            None => {
                let name = [
                    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
                    "OTEL_EXPORTER_OTLP_PROTOCOL",
                ]
                .into_iter()
                .find(|name| var(name).is_some());
                match name.map(|n| (n, var(n).unwrap_or_default())) {
                    None => OtlpProtocol::HttpProtobuf,
                    Some((_, v)) if v == "http/protobuf" => OtlpProtocol::HttpProtobuf,
                    Some((_, v)) if v == "grpc" => OtlpProtocol::Grpc,
                    Some((n, v)) => {
                        return Err(format!(
                            "{n}: {v:?} is not supported (http/protobuf or grpc)"
                        ));
                    }
                }
            }
        };
        let sampling_ratio = match config.sampling_ratio {
            Some(r) => r,
            None => match var("OTEL_TRACES_SAMPLER_ARG") {
                None => 1.0,
                Some(v) => match v.trim().parse::<f64>() {
                    Ok(r) if (0.0..=1.0).contains(&r) => r,
                    _ => {
                        return Err(format!(
                            "OTEL_TRACES_SAMPLER_ARG: {v:?} is not a ratio between 0 and 1"
                        ));
                    }
                },
            },
        };
        Ok(Some(Export {
            endpoint: config.otlp_endpoint.clone(),
            protocol,
            service_name: config
                .service_name
                .clone()
                .or_else(|| var("OTEL_SERVICE_NAME"))
                .unwrap_or_else(|| "axon".into()),
            sampling_ratio,
        }))
    }

    fn provider(&self) -> Result<SdkTracerProvider, String> {
        // reqwest (the HTTP exporter) is built without a default TLS provider.
        axon_http_tool::install_crypto_provider();
        let exporter = match self.protocol {
            OtlpProtocol::HttpProtobuf => {
                let mut builder = opentelemetry_otlp::SpanExporter::builder()
                    .with_http()
                    .with_protocol(opentelemetry_otlp::Protocol::HttpBinary);
                if let Some(base) = &self.endpoint {
                    // A base URL, like OTEL_EXPORTER_OTLP_ENDPOINT.
                    builder =
                        builder.with_endpoint(format!("{}/v1/traces", base.trim_end_matches('/')));
                }
                builder.build()
            }
            OtlpProtocol::Grpc => {
                let mut builder = opentelemetry_otlp::SpanExporter::builder().with_tonic();
                if let Some(endpoint) = &self.endpoint {
                    builder = builder.with_endpoint(endpoint.clone());
                }
                builder.build()
            }
        }
        .map_err(|e| format!("telemetry: cannot build the OTLP exporter: {e}"))?;
        // The ratio is applied where a trace starts, before its spans are
        // built (axon_core::trace::sampling); what reaches the SDK is to be kept,
        // unless a remote parent said not to.
        let sampler = Sampler::ParentBased(Box::new(Sampler::AlwaysOn));
        Ok(SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_sampler(sampler)
            .with_resource(
                Resource::builder()
                    .with_service_name(self.service_name.clone())
                    .build(),
            )
            .build())
    }
}

/// W3C Trace Context between `tracing` spans and carriers, for `axon_core::trace`.
struct W3c(TraceContextPropagator);

impl axon_core::trace::Propagator for W3c {
    fn inject(&self, span: &tracing::Span, put: &mut dyn FnMut(&'static str, String)) {
        let cx = span.context();
        if !cx.span().span_context().is_valid() {
            return;
        }
        let mut fields = HashMap::new();
        self.0.inject_context(&cx, &mut fields);
        for key in [axon_core::trace::TRACEPARENT, axon_core::trace::TRACESTATE] {
            if let Some(value) = fields.remove(key) {
                put(key, value);
            }
        }
    }

    fn adopt(&self, span: &tracing::Span, get: &dyn Fn(&str) -> Option<String>) {
        let fields: HashMap<String, String> =
            [axon_core::trace::TRACEPARENT, axon_core::trace::TRACESTATE]
                .into_iter()
                .filter_map(|key| get(key).map(|v| (key.to_string(), v)))
                .collect();
        if fields.is_empty() {
            return;
        }
        let cx = self.0.extract(&fields);
        if cx.span().span_context().is_valid() {
            let _ = span.set_parent(cx);
        }
    }
}

#[cfg(test)]
mod filter_tests {
    use super::*;

    #[test]
    fn quiet_silences_the_libraries_too() {
        let config = Config::default();
        let quiet = directives(&config, 0, true);
        assert!(quiet.starts_with("error,"), "{quiet}");
        assert!(
            quiet.contains("rmcp=error") && !quiet.contains("=info"),
            "{quiet}"
        );
        let chatty = directives(&config, 2, false);
        assert!(
            chatty.contains("rmcp=info") && chatty.contains("chromiumoxide=info"),
            "{chatty}"
        );
        let plain = directives(&config, 0, false);
        assert!(
            plain.contains("chromiumoxide=error") && plain.contains("chromiumoxide::handler=off"),
            "{plain}"
        );
        assert!(!directives(&config, 1, false).contains("handler=off"));
    }
}

#[cfg(test)]
mod shutdown_tests {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use opentelemetry::trace::TracerProvider as _;
    use opentelemetry_sdk::error::OTelSdkResult;
    use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
    use tracing_subscriber::layer::SubscriberExt;

    use super::Telemetry;

    /// Keeps the names of the spans exported.
    #[derive(Clone, Debug, Default)]
    struct Names(Arc<Mutex<Vec<String>>>);

    impl SpanExporter for Names {
        async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
            let mut names = self.0.lock().unwrap();
            names.extend(batch.into_iter().map(|s| s.name.to_string()));
            Ok(())
        }
    }

    /// sqlx's SQLite worker thread keeps the span that was current when a
    /// query was sent until it has finished with the query, after it has
    /// answered: the command's root span can close on that thread after the
    /// command returned. Its end is exported all the same.
    #[tokio::test]
    async fn the_root_is_exported_when_another_thread_lets_go_of_it_last() {
        let names = Names::default();
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(names.clone())
            .build();
        let closed = super::Closed::default();
        let subscriber = tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("axon")))
            .with(closed.clone());
        let telemetry = Telemetry {
            provider: Some(provider),
            closed,
        };
        let _default = tracing::subscriber::set_default(subscriber);
        let root = tracing::info_span!("cli", otel.name = "axon run");
        let held = root.clone();
        let worker = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            drop(held);
        });
        telemetry.shutdown(root).await;
        worker.join().unwrap();
        assert_eq!(*names.0.lock().unwrap(), ["axon run"]);
    }
}
