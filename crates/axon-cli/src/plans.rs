//! The plan commands: `axon validate`, `axon graph`, `axon run` and
//! `axon replay`'s compiled plan — reading a plan file, checking it, drawing
//! its graph, running it with progress and writing a replay.

use super::*;

pub(crate) fn read_plan(path: &Path) -> Result<Plan, Fail> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| usage(format!("cannot read {}: {e}", path.display())))?;
    Plan::parse(&text).map_err(|e| usage(format!("{}: {e}", path.display())))
}

pub(crate) async fn validate(config: &Config, ui: output::Ui, path: &Path) -> Outcome {
    let plan = read_plan(path)?;
    let tools = plan_tools(&plan);
    let runner = PlanRunner::new(executor(config, ui, None, Imports::For(&tools)).await?);
    match runner.validate(&plan) {
        Ok(_) => {
            if ui.json {
                println!(
                    "{}",
                    serde_json::json!({"valid": true, "steps": plan.steps.len()})
                );
            } else {
                ui.note(&format!(
                    "{}: valid ({} steps)",
                    path.display(),
                    plan.steps.len()
                ));
            }
            Ok(Exit::Success)
        }
        Err(errors) => {
            if ui.json {
                println!(
                    "{}",
                    serde_json::json!({"valid": false, "problems": errors.0})
                );
                Ok(Exit::Usage)
            } else {
                Err(usage(format!("{}: {errors}", path.display())))
            }
        }
    }
}

/// A plan's DAG for `axon run --graph`.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum GraphArg {
    /// Graphviz: pipe into `dot -Tsvg`.
    Dot,
    /// Mermaid `flowchart`, drawn by GitHub and most docs tools.
    Mermaid,
}

pub(crate) async fn graph(
    config: &Config,
    ui: output::Ui,
    path: &Path,
    format: GraphArg,
) -> Outcome {
    let plan = read_plan(path)?;
    let tools = plan_tools(&plan);
    let runner = PlanRunner::new(executor(config, ui, None, Imports::For(&tools)).await?);
    let graph = runner
        .validate(&plan)
        .map_err(|e| usage(format!("{}: {e}", path.display())))?;
    let format = match format {
        GraphArg::Dot => axon_plan::GraphFormat::Dot,
        GraphArg::Mermaid => axon_plan::GraphFormat::Mermaid,
    };
    print!("{}", axon_plan::render_graph(&plan, &graph, format));
    Ok(Exit::Success)
}

pub(crate) async fn run(
    config: &Config,
    ui: output::Ui,
    path: &Path,
    run_id: Option<String>,
    record: Option<&Path>,
) -> Outcome {
    let plan = Arc::new(read_plan(path)?);
    let tools = plan_tools(&plan);
    let (runner, store) = runner(config, ui, Imports::For(&tools)).await?;
    runner
        .validate(&plan)
        .map_err(|e| usage(format!("{}: {e}", path.display())))?;

    let cancel = CancellationToken::new();
    let on_interrupt = cancel.clone();
    let quiet = ui.quiet;
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            if !quiet {
                eprintln!("axon: cancelling the run (Ctrl-C again to exit at once)");
            }
            on_interrupt.cancel();
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(INTERRUPTED);
            }
        }
    });

    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let live = !ui.json && !ui.quiet;
    let progress = live.then(|| {
        let tty = std::io::stderr().is_terminal();
        tokio::spawn(output::progress(Arc::clone(&plan), rx, tty))
    });
    let options = RunOptions {
        run_id,
        cancel: Some(cancel),
        events: live.then_some(tx),
        // The summary table needs no step's data; `--json` prints all of it.
        stream_results: !ui.json,
        ..RunOptions::default()
    };
    let result = runner
        .run(&plan, options)
        .await
        .map_err(|e| usage(e.to_string()))?;
    if let Some(p) = progress {
        let _ = p.await;
    }
    // Compiled from what the store keeps: secrets masked, never literals.
    let recorded = match record {
        Some(out) => Some((replay_plan(&store, &result.run_id).await, out)),
        None => None,
    };
    store.upkeep.close().await;
    output::plan_result(ui, &result);
    if let Some((compiled, out)) = recorded {
        write_replay(ui, &compiled?, Some(out))?;
    }
    Ok(if result.success() {
        Exit::Success
    } else {
        Exit::Failed
    })
}

/// Run `run_id` (as its store keeps it) compiled for replay.
pub(crate) async fn replay_plan(
    store: &axon_store_roles::Stores,
    run_id: &str,
) -> Result<axon_plan::Compiled, Fail> {
    let record = store
        .runs
        .load(run_id)
        .await
        .map_err(|e| infra(format!("store: {e}")))?
        .ok_or_else(|| usage(format!("no run {run_id:?} in {}", store.health.describe())))?;
    Ok(axon_plan::compile_replay(&record))
}

/// Write a replay plan as YAML to `out` (stdout when none), and say which
/// steps were replaced and why others were kept.
pub(crate) fn write_replay(
    ui: output::Ui,
    compiled: &axon_plan::Compiled,
    out: Option<&Path>,
) -> Result<(), Fail> {
    let yaml = serde_yaml_ng::to_string(&compiled.plan)
        .map_err(|e| infra(format!("the plan does not serialise: {e}")))?;
    match out {
        Some(path) => std::fs::write(path, yaml)
            .map_err(|e| infra(format!("cannot write {}: {e}", path.display())))?,
        None => print!("{yaml}"),
    }
    let replaced: Vec<String> = compiled
        .replaced
        .iter()
        .map(|i| format!("step[{i}]"))
        .collect();
    ui.note(&format!(
        "replay: {} browser_act step(s) replaced by their browser calls{}",
        replaced.len(),
        if replaced.is_empty() {
            String::new()
        } else {
            format!(" ({})", replaced.join(", "))
        }
    ));
    for kept in &compiled.kept {
        ui.note(&format!(
            "replay: step[{}] kept as browser_act: {}",
            kept.step, kept.reason
        ));
    }
    Ok(())
}
