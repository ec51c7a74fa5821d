//! Steps that need reading, not matching: "the cheapest ticket", "the word
//! that means the same as big". Names on the page do not answer them; the
//! heuristic says so (`ambiguous_step`, naming the word) and leaves them to
//! the model.

use super::*;

/// Words that ask to compare or understand what the page says.
const READING: [&str; 34] = [
    "cheapest",
    "cheaper",
    "most expensive",
    "least expensive",
    "priciest",
    "earliest",
    "latest",
    "newest",
    "oldest",
    "highest",
    "lowest",
    "largest",
    "smallest",
    "biggest",
    "longest",
    "shortest",
    "fastest",
    "slowest",
    "nearest",
    "closest",
    "best rated",
    "most popular",
    "least popular",
    "most",
    "least",
    "fewest",
    "less than",
    "more than",
    "fewer than",
    "greater than",
    "synonym",
    "antonym",
    "means the same",
    "opposite",
];

/// `ambiguous_step` when the step asks to compare or understand (a word of
/// [`READING`] that no element's name holds: "Most popular" can be a link's
/// name, and then it is matched).
pub(super) fn needs_reading(nodes: &[SnapshotNode], step: &str) -> Result<(), ToolError> {
    let lower = norm(step);
    let Some(word) = READING.iter().find(|w| find_words(&lower, w).is_some()) else {
        return Ok(());
    };
    if nodes
        .iter()
        .any(|n| n.reference.is_some() && find_words(&norm(&n.name), word).is_some())
    {
        return Ok(());
    }
    Err(fail(
        "ambiguous_step",
        format!(
            "{step:?} needs reading the page ({word:?}): the heuristic matches names and does not compare or interpret; leave this step to the model (translator = \"llm\" or \"auto\")"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_need_reading_unless_a_name_holds_the_word() {
        let page = [SnapshotNode::element("link", "Most popular", "e1")];
        let err = needs_reading(&[], "Book the cheapest flight").expect_err("reading");
        assert_eq!(err.code.as_deref(), Some("ambiguous_step"));
        assert!(err.message.contains("cheapest"), "{}", err.message);
        assert!(needs_reading(&[], "Click the word that means the same as big").is_err());
        assert!(needs_reading(&page, "Open the most popular list").is_ok());
        assert!(needs_reading(&[], "Click the last tab").is_ok());
        assert!(
            needs_reading(&[], "Add one more copy").is_ok(),
            "\"more\" alone is not a comparison"
        );
    }
}
