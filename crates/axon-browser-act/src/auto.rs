//! `translator = "auto"` (`[llm]`): the heuristic acts when it is sure, the
//! model decides otherwise. The heuristic is free and deterministic but reads
//! names, not meaning; the model reads meaning but costs a request and, when
//! small, is often wrong. So a step the heuristic matches well (confidence
//! at or above the threshold, 0.7 by default: an exact or near-exact name, a
//! kind, an ordinal, a row) is its; a weaker match, or one it cannot make
//! (nothing fits, a tie, a step that needs reading), goes to the model. When
//! the model fails too, nothing is done: a weak heuristic match is offered as
//! the candidate of an `ambiguous_step` (a guess that acted would be a wrong
//! action reported as success), and otherwise the model's error is the
//! step's, with the heuristic's candidates when the model named none.

use async_trait::async_trait;
use axon_core::{ToolContext, ToolError};

use super::{ActionTranslator, Decision, Heuristic, LlmTranslator, StepInput};

/// The auto translator (see the module docs). Its decisions say which
/// translator made them: `heuristic (0.95): …` or `model (heuristic 0.53 <
/// 0.7): …`.
pub struct AutoTranslator {
    model: LlmTranslator,
    threshold: f64,
}

impl std::fmt::Debug for AutoTranslator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AutoTranslator")
            .field("threshold", &self.threshold)
            .finish_non_exhaustive()
    }
}

impl AutoTranslator {
    /// Ask `model` when the heuristic's confidence is under `threshold`.
    pub fn new(model: LlmTranslator, threshold: f64) -> Self {
        AutoTranslator { model, threshold }
    }

    /// The model's translator (its executor's history, for tests).
    pub fn model(&self) -> &LlmTranslator {
        &self.model
    }
}

#[async_trait]
impl ActionTranslator for AutoTranslator {
    fn name(&self) -> &'static str {
        "auto"
    }

    async fn translate(&self, input: &StepInput, ctx: &ToolContext) -> Result<Decision, ToolError> {
        let first = Heuristic.translate(input, ctx).await;
        let why = match &first {
            Ok(d) if d.confidence >= self.threshold => {
                return Ok(Decision {
                    message: format!("heuristic ({:.2}): {}", d.confidence, d.message),
                    ..d.clone()
                });
            }
            Ok(d) => format!("heuristic {:.2} < {}", d.confidence, self.threshold),
            Err(e) => format!("heuristic: {}", e.code.as_deref().unwrap_or("failed")),
        };
        match (self.model.translate(input, ctx).await, first) {
            (Ok(d), _) => Ok(Decision {
                message: format!("model ({why}): {}", d.message),
                ..d
            }),
            (Err(e), Ok(d)) => {
                let nodes = &input.snapshot.nodes;
                let guessed: Vec<_> = nodes
                    .iter()
                    .filter(|n| n.reference.is_some() && n.reference == d.action.args.reference)
                    .collect();
                Err(ToolError::failed(format!(
                    "not sure what {:?} means: the heuristic's best match is weak ({:.2}: {}) and the model failed ({})",
                    input.plan_step, d.confidence, d.message, e.message
                ))
                .with_code("ambiguous_step")
                .with_candidates(super::candidates::of(nodes, &guessed)))
            }
            (Err(e), Err(h)) if e.candidates().is_empty() => {
                Err(e.with_candidates(h.candidates().to_vec()))
            }
            (Err(e), Err(_)) => Err(e),
        }
    }
}
