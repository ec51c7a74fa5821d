//! Validation before anything runs. Every problem is collected — not just the
//! first — and each names its step and field: unknown tools, bad or duplicate ids,
//! references to unknown steps or to the step itself, malformed templates, literal
//! parameters that break the tool's schema, bad policy keys, and cycles, named as
//! `cycle: a → b → a`. A step referenced by a template becomes a dependency even
//! when `depends_on` omits it. `axon validate` runs only this.

use std::collections::{BTreeSet, HashMap};
use std::fmt;

use axon_core::{ErrorKind, Policy, ToolRegistry};
use serde::Serialize;
use serde_json::Value;

use crate::plan::{Plan, StepRef};
use crate::template::{TemplateSource, templates_in};

/// The longest `idempotency_key` a step may have (as the HTTP header).
pub const MAX_IDEMPOTENCY_KEY_LEN: usize = 255;

/// One thing wrong with a plan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PlanProblem {
    /// The step, when the problem belongs to one.
    pub step: Option<usize>,
    /// The field, as a path (`steps[2].params`, `max_parallel`).
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for PlanProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// Everything wrong with a plan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
pub struct PlanErrors(pub Vec<PlanProblem>);

impl fmt::Display for PlanErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines: Vec<String> = self.0.iter().map(PlanProblem::to_string).collect();
        write!(f, "invalid plan:\n  {}", lines.join("\n  "))
    }
}

/// Who waits for whom, after validation.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    /// `deps[i]`: the steps `i` waits for.
    pub deps: Vec<Vec<usize>>,
    /// `dependents[i]`: the steps that wait for `i`.
    pub dependents: Vec<Vec<usize>>,
}

fn valid_id(id: &str) -> bool {
    let mut chars = id.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && id.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Check a plan against the tools that exist; on success, its dependency graph.
pub fn validate(plan: &Plan, registry: &ToolRegistry) -> Result<Graph, PlanErrors> {
    let mut check = Checker {
        plan,
        registry,
        ids: HashMap::new(),
        deps: vec![BTreeSet::new(); plan.steps.len()],
        problems: Vec::new(),
    };
    check.plan_fields();
    check.ids();
    for i in 0..plan.steps.len() {
        check.step(i);
    }
    let deps = check.acyclic_deps();
    if !check.problems.is_empty() {
        return Err(PlanErrors(check.problems));
    }
    let mut dependents = vec![Vec::new(); deps.len()];
    for (i, ds) in deps.iter().enumerate() {
        for &d in ds {
            dependents[d].push(i);
        }
    }
    Ok(Graph { deps, dependents })
}

/// One validation: the plan, what it has found so far (ids, dependencies) and
/// every problem, in the order a reader meets them in the plan.
struct Checker<'a> {
    plan: &'a Plan,
    registry: &'a ToolRegistry,
    ids: HashMap<&'a str, usize>,
    deps: Vec<BTreeSet<usize>>,
    problems: Vec<PlanProblem>,
}

impl<'a> Checker<'a> {
    fn push(&mut self, step: Option<usize>, field: String, message: String) {
        self.problems.push(PlanProblem {
            step,
            field,
            message,
        });
    }

    /// `steps`, `max_parallel` and `defaults`.
    fn plan_fields(&mut self) {
        let plan = self.plan;
        if plan.steps.is_empty() {
            self.push(
                None,
                "steps".into(),
                "a plan needs at least one step".into(),
            );
        }
        if plan.max_parallel == 0 {
            self.push(None, "max_parallel".into(), "must be at least 1".into());
        }
        if let Some(defaults) = &plan.defaults
            && let Err(e) =
                Policy::check_call_layer(defaults).and_then(|_| Policy::layered([defaults]))
        {
            self.push(None, format!("defaults.{}", e.key), e.message);
        }
    }

    /// Every step id: well-formed and unique.
    fn ids(&mut self) {
        let plan = self.plan;
        for (i, step) in plan.steps.iter().enumerate() {
            let Some(id) = &step.id else { continue };
            if !valid_id(id) {
                self.push(
                    Some(i),
                    format!("steps[{i}].id"),
                    format!(
                        "{id:?} is not a valid id: letters, digits, '_' and '-', starting with a letter or '_'"
                    ),
                );
            } else if let Some(first) = self.ids.insert(id, i) {
                self.push(
                    Some(i),
                    format!("steps[{i}].id"),
                    format!("duplicate id {id:?} (also steps[{first}])"),
                );
            }
        }
    }

    fn index_of(&self, r: &StepRef) -> Option<usize> {
        match r {
            StepRef::Index(n) => (*n < self.plan.steps.len()).then_some(*n),
            StepRef::Id(id) => self.ids.get(id.as_str()).copied(),
        }
    }

    /// One step: its tool, `depends_on`, params, idempotency key, fallbacks and
    /// policy.
    fn step(&mut self, i: usize) {
        let plan = self.plan;
        let step = &plan.steps[i];
        let here = format!("steps[{i}]");
        if self.registry.get(&step.tool).is_none() {
            self.push(
                Some(i),
                format!("{here}.tool"),
                format!("unknown tool {:?}", step.tool),
            );
        }
        for (k, r) in step.depends_on.iter().enumerate() {
            match self.index_of(r) {
                None => self.push(
                    Some(i),
                    format!("{here}.depends_on[{k}]"),
                    format!("no step {r}"),
                ),
                Some(j) if j == i => self.push(
                    Some(i),
                    format!("{here}.depends_on[{k}]"),
                    "a step cannot depend on itself".into(),
                ),
                Some(j) => {
                    self.deps[i].insert(j);
                }
            }
        }
        self.params(i, format!("{here}.params"), &step.tool, &step.params);
        if let Some(key) = &step.idempotency_key {
            let problem = if key.is_empty() || key.len() > MAX_IDEMPOTENCY_KEY_LEN {
                Some(format!(
                    "must be 1 to {MAX_IDEMPOTENCY_KEY_LEN} characters long"
                ))
            } else if key.contains("${") {
                Some("must be a plain string: templates are not resolved here".into())
            } else {
                None
            };
            if let Some(message) = problem {
                self.push(Some(i), format!("{here}.idempotency_key"), message);
            }
        }
        for (k, fb) in step.fallbacks.iter().enumerate() {
            if self.registry.get(&fb.tool).is_none() {
                self.push(
                    Some(i),
                    format!("{here}.fallbacks[{k}].tool"),
                    format!("unknown tool {:?}", fb.tool),
                );
            }
            self.params(
                i,
                format!("{here}.fallbacks[{k}].params"),
                &fb.tool,
                &fb.params,
            );
        }
        let layers: Vec<&Value> = plan.defaults.iter().chain(step.policy.iter()).collect();
        if let Some(policy) = &step.policy
            && let Err(e) = Policy::check_call_layer(policy).and_then(|_| Policy::layered(layers))
        {
            self.push(Some(i), format!("{here}.policy.{}", e.key), e.message);
        }
    }

    /// Step `i`'s params for `tool` (its own or a fallback's): an object whose
    /// templates parse and refer to other steps (each one a dependency), and,
    /// when nothing in it is templated, valid for the tool's schema now.
    fn params(&mut self, i: usize, field: String, tool: &str, params: &Value) {
        if !params.is_object() {
            self.push(Some(i), field, "params must be an object".into());
            return;
        }
        let templates = templates_in(params);
        for t in &templates {
            let t = match t {
                Err(e) => {
                    self.push(Some(i), field.clone(), e.to_string());
                    continue;
                }
                Ok(t) => t,
            };
            for r in t.references() {
                let target = match &r.source {
                    TemplateSource::Index(n) => self.index_of(&StepRef::Index(*n)),
                    TemplateSource::Id(id) => self.index_of(&StepRef::Id(id.clone())),
                    // Checked by the runner, which knows the secrets.
                    TemplateSource::Secret(_) => continue,
                };
                match target {
                    None => self.push(
                        Some(i),
                        field.clone(),
                        format!("template {} refers to no step", r.text),
                    ),
                    Some(j) if j == i => self.push(
                        Some(i),
                        field.clone(),
                        format!("template {} refers to its own step", r.text),
                    ),
                    Some(j) => {
                        self.deps[i].insert(j);
                    }
                }
            }
        }
        // Literal parameters can be checked now; templated ones when resolved.
        if templates.is_empty()
            && let Some(t) = self.registry.get(tool)
            && let Err(e) = t.input.check(params, ErrorKind::InvalidArguments, "params")
        {
            self.push(Some(i), field, e.message);
        }
    }

    /// The dependencies as lists, with a problem for every cycle among them.
    fn acyclic_deps(&mut self) -> Vec<Vec<usize>> {
        let deps: Vec<Vec<usize>> = std::mem::take(&mut self.deps)
            .into_iter()
            .map(|d| d.into_iter().collect())
            .collect();
        for cycle in cycles(&deps) {
            let names: Vec<String> = cycle.iter().map(|&i| self.plan.label(i)).collect();
            self.push(
                Some(cycle[0]),
                format!("steps[{}].depends_on", cycle[0]),
                format!("cycle: {}", names.join(" → ")),
            );
        }
        deps
    }
}

/// The cycles of a dependency graph, each as a closed path (first = last).
fn cycles(deps: &[Vec<usize>]) -> Vec<Vec<usize>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let mut mark = vec![Mark::New; deps.len()];
    let mut found = Vec::new();
    for root in 0..deps.len() {
        if mark[root] != Mark::New {
            continue;
        }
        // Iterative DFS: (node, next child to visit).
        let mut stack = vec![(root, 0usize)];
        mark[root] = Mark::Open;
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            if let Some(&child) = deps[node].get(*next) {
                *next += 1;
                match mark[child] {
                    Mark::New => {
                        mark[child] = Mark::Open;
                        stack.push((child, 0));
                    }
                    Mark::Open => {
                        let start = stack.iter().position(|(n, _)| *n == child).unwrap_or(0);
                        let mut cycle: Vec<usize> =
                            stack[start..].iter().map(|(n, _)| *n).collect();
                        cycle.push(child);
                        found.push(cycle);
                    }
                    Mark::Done => {}
                }
            } else {
                mark[node] = Mark::Done;
                stack.pop();
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(yaml: &str) -> Plan {
        Plan::parse(yaml).unwrap()
    }

    fn problems(yaml: &str) -> Vec<String> {
        validate(&plan(yaml), &ToolRegistry::with_utilities())
            .err()
            .map(|e| e.0.into_iter().map(|p| p.to_string()).collect())
            .unwrap_or_default()
    }

    #[test]
    fn an_idempotency_key_is_a_plain_string_of_at_most_255_characters() {
        assert!(problems("steps:\n- {tool: echo, idempotency_key: order-42}\n").is_empty());
        let long = "k".repeat(256);
        let p = problems(&format!(
            "steps:\n- {{tool: echo, idempotency_key: ''}}\n- {{tool: echo, idempotency_key: '{long}'}}\n- {{tool: echo, idempotency_key: 'o-${{steps.x.data}}'}}\n"
        ));
        assert_eq!(p.len(), 3, "{p:?}");
        assert!(
            p[0].starts_with("steps[0].idempotency_key: must be 1 to 255"),
            "{p:?}"
        );
        assert!(
            p[1].starts_with("steps[1].idempotency_key: must be 1 to 255"),
            "{p:?}"
        );
        assert!(
            p[2].starts_with("steps[2].idempotency_key: must be a plain string"),
            "{p:?}"
        );
    }

    #[test]
    fn a_cycle_is_named() {
        let p = problems(
            "steps:\n- {id: a, tool: echo, depends_on: [b]}\n- {id: b, tool: echo, depends_on: [a]}\n",
        );
        assert_eq!(p, ["steps[0].depends_on: cycle: a → b → a"]);
    }

    #[test]
    fn a_cycle_through_a_template_is_named() {
        let p = problems(
            "steps:\n- {id: a, tool: echo, params: {x: '${steps.c.data.x}'}}\n- {id: b, tool: echo, depends_on: [a]}\n- {id: c, tool: echo, depends_on: [1]}\n",
        );
        assert_eq!(p, ["steps[0].depends_on: cycle: a → c → b → a"]);
    }

    #[test]
    fn every_problem_is_reported_with_its_step_and_field() {
        let p = problems(
            "max_parallel: 0\nsteps:\n- {id: a, tool: nope}\n- {id: a, tool: echo, depends_on: [zz, 1]}\n- {id: '9x', tool: sleep, params: {ms: -1}}\n- {tool: echo, params: {v: '${steps.ghost.data}'}, policy: {retry: {max_attempts: 0}}}\n",
        );
        let want = [
            "max_parallel: must be at least 1",
            "steps[1].id: duplicate id \"a\" (also steps[0])",
            "steps[2].id: \"9x\" is not a valid id",
            "steps[0].tool: unknown tool \"nope\"",
            "steps[1].depends_on[0]: no step zz",
            "steps[1].depends_on[1]: a step cannot depend on itself",
            "steps[2].params: params invalid at /ms",
            "steps[3].params: template ${steps.ghost.data} refers to no step",
            "steps[3].policy.retry.max_attempts: must be at least 1",
        ];
        for w in want {
            assert!(
                p.iter().any(|got| got.starts_with(w)),
                "missing {w:?} in {p:#?}"
            );
        }
        assert_eq!(p.len(), want.len(), "{p:#?}");
    }

    #[test]
    fn template_references_become_dependencies() {
        let p = plan("steps:\n- {tool: echo}\n- {tool: echo, params: {x: '${step[0].data}'}}\n");
        let g = validate(&p, &ToolRegistry::with_utilities()).unwrap();
        assert_eq!(g.deps, [vec![], vec![0]]);
        assert_eq!(g.dependents, [vec![1], vec![]]);
    }
}
