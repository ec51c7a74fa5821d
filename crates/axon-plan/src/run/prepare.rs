//! A step's call as it will be made: its templates resolved, the secrets it
//! reads resolved (and scrubbed from everything the run keeps), values an
//! earlier step's stored form masked kept secret, the plan's and the step's
//! policies merged.

use std::collections::HashMap;
use std::sync::Arc;

use axon_core::redact::REDACTED;
use axon_core::{CallEvent, CallResult, ErrorKind, FallbackCall, HistoryEntry, StepMark, ToolCall};
use serde_json::Value;

use crate::secrets;
use crate::template::{TemplateSource, resolve, templates_in};

use super::*;

impl Run<'_> {
    /// The secret values a call of this run is scrubbed of: those its own
    /// templates resolved (remembered for later steps), those it inherited
    /// from masked fields, and every one an earlier step resolved.
    pub(super) fn all_secrets(
        &self,
        resolved: impl Iterator<Item = Value>,
        inherited: Vec<String>,
    ) -> Vec<String> {
        let mut seen = self.secrets_seen.lock().unwrap_or_else(|e| e.into_inner());
        for value in resolved {
            if let Value::String(s) = value
                && !seen.contains(&s)
            {
                seen.push(s);
            }
        }
        seen.iter().cloned().chain(inherited).collect()
    }

    /// The call of step `i` with its templates resolved, or the failure to resolve
    /// them. `record` receives the call's history entry as stored.
    pub(super) fn prepare(&self, i: usize, record: &Recorded) -> Result<ToolCall, Box<CallResult>> {
        let step = &self.plan.steps[i];
        let fail = |message: String| Box::new(self.template_failure(i, message));
        // Secrets are read now, as the step runs, and go nowhere but the call.
        let mut secret_values: HashMap<String, Value> = HashMap::new();
        // Values read from fields an earlier step's stored form masked (its
        // `access_token`) are secrets of this call too, whatever they are called here.
        let mut inherited: Vec<String> = Vec::new();
        let params = std::iter::once(&step.params).chain(step.fallbacks.iter().map(|f| &f.params));
        for template in params.flat_map(templates_in).flatten() {
            for r in template.references() {
                match &r.source {
                    TemplateSource::Secret(name) => {
                        if !secret_values.contains_key(name) {
                            let value = self
                                .runner
                                .secrets
                                .resolve_as(self.owner.tenant(), name)
                                .map_err(|e| fail(e.to_string()))?;
                            secret_values.insert(name.clone(), Value::String(value));
                        }
                    }
                    source => {
                        self.check_not_masked(source, r).map_err(&fail)?;
                        self.masked_values(source, r, &mut inherited);
                    }
                }
            }
        }
        let data = |source: &TemplateSource| -> Option<&Value> {
            let j = match source {
                TemplateSource::Index(n) => *n,
                TemplateSource::Id(id) => *self.ids.get(id.as_str())?,
                TemplateSource::Secret(name) => return secret_values.get(name),
            };
            self.outcomes
                .get(j)?
                .as_ref()?
                .result
                .as_ref()
                .map(|r| &r.data)
        };
        let args = resolve(&step.params, &data).map_err(|e| fail(e.to_string()))?;
        let fallbacks = step
            .fallbacks
            .iter()
            .map(|f| resolve(&f.params, &data).map(|args| FallbackCall::new(f.tool.clone(), args)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| fail(e.to_string()))?;
        let policy = merge_policies(self.plan.defaults.as_ref(), step.policy.as_ref());
        let events = self.step_events(i);
        let slot = record.clone();
        Ok(ToolCall {
            tool: step.tool.clone(),
            args,
            correlation_id: Some(self.correlation_id.clone()),
            policy,
            fallbacks,
            cancel: Some(self.stop.clone()),
            events,
            secrets: self.all_secrets(secret_values.into_values(), inherited),
            owner: self.owner.clone(),
            step: Some(Box::new(StepMark {
                run_id: self.run_id.clone(),
                index: i,
                id: step.id.clone(),
            })),
            on_record: Some(Arc::new(move |entry: &HistoryEntry| {
                if let Ok(mut slot) = slot.lock() {
                    *slot = Some(entry.clone());
                }
            })),
            // A step's data feeds later steps whole unless a policy bounds it.
            default_max_result_tokens: None,
            approval_id: None,
        })
    }

    /// The run's events for step `i`'s call (retries and progress), when
    /// someone listens to the run's events.
    fn step_events(&self, i: usize) -> Option<axon_core::EventSink> {
        let tx = self.events.clone()?;
        let run_id = self.run_id.clone();
        Some(Arc::new(move |e: CallEvent| {
            let event = match e {
                CallEvent::Retrying {
                    attempt,
                    error,
                    delay_ms,
                    ..
                } => PlanEvent::StepRetrying {
                    run_id: run_id.clone(),
                    index: i,
                    attempt,
                    error,
                    delay_ms,
                },
                CallEvent::Progress {
                    progress,
                    total,
                    message,
                    ..
                } => PlanEvent::StepProgress {
                    run_id: run_id.clone(),
                    index: i,
                    progress,
                    total,
                    message,
                },
                _ => return,
            };
            let _ = tx.send(event);
        }))
    }

    /// The real values behind what step `source`'s stored form masked, where
    /// template `r` reads them.
    pub(super) fn masked_values(
        &self,
        source: &TemplateSource,
        r: &crate::template::Reference,
        out: &mut Vec<String>,
    ) {
        let j = match source {
            TemplateSource::Index(n) => *n,
            TemplateSource::Id(id) => match self.ids.get(id.as_str()) {
                Some(j) => *j,
                None => return,
            },
            TemplateSource::Secret(_) => return,
        };
        let (Some(stored), Some(live), Some(read)) = (
            self.stored_form(j).and_then(|o| o.result.as_ref()),
            self.outcomes
                .get(j)
                .and_then(|o| o.as_ref()?.result.as_ref()),
            secrets::reference_pointer(r),
        ) else {
            return;
        };
        for masked in secrets::redacted_pointers(&stored.data) {
            if secrets::overlaps(&read, &masked)
                && let Some(value) = live.data.pointer(&masked)
            {
                collect_strings(value, out);
            }
        }
    }

    /// A template of a step that still has to run may not read what a resumed
    /// step's checkpoint masked: the real value was never stored.
    pub(super) fn check_not_masked(
        &self,
        source: &TemplateSource,
        r: &crate::template::Reference,
    ) -> Result<(), String> {
        let j = match source {
            TemplateSource::Index(n) => *n,
            TemplateSource::Id(id) => match self.ids.get(id.as_str()) {
                Some(j) => *j,
                None => return Ok(()),
            },
            TemplateSource::Secret(_) => return Ok(()),
        };
        if !self.resumed.get(j).copied().unwrap_or(false) {
            return Ok(());
        }
        let Some(data) = self
            .stored_form(j)
            .and_then(|o| o.result.as_ref())
            .map(|r| &r.data)
        else {
            return Ok(());
        };
        let Some(read) = secrets::reference_pointer(r) else {
            return Ok(());
        };
        match secrets::redacted_pointers(data)
            .into_iter()
            .find(|masked| secrets::overlaps(&read, masked))
        {
            None => Ok(()),
            Some(masked) => Err(format!(
                "template {}: {}'s data{masked} holds a secret, which is never stored, and {} finished before this run resumed; \
                 a step that reads a secret cannot resume: read it with ${{secret.NAME}}, or run the plan again under a new run id",
                r.text,
                self.plan.label(j),
                self.plan.label(j),
            )),
        }
    }

    /// A call result for a step whose templates could not be resolved.
    pub(super) fn template_failure(&self, i: usize, message: String) -> CallResult {
        uncalled(
            &self.plan.steps[i].tool,
            self.correlation_id.clone(),
            ErrorKind::InvalidArguments,
            "template",
            message,
        )
    }
}

fn collect_strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) if s != REDACTED => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}

/// Deep-merge a plan's defaults and a step's policy into one call-level layer.
pub(super) fn merge_policies(defaults: Option<&Value>, step: Option<&Value>) -> Option<Value> {
    match (defaults, step) {
        (None, None) => None,
        (Some(v), None) | (None, Some(v)) => Some(v.clone()),
        (Some(base), Some(over)) => {
            let mut merged = base.clone();
            axon_core::policy::merge_layer(&mut merged, over);
            Some(merged)
        }
    }
}
