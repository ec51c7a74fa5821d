//! The capability tools (issue 63) on a real page in real Chromium:
//! assertions that answer pass/fail (`testing`), cookies and web storage
//! (`storage`), a click at a point of a canvas (`vision`). What is stored
//! for a cookie or storage value is `"***"`; one session never sees
//! another's cookies or storage.

mod support;

use axon_browser::BrowserConfig;
use axon_core::ErrorKind;
use serde_json::{Value, json};
use support::{failure, fixture};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn assertions_answer_passed_and_never_fail_on_a_check_that_does_not_hold() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "capabilities.html").await;
    let verify = |tool: &'static str, args: Value| f.call("s", tool, args);

    let shown = verify(
        "browser_verify_text_visible",
        json!({"text": "welcome  BACK, ada"}),
    )
    .await;
    assert!(shown.success, "{shown:?}");
    assert_eq!(shown.data["passed"], true, "case and spaces aside");
    let absent = verify("browser_verify_text_visible", json!({"text": "Goodbye"})).await;
    assert!(
        absent.success,
        "a check that fails is an answer: {absent:?}"
    );
    assert_eq!(absent.data["passed"], false);

    let cases = [
        (
            json!({"label": "City", "value": "New York"}),
            true,
            json!("New York"),
        ),
        (
            json!({"label": "City", "value": "new york"}),
            false,
            json!("New York"),
        ),
        (
            json!({"label": "Size", "value": "Medium"}),
            true,
            json!("Medium"),
        ),
        (
            json!({"label": "Size", "value": "m"}),
            true,
            json!("Medium"),
        ),
        (
            json!({"selector": "#terms", "value": "true"}),
            true,
            json!("true"),
        ),
        (
            json!({"role": "slider", "name": "Volume", "value": "30"}),
            true,
            json!("30"),
        ),
        (
            json!({"role": "slider", "name": "Volume", "value": "31"}),
            false,
            json!("30"),
        ),
    ];
    for (args, passed, actual) in cases {
        let r = verify("browser_verify_value", args.clone()).await;
        assert!(r.success, "{args}: {r:?}");
        assert_eq!(r.data["passed"], passed, "{args}: {}", r.data);
        assert_eq!(r.data["actual"], actual, "{args}: {}", r.data);
    }
    let missing = verify(
        "browser_verify_value",
        json!({"selector": "#nope", "value": "x"}),
    )
    .await;
    assert!(missing.success, "{missing:?}");
    assert_eq!(missing.data["found"], false);
    assert_eq!(missing.data["passed"], false);
    let bad = verify("browser_verify_text_visible", json!({"text": " "})).await;
    assert_eq!(failure(&bad).0, ErrorKind::InvalidArguments);

    // A password is checked, never answered, and never kept.
    let pin = verify(
        "browser_verify_value",
        json!({"label": "PIN", "value": "4711"}),
    )
    .await;
    assert_eq!(pin.data["passed"], true, "{pin:?}");
    assert!(pin.data.get("actual").is_none(), "{}", pin.data);
    let history = f.executor.history().by_correlation("s").await.unwrap();
    let kept = history
        .iter()
        .find(|h| h.args.get("label") == Some(&json!("PIN")))
        .unwrap();
    assert_eq!(kept.args["value"], "***");
    assert_eq!(kept.result.data["expected"], "***");
    assert!(!serde_json::to_string(&history).unwrap().contains("4711"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cookies_and_storage_are_the_sessions_own_and_their_values_are_not_kept() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("a", "capabilities.html").await;
    f.open("b", "capabilities.html").await;

    let set = f
        .call(
            "a",
            "browser_cookies",
            json!({"action": "set", "name": "sid", "value": "s3cr3t-cookie"}),
        )
        .await;
    assert!(set.success, "{set:?}");
    let listed = f.call("a", "browser_cookies", json!({"name": "sid"})).await;
    assert!(listed.success, "{listed:?}");
    assert_eq!(
        listed.data["cookies"][0]["value"], "s3cr3t-cookie",
        "{}",
        listed.data
    );
    assert_eq!(listed.data["cookies"][0]["domain"], "127.0.0.1");
    let other = f.call("b", "browser_cookies", json!({})).await;
    assert!(other.success, "{other:?}");
    assert_eq!(
        other.data["cookies"],
        json!([]),
        "session b sees a's cookie"
    );

    let stored = f
        .call(
            "a",
            "browser_storage",
            json!({"action": "set", "key": "token", "value": "tok-123"}),
        )
        .await;
    assert!(stored.success, "{stored:?}");
    let got = f
        .call(
            "a",
            "browser_storage",
            json!({"action": "get", "key": "token"}),
        )
        .await;
    assert_eq!(got.data["value"], "tok-123", "{got:?}");
    let session_area = f
        .call(
            "a",
            "browser_storage",
            json!({"area": "session", "action": "list"}),
        )
        .await;
    assert_eq!(session_area.data["items"], json!([]), "{session_area:?}");
    let theirs = f
        .call(
            "b",
            "browser_storage",
            json!({"action": "get", "key": "token"}),
        )
        .await;
    assert_eq!(
        theirs.data["value"],
        Value::Null,
        "session b reads a's storage: {theirs:?}"
    );

    let history = f.executor.history().by_correlation("a").await.unwrap();
    let kept = serde_json::to_string(&history).unwrap();
    assert!(
        !kept.contains("s3cr3t-cookie") && !kept.contains("tok-123"),
        "{kept}"
    );

    let deleted = f
        .call(
            "a",
            "browser_cookies",
            json!({"action": "delete", "name": "sid"}),
        )
        .await;
    assert_eq!(deleted.data["deleted"], 1, "{deleted:?}");
    let none = f.call("a", "browser_cookies", json!({})).await;
    assert_eq!(none.data["cookies"], json!([]));
    let cleared = f
        .call("a", "browser_storage", json!({"action": "clear"}))
        .await;
    assert_eq!(cleared.data["deleted"], 1, "{cleared:?}");

    // Bad arguments name the field; a page without an origin has no storage.
    let nameless = f
        .call(
            "a",
            "browser_cookies",
            json!({"action": "set", "value": "v"}),
        )
        .await;
    let e = nameless.error.as_ref().unwrap();
    assert!(e.message.starts_with("/name"), "{e:?}");
    let site = f
        .call(
            "a",
            "browser_cookies",
            json!({"action": "set", "name": "n", "value": "v", "same_site": "sometimes"}),
        )
        .await;
    assert!(
        site.error
            .as_ref()
            .unwrap()
            .message
            .starts_with("/same_site"),
        "{site:?}"
    );
    let blank = f
        .call("a", "browser_navigate", json!({"url": "about:blank"}))
        .await;
    assert!(blank.success, "{blank:?}");
    let nowhere = f.once("a", "browser_storage", json!({})).await;
    assert_eq!(
        failure(&nowhere).1.as_deref(),
        Some("no_storage"),
        "{nowhere:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_at_a_point_reaches_the_canvas_and_a_point_outside_is_refused() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "capabilities.html").await;
    let clicked = f
        .call("s", "browser_mouse_click_xy", json!({"x": 50, "y": 40}))
        .await;
    assert!(clicked.success, "{clicked:?}");
    assert_eq!(clicked.data["element"], "canvas#board", "{}", clicked.data);
    assert_eq!(f.text("s", "#hit").await, "clicked 50,40 button 0 detail 1");

    let double = f
        .call(
            "s",
            "browser_mouse_click_xy",
            json!({"x": 10, "y": 10, "double": true}),
        )
        .await;
    assert!(double.success, "{double:?}");
    assert_eq!(f.text("s", "#hit").await, "clicked 10,10 button 0 detail 2");
    let right = f
        .call(
            "s",
            "browser_mouse_click_xy",
            json!({"x": 20, "y": 30, "button": "right"}),
        )
        .await;
    assert!(right.success, "{right:?}");
    assert_eq!(f.text("s", "#hit").await, "context menu at 20,30");

    let moved = f
        .call("s", "browser_mouse_move_xy", json!({"x": 70, "y": 20}))
        .await;
    assert!(moved.success, "{moved:?}");
    assert_eq!(f.text("s", "#hit").await, "pointer at 70,20");
    let stroke = f
        .call(
            "s",
            "browser_mouse_drag_xy",
            json!({"start_x": 10, "start_y": 10, "end_x": 110, "end_y": 60, "steps": 5}),
        )
        .await;
    assert!(stroke.success, "{stroke:?}");
    assert_eq!(
        f.text("s", "#hit").await,
        "stroke of 6 points from 10,10 to 110,60"
    );
    let wheel = f
        .call(
            "s",
            "browser_mouse_wheel",
            json!({"x": 30, "y": 40, "delta_y": 120}),
        )
        .await;
    assert!(wheel.success, "{wheel:?}");
    assert_eq!(f.text("s", "#hit").await, "wheel 0,120 at 30,40");

    for (tool, args, at) in [
        ("browser_mouse_click_xy", json!({"x": -1, "y": 10}), "/x"),
        (
            "browser_mouse_click_xy",
            json!({"x": 10, "y": 100000}),
            "/y",
        ),
        (
            "browser_mouse_move_xy",
            json!({"x": f64::MAX, "y": 10}),
            "/x",
        ),
        (
            "browser_mouse_drag_xy",
            json!({"start_x": 1, "start_y": 1, "end_x": 5000, "end_y": 1}),
            "/end_x",
        ),
        (
            "browser_mouse_drag_xy",
            json!({"start_x": 1, "start_y": 1, "end_x": 5, "end_y": 1, "steps": 0}),
            "/steps",
        ),
        (
            "browser_mouse_wheel",
            json!({"x": 1, "y": 1, "delta_y": 1e9}),
            "/delta_y",
        ),
    ] {
        let outside = f.once("s", tool, args.clone()).await;
        assert_eq!(
            outside.error.as_ref().and_then(|e| e.pointer.as_deref()),
            Some(at),
            "{tool} {args}: {outside:?}"
        );
    }
    for args in [json!({"x": -1, "y": 10}), json!({"x": 10, "y": 100000})] {
        let outside = f.once("s", "browser_mouse_click_xy", args.clone()).await;
        assert_eq!(
            failure(&outside).0,
            ErrorKind::InvalidArguments,
            "{args}: {outside:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn emulation_shows_the_page_as_another_users_browser_and_a_call_clears_what_it_leaves_out() {
    let f = fixture(BrowserConfig {
        allow_evaluate: true,
        ..BrowserConfig::default()
    })
    .await;
    f.open("s", "capabilities.html").await;
    let read = |expression: &'static str| {
        f.call(
            "s",
            "browser_evaluate",
            json!({"function": format!("() => {expression}")}),
        )
    };
    let original_agent = read("navigator.userAgent").await.data["result"].clone();
    let set = f
        .call(
            "s",
            "browser_emulate",
            json!({
                "color_scheme": "dark", "media": "print", "timezone": "Asia/Tokyo",
                "locale": "de-DE", "user_agent": "AxonTest/1.0",
                "geolocation": {"latitude": 48.85, "longitude": 2.35},
            }),
        )
        .await;
    assert!(set.success, "{set:?}");
    let seen = read(
        "({dark: matchMedia('(prefers-color-scheme: dark)').matches, print: matchMedia('print').matches, \
          zone: Intl.DateTimeFormat().resolvedOptions().timeZone, number: (1234.5).toLocaleString(), \
          agent: navigator.userAgent})",
    )
    .await;
    assert_eq!(
        seen.data["result"],
        json!({"dark": true, "print": true, "zone": "Asia/Tokyo", "number": "1.234,5", "agent": "AxonTest/1.0"}),
        "{seen:?}"
    );
    let place = f
        .call(
            "s",
            "browser_evaluate",
            json!({"function": "() => new Promise((ok, no) => navigator.geolocation.getCurrentPosition(p => ok([p.coords.latitude, p.coords.longitude]), e => ok(String(e.message)), {timeout: 3000}))"}),
        )
        .await;
    assert_eq!(place.data["result"], json!([48.85, 2.35]), "{place:?}");

    // A call sets all of it: what it leaves out is cleared.
    let light = f
        .call("s", "browser_emulate", json!({"color_scheme": "light"}))
        .await;
    assert!(light.success, "{light:?}");
    let now = read(
        "({dark: matchMedia('(prefers-color-scheme: dark)').matches, print: matchMedia('print').matches, agent: navigator.userAgent})",
    )
    .await;
    assert_eq!(now.data["result"]["dark"], false, "{now:?}");
    assert_eq!(now.data["result"]["print"], false, "{now:?}");
    assert_eq!(now.data["result"]["agent"], original_agent, "{now:?}");

    let zone = f
        .once("s", "browser_emulate", json!({"timezone": "Mars/Olympus"}))
        .await;
    let e = zone.error.as_ref().unwrap();
    assert!(e.message.starts_with("/timezone"), "{e:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_route_answers_the_sessions_requests_from_the_browser_until_it_is_removed() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "routes.html").await;
    let load = || async {
        let clicked = f
            .call(
                "s",
                "browser_click",
                json!({"role": "button", "name": "Load"}),
            )
            .await;
        assert!(clicked.success, "{clicked:?}");
        let waited = f
            .call(
                "s",
                "browser_wait",
                json!({"text_gone": "nothing yet", "seconds": 5}),
            )
            .await;
        assert!(waited.success, "{waited:?}");
        let text = f.text("s", "#out").await;
        // Ready for the next load.
        let reset = f
            .call(
                "s",
                "browser_navigate",
                json!({"url": format!("{}/routes.html", f.base)}),
            )
            .await;
        assert!(reset.success, "{reset:?}");
        text
    };
    let added = f
        .call(
            "s",
            "browser_route",
            json!({"pattern": "*/api/data", "status": 201, "body": "{\"name\":\"stub\"}"}),
        )
        .await;
    assert!(added.success, "{added:?}");
    assert_eq!(added.data["routes"].as_array().map(Vec::len), Some(1));
    assert_eq!(load().await, "201 application/json {\"name\":\"stub\"}");

    // The same pattern again replaces the route; a block fails the request.
    let block = f
        .call(
            "s",
            "browser_route",
            json!({"pattern": "*/api/data", "action": "block"}),
        )
        .await;
    assert_eq!(
        block.data["routes"].as_array().map(Vec::len),
        Some(1),
        "{block:?}"
    );
    assert_eq!(load().await, "failed");

    // Another session's requests are its own: no route there.
    f.open("other", "routes.html").await;
    let theirs = f.call("other", "browser_unroute", json!({})).await;
    assert_eq!(theirs.data["removed"], 0, "{theirs:?}");

    // A tab opened later takes the session's routes too.
    let stub = f
        .call(
            "s",
            "browser_route",
            json!({"pattern": "*/api/data", "body": "later"}),
        )
        .await;
    assert!(stub.success, "{stub:?}");
    let tab = f.call("s", "browser_tabs", json!({"action": "new"})).await;
    assert!(tab.success, "{tab:?}");
    f.open("s", "routes.html").await;
    assert_eq!(load().await, "200 text/plain later");

    // Removed, the request reaches the server again (which has no such file).
    let removed = f
        .call("s", "browser_unroute", json!({"pattern": "*/api/data"}))
        .await;
    assert_eq!(removed.data["removed"], 1, "{removed:?}");
    assert!(load().await.starts_with("404"));

    let bad = f
        .once("s", "browser_route", json!({"pattern": "*", "status": 42}))
        .await;
    assert_eq!(failure(&bad).0, ErrorKind::InvalidArguments, "{bad:?}");
    assert!(bad.error.as_ref().unwrap().message.starts_with("/status"));
}

/// The filmstrip (issue 63): a session that records keeps a frame per
/// action (not per read), with the element it took; what is typed into a
/// password field is masked; `on_failure` keeps only a failure and the frame
/// before it; a session that does not record says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_session_exports_its_frames_and_masks_what_was_typed() {
    let f = fixture(BrowserConfig {
        allow_evaluate: true,
        ..BrowserConfig::default()
    })
    .await;
    let open = |record: &str| {
        let record = record.to_string();
        let f = &f;
        async move {
            let r = f
                .call("s", "browser_session_new", json!({"record": record}))
                .await;
            assert!(r.success, "{r:?}");
            r.data["session"].as_str().unwrap().to_string()
        }
    };
    let login = format!("{}/login.html", f.base);
    let always = open("always").await;
    let on = |tool: &'static str, args: Value| {
        let mut args = args;
        args["session"] = json!(always.clone());
        f.call("s", tool, args)
    };
    assert!(on("browser_navigate", json!({"url": login})).await.success);
    assert!(
        on(
            "browser_type",
            json!({"label": "Password", "text": "hunter2-secret"})
        )
        .await
        .success
    );
    assert!(
        on("browser_snapshot", json!({})).await.success,
        "a read: no frame"
    );
    let missing = on(
        "browser_click",
        json!({"selector": "#nope", "timeout_ms": 100}),
    )
    .await;
    assert!(!missing.success);
    let exported = on("browser_recording", json!({"path": "run.html"})).await;
    assert!(exported.success, "{exported:?}");
    assert_eq!(exported.data["frames"], 3, "{}", exported.data);
    assert_eq!(exported.data["failed"], 1);
    let html = std::fs::read_to_string(f.files.join("run.html")).unwrap();
    assert_eq!(html.matches("<section").count(), 3);
    assert!(
        html.contains("data:image/jpeg;base64,"),
        "frames carry their screenshots"
    );
    assert!(
        html.contains("class=\"box\""),
        "the typed-into field is boxed"
    );
    assert!(html.contains("login.html"));
    assert!(html.contains("element_not_found"));
    assert!(
        !html.contains("hunter2-secret"),
        "a password typed is masked"
    );
    rendered(&f, html).await;

    let on_failure = open("on_failure").await;
    let step = |tool: &'static str, args: Value| {
        let mut args = args;
        args["session"] = json!(on_failure.clone());
        f.call("s", tool, args)
    };
    assert!(
        step("browser_navigate", json!({"url": login}))
            .await
            .success
    );
    assert!(
        step("browser_type", json!({"label": "Username", "text": "ada"}))
            .await
            .success
    );
    assert!(
        !step(
            "browser_click",
            json!({"selector": "#nope", "timeout_ms": 100})
        )
        .await
        .success
    );
    let kept = step("browser_recording", json!({"path": "failure.html"})).await;
    assert_eq!(
        kept.data["frames"], 2,
        "the failure and the frame before: {kept:?}"
    );

    let plain = f.once("s", "browser_recording", json!({})).await;
    assert_eq!(
        failure(&plain).1.as_deref(),
        Some("not_recording"),
        "{plain:?}"
    );
}

/// A recorded action's frame shows the page as the action left it — after
/// the page painted on its own while no action came too, when the
/// screencast rests — and its box sits on the element at the image's own
/// scale (a button half the viewport wide is half the image wide).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_actions_frame_shows_what_the_action_did() {
    let f = fixture(BrowserConfig {
        allow_evaluate: true,
        // Wider than 2× the screencast's 640: its frames' scale is 0.4.
        viewport_width: 1600,
        viewport_height: 900,
        ..BrowserConfig::default()
    })
    .await;
    let opened = f
        .call("s", "browser_session_new", json!({"record": "always"}))
        .await;
    let session = opened.data["session"].as_str().unwrap().to_string();
    let on = |tool: &'static str, args: Value| {
        let mut args = args;
        args["session"] = json!(session.clone());
        f.call("s", tool, args)
    };
    let page = format!("{}/paint.html", f.base);
    assert!(on("browser_navigate", json!({"url": page})).await.success);
    assert!(
        on("browser_click", json!({"selector": "#red"}))
            .await
            .success
    );
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(
        on("browser_click", json!({"selector": "#blue"}))
            .await
            .success
    );
    // The page paints three times while no action comes (the screencast
    // rests then); the next action's frame shows the last of them.
    assert!(
        on("browser_click", json!({"selector": "#later"}))
            .await
            .success
    );
    let done = json!({"selector": "body.done", "timeout_ms": 10_000});
    assert!(on("browser_wait_for_element", done).await.success);
    assert!(
        on("browser_press_key", json!({"key": "Shift"}))
            .await
            .success
    );
    let exported = on("browser_recording", json!({"path": "paint.html"})).await;
    assert_eq!(exported.data["frames"], 5, "{exported:?}");
    let html = std::fs::read_to_string(f.files.join("paint.html")).unwrap();
    let seen = shown(&f, html).await;
    let colours: Vec<&str> = seen["colours"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap_or("?"))
        .collect();
    assert_eq!(colours, ["white", "red", "blue", "blue", "red"], "{seen}");
    for share in seen["boxes"].as_array().unwrap() {
        let share = share.as_f64().unwrap();
        assert!((0.45..=0.55).contains(&share), "box / image width {share}");
    }
}

/// What the report shows: each frame's colour low on the page, and each
/// box's width against its image's.
async fn shown(f: &support::Fixture, html: String) -> Value {
    opened_in_chromium(
        f,
        html,
        "async () => { \
                const shots = [...document.querySelectorAll('.shot')]; \
                const colours = []; const boxes = []; \
                for (const shot of shots) { \
                  const img = shot.querySelector('img'); await img.decode(); \
                  const c = document.createElement('canvas'); c.width = img.naturalWidth; c.height = img.naturalHeight; \
                  const g = c.getContext('2d'); g.drawImage(img, 0, 0); \
                  const [r, gr, b] = g.getImageData(c.width / 2, c.height * 0.8, 1, 1).data; \
                  colours.push(r > 200 && gr > 200 && b > 200 ? 'white' : r > 180 && gr < 80 && b < 80 ? 'red' : b > 180 && r < 80 && gr < 80 ? 'blue' : gr > 180 && r < 80 && b < 80 ? 'green' : `${r},${gr},${b}`); \
                  const box = shot.querySelector('.box'); \
                  if (box) boxes.push(parseFloat(/width:([0-9.]+)px/.exec(box.getAttribute('style'))[1]) / img.naturalWidth); \
                } \
                return {colours, boxes}; }",
    )
    .await
}

/// The report renders in Chromium under its own Content-Security-Policy:
/// every image decodes (three thumbnails, three frames) and the boxes are
/// drawn (the typed-into field; a navigation and a click that found
/// nothing took no element).
async fn rendered(f: &support::Fixture, html: String) {
    let seen = opened_in_chromium(
        f,
        html,
        "async () => { await Promise.all([...document.images].map(i => i.decode().catch(() => null))); \
                return {decoded: [...document.images].filter(i => i.naturalWidth > 0).length, \
                images: document.images.length, boxes: document.querySelectorAll('.box').length}; }",
    )
    .await;
    assert_eq!(
        seen,
        json!({"decoded": 6, "images": 6, "boxes": 1}),
        "the report as Chromium draws it"
    );
}

/// What `function` answers on `html`, served on loopback and opened in its
/// own session.
async fn opened_in_chromium(f: &support::Fixture, html: String, function: &str) -> Value {
    let url = served(html).await;
    let opened = f
        .call("report", "browser_navigate", json!({"url": url}))
        .await;
    assert!(opened.success, "{opened:?}");
    let seen = f
        .call("report", "browser_evaluate", json!({"function": function}))
        .await;
    assert!(seen.success, "{seen:?}");
    seen.data["result"].clone()
}

/// `html` served on loopback: its address.
async fn served(html: String) -> String {
    let app = axum::Router::new().route(
        "/",
        axum::routing::get(move || {
            let html = html.clone();
            async move { axum::response::Html(html) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}
