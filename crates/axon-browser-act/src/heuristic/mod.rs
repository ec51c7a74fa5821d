//! The offline translator: plan step text matched against the snapshot, with
//! no model. Deterministic: the same step on the same page gives the same
//! action.
//!
//! 0. A dialog the session holds open is answered or nothing happens; steps
//!    about tabs, uploads, drags, hovering and history have their own
//!    readings (`browser`, `pointer`).
//! 1. Things no action can do (captchas, printing) are `tool_limit`.
//! 2. The earliest verb in the step picks the action: go to / open / visit
//!    (with a URL) → navigate; search for / look up → search; type / enter /
//!    fill in / write → type; select / choose / pick → select (or a click on a
//!    checkbox, radio or option of that name); check / tick / uncheck → click
//!    a checkbox; click / press / tap / follow / submit / log in → click (or
//!    press_key when a key is named); scroll → scroll; wait → wait.
//! 3. Targets: a quoted string if there is one, else the step's words minus
//!    verbs and filler; role words ("button", "link", "field", …) steer the
//!    match. Every candidate element gets a score (exact name 1.0, a name
//!    containing the target or contained in it 0.5–0.9, else word overlap);
//!    nothing above 0.35 is `element_not_found`, two candidates within 0.08
//!    of each other are `ambiguous_step`.

use async_trait::async_trait;
use axon_core::{ToolContext, ToolError};

use super::{Action, ActionArgs, ActionKind, ActionTranslator, Decision, StepInput};
use axon_browser::SnapshotNode;

mod addressing;
mod browser;
mod calendar;
mod choices;
mod compound;
mod dates;
mod fields;
mod icons;
mod kinds;
mod mouse;
mod ordinals;
mod reading;
mod several;
#[cfg(test)]
mod tests;
mod verbs;
mod words;

use addressing::*;
use choices::*;
use fields::*;
use icons::*;
use kinds::*;
use ordinals::*;
use verbs::*;
use words::*;

/// The heuristic translator (see the module docs).
#[derive(Clone, Copy, Debug, Default)]
pub struct Heuristic;

#[async_trait]
impl ActionTranslator for Heuristic {
    fn name(&self) -> &'static str {
        "heuristic"
    }

    async fn translate(&self, input: &StepInput, _: &ToolContext) -> Result<Decision, ToolError> {
        decide(input)
    }
}

const NOT_FOUND: f64 = 0.35;
const TIE: f64 = 0.08;

fn fail(code: &str, message: impl Into<String>) -> ToolError {
    ToolError::failed(message).with_code(code)
}

fn on(node: &SnapshotNode, action: ActionKind, text: Option<String>) -> Action {
    Action {
        action,
        args: ActionArgs {
            role: Some(node.role.clone()),
            name: Some(node.name.clone()),
            reference: node.reference.clone(),
            text,
            ..ActionArgs::default()
        },
    }
}

fn decision(action: Action, confidence: f64, message: String) -> Result<Decision, ToolError> {
    Ok(Decision {
        action,
        confidence: (confidence * 100.0).round() / 100.0,
        message,
    })
}

pub(crate) fn decide(input: &StepInput) -> Result<Decision, ToolError> {
    let step = input.plan_step.trim();
    let quotes = quoted(step);
    let nodes = &input.snapshot.nodes;
    // A dialog in front of the page: the step answers it, or nothing can go on.
    if let Some(dialog) = &input.dialog {
        return browser::answer_dialog(dialog, step);
    }
    // "Select Double and click Book": two actions are one call only where a
    // tool does both; otherwise the step is refused, naming the two.
    if let Some(decided) = compound::compound(input, step) {
        return decided;
    }
    let step = without_where_asked(step);
    let lower = step.to_lowercase();
    if let Some(decided) = not_a_verb_step(input, step, &lower) {
        return decided;
    }
    // The step without its quoted strings, lowercased (quotes keep their case).
    let unq = unquoted(step, &quotes).to_lowercase();
    if let Some(pressed) = press(&lower, &unq, &quotes) {
        return pressed;
    }

    // The earliest verb decides.
    let found = VERBS
        .iter()
        .filter_map(|(word, verb)| find_words(&unq, word).map(|at| (at, *word, *verb)))
        .min_by_key(|(at, word, _)| (*at, usize::MAX - word.len()));
    let Some((_, word, verb)) = found else {
        // No verb ("Send the feedback", "Month view", "Item 13"): the step
        // names what to press, when one element's name fits it well.
        let no_action = || {
            fail(
                "ambiguous_step",
                format!(
                    "no action in {step:?}: say what to do (click, type, select, search, scroll, go to, press, wait)"
                ),
            )
        };
        return match click(nodes, &quotes, step, "", role_hint(&unq)) {
            Ok(d) if d.confidence >= 0.5 => Ok(d),
            _ => Err(no_action()),
        };
    };
    let hint = role_hint(&unq);
    match verb {
        Verb::Close => close(nodes, &quotes, step, word),
        Verb::Set => set(nodes, &quotes, step, word),
        Verb::Navigate => navigate(nodes, &quotes, step, word, hint, &input.url),
        Verb::Search => search(&quotes, &unq, word),
        Verb::Type => type_into(nodes, &quotes, step, &unq, word),
        Verb::Select => select(nodes, &quotes, step, &unq, word, hint),
        Verb::Check => click(
            nodes,
            &quotes,
            step,
            word,
            Some(&["checkbox", "switch", "radio"]),
        ),
        Verb::Click => click_verb(nodes, &quotes, step, word, hint),
        Verb::Scroll => scroll(&unq),
    }
}

/// The steps read before the verb: beyond the tools, waits, "by clicking
/// …" (the means is the action), tabs, uploads, steps that need reading,
/// dates, "Field: value", numbers on sliders, drags, hovers, history. `None`
/// when the step is none of them.
fn not_a_verb_step(
    input: &StepInput,
    step: &str,
    lower: &str,
) -> Option<Result<Decision, ToolError>> {
    let nodes = &input.snapshot.nodes;
    if let Err(e) = beyond_the_tools(lower) {
        return Some(Err(e));
    }
    // Waiting and keys first: "press Enter" is a key, "wait 2 seconds" a wait.
    if let Some(at) = find_words(lower, "wait") {
        return Some(wait(&lower[at..]));
    }
    // "Submit the form by clicking the button": the means is the action.
    let lower_ascii = step.to_ascii_lowercase();
    if let Some(at) = [
        "by clicking",
        "by pressing",
        "by tapping",
        "by selecting",
        "by choosing",
    ]
    .iter()
    .filter_map(|w| find_words(&lower_ascii, w))
    .min()
    {
        let means = StepInput {
            plan_step: step[at + 3..].to_string(),
            ..input.clone()
        };
        return Some(decide(&means));
    }
    if let Some(tabs) = browser::tab_step(input, step) {
        return Some(tabs);
    }
    if mouse::uploads(lower) {
        return Some(mouse::upload(nodes, step));
    }
    // Steps that compare or interpret are the model's.
    if let Err(e) = reading::needs_reading(nodes, step) {
        return Some(Err(e));
    }
    // A date or time into a date field, or its day on an open calendar;
    // "Field: value"; "… to N" on a slider.
    if let Some(filled) = dates::fill(nodes, step)
        .or_else(|| calendar::pick(nodes, step))
        .or_else(|| labelled(nodes, step))
        .or_else(|| set_number(nodes, step))
    {
        return Some(filled);
    }
    if mouse::drags(lower) {
        return Some(mouse::drag(nodes, step));
    }
    if let Some(at) = mouse::hover_at(lower) {
        return Some(mouse::hover(nodes, step, at));
    }
    browser::back_forward_step(nodes, lower)
}
