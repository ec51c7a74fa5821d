//! What the CLI prints. Results go to stdout (one JSON document with `--json`);
//! progress, notes and errors go to stderr, so `axon run plan.yaml --json | jq`
//! always works.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axon_core::{CallResult, Executor, HistoryEntry, ToolSpec};
use axon_plan::{Plan, PlanEvent, PlanResult, RunRecord, StepOutcome, StepStatus};
use axon_store_roles::ToolStats;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;

/// How to talk to the user.
#[derive(Clone, Copy)]
pub struct Ui {
    pub json: bool,
    pub quiet: bool,
}

impl Ui {
    /// A note on stderr, unless quiet or in JSON mode.
    pub fn note(&self, text: &str) {
        if !self.quiet && !self.json {
            eprintln!("{text}");
        }
    }

    /// A warning on stderr (`axon: warning: …`), unless quiet. Shown in JSON mode
    /// too: stdout stays one document.
    pub fn warn(&self, text: &str) {
        if !self.quiet {
            eprintln!("axon: warning: {text}");
        }
    }
}

pub fn print_json<T: Serialize>(value: &T) {
    match serde_json::to_string_pretty(value) {
        Ok(text) => println!("{text}"),
        Err(e) => eprintln!("axon: cannot print JSON: {e}"),
    }
}

fn mark(success: bool) -> &'static str {
    if success { "✓" } else { "✗" }
}

fn clock(result: &CallResult) -> String {
    let text = result.started_at.to_string();
    text.get(11..23).unwrap_or(&text).to_string()
}

/// The retries and fallback of a call, one line each, indented.
fn call_story(result: &CallResult, indent: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for (i, reason) in result.retry_reasons.iter().enumerate() {
        let wait = result.retry_delays_ms.get(i).copied().unwrap_or(0);
        lines.push(format!(
            "{indent}↻ attempt {} failed: {reason} — retried after {wait} ms",
            i + 1
        ));
    }
    if let Some(fb) = &result.fallback {
        lines.push(format!(
            "{indent}⤷ fallback #{} served after {} failed: {}: {}",
            fb.index, fb.primary_tool, fb.primary_error.kind, fb.primary_error.message
        ));
    }
    if result.provenance.cache_hit {
        let fetched = result
            .provenance
            .fetched_at
            .map(|t| t.to_string())
            .unwrap_or_default();
        lines.push(format!("{indent}◆ served from cache (fetched {fetched})"));
    }
    if let Some(e) = &result.error {
        let code = e
            .code
            .as_deref()
            .map(|c| format!(" ({c})"))
            .unwrap_or_default();
        lines.push(format!("{indent}✗ {}{code}: {}", e.kind, e.message));
    }
    lines
}

fn attempts(n: u32) -> String {
    if n == 1 {
        "1 attempt".into()
    } else {
        format!("{n} attempts")
    }
}

pub fn call_result(ui: Ui, result: &CallResult) {
    if ui.json {
        match serde_json::to_string(result) {
            Ok(text) => println!("{text}"),
            Err(e) => eprintln!("axon: cannot print JSON: {e}"),
        }
        return;
    }
    if result.success {
        print_json(&result.data);
    }
    if !ui.quiet || !result.success {
        eprintln!(
            "{} {} · {} · {} ms · call {}",
            mark(result.success),
            result.tool,
            attempts(result.attempts),
            result.duration_ms,
            result.call_id
        );
        for line in call_story(result, "  ") {
            eprintln!("{line}");
        }
    }
}

/// Live progress of a run: a line per step on a terminal, plain lines otherwise.
/// `plan` is shared with the run, not copied (a large plan is held once).
pub async fn progress(plan: Arc<Plan>, mut events: UnboundedReceiver<PlanEvent>, tty: bool) {
    let multi = MultiProgress::new();
    let style = ProgressStyle::with_template("{spinner} {prefix:<28} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner());
    let mut bars: HashMap<usize, ProgressBar> = HashMap::new();
    let name = |i: usize| {
        format!(
            "{} {}",
            plan.label(i),
            plan.steps.get(i).map(|s| s.tool.as_str()).unwrap_or("")
        )
    };
    while let Some(event) = events.recv().await {
        match event {
            PlanEvent::RunStarted {
                run_id,
                steps,
                resumed,
            } => {
                let resumed = if resumed > 0 {
                    format!(", {resumed} reused from checkpoints")
                } else {
                    String::new()
                };
                let _ = multi.println(format!("run {run_id}: {steps} steps{resumed}"));
            }
            PlanEvent::StepStarted { index, .. } => {
                if tty {
                    let bar = multi.add(
                        ProgressBar::new_spinner()
                            .with_style(style.clone())
                            .with_prefix(name(index)),
                    );
                    bar.set_message("running");
                    bar.enable_steady_tick(Duration::from_millis(120));
                    bars.insert(index, bar);
                } else {
                    eprintln!("▶ {}", name(index));
                }
            }
            PlanEvent::StepRetrying {
                index,
                attempt,
                error,
                delay_ms,
                ..
            } => {
                let text = format!(
                    "attempt {attempt} failed ({}: {}); retrying in {delay_ms} ms",
                    error.kind, error.message
                );
                match bars.get(&index) {
                    Some(bar) => bar.set_message(text),
                    None => eprintln!("↻ {}: {text}", name(index)),
                }
            }
            PlanEvent::StepProgress {
                index,
                progress,
                total,
                message,
                ..
            } => {
                let text = progress_text(progress, total, message.as_deref());
                match bars.get(&index) {
                    Some(bar) => bar.set_message(text),
                    None => eprintln!("… {}: {text}", name(index)),
                }
            }
            PlanEvent::StepFinished { step, .. } => {
                let line = step_line(&step);
                match bars.remove(&step.index) {
                    Some(bar) => bar.finish_with_message(line),
                    None if tty => {
                        let _ = multi.println(format!("  {:<28} {line}", name(step.index)));
                    }
                    None => eprintln!("■ {} {line}", name(step.index)),
                }
            }
            PlanEvent::RunFinished { .. } => break,
        }
    }
}

/// "3/5 (60 %) · message", or "3 · message" when the end is unknown.
fn progress_text(progress: f64, total: Option<f64>, message: Option<&str>) -> String {
    let mut text = match total {
        Some(total) if total > 0.0 => {
            format!("{progress}/{total} ({:.0} %)", 100.0 * progress / total)
        }
        _ => format!("{progress}"),
    };
    if let Some(message) = message {
        text.push_str(" · ");
        text.push_str(message);
    }
    text
}

fn step_line(step: &StepOutcome) -> String {
    let status = match step.status {
        StepStatus::Succeeded => "✓ succeeded",
        StepStatus::Failed => "✗ failed",
        StepStatus::Skipped => "– skipped",
        StepStatus::Cancelled => "■ cancelled",
    };
    let detail = match &step.result {
        Some(r) if r.provenance.cache_hit => format!(" · cache hit · {} ms", r.duration_ms),
        Some(r) => {
            let via = r
                .fallback
                .as_ref()
                .map(|f| format!(" · via fallback #{}", f.index))
                .unwrap_or_default();
            format!(" · {} · {} ms{via}", attempts(r.attempts), r.duration_ms)
        }
        None => String::new(),
    };
    let reason = step
        .reason
        .as_ref()
        .map(|r| format!(" — {r}"))
        .unwrap_or_default();
    format!("{status}{detail}{reason}")
}

pub fn plan_result(ui: Ui, result: &PlanResult) {
    if ui.json {
        match serde_json::to_string(result) {
            Ok(text) => println!("{text}"),
            Err(e) => eprintln!("axon: cannot print JSON: {e}"),
        }
        return;
    }
    // Imported MCP tools have long names (`server__tool`): size the column to them.
    let tw = result
        .steps
        .iter()
        .map(|s| s.tool.len())
        .fold(14, usize::max);
    println!(
        "{:<4} {:<20} {:<tw$} {:<11} {:>8} {:>9}  reason",
        "#", "step", "tool", "status", "attempts", "ms"
    );
    for s in &result.steps {
        let (tries, ms) = s
            .result
            .as_ref()
            .map_or((String::from("-"), String::from("-")), |r| {
                (r.attempts.to_string(), r.duration_ms.to_string())
            });
        println!(
            "{:<4} {:<20} {:<tw$} {:<11} {:>8} {:>9}  {}",
            s.index,
            s.id.as_deref().unwrap_or("-"),
            s.tool,
            format!("{:?}", s.status).to_lowercase(),
            tries,
            ms,
            s.reason.as_deref().unwrap_or("")
        );
    }
    println!(
        "run {} {} in {} ms — details: axon history {}",
        result.run_id,
        format!("{:?}", result.status).to_lowercase(),
        result.duration_ms,
        result.run_id
    );
}

pub fn tools_table(specs: &[ToolSpec]) {
    let w = specs.iter().map(|s| s.name.len()).fold(28, usize::max);
    println!("{:<w$} {:<22} description", "tool", "hints");
    for s in specs {
        let a = &s.annotations;
        let mut hints = Vec::new();
        if a.read_only {
            hints.push("read-only");
        }
        if a.destructive {
            hints.push("destructive");
        }
        if a.idempotent {
            hints.push("idempotent");
        }
        println!("{:<w$} {:<22} {}", s.name, hints.join(","), s.description);
    }
}

/// OpenAI function-calling tool definitions.
pub fn openai_tools(specs: &[ToolSpec]) -> Value {
    specs.iter().map(ToolSpec::openai_function).collect()
}

/// The MCP `tools/list` result.
pub fn mcp_tools(specs: &[ToolSpec]) -> Value {
    json!({ "tools": specs.iter().map(axon_mcp_server::mcp_tool).collect::<Vec<_>>() })
}

pub fn history_calls(ui: Ui, id: &str, entries: &[HistoryEntry]) {
    if ui.json {
        print_json(&entries);
        return;
    }
    println!("{} call(s) for {id}", entries.len());
    for e in entries {
        let r = &e.result;
        println!(
            "{}  {} {:<24} {:<12} {:>7} ms  args {}",
            clock(r),
            mark(r.success),
            r.tool,
            attempts(r.attempts),
            r.duration_ms,
            e.args
        );
        for line in call_story(r, "                ") {
            println!("{line}");
        }
    }
}

pub fn history_run(ui: Ui, run: &RunRecord, calls: &[HistoryEntry]) {
    if ui.json {
        print_json(
            &json!({"run_id": run.run_id, "plan": run.plan, "checkpoints": run.steps, "result": run.result, "calls": calls}),
        );
        return;
    }
    let status = run.result.as_ref().map_or("unfinished".to_string(), |r| {
        format!("{:?}", r.status).to_lowercase()
    });
    println!(
        "run {} — {} — {} steps",
        run.run_id,
        status,
        run.plan.steps.len()
    );
    let steps: Vec<StepOutcome> = match &run.result {
        Some(r) => r.steps.clone(),
        None => run.steps.values().cloned().collect(),
    };
    for s in &steps {
        let when = s
            .result
            .as_ref()
            .map(clock)
            .unwrap_or_else(|| "            ".into());
        println!(
            "{when}  [{}] {:<20} {}",
            s.index,
            run.plan.label(s.index),
            step_line(s)
        );
        if let Some(r) = &s.result {
            for line in call_story(r, "                ") {
                println!("{line}");
            }
        }
    }
}

/// Per tool: the store's figures, the breaker as the cluster's store says
/// (`breakers[i]`, `None` where no shared store holds it: a server keeps its
/// breakers in its own memory, which this process cannot read), and the
/// timeout and hedge delay in force.
pub fn stats(
    ui: Ui,
    stats: &[ToolStats],
    breakers: &[Option<axon_core::policy::BreakerState>],
    executor: &Executor,
) {
    let breaker_of = |i: usize| breakers.get(i).copied().flatten();
    if ui.json {
        let rows: Vec<Value> = stats
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let mut v = serde_json::to_value(s).unwrap_or(Value::Null);
                v["breaker"] = json!(breaker_of(i));
                v["adaptive"] = json!(executor.adaptive(&s.tool));
                v
            })
            .collect();
        print_json(&rows);
        return;
    }
    println!(
        "{:<24} {:>7} {:>9} {:>8} {:>8} {:>8} {:>10} {:>8}  breaker",
        "tool", "calls", "success", "p50 ms", "p95 ms", "retried", "timeout", "hedge"
    );
    for (i, s) in stats.iter().enumerate() {
        let breaker = breaker_of(i).map_or("-".to_string(), |b| format!("{b:?}").to_lowercase());
        // The timeout and hedge delay in force; "auto" ones are marked with a
        // star (chosen from the latency this process has seen, or from history).
        let (timeout, hedge) = executor.adaptive(&s.tool).map_or_else(
            || ("-".to_string(), "-".to_string()),
            |a| {
                let star = |auto: bool| if auto { "*" } else { "" };
                (
                    format!("{}{}", a.timeout_ms, star(a.timeout_auto)),
                    a.hedge_after_ms.map_or("off".to_string(), |ms| {
                        format!("{ms}{}", star(a.hedge_auto))
                    }),
                )
            },
        );
        println!(
            "{:<24} {:>7} {:>8.1}% {:>8} {:>8} {:>8} {:>10} {:>8}  {breaker}",
            s.tool,
            s.calls,
            s.success_rate * 100.0,
            s.p50_ms,
            s.p95_ms,
            s.retried,
            timeout,
            hedge
        );
    }
    if breakers.iter().all(Option::is_none) && !stats.is_empty() {
        println!(
            "breaker -: without [shared] redis_url a server keeps its breakers in its own memory; ask it: GET /v1/breakers"
        );
    }
}
