//! A finished run compiled into a plan that replays it without a model.
//!
//! Every `browser_act` step that succeeded says which plain browser call it
//! made, the element by role and name (`data.call`). [`compile`] writes the
//! run's plan again with each such step replaced by that call, and keeps
//! `browser_act` with the step's own words as the step's first fallback: on
//! unchanged pages the replay runs no translator at all, and when a page has
//! changed so that the call no longer finds its element, the fallback
//! translates the step again — the step *heals*, and its result says so
//! (`fallback.used`).
//!
//! What is typed from a secret stays a reference: the run's stored results
//! hold `"***"` where a secret was (history never keeps one), and the replay
//! call gets the step's `${secret.NAME}` back in its place. A step whose text
//! reads other steps' data, or that typed from more than one secret, is kept
//! as it was (its reason is in [`Compiled::kept`]): the call would freeze
//! values the run had then.

use serde::Serialize;
use serde_json::Value;

use crate::plan::{Fallback, Plan, Step};
use crate::run::StepStatus;
use crate::store::RunRecord;
use crate::template::{TemplateSource, templates_in};

/// The tool whose steps are compiled.
const ACT: &str = "browser_act";

/// The mask history puts where a secret was.
const MASK: &str = "***";

/// A run's plan, compiled for replay.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Compiled {
    /// The plan to replay.
    pub plan: Plan,
    /// The `browser_act` steps replaced by the call they made, by index.
    pub replaced: Vec<usize>,
    /// The `browser_act` steps kept as they were, and why.
    pub kept: Vec<Kept>,
}

/// A `browser_act` step [`compile`] kept as it was.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Kept {
    /// Its index in the plan.
    pub step: usize,
    /// Why it was not replaced.
    pub reason: String,
}

/// Compile `run` (as its store keeps it: secrets masked) into a plan that
/// replays it (see the module's docs).
pub fn compile(run: &RunRecord) -> Compiled {
    let mut plan = run.plan.clone();
    let mut replaced = Vec::new();
    let mut kept = Vec::new();
    for (index, step) in plan.steps.iter_mut().enumerate() {
        if step.tool != ACT {
            continue;
        }
        match replay_step(run, index, step) {
            Ok(replay) => {
                *step = replay;
                replaced.push(index);
            }
            Err(reason) => kept.push(Kept {
                step: index,
                reason,
            }),
        }
    }
    Compiled {
        plan,
        replaced,
        kept,
    }
}

/// The step that replays `step` (step `index` of `run`), or why there is none.
fn replay_step(run: &RunRecord, index: usize, step: &Step) -> Result<Step, String> {
    let outcome = run
        .steps
        .get(&index)
        .filter(|o| o.status == StepStatus::Succeeded)
        .ok_or("it did not succeed in this run")?;
    let result = outcome.result.as_ref().ok_or("its result is not stored")?;
    if result.fallback.is_some() {
        return Err("a fallback served it".into());
    }
    let call = &result.data["call"];
    let tool = call["tool"]
        .as_str()
        .filter(|t| t.starts_with("browser_"))
        .ok_or("its result names no browser call")?;
    let mut args = call["args"].clone();
    let Some(map) = args.as_object_mut() else {
        return Err("its call has no arguments".into());
    };
    if map.contains_key("ref") {
        return Err("its element has no role and name, only a ref of that page".into());
    }
    let mut secrets = Vec::new();
    for template in templates_in(&step.params) {
        let template = template.map_err(|e| format!("its params do not parse: {e}"))?;
        for reference in template.references() {
            match &reference.source {
                TemplateSource::Secret(name) => secrets.push(name.clone()),
                _ if step.params.get("session").and_then(Value::as_str)
                    == Some(reference.text.as_str()) => {}
                _ => return Err(format!("its text reads {}", reference.text)),
            }
        }
    }
    secrets.sort();
    secrets.dedup();
    unmask(&mut args, &secrets)?;
    if let (Some(session), Some(map)) = (step.params.get("session"), args.as_object_mut()) {
        map.insert("session".into(), session.clone());
    }
    let mut fallbacks = vec![Fallback {
        tool: ACT.into(),
        params: step.params.clone(),
    }];
    fallbacks.extend(step.fallbacks.iter().cloned());
    Ok(Step {
        tool: tool.to_string(),
        params: args,
        fallbacks,
        ..step.clone()
    })
}

/// Put `${secret.NAME}` back where history masked the one secret the step
/// typed; refuse when the mask cannot be named.
fn unmask(args: &mut Value, secrets: &[String]) -> Result<(), String> {
    match args {
        Value::String(s) if s.contains(MASK) => match secrets {
            [name] => {
                *s = s.replace(MASK, &format!("${{secret.{name}}}"));
                Ok(())
            }
            [] => Err("it typed a masked value no secret of the step names".into()),
            _ => Err("it typed from more than one secret".into()),
        },
        Value::Array(items) => items.iter_mut().try_for_each(|i| unmask(i, secrets)),
        Value::Object(map) => map.values_mut().try_for_each(|v| unmask(v, secrets)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use axon_core::{CallResult, Provenance, SmolStr, Timestamp};
    use serde_json::json;

    use super::*;
    use crate::run::StepOutcome;

    fn acted(index: usize, call: Value) -> StepOutcome {
        StepOutcome {
            index,
            id: None,
            tool: ACT.into(),
            status: StepStatus::Succeeded,
            result: Some(CallResult {
                call_id: SmolStr::new("c"),
                correlation_id: SmolStr::new("r"),
                tool: SmolStr::new(ACT),
                success: true,
                data: json!({"action": "type", "call": call}),
                error: None,
                attempts: 1,
                retry_reasons: Vec::new(),
                retry_delays_ms: Vec::new(),
                started_at: Timestamp::now(),
                duration_ms: 1,
                fallback: None,
                provenance: Provenance::none(),
                cut: None,
                approval: None,
            }),
            reason: None,
        }
    }

    fn run(plan: &str, steps: Vec<StepOutcome>) -> RunRecord {
        RunRecord {
            run_id: "r".into(),
            plan: Plan::parse(plan).unwrap(),
            steps: steps
                .into_iter()
                .map(|s| (s.index, s))
                .collect::<BTreeMap<_, _>>(),
            result: None,
            owner: axon_core::Owner::Process,
        }
    }

    #[test]
    fn an_act_step_becomes_its_call_with_the_step_as_its_fallback() {
        let record = run(
            "steps:\n- {id: go, tool: browser_navigate, params: {url: 'http://x/'}}\n- {id: login, tool: browser_act, params: {plan_step: Click Sign in}, depends_on: [go]}\n",
            vec![acted(
                1,
                json!({"tool": "browser_click", "args": {"role": "button", "name": "Sign in"}}),
            )],
        );
        let compiled = compile(&record);
        assert_eq!(compiled.replaced, vec![1]);
        let step = &compiled.plan.steps[1];
        assert_eq!(step.tool, "browser_click");
        assert_eq!(step.params, json!({"role": "button", "name": "Sign in"}));
        assert_eq!(step.id.as_deref(), Some("login"));
        assert_eq!(step.depends_on, record.plan.steps[1].depends_on);
        assert_eq!(step.fallbacks[0].tool, ACT);
        assert_eq!(
            step.fallbacks[0].params,
            json!({"plan_step": "Click Sign in"})
        );
        assert_eq!(compiled.plan.steps[0], record.plan.steps[0]);
    }

    #[test]
    fn a_typed_secret_stays_a_reference() {
        let record = run(
            "steps:\n- {tool: browser_act, params: {plan_step: 'Type ${secret.PASSWORD} into Password', session: s1}}\n",
            vec![acted(
                0,
                json!({"tool": "browser_type", "args": {"role": "textbox", "name": "Password", "text": "***", "clear": true}}),
            )],
        );
        let compiled = compile(&record);
        let step = &compiled.plan.steps[0];
        assert_eq!(step.params["text"], "${secret.PASSWORD}");
        assert_eq!(step.params["session"], "s1");
        let yaml = serde_yaml_ng::to_string(&compiled.plan).unwrap();
        assert!(!yaml.contains(MASK), "{yaml}");
    }

    #[test]
    fn steps_that_cannot_be_replayed_are_kept_with_their_reason() {
        let record = run(
            "steps:\n- {id: a, tool: echo}\n- {tool: browser_act, params: {plan_step: 'Type ${steps.a.data.x} into Name'}}\n- {tool: browser_act, params: {plan_step: Click it}}\n- {tool: browser_act, params: {plan_step: Click Go}}\n",
            vec![
                acted(
                    1,
                    json!({"tool": "browser_type", "args": {"role": "textbox", "name": "Name", "text": "v"}}),
                ),
                acted(2, json!({"tool": "browser_click", "args": {"ref": "e12"}})),
            ],
        );
        let compiled = compile(&record);
        assert!(compiled.replaced.is_empty());
        let reasons: Vec<&str> = compiled.kept.iter().map(|k| k.reason.as_str()).collect();
        assert_eq!(
            reasons,
            vec![
                "its text reads ${steps.a.data.x}",
                "its element has no role and name, only a ref of that page",
                "it did not succeed in this run",
            ]
        );
        assert_eq!(compiled.plan, record.plan);
    }
}
