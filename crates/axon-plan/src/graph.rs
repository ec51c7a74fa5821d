//! A plan's DAG as text for docs and CI logs: Graphviz DOT or Mermaid
//! (`axon run PLAN --graph dot|mermaid`, `GET /v1/runs/{id}/graph?format=`), or
//! as JSON nodes and edges for the dashboard to draw (`format=json`).
//! Steps are nodes labelled with their id (or position) and tool; edges go from
//! a dependency to the step that waits for it, dashed where the dependency comes
//! only from a template (`${steps.a.data}` without `depends_on: [a]`).

use std::fmt::Write;

use axon_core::UnknownName;

use crate::plan::Plan;
use crate::validate::Graph;

/// How to write a plan's graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GraphFormat {
    /// Graphviz: `dot -Tsvg`.
    Dot,
    /// Mermaid: a `flowchart` GitHub and most docs tools draw.
    Mermaid,
    /// `{"name", "nodes": [{"index", "label", "tool"}], "edges": [{"from", "to",
    /// "declared"}]}`: for a program to lay out (the dashboard).
    Json,
}

impl std::str::FromStr for GraphFormat {
    type Err = UnknownName;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "dot" => Ok(GraphFormat::Dot),
            "mermaid" => Ok(GraphFormat::Mermaid),
            "json" => Ok(GraphFormat::Json),
            other => Err(UnknownName {
                given: other.to_string(),
                what: "graph format",
                expected: "dot, mermaid or json",
            }),
        }
    }
}

/// The edges of `graph` as (dependency, step, declared in `depends_on`).
fn edges<'a>(plan: &'a Plan, graph: &'a Graph) -> impl Iterator<Item = (usize, usize, bool)> + 'a {
    graph.deps.iter().enumerate().flat_map(move |(i, deps)| {
        let declared: Vec<usize> = plan.steps[i]
            .depends_on
            .iter()
            .filter_map(|r| plan.index_of(r))
            .collect();
        deps.iter().map(move |&d| (d, i, declared.contains(&d)))
    })
}

/// `plan`'s DAG (as validated into `graph`) in `format`.
pub fn render(plan: &Plan, graph: &Graph, format: GraphFormat) -> String {
    let mut out = String::new();
    let title = plan.name.as_deref().unwrap_or("plan");
    match format {
        GraphFormat::Dot => {
            let _ = writeln!(out, "digraph \"{}\" {{", dot_escape(title));
            out.push_str("  rankdir=LR;\n  node [shape=box, fontname=\"sans-serif\"];\n");
            for (i, step) in plan.steps.iter().enumerate() {
                let label = format!(
                    "{}\\n{}",
                    dot_escape(&plan.label(i)),
                    dot_escape(&step.tool)
                );
                let _ = writeln!(out, "  s{i} [label=\"{label}\"];");
            }
            for (from, to, declared) in edges(plan, graph) {
                let style = if declared { "" } else { " [style=dashed]" };
                let _ = writeln!(out, "  s{from} -> s{to}{style};");
            }
            out.push_str("}\n");
        }
        GraphFormat::Mermaid => {
            let _ = writeln!(out, "---\ntitle: {}\n---", mermaid_escape(title));
            out.push_str("flowchart LR\n");
            for (i, step) in plan.steps.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "  s{i}[\"{}<br/><small>{}</small>\"]",
                    mermaid_escape(&plan.label(i)),
                    mermaid_escape(&step.tool)
                );
            }
            for (from, to, declared) in edges(plan, graph) {
                let arrow = if declared { "-->" } else { "-.->" };
                let _ = writeln!(out, "  s{from} {arrow} s{to}");
            }
        }
        GraphFormat::Json => {
            let nodes: Vec<serde_json::Value> = plan
                .steps
                .iter()
                .enumerate()
                .map(|(i, step)| {
                    serde_json::json!({"index": i, "label": plan.label(i), "tool": step.tool})
                })
                .collect();
            let edges: Vec<serde_json::Value> = edges(plan, graph)
                .map(|(from, to, declared)| {
                    serde_json::json!({"from": from, "to": to, "declared": declared})
                })
                .collect();
            out =
                serde_json::json!({"name": plan.name, "nodes": nodes, "edges": edges}).to_string();
        }
    }
    out
}

fn dot_escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', " ")
}

/// Mermaid labels are quoted; quotes and markup become entities.
fn mermaid_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('"', "#quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use axon_core::ToolRegistry;

    fn graph_of(yaml: &str) -> (Plan, Graph) {
        let plan = Plan::parse(yaml).unwrap();
        let graph = crate::validate(&plan, &ToolRegistry::with_utilities()).unwrap();
        (plan, graph)
    }

    const PLAN: &str = "name: ship \"it\"\nsteps:\n- {id: a, tool: echo}\n- {id: b, tool: echo, depends_on: [a]}\n- {tool: sleep, params: {ms: 1}}\n- {id: c, tool: echo, params: {x: '${steps.b.data}'}, depends_on: [2]}\n";

    #[test]
    fn json_has_every_step_and_edge_marking_template_edges() {
        let (plan, graph) = graph_of(PLAN);
        let json: serde_json::Value =
            serde_json::from_str(&render(&plan, &graph, GraphFormat::Json)).unwrap();
        assert_eq!(json["name"], "ship \"it\"");
        let labels: Vec<&str> = json["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["label"].as_str().unwrap())
            .collect();
        assert_eq!(labels, ["a", "b", "step[2]", "c"]);
        assert_eq!(json["nodes"][2]["tool"], "sleep");
        let mut edges: Vec<(u64, u64, bool)> = json["edges"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["from"].as_u64().unwrap(),
                    e["to"].as_u64().unwrap(),
                    e["declared"].as_bool().unwrap(),
                )
            })
            .collect();
        edges.sort();
        assert_eq!(edges, [(0, 1, true), (1, 3, false), (2, 3, true)]);
    }

    #[test]
    fn dot_has_every_step_and_edge_template_edges_dashed() {
        let (plan, graph) = graph_of(PLAN);
        let dot = render(&plan, &graph, GraphFormat::Dot);
        assert!(dot.starts_with("digraph \"ship \\\"it\\\"\" {"), "{dot}");
        for node in [
            "s0 [label=\"a\\necho\"];",
            "s2 [label=\"step[2]\\nsleep\"];",
        ] {
            assert!(dot.contains(node), "{node} in {dot}");
        }
        assert!(dot.contains("  s0 -> s1;\n"), "{dot}");
        assert!(dot.contains("  s2 -> s3;\n"), "{dot}");
        assert!(dot.contains("  s1 -> s3 [style=dashed];\n"), "{dot}");
        assert_eq!(dot.matches("->").count(), 3, "{dot}");
    }

    #[test]
    fn mermaid_is_a_flowchart_with_escaped_labels() {
        let (plan, graph) = graph_of(PLAN);
        let m = render(&plan, &graph, GraphFormat::Mermaid);
        assert!(m.contains("title: ship #quot;it#quot;\n"), "{m}");
        assert!(m.contains("flowchart LR\n"), "{m}");
        assert!(m.contains("  s3[\"c<br/><small>echo</small>\"]"), "{m}");
        assert!(m.contains("  s0 --> s1\n"), "{m}");
        assert!(m.contains("  s1 -.-> s3\n"), "{m}");
        assert_eq!("dot".parse::<GraphFormat>(), Ok(GraphFormat::Dot));
        assert!(
            "svg"
                .parse::<GraphFormat>()
                .unwrap_err()
                .to_string()
                .contains("dot, mermaid or json")
        );
    }
}
