//! The heuristic on snapshots written by hand: each phrasing kind and its reading.

use super::*;
use crate::prompt::compress;

fn node(role: &str, name: &str, r: &str) -> SnapshotNode {
    SnapshotNode::element(role, name, r)
}

fn input(step: &str, nodes: Vec<SnapshotNode>) -> StepInput {
    StepInput {
        main_goal: String::new(),
        plan_step: step.into(),
        url: "http://127.0.0.1:1/login.html".into(),
        snapshot: compress(&nodes, 100),
        dialog: None,
        tabs: Vec::new(),
    }
}

fn login() -> Vec<SnapshotNode> {
    vec![
        node("textbox", "Username", "e1"),
        node("textbox", "Password", "e2"),
        node("checkbox", "Remember me", "e3"),
        node("button", "Log in", "e4"),
        node("link", "Forgot password?", "e5"),
        node("button", "Save changes", "e6"),
        node("button", "Save all", "e7"),
        node("combobox", "Colour", "e8"),
    ]
}

fn act(step: &str) -> Result<Action, ToolError> {
    decide(&input(step, login())).map(|d| d.action)
}

fn target(step: &str) -> (String, Option<String>, Option<String>) {
    let a = act(step).unwrap_or_else(|e| panic!("{step}: {e:?}"));
    (a.action.to_string(), a.args.reference, a.args.text)
}

#[test]
fn positions_and_lone_roles_pick_in_document_order() {
    let page = vec![
        node("textbox", "First name", "e1"),
        node("textbox", "Last name", "e2"),
        node("textbox", "", "e3"),
        node("link", "Alpha", "e4"),
        node("link", "Bravo", "e5"),
        node("button", "Save", "e6"),
        node("button", "Save", "e7"),
    ];
    let picked = |step: &str| {
        decide(&input(step, page.clone()))
            .map(|d| d.action.args.reference.unwrap_or_default())
            .map_err(|e| e.message)
    };
    assert_eq!(picked("Click the second link").unwrap(), "e5");
    assert_eq!(picked("Follow link number 1").unwrap(), "e4");
    assert_eq!(picked("Click the last link").unwrap(), "e5");
    assert_eq!(picked("Press the 2nd 'Save' button").unwrap(), "e7");
    assert_eq!(picked("Type 'x' into the third field").unwrap(), "e3");
    // A name that holds the ordinal word is a name, not a position.
    assert_eq!(
        picked("Type 'Lovelace' into the Last name field").unwrap(),
        "e2"
    );
    assert_eq!(
        picked("Type 'Ada' into the First name field").unwrap(),
        "e1"
    );
    // A role alone picks only when the page has one of it.
    assert!(picked("Click the button").is_err());
    let one = vec![node("button", "Send feedback", "e9")];
    let d = decide(&input("Press the button", one)).unwrap();
    assert_eq!(d.action.args.reference.as_deref(), Some("e9"));
}

#[test]
fn quotes_are_found_and_apostrophes_are_not_quotes() {
    assert_eq!(quoted("Type 'ada' into the user's field"), ["ada"]);
    assert_eq!(quoted("Click “Log in” then \"Save\""), ["Log in", "Save"]);
    assert!(quoted("Don't stop").is_empty());
}

#[test]
fn phrasings_map_to_actions_and_elements() {
    let s = |a: &str, r: &str| (a.to_string(), Some(r.to_string()), None::<String>);
    assert_eq!(target("Click the Log in button"), s("click", "e4"));
    assert_eq!(target("Log in"), s("click", "e4"));
    let sure = decide(&input("Click the Log in button", login())).unwrap();
    assert_eq!(sure.confidence, 1.0, "{sure:?}");
    assert_eq!(target("Press the 'Save all' button"), s("click", "e7"));
    assert_eq!(target("Follow the forgot password link"), s("click", "e5"));
    assert_eq!(target("Check the Remember me box"), s("click", "e3"));
    assert_eq!(
        target("Type 'ada' into the Username field"),
        ("type".into(), Some("e1".into()), Some("ada".into()))
    );
    assert_eq!(
        target("Enter 'hunter2' as the password"),
        ("type".into(), Some("e2".into()), Some("hunter2".into()))
    );
    assert_eq!(
        target("Fill in username with ada"),
        ("type".into(), Some("e1".into()), Some("ada".into()))
    );
    assert_eq!(
        target("Select 'Green' from the Colour dropdown"),
        ("select".into(), Some("e8".into()), Some("Green".into()))
    );
    let press = act("Press Enter").unwrap();
    assert_eq!(
        (press.action.as_str(), press.args.key.as_deref()),
        ("press_key", Some("Enter"))
    );
    let wait = act("Wait 500 ms for the page").unwrap();
    assert_eq!(wait.args.seconds, Some(0.5));
    let scroll = act("Scroll to the bottom of the page").unwrap();
    assert_eq!(scroll.args.to.as_deref(), Some("bottom"));
    let go = act("Go to /welcome.html").unwrap();
    assert_eq!(
        go.args.url.as_deref(),
        Some("http://127.0.0.1:1/welcome.html")
    );
    let search = act("Search for 'Python programming'").unwrap();
    assert_eq!(
        (search.action.as_str(), search.args.text.as_deref()),
        ("search", Some("Python programming"))
    );
}

#[test]
fn quoted_text_keeps_its_case_and_other_scripts_do_not_panic() {
    let typed = act("Type 'Ada Lovelace' into the Username field").unwrap();
    assert_eq!(
        (typed.args.text.as_deref(), typed.args.name.as_deref()),
        (Some("Ada Lovelace"), Some("Username"))
    );
    for step in [
        "Fill in İİİİ with x",
        "Fill in İstanbul ẞtraße with x",
        "Klicke auf „Anmelden“",
        "İ with 'ÄÖÜ'",
        "with",
        "'",
        "\"\"",
    ] {
        let _ = decide(&input(step, login()));
    }
}

#[test]
fn ties_nothing_and_the_impossible_have_their_error_types() {
    let code = |step: &str| act(step).unwrap_err().code.unwrap();
    assert_eq!(code("Click Save"), "ambiguous_step");
    assert_eq!(code("Click the Delete account button"), "element_not_found");
    assert_eq!(code("Upload the report as a PDF"), "tool_limit");
    assert_eq!(code("Solve the captcha"), "tool_limit");
    assert_eq!(code("Do something useful"), "ambiguous_step");
    assert_eq!(code("Wait 10 minutes"), "tool_limit");
}

fn clickable(name: &str, r: &str) -> SnapshotNode {
    let mut n = node("generic", name, r);
    n.states.push(axon_browser::layer::CLICKABLE.into());
    n
}

fn on_page(step: &str, page: &[SnapshotNode]) -> Result<Action, String> {
    decide(&input(step, page.to_vec()))
        .map(|d| d.action)
        .map_err(|e| format!("{}: {}", e.code.unwrap_or_default(), e.message))
}

#[test]
fn the_issue_categories_each_have_a_reading() {
    let mut dialog = node("dialog", "Cookies", "e1");
    dialog.depth = 0;
    let mut close = node("button", "Close", "e2");
    close.depth = 1;
    let mut date = node("date", "Date of birth", "e9");
    date.depth = 0;
    let page = vec![
        dialog,
        close,
        clickable("About us", "e3"),
        node("textbox", "Password", "e4"),
        node("button", "Shipping details", "e5"),
        node("combobox", "Country", "e6"),
        node("option", "Germany", "e7"),
        node("listbox", "Colours", "e8"),
        date,
        node("switch", "Dark mode", "e10"),
        node("link", "Terms of service", "e11"),
    ];
    let act = |step: &str| on_page(step, &page).unwrap_or_else(|e| panic!("{step}: {e}"));
    let target = |step: &str| act(step).args.reference.unwrap_or_default();
    // A control without a role, by its text; a step with no verb.
    assert_eq!(target("Click on About us"), "e3");
    assert_eq!(target("About us"), "e3");
    // Close words: the close button.
    assert_eq!(target("Close the dialog"), "e2");
    assert_eq!(target("Click the × button"), "e2");
    // Disclosure words are clicks; switch / turn on toggle.
    assert_eq!(target("Show the shipping details"), "e5");
    assert_eq!(target("Switch dark mode on"), "e10");
    // A typo per word.
    assert_eq!(target("click on terms of servcie"), "e11");
    // Set: a list selects, a field types.
    let set = act("Set the country to Germany");
    assert_eq!(
        (set.action, set.args.text.as_deref()),
        (ActionKind::Select, Some("Germany"))
    );
    let dob = act("Set the Date of birth to 1990-05-17");
    assert_eq!(
        (
            dob.action,
            dob.args.reference.as_deref(),
            dob.args.text.as_deref()
        ),
        (ActionKind::Type, Some("e9"), Some("1990-05-17"))
    );
    // Several values at once (matched to options without case).
    let many = act("Select Red and Blue in the colours list");
    assert_eq!(many.args.reference.as_deref(), Some("e8"));
    assert_eq!(many.args.values, Some(vec!["red".into(), "blue".into()]));
    // Unquoted values: before the joiner, or after the field's name.
    let typed = act("Use s3cret as the password");
    assert_eq!(typed.args.text.as_deref(), Some("s3cret"));
    let typed = act("Enter the password s3cret");
    assert_eq!(
        (typed.args.reference.as_deref(), typed.args.text.as_deref()),
        (Some("e4"), Some("s3cret"))
    );
    // Two quotes: the text, and the field after "into" (or before "with").
    let two = act("Type 'x' into 'Password'");
    assert_eq!(two.args.text.as_deref(), Some("x"));
    let with = act("Fill 'Password' with 'y'");
    assert_eq!(with.args.text.as_deref(), Some("y"));
    // Focus is a click into the field.
    assert_eq!(target("Focus the password field"), "e4");
    // The means is the action.
    assert_eq!(target("Leave the page by clicking About us"), "e3");
    // The message says which words matched what, and where the name came from.
    let mut nearby = node("textbox", "Password", "e20");
    nearby.name_from = Some(axon_browser::layer::NEARBY_TEXT.into());
    let why = decide(&input("Type 'x' into the password field", vec![nearby]))
        .unwrap()
        .message;
    assert_eq!(
        why,
        "Type into textbox \"Password\" (matched: \"password\" ≈ nearby text \"Password\", the name)"
    );
}

#[test]
fn a_container_named_in_the_step_is_where_to_look() {
    let at = |role: &str, name: &str, r: &str, depth: usize| SnapshotNode {
        depth,
        ..node(role, name, r)
    };
    let page = vec![
        at("button", "Send", "e1", 0),
        at("iframe", "", "e2", 0),
        at("button", "Send", "e3", 1),
        at("form", "Search", "e4", 0),
        at("button", "Go", "e5", 1),
    ];
    assert_eq!(
        on_page("Click Send in the frame", &page)
            .unwrap()
            .args
            .reference
            .as_deref(),
        Some("e3")
    );
    assert_eq!(
        on_page("Click the button in the frame", &page)
            .unwrap()
            .args
            .reference
            .as_deref(),
        Some("e3")
    );
    assert_eq!(
        on_page("Press the button in the Search form", &page)
            .unwrap()
            .args
            .reference
            .as_deref(),
        Some("e5")
    );
    // Nothing named: the whole page, where two buttons are "Send".
    assert!(
        on_page("Click Send", &page)
            .unwrap_err()
            .starts_with("ambiguous_step")
    );
}

#[test]
fn an_empty_phrase_is_nowhere_and_does_not_panic() {
    assert_eq!(find_words("great app", ""), None);
    // A tab widget named only by signs (norm'd to nothing) on a tab step.
    let mut i = input("Open the great app tab", vec![node("tab", "→", "e1")]);
    i.tabs = vec![crate::PageTab {
        index: 0,
        title: "great app".into(),
        url: "http://h/".into(),
        current: true,
    }];
    let _ = decide(&i);
}

fn at_depth(role: &str, name: &str, r: &str, depth: usize) -> SnapshotNode {
    let mut n = node(role, name, r);
    n.depth = depth;
    n
}

#[test]
fn a_row_named_by_its_other_cells_picks_its_button() {
    let mut page = Vec::new();
    for (i, (who, role)) in [("Alice Martin", "Owner"), ("Bob Chen", "Editor")]
        .iter()
        .enumerate()
    {
        page.push(at_depth("row", "", &format!("r{i}"), 1));
        page.push(at_depth("cell", who, &format!("c{i}"), 2));
        page.push(at_depth("cell", role, &format!("d{i}"), 2));
        page.push(at_depth("cell", "Edit Delete", &format!("x{i}"), 2));
        page.push(at_depth("button", "Edit", &format!("e{i}"), 3));
        page.push(at_depth("button", "Delete", &format!("k{i}"), 3));
    }
    let pick = |step: &str| on_page(step, &page).map(|a| a.args.reference.unwrap_or_default());
    assert_eq!(pick("Edit Bob Chen").as_deref(), Ok("e1"));
    assert_eq!(
        pick("Click Delete in Alice Martin's row").as_deref(),
        Ok("k0")
    );
    assert_eq!(pick("Remove the Editor").as_deref(), Ok("k1"));
    assert!(pick("Click Edit").is_err(), "two rows, nothing says which");
}

#[test]
fn a_spinner_s_buttons_are_named_by_what_they_do_or_show() {
    let page = vec![
        node("button", "Decrease copies", "e1"),
        node("spinbutton", "Copies", "e2"),
        node("button", "Increase copies", "e3"),
        node("slider", "Playback speed", "e4"),
    ];
    let pick = |step: &str| on_page(step, &page).map(|a| a.args.reference.unwrap_or_default());
    assert_eq!(pick("Increase the number of copies").as_deref(), Ok("e3"));
    assert_eq!(
        pick("Click the plus button next to Copies").as_deref(),
        Ok("e3")
    );
    assert_eq!(pick("Reduce the copies by one").as_deref(), Ok("e1"));
    let set = on_page("Put the speed slider at 1.25", &page).expect("a slider set");
    assert_eq!(
        (set.args.reference.as_deref(), set.args.text.as_deref()),
        (Some("e4"), Some("1.25"))
    );
}

#[test]
fn a_state_that_several_elements_share_is_an_error_naming_them() {
    let header = |name: &str, r: &str, state: &str| {
        let mut h = node("heading", name, "");
        h.reference = None;
        let mut b = node("button", name, r);
        b.depth = 1;
        b.states = vec![state.into()];
        [h, b]
    };
    let mut page: Vec<SnapshotNode> = Vec::new();
    page.extend(header("Sizing", "e1", "expanded"));
    page.extend(header("Returns", "e2", "collapsed"));
    page.extend(header("Care", "e3", "collapsed"));
    let decided = |step: &str| decide(&input(step, page.clone()));
    let e = decided("Expand the collapsed section").unwrap_err();
    assert_eq!(e.code.as_deref(), Some("ambiguous_step"), "{e:?}");
    assert!(
        e.message
            .contains("2 elements are collapsed: button \"Returns\", button \"Care\""),
        "{}",
        e.message
    );
    // One in that state, or a position among them: picked.
    let picked = decided("Collapse the expanded section").unwrap();
    assert_eq!(picked.action.args.reference.as_deref(), Some("e1"));
    let picked = decided("Expand the second collapsed section").unwrap();
    assert_eq!(picked.action.args.reference.as_deref(), Some("e3"));
}

/// MiniWoB++'s instructions end in a full stop, as people write them
/// (tests/act_miniwob.rs): the stop names nothing, after a quote, a number or
/// a kind of control.
#[test]
fn a_sentence_s_full_stop_is_not_part_of_what_it_names() {
    let mut tabs = vec![
        node("tab", "Tab #1", "e1"),
        node("tab", "Tab #2", "e2"),
        node("tab", "Tab #3", "e3"),
    ];
    let picked = |step: &str, page: &[SnapshotNode]| {
        on_page(step, page)
            .map(|a| a.args.reference.unwrap_or_default())
            .unwrap_or_else(|e| panic!("{step}: {e}"))
    };
    assert_eq!(picked("Click on Tab #2.", &tabs), "e2");
    tabs.push(node("textbox", "", "e4"));
    tabs.push(node("textbox", "", "e5"));
    tabs.push(node("textbox", "", "e6"));
    assert_eq!(picked("Focus into the 2nd input textbox.", &tabs), "e5");
    let mut area = node("textbox", "", "e7");
    area.states.push("multiline".into());
    let widgets = vec![
        node("radio", "BPF", "e1"),
        node("textbox", "", "e2"),
        node("button", "TVkEp", "e3"),
        area,
        node("checkbox", "3hI", "e4"),
    ];
    assert_eq!(picked("Click on a \"textarea\" widget.", &widgets), "e7");
    assert_eq!(picked("Click on a \"button\" widget.", &widgets), "e3");
    // "a button" with two on the page: any one will do, the first is taken;
    // "the button" with two is a question back.
    let mut two = widgets.clone();
    two.push(node("button", "axEDw", "e8"));
    assert_eq!(picked("Click on a \"button\" widget.", &two), "e3");
    assert_eq!(picked("Click any button", &two), "e3");
    assert!(on_page("Click the button", &two).is_err());
}

/// A name of signs only ("♥♥♥") is matched as it is written: words of it
/// there are none.
#[test]
fn a_name_of_signs_only_matches_itself() {
    let page = vec![
        node("button", "ÖK", "e1"),
        node("button", "♥♥♥", "e2"),
        node("button", "Cancél", "e3"),
    ];
    let a = on_page("Click on the \"♥♥♥\" button.", &page).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a.args.reference.as_deref(), Some("e2"));
    // Still nothing when no name is those signs.
    assert!(on_page("Click on the \"★★\" button.", &page).is_err());
}

/// Issue 61: "Click the 6th search result" on a page of five results under a
/// search form clicked the Search button and reported success. A position
/// the page does not hold is a refusal naming what is there.
#[test]
fn a_position_beyond_the_page_is_refused_with_what_the_page_has() {
    let mut page = vec![
        node("textbox", "Search", "e1"),
        node("button", "Search", "e2"),
    ];
    page.push({
        let mut l = node("list", "", "");
        l.reference = None;
        l
    });
    for i in 1..=5 {
        let mut item = node("link", &format!("Result {i}"), &format!("r{i}"));
        item.depth = 1;
        page.push(item);
    }
    let decided = |step: &str| decide(&input(step, page.clone()));
    let e = decided("Click the 6th search result").unwrap_err();
    assert_eq!(e.code.as_deref(), Some("element_not_found"), "{e:?}");
    assert!(e.message.contains("number 6"), "{}", e.message);
    assert!(e.message.contains("shows 5 items"), "{}", e.message);
    let refs: Vec<_> = e
        .candidates()
        .iter()
        .filter_map(|c| c.reference.as_deref())
        .collect();
    assert_eq!(refs, ["r1", "r2", "r3", "r4", "r5"]);
    // Within the page: picked, as before.
    let picked = decided("Click the 5th search result").unwrap();
    assert_eq!(picked.action.args.reference.as_deref(), Some("r5"));
    // "The second Search button" beside one.
    let e = decided("Click the second Search button").unwrap_err();
    assert_eq!(e.code.as_deref(), Some("element_not_found"), "{e:?}");
    assert_eq!(e.candidates()[0].reference.as_deref(), Some("e2"));
}

/// A tie names every element it is between, with refs, so that the agent's
/// next call is one click; nothing close names the nearest ones.
#[test]
fn ties_and_misses_carry_their_candidates() {
    let e = act("Click Save").unwrap_err();
    assert_eq!(e.code.as_deref(), Some("ambiguous_step"));
    // Ranked: the closer name first.
    let refs: Vec<_> = e
        .candidates()
        .iter()
        .filter_map(|c| c.reference.as_deref())
        .collect();
    assert_eq!(refs, ["e7", "e6"], "{e:?}");
    let e = act("Click the Delete account button").unwrap_err();
    assert_eq!(e.code.as_deref(), Some("element_not_found"));
    assert!(e.candidates().len() <= 5, "{e:?}");
}

#[test]
fn a_hash_number_is_a_position() {
    let page = vec![
        node("tab", "Tab 1", "t1"),
        node("tab", "Tab 2", "t2"),
        node("link", "Alpha", "a"),
        node("link", "Bravo", "b"),
    ];
    let picked = |step: &str| decide(&input(step, page.clone())).map(|d| d.action.args.reference);
    assert_eq!(picked("Open link #1").unwrap().as_deref(), Some("a"));
    assert_eq!(picked("Click link #2.").unwrap().as_deref(), Some("b"));
    assert_eq!(picked("Select tab #2").unwrap().as_deref(), Some("t2"));
}

/// Issue 61: a step of two actions is done whole where one tool call does
/// both, and otherwise refused naming the two — never half done.
#[test]
fn a_compound_step_is_done_whole_or_named() {
    let page = vec![
        node("textbox", "What needs to be done?", "e1"),
        node("combobox", "Room", "e2"),
        node("button", "Book", "e3"),
    ];
    let decided = |step: &str| decide(&input(step, page.clone()));
    let d = decided("Type 'Buy milk' into the What needs to be done? box and press Enter").unwrap();
    assert_eq!(d.action.action, ActionKind::Type);
    assert_eq!(d.action.args.key.as_deref(), Some("Enter"));
    assert_eq!(d.action.args.text.as_deref(), Some("Buy milk"));
    let d = decided("Click into the text box and type 'Great app'").unwrap();
    assert_eq!(d.action.action, ActionKind::Type);
    assert_eq!(d.action.args.reference.as_deref(), Some("e1"));
    assert_eq!(d.action.args.text.as_deref(), Some("Great app"));
    let e = decided("Select 'Double' in Room and click Book").unwrap_err();
    assert_eq!(e.code.as_deref(), Some("ambiguous_step"));
    assert!(
        e.message
            .contains("1. \"Select 'Double' in Room\" 2. \"click Book\""),
        "{}",
        e.message
    );
    // The same two, for a caller to give one at a time without parsing.
    assert_eq!(e.steps(), ["Select 'Double' in Room", "click Book"]);
    // One verb, two targets: two actions (MiniWoB++'s enter-password).
    let e = decided("Enter the password 'x1' into both text fields and press submit").unwrap_err();
    assert_eq!(
        e.steps(),
        [
            "Enter the password 'x1' into the 1st text field",
            "Enter the password 'x1' into the 2nd text field",
            "press submit"
        ]
    );
    // "Click Book and wait" is not a wait alone.
    let e = decided("Click Book and wait 2 seconds").unwrap_err();
    assert_eq!(e.code.as_deref(), Some("ambiguous_step"));
}

/// "The last FAQ entry" counts the accordion's headers, not the tree items
/// an "entry" may also be (a wrong action found by the wrong-action count).
#[test]
fn sections_counted_are_the_accordion_headers() {
    let item = |role: &str, name: &str, r: &str, depth: usize, state: &str| {
        let mut n = node(role, name, r);
        n.depth = depth;
        if !state.is_empty() {
            n.states = vec![state.into()];
        }
        if r.is_empty() {
            n.reference = None;
        }
        n
    };
    let page = vec![
        item("tree", "Topics", "", 0, ""),
        item("treeitem", "▸ Account", "t1", 1, "collapsed"),
        item("treeitem", "▾ Billing", "t2", 1, "expanded"),
        item("heading", "Common questions", "", 0, ""),
        item("heading", "How do I cancel my plan?", "", 0, ""),
        item("button", "How do I cancel my plan?", "q1", 1, "expanded"),
        item("heading", "Can I get a refund?", "", 0, ""),
        item("button", "Can I get a refund?", "q2", 1, "collapsed"),
        item("heading", "Privacy and data export", "", 0, ""),
        item("button", "Privacy and data export", "q4", 1, "collapsed"),
    ];
    let d = decide(&input("Expand the last FAQ entry", page)).unwrap();
    assert_eq!(d.action.args.reference.as_deref(), Some("q4"), "{d:?}");
}

#[test]
fn switch_to_is_a_verb_not_the_switch_role() {
    let page = vec![
        node("tab", "Tab 1", "t1"),
        node("tab", "Tab 2", "t2"),
        node("tab", "Tab 3", "t3"),
        node("switch", "Dark mode", "s1"),
    ];
    let d = decide(&input("Switch to tab #3", page)).unwrap();
    assert_eq!(d.action.args.reference.as_deref(), Some("t3"), "{d:?}");
}

/// The real-app suite's Django admin: the app's caption "Books" is drawn
/// upper case ("BOOKS" in the accessibility tree) above the model's "Books"
/// link; the step's own spelling decides. A drop-down that is a button
/// showing its value is found by the text before it.
#[test]
fn the_step_spelling_breaks_a_tie_and_a_popup_button_is_a_drop_down() {
    let page = vec![node("link", "BOOKS", "e1"), node("link", "Books", "e2")];
    let d = decide(&input("Click the \"Books\" link", page)).unwrap();
    assert_eq!(d.action.args.reference.as_deref(), Some("e2"));
    let mut label = node("text", "Currency", "");
    label.reference = None;
    let mut button = node("button", "USD", "b1");
    button.states = vec!["collapsed".into()];
    let mut split = node("listbox", "", "l1");
    split.name = String::new();
    let page = vec![
        label,
        button,
        split,
        node("option", "Split between two", "o1"),
    ];
    let d = decide(&input(
        "Select \"EUR\" in the Currency drop-down",
        page.clone(),
    ))
    .unwrap();
    assert_eq!(d.action.action, ActionKind::Select);
    assert_eq!(d.action.args.reference.as_deref(), Some("b1"));
    // A list the step does not name is not taken for the one it names.
    let e = decide(&input("Select \"EUR\" in the Country drop-down", page)).unwrap_err();
    assert_eq!(e.code.as_deref(), Some("element_not_found"), "{e:?}");
}

/// The real-app suite's Django admin: "Add book" is the "ADD BOOK" link, not
/// the "Add" in the sidebar's Books row (a wrong action the suite found).
#[test]
fn a_quoted_name_an_element_has_beats_a_row_reading() {
    let cell = |role: &str, name: &str, r: &str, depth: usize| {
        let mut n = node(role, name, r);
        n.depth = depth;
        n
    };
    let page = vec![
        cell("row", "Books Add", "r1", 0),
        cell("link", "Books", "e1", 1),
        cell("link", "Add", "e2", 1),
        cell("link", "ADD BOOK", "e3", 0),
    ];
    let d = decide(&input("Click the \"Add book\" link", page)).unwrap();
    assert_eq!(d.action.args.reference.as_deref(), Some("e3"), "{d:?}");
}

/// "The section below": where the instruction sits, not a word of the
/// element's name (MiniWoB++'s click-collapsible).
#[test]
fn below_and_above_point_at_the_page_not_the_name() {
    let mut tab = node("tab", "Section #14", "e1");
    tab.states = vec!["collapsed".into()];
    let mut other = node("tab", "Submit", "e3");
    other.states = vec!["collapsed".into()];
    let page = vec![tab.clone(), node("button", "Submit", "e2")];
    let a = on_page("Expand the section below", &page).unwrap();
    assert_eq!(a.args.reference.as_deref(), Some("e1"));
    // Two collapsed: the one the step's word names.
    let page = vec![tab, other.clone()];
    let a = on_page("Expand the section below", &page).unwrap();
    assert_eq!(a.args.reference.as_deref(), Some("e1"));
    // "Click submit" with the header named by the button it holds: the button.
    let mut header = node("tab", "Submit", "e5");
    header.states = vec!["collapsed".into()];
    let mut button = node("button", "Submit", "e6");
    button.depth = 1;
    let a = on_page("click submit.", &[header.clone(), button.clone()]).unwrap();
    assert_eq!(a.args.reference.as_deref(), Some("e6"));
    // Side by side, not one inside the other: still a question.
    button.depth = 0;
    assert!(on_page("click submit.", &[header, button]).is_err());
    // Neither named: a question back, not a guess.
    let mut third = node("tab", "Details", "e4");
    third.states = vec!["collapsed".into()];
    assert!(on_page("Expand the section", &[other, third]).is_err());
}
