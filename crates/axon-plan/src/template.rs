//! Templates: how a step's parameters read earlier results (docs/design.md, "Templates").
//!
//! `${step[N].data<path>}`, `${steps.<id>.data<path>}` and
//! `${secret.NAME}` (a configured secret, resolved when the step runs), where the path
//! is a sequence of `.name`, `[N]` and `.*` / `[*]` (map over an array; nestable). A
//! string that is exactly one template becomes the referenced JSON value with its
//! type; a template inside a longer string is interpolated (strings as they are,
//! other values as compact JSON). `$${` is a literal `${`.

use std::fmt;

use serde_json::Value;

/// Which step a template reads.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TemplateSource {
    /// `step[N]`
    Index(usize),
    /// `steps.<id>`
    Id(String),
    /// `secret.<NAME>`: a secret from the runner's configuration (an
    /// environment variable or a file), read when the step runs and never stored.
    Secret(String),
}

/// One step of a path into the data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    /// `.name`
    Key(String),
    /// `[N]`
    Index(usize),
    /// `.*` or `[*]`: the rest of the path, applied to every element.
    Each,
}

impl fmt::Display for Segment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Segment::Key(k) => write!(f, ".{k}"),
            Segment::Index(i) => write!(f, "[{i}]"),
            Segment::Each => f.write_str(".*"),
        }
    }
}

/// One `${…}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    /// The step it reads.
    pub source: TemplateSource,
    /// The path below `data`.
    pub path: Vec<Segment>,
    /// The template as written, `${…}` included, for messages.
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    Literal(String),
    Ref(Reference),
}

/// What is wrong with a template. Parsing fails on its text (a plan error,
/// found before the run); rendering on the data it reads (a step's error,
/// at run time).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// `${` without its `}`.
    #[error("unclosed template in {text:?}")]
    Unclosed {
        /// The whole string parameter.
        text: String,
    },
    /// A reference that is not `step[N]`, `steps.<id>` or `secret.<NAME>`
    /// followed by `.data` and a path.
    #[error("template {template}: {why}")]
    Syntax {
        /// The template, `${…}`.
        template: String,
        /// What is wrong with it.
        why: String,
    },
    /// The step it reads has no data (it failed, or was skipped).
    #[error("template {template}: the step has no data")]
    NoData {
        /// The template.
        template: String,
    },
    /// Its path is not in the step's data.
    #[error("template {template}: {why}")]
    Path {
        /// The template.
        template: String,
        /// Which segment, and what it met.
        why: String,
    },
}

/// A parsed string parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    pieces: Vec<Piece>,
}

impl Template {
    /// Parse a string. Errors say what is wrong with which template.
    pub fn parse(s: &str) -> Result<Template, TemplateError> {
        let mut pieces = Vec::new();
        let mut literal = String::new();
        let mut rest = s;
        while let Some(pos) = rest.find("${") {
            if pos > 0 && rest.as_bytes()[pos - 1] == b'$' {
                literal.push_str(&rest[..pos - 1]);
                literal.push_str("${");
                rest = &rest[pos + 2..];
                continue;
            }
            literal.push_str(&rest[..pos]);
            let Some(end) = rest[pos..].find('}') else {
                return Err(TemplateError::Unclosed {
                    text: s.to_string(),
                });
            };
            let text = &rest[pos..pos + end + 1];
            if !literal.is_empty() {
                pieces.push(Piece::Literal(std::mem::take(&mut literal)));
            }
            pieces.push(Piece::Ref(parse_reference(text)?));
            rest = &rest[pos + end + 1..];
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            pieces.push(Piece::Literal(literal));
        }
        Ok(Template { pieces })
    }

    /// The references it holds.
    pub fn references(&self) -> impl Iterator<Item = &Reference> {
        self.pieces.iter().filter_map(|p| match p {
            Piece::Ref(r) => Some(r),
            Piece::Literal(_) => None,
        })
    }

    /// Render with `data(source)` giving each referenced step's data.
    pub fn render<'a>(
        &self,
        data: &impl Fn(&TemplateSource) -> Option<&'a Value>,
    ) -> Result<Value, TemplateError> {
        if let [Piece::Ref(r)] = self.pieces.as_slice() {
            return evaluate(r, data);
        }
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Literal(s) => out.push_str(s),
                Piece::Ref(r) => match evaluate(r, data)? {
                    Value::String(s) => out.push_str(&s),
                    other => out.push_str(&other.to_string()),
                },
            }
        }
        Ok(Value::String(out))
    }
}

fn parse_reference(text: &str) -> Result<Reference, TemplateError> {
    let bad = |why: &str| TemplateError::Syntax {
        template: text.to_string(),
        why: why.to_string(),
    };
    let inner = &text[2..text.len() - 1];
    let (source, rest) = if let Some(after) = inner.strip_prefix("step[") {
        let close = after.find(']').ok_or_else(|| bad("expected step[N]"))?;
        let n = after[..close]
            .trim()
            .parse::<usize>()
            .map_err(|_| bad("step[N] needs a number"))?;
        (TemplateSource::Index(n), &after[close + 1..])
    } else if let Some(after) = inner.strip_prefix("steps.") {
        let end = after.find(['.', '[']).unwrap_or(after.len());
        let id = &after[..end];
        if id.is_empty() {
            return Err(bad("steps.<id> needs an id"));
        }
        (TemplateSource::Id(id.to_string()), &after[end..])
    } else if let Some(name) = inner.strip_prefix("secret.") {
        let valid = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid {
            return Err(bad(
                "secret.<NAME> needs a name of letters, digits, '_' and '-'",
            ));
        }
        return Ok(Reference {
            source: TemplateSource::Secret(name.to_string()),
            path: Vec::new(),
            text: text.to_string(),
        });
    } else {
        return Err(bad("must start with step[N], steps.<id> or secret.<NAME>"));
    };
    let rest = rest
        .strip_prefix(".data")
        .filter(|r| r.is_empty() || r.starts_with(['.', '[']))
        .ok_or_else(|| bad("expected .data after the step"))?;
    Ok(Reference {
        source,
        path: parse_path(rest).map_err(|why| bad(&why))?,
        text: text.to_string(),
    })
}

fn parse_path(mut rest: &str) -> Result<Vec<Segment>, String> {
    let mut path = Vec::new();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('[') {
            let close = after.find(']').ok_or("unclosed [")?;
            let inside = after[..close].trim();
            path.push(if inside == "*" {
                Segment::Each
            } else {
                Segment::Index(
                    inside
                        .parse()
                        .map_err(|_| format!("[{inside}] is not an index or *"))?,
                )
            });
            rest = &after[close + 1..];
        } else if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            let name = &after[..end];
            if name.is_empty() {
                return Err("empty segment after '.'".into());
            }
            path.push(if name == "*" {
                Segment::Each
            } else {
                Segment::Key(name.to_string())
            });
            rest = &after[end..];
        } else {
            return Err(format!("unexpected {rest:?}"));
        }
    }
    Ok(path)
}

fn evaluate<'a>(
    r: &Reference,
    data: &impl Fn(&TemplateSource) -> Option<&'a Value>,
) -> Result<Value, TemplateError> {
    let root = data(&r.source).ok_or_else(|| TemplateError::NoData {
        template: r.text.clone(),
    })?;
    walk(root, &r.path, "data").map_err(|why| TemplateError::Path {
        template: r.text.clone(),
        why,
    })
}

fn walk(value: &Value, path: &[Segment], at: &str) -> Result<Value, String> {
    let Some((seg, rest)) = path.split_first() else {
        return Ok(value.clone());
    };
    let here = format!("{at}{seg}");
    match (seg, value) {
        (Segment::Key(k), Value::Object(map)) => match map.get(k) {
            Some(v) => walk(v, rest, &here),
            None => Err(format!("segment {seg} not found in {at}")),
        },
        (Segment::Index(i), Value::Array(items)) => match items.get(*i) {
            Some(v) => walk(v, rest, &here),
            None => Err(format!(
                "segment {seg} out of range: {at} has {} items",
                items.len()
            )),
        },
        (Segment::Each, Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| walk(v, rest, &format!("{at}[{i}]")))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        (_, other) => Err(format!(
            "segment {seg} cannot apply to {at}, which is {}",
            kind(other)
        )),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Every string in `params` that holds a template or an escape, with its location.
pub fn templates_in(params: &Value) -> Vec<Result<Template, TemplateError>> {
    let mut out = Vec::new();
    visit_strings(params, &mut |s| {
        if s.contains("${") {
            out.push(Template::parse(s));
        }
    });
    out
}

fn visit_strings(v: &Value, f: &mut impl FnMut(&str)) {
    match v {
        Value::String(s) => f(s),
        Value::Array(items) => items.iter().for_each(|i| visit_strings(i, f)),
        Value::Object(map) => map.values().for_each(|i| visit_strings(i, f)),
        _ => {}
    }
}

/// `params` with every template rendered.
pub fn resolve<'a>(
    params: &Value,
    data: &impl Fn(&TemplateSource) -> Option<&'a Value>,
) -> Result<Value, TemplateError> {
    Ok(match params {
        Value::String(s) if s.contains("${") => Template::parse(s)?.render(data)?,
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|i| resolve(i, data))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| resolve(v, data).map(|v| (k.clone(), v)))
                .collect::<Result<_, _>>()?,
        ),
        other => other.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn with(data: Value) -> impl Fn(&TemplateSource) -> Option<&'static Value> {
        let leaked: &'static Value = Box::leak(Box::new(data));
        move |s| match s {
            TemplateSource::Index(0) | TemplateSource::Id(_) => Some(leaked),
            _ => None,
        }
    }

    #[test]
    fn seed_002_map_over_an_array_resolves_to_the_ids() {
        let data = with(json!([{"id": "S1"}, {"id": "S2"}]));
        let v = resolve(&json!({"shipment_ids": "${step[0].data.*.id}"}), &data).unwrap();
        assert_eq!(v, json!({"shipment_ids": ["S1", "S2"]}));
    }

    #[test]
    fn a_whole_string_template_keeps_the_json_type() {
        let data = with(json!({"n": 3, "ok": true, "list": [1, 2], "obj": {"a": 1}}));
        for (t, want) in [
            ("${steps.x.data.n}", json!(3)),
            ("${steps.x.data.ok}", json!(true)),
            ("${steps.x.data.list}", json!([1, 2])),
            ("${steps.x.data.obj}", json!({"a": 1})),
            (
                "${steps.x.data}",
                json!({"n": 3, "ok": true, "list": [1, 2], "obj": {"a": 1}}),
            ),
        ] {
            assert_eq!(resolve(&json!(t), &data).unwrap(), want, "{t}");
        }
    }

    #[test]
    fn embedded_templates_interpolate() {
        let data = with(json!({"name": "Ada", "n": 3, "list": [1, 2]}));
        let v = resolve(
            &json!("hi ${steps.x.data.name}, n=${step[0].data.n} ${steps.x.data.list}"),
            &data,
        )
        .unwrap();
        assert_eq!(v, json!("hi Ada, n=3 [1,2]"));
    }

    #[test]
    fn double_dollar_escapes() {
        let data = with(json!({"n": 1}));
        assert_eq!(
            resolve(&json!("cost: $${price}"), &data).unwrap(),
            json!("cost: ${price}")
        );
        assert_eq!(
            resolve(&json!("$${a} ${step[0].data.n}"), &data).unwrap(),
            json!("${a} 1")
        );
    }

    #[test]
    fn brackets_and_nested_maps() {
        let data = with(
            json!({"orders": [{"items": [{"sku": "a"}, {"sku": "b"}]}, {"items": [{"sku": "c"}]}]}),
        );
        assert_eq!(
            resolve(&json!("${step[0].data.orders[*].items.*.sku}"), &data).unwrap(),
            json!([["a", "b"], ["c"]])
        );
        assert_eq!(
            resolve(&json!("${step[0].data.orders[1].items[0].sku}"), &data).unwrap(),
            json!("c")
        );
    }

    #[test]
    fn a_missing_path_names_the_template_and_the_segment() {
        let data = with(json!({"a": {"b": 1}}));
        let err = resolve(&json!("${step[0].data.a.c}"), &data).unwrap_err();
        assert_eq!(
            err.to_string(),
            "template ${step[0].data.a.c}: segment .c not found in data.a"
        );
        assert!(matches!(err, TemplateError::Path { .. }), "{err:?}");
        let err = resolve(&json!("${step[0].data.a.b[2]}"), &data)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("segment [2] cannot apply to data.a.b, which is a number"),
            "{err}"
        );
    }

    #[test]
    fn malformed_templates_are_errors() {
        for bad in [
            "${step[x].data}",
            "${foo}",
            "${step[0].dat}",
            "${step[0].data.}",
            "${step[0].data",
        ] {
            assert!(Template::parse(bad).is_err(), "{bad}");
        }
    }
}
