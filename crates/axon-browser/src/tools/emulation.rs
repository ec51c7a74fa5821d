//! `browser_emulate`: the page as another user's browser would show it —
//! dark mode, reduced motion, print media, a place, a time zone, a language,
//! another user agent (MCP capability `emulation`; Playwright MCP's
//! `browser_emulate_media`, chrome-devtools-mcp's `emulate`). The viewport
//! is `browser_resize`'s.
//!
//! Each call sets the whole emulation, as chrome-devtools-mcp's does: what a
//! call leaves out is cleared, so that an agent never has to remember what
//! an earlier call set. It lasts for the session's current tab.

use std::sync::Arc;

use axon_core::{RegistryError, ToolContext, ToolError, ToolRegistry};
use chromiumoxide::page::Page;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::idempotent;
use crate::cdp;
use crate::session::Browsers;

/// A place on Earth.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Place {
    /// Degrees, -90..=90.
    pub latitude: f64,
    /// Degrees, -180..=180.
    pub longitude: f64,
    /// Metres (default 10).
    pub accuracy: Option<f64>,
}

/// `browser_emulate` arguments: what is left out is cleared.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EmulateArgs {
    /// `prefers-color-scheme`: light or dark.
    pub color_scheme: Option<String>,
    /// `prefers-reduced-motion`: reduce or no-preference.
    pub reduced_motion: Option<String>,
    /// The CSS media type: screen or print.
    pub media: Option<String>,
    /// Where `navigator.geolocation` says the user is (the permission is
    /// granted with it).
    pub geolocation: Option<Place>,
    /// An IANA time zone, such as `Europe/Berlin`.
    pub timezone: Option<String>,
    /// A language tag, such as `de-DE` (`Intl` and `navigator.language`).
    pub locale: Option<String>,
    /// The `User-Agent` header and `navigator.userAgent`.
    pub user_agent: Option<String>,
}

/// `value` if it is one of `allowed` (case aside), else an error naming
/// `pointer` and the allowed values.
fn one_of(value: &Option<String>, pointer: &str, allowed: &[&str]) -> Result<String, ToolError> {
    let Some(value) = value else {
        return Ok(String::new());
    };
    allowed
        .iter()
        .find(|a| a.eq_ignore_ascii_case(value.trim()))
        .map(|a| a.to_string())
        .ok_or_else(|| {
            ToolError::invalid_arguments(format!(
                "{pointer}: {value:?} is none of {}",
                allowed.join(", ")
            ))
        })
}

/// The arguments checked before anything is set: a call that fails sets
/// nothing it was given.
fn check(args: &EmulateArgs) -> Result<(), ToolError> {
    one_of(&args.color_scheme, "/color_scheme", &["light", "dark"])?;
    one_of(
        &args.reduced_motion,
        "/reduced_motion",
        &["reduce", "no-preference"],
    )?;
    one_of(&args.media, "/media", &["screen", "print"])?;
    if let Some(p) = args.geolocation {
        if !(-90.0..=90.0).contains(&p.latitude) {
            return Err(ToolError::invalid_arguments(format!(
                "/geolocation/latitude: {} is outside -90..=90",
                p.latitude
            )));
        }
        if !(-180.0..=180.0).contains(&p.longitude) {
            return Err(ToolError::invalid_arguments(format!(
                "/geolocation/longitude: {} is outside -180..=180",
                p.longitude
            )));
        }
        if p.accuracy.is_some_and(|a| !a.is_finite() || a < 0.0) {
            return Err(ToolError::invalid_arguments(
                "/geolocation/accuracy: must be a number of metres, 0 or more",
            ));
        }
    }
    for (pointer, value) in [
        ("/timezone", &args.timezone),
        ("/locale", &args.locale),
        ("/user_agent", &args.user_agent),
    ] {
        if value
            .as_ref()
            .is_some_and(|v| v.trim().is_empty() || v.len() > 512)
        {
            return Err(ToolError::invalid_arguments(format!(
                "{pointer}: empty or longer than 512 bytes (leave it out to clear it)"
            )));
        }
    }
    Ok(())
}

async fn emulate(b: &Browsers, args: EmulateArgs, ctx: &ToolContext) -> Result<Value, ToolError> {
    check(&args)?;
    let page = b.page_for(ctx).await?;
    let features = json!([
        {"name": "prefers-color-scheme", "value": one_of(&args.color_scheme, "", &["light", "dark"])?},
        {"name": "prefers-reduced-motion", "value": one_of(&args.reduced_motion, "", &["reduce", "no-preference"])?},
    ]);
    let media = one_of(&args.media, "", &["screen", "print"])?;
    cdp::send(
        &page,
        "Emulation.setEmulatedMedia",
        json!({"media": media, "features": features}),
    )
    .await?;
    geolocation(&page, args.geolocation).await?;
    // An empty id clears each override.
    let timezone = args.timezone.clone().unwrap_or_default();
    cdp::send(
        &page,
        "Emulation.setTimezoneOverride",
        json!({"timezoneId": timezone}),
    )
    .await
    .map_err(|e| refused("/timezone", &timezone, e))?;
    let locale = match &args.locale {
        Some(l) => json!({"locale": l}),
        None => json!({}),
    };
    cdp::send(&page, "Emulation.setLocaleOverride", locale)
        .await
        .map_err(|e| refused("/locale", args.locale.as_deref().unwrap_or(""), e))?;
    let agent = match &args.user_agent {
        Some(a) => a.clone(),
        None => default_agent(&page).await?,
    };
    let mut override_ = json!({"userAgent": agent});
    if let Some(l) = &args.locale {
        override_["acceptLanguage"] = json!(l);
    }
    cdp::send(&page, "Emulation.setUserAgentOverride", override_).await?;
    Ok(json!({"emulating": args_summary(&args)}))
}

/// The browser's own user agent: setting it clears an override (DevTools
/// has no call that clears one).
async fn default_agent(page: &Page) -> Result<String, ToolError> {
    let version = cdp::send(page, "Browser.getVersion", json!({})).await?;
    Ok(version["userAgent"]
        .as_str()
        .unwrap_or_default()
        .to_string())
}

/// Set or clear where the page is; setting grants the permission to ask.
async fn geolocation(page: &Page, place: Option<Place>) -> Result<(), ToolError> {
    let Some(p) = place else {
        cdp::send(page, "Emulation.clearGeolocationOverride", json!({})).await?;
        return Ok(());
    };
    let target = cdp::send(page, "Target.getTargetInfo", json!({})).await?;
    let mut grant = json!({"permissions": ["geolocation"]});
    if let Some(context) = target["targetInfo"]["browserContextId"].as_str() {
        grant["browserContextId"] = json!(context);
    }
    cdp::send(page, "Browser.grantPermissions", grant).await?;
    cdp::send(
        page,
        "Emulation.setGeolocationOverride",
        json!({"latitude": p.latitude, "longitude": p.longitude, "accuracy": p.accuracy.unwrap_or(10.0)}),
    )
    .await?;
    Ok(())
}

/// A value the browser refused (an unknown time zone or locale), as an
/// argument error naming the field.
fn refused(pointer: &str, value: &str, e: ToolError) -> ToolError {
    ToolError::invalid_arguments(format!(
        "{pointer}: the browser refused {value:?} ({})",
        e.message
    ))
}

/// What is emulated now, by field.
fn args_summary(args: &EmulateArgs) -> Value {
    let mut out = json!({});
    let fields = [
        ("color_scheme", args.color_scheme.as_ref()),
        ("reduced_motion", args.reduced_motion.as_ref()),
        ("media", args.media.as_ref()),
        ("timezone", args.timezone.as_ref()),
        ("locale", args.locale.as_ref()),
        ("user_agent", args.user_agent.as_ref()),
    ];
    for (field, value) in fields {
        if let Some(v) = value {
            out[field] = json!(v);
        }
    }
    if let Some(p) = args.geolocation {
        out["geolocation"] = json!({"latitude": p.latitude, "longitude": p.longitude});
    }
    out
}

/// Register this file's tool.
pub(super) fn register(
    registry: &mut ToolRegistry,
    browsers: &Arc<Browsers>,
) -> Result<(), RegistryError> {
    browser_tool!(
        registry,
        browsers,
        "browser_emulate",
        idempotent(),
        "Emulates color_scheme, reduced_motion, media (print), geolocation, timezone, locale and user_agent; each call sets all of them (left out: cleared).",
        emulate
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_value_names_its_field_and_the_allowed_ones() {
        let args = EmulateArgs {
            color_scheme: Some("purple".into()),
            ..EmulateArgs::default()
        };
        let e = check(&args).err().map(|e| e.message).unwrap_or_default();
        assert_eq!(e, "/color_scheme: \"purple\" is none of light, dark");
        let far = EmulateArgs {
            geolocation: Some(Place {
                latitude: 91.0,
                longitude: 0.0,
                accuracy: None,
            }),
            ..EmulateArgs::default()
        };
        let e = check(&far).err().map(|e| e.message).unwrap_or_default();
        assert!(e.starts_with("/geolocation/latitude"), "{e}");
        assert!(check(&EmulateArgs::default()).is_ok());
    }
}
