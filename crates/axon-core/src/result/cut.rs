//! What a result cut to its token budget says of itself (`CallResult::cut`):
//! which part was split, into what, which page this is and how to get the
//! rest. The cutting is the result budget's (`policy::result_budget`); this
//! is the record every face shows.

use serde::{Deserialize, Serialize};

/// What a cut result says of itself (`CallResult::cut`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ResultCut {
    /// Names the whole result: the call id and the budget it was cut to
    /// (`<call_id>.<max_result_tokens>`). `axon_result_more` takes it.
    pub handle: String,
    /// JSON pointer to the part that was split into pages (`""`: the data itself).
    pub at: String,
    /// What that part was split into.
    pub unit: CutUnit,
    /// This page (1-based); 0 for the answer to a query.
    pub page: usize,
    /// Pages in all.
    pub pages: usize,
    /// The first and last unit shown (1-based), of `of`.
    pub first: usize,
    /// The last unit shown (1-based).
    pub last: usize,
    /// Units in all.
    pub of: usize,
    /// Estimated tokens of the whole result.
    pub total_tokens: u64,
    /// For a query: the units that matched and are shown (1-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matched: Option<Vec<usize>>,
    /// For a query: how many units matched in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matches: Option<usize>,
    /// Other strings shortened on every page (JSON pointers): their whole text
    /// is reached by a query.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also_cut: Vec<String>,
}

/// What the body of a cut result is split into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CutUnit {
    /// Lines of a string (a very long line is split at a tag or a space).
    Lines,
    /// Items of an array.
    Items,
    /// Entries of an object.
    Entries,
}

impl ResultCut {
    /// One line for a reader: what is shown, what is left out, how to get
    /// more (the MCP text block ends with it).
    pub fn notice(&self) -> String {
        let unit = match self.unit {
            CutUnit::Lines => "lines",
            CutUnit::Items => "items",
            CutUnit::Entries => "entries",
        };
        let at = if self.at.is_empty() {
            String::new()
        } else {
            format!(" of {}", self.at)
        };
        let shown = match (&self.matched, self.matches) {
            (Some(shown), Some(all)) => format!(
                "{} of {all} {unit}{at} matching the query (of {} in all)",
                shown.len(),
                self.of
            ),
            _ => format!(
                "{unit} {}–{} of {}{at} (page {} of {})",
                self.first, self.last, self.of, self.page, self.pages
            ),
        };
        let mut notice = format!(
            "[Result cut to fit the token budget: {shown}; the whole result is ~{} tokens.",
            self.total_tokens
        );
        if !self.also_cut.is_empty() {
            notice.push_str(&format!(" Also shortened: {}.", self.also_cut.join(", ")));
        }
        let next = if self.page >= 1 && self.page < self.pages {
            format!("\"page\": {}", self.page + 1)
        } else {
            "\"page\": 1".into()
        };
        notice.push_str(&format!(
            " More: axon_result_more {{\"handle\": \"{}\", {next}}} or {{\"handle\": \"{}\", \"query\": \"text\"}}]",
            self.handle, self.handle
        ));
        notice
    }
}
