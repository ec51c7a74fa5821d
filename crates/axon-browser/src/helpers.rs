//! The page-side helpers (`axon.js`) and the expressions that install and
//! reach them: what the CDP layer (`cdp.rs`) installs in a document that has
//! none, and what the tools' scripts call (`locate.rs`, the form and element
//! tools).

use std::sync::LazyLock;

/// The page-side helpers (`axon.js`).
const HELPERS_JS: &str = include_str!("axon.js");

/// What a script that needs the helpers throws in a document that has none
/// yet; [`crate::cdp::evaluate`] and [`crate::cdp::call_on`] then install them and run the
/// script again. Sending the 10 kB of helpers with every command instead costs
/// about 1 ms a command (V8 parses it each time).
pub(crate) const MISSING: &str = "__axon_helpers_missing__";

/// An expression that yields the helpers of this document.
pub(crate) static HELPERS: LazyLock<String> =
    LazyLock::new(|| format!("(window.__axon || (() => {{ throw new Error({MISSING:?}); }})())"));

/// The expression that installs the helpers in the current document.
pub(crate) static INSTALL: LazyLock<String> =
    LazyLock::new(|| format!("window.__axon = {HELPERS_JS}\n; true"));

/// The same as a function called on an element: installs the helpers in the
/// element's own document (an iframe's, which the page's evaluation does not
/// reach).
pub(crate) static INSTALL_ON: LazyLock<String> =
    LazyLock::new(|| format!("function() {{ window.__axon = {HELPERS_JS}\n; return true; }}"));
