//! A registry spec as MCP's `tools/list` shows it ([`mcp_tool`]): the one
//! place a spec becomes an MCP listing, for `axon mcp`, `/mcp` and
//! `axon tools --format mcp`.

use serde_json::{Value, json};

/// A registry spec as MCP lists it. Every listed byte is read by the model on
/// every turn, so the listing says what a model needs and no more: schemas in
/// plain JSON Schema (no formats beyond the standard ones: the TypeScript SDK's
/// validator warns about schemars' `uint64`), without `$schema`, titles, the
/// types' own descriptions, `default: null` or `null` in the type of an optional
/// field; enums of constants as `enum`; annotations only where they differ from
/// MCP's defaults; an output schema only when the data is an object (MCP's
/// `outputSchema` must be one), with its types but not its prose.
pub fn mcp_tool(spec: &axon_core::ToolSpec) -> Value {
    let mut input = spec.input_schema.clone();
    lean_schema(&mut input, Side::Input);
    let mut tool = json!({
        "name": spec.name,
        "description": spec.description,
        "inputSchema": input,
    });
    if let Some(out) = spec
        .output_schema
        .as_ref()
        .filter(|s| s["type"] == "object")
    {
        let mut out = out.clone();
        lean_schema(&mut out, Side::Output);
        tool["outputSchema"] = out;
    }
    // MCP's defaults: readOnlyHint false, destructiveHint true, idempotentHint
    // false, openWorldHint true.
    let a = &spec.annotations;
    let mut hints = serde_json::Map::new();
    if let Some(title) = &a.title {
        hints.insert("title".into(), json!(title));
    }
    if a.read_only {
        hints.insert("readOnlyHint".into(), json!(true));
    } else if !a.destructive {
        // Only meaningful for tools that write.
        hints.insert("destructiveHint".into(), json!(false));
    }
    if a.idempotent && !a.read_only {
        hints.insert("idempotentHint".into(), json!(true));
    }
    if !a.open_world {
        hints.insert("openWorldHint".into(), json!(false));
    }
    if !hints.is_empty() {
        tool["annotations"] = Value::Object(hints);
    }
    tool
}

/// Which schema is leaned: the input schema is for the model (descriptions
/// kept, optional fields without their `null`, obvious defaults dropped); the
/// output schema is for the client's validator (exact types, no prose).
#[derive(Clone, Copy, PartialEq)]
enum Side {
    Input,
    Output,
}

/// Formats JSON Schema defines (2020-12, "format" vocabulary); schemars' numeric
/// formats (`uint64`, `double`, …) are not among them.
const STANDARD_FORMATS: [&str; 19] = [
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Lean a (root) schema: see [`mcp_tool`].
fn lean_schema(schema: &mut Value, side: Side) {
    inline_refs(schema, 0);
    if let Some(map) = schema.as_object_mut() {
        map.remove("$schema");
        map.remove("title");
        // Unknown arguments are refused by the pipeline with an error naming
        // them, which a model reads and corrects: the keyword need not be listed.
        if side == Side::Input {
            map.remove("additionalProperties");
        }
        // "`browser_click` arguments." says nothing the tool's own description
        // does not.
        map.remove("description");
        if let Some(Value::Object(defs)) = map.get_mut("$defs") {
            for def in defs.values_mut() {
                if let Some(def) = def.as_object_mut() {
                    def.remove("description");
                }
            }
        }
    }
    lean_node(schema, side);
}

fn lean_node(schema: &mut Value, side: Side) {
    match schema {
        Value::Object(map) => {
            map.remove("title");
            match map.get_mut("description") {
                Some(_) if side == Side::Output => {
                    map.remove("description");
                }
                Some(Value::String(text)) if text.contains('\n') => {
                    *text = text.split_whitespace().collect::<Vec<_>>().join(" ");
                }
                _ => {}
            }
            if matches!(map.get("default"), Some(Value::Null | Value::Bool(false))) {
                map.remove("default");
            }
            if side == Side::Output {
                // Bounds are the tool's promise to keep, not the client's to check.
                map.remove("minimum");
                map.remove("maximum");
            } else if map.get("minimum") == Some(&json!(0)) {
                // Every count and duration is unsigned (schemars' `uint`); a
                // negative one is refused by the pipeline, naming the field.
                map.remove("minimum");
            }
            if let Some(Value::String(format)) = map.get("format")
                && !STANDARD_FORMATS.contains(&format.as_str())
            {
                // `uint64` and friends: schemars adds `minimum: 0` itself.
                map.remove("format");
            }
            // oneOf [{const, description}, …] → enum [...]
            if let Some(Value::Array(variants)) = map.get("oneOf")
                && !variants.is_empty()
                && variants.iter().all(|v| v.get("const").is_some())
            {
                let values: Vec<Value> = variants.iter().map(|v| v["const"].clone()).collect();
                let ty = variants[0].get("type").cloned();
                map.remove("oneOf");
                map.insert("enum".into(), Value::Array(values));
                if let Some(ty) = ty {
                    map.insert("type".into(), ty);
                }
            }
            let required: Vec<String> = map
                .get("required")
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            for (key, value) in map.iter_mut() {
                // Property names are data, not keywords: recurse into each schema.
                if key == "properties" {
                    if let Value::Object(props) = value {
                        for (name, prop) in props.iter_mut() {
                            if side == Side::Input && !required.contains(name) {
                                drop_null_type(prop);
                            }
                            lean_node(prop, side);
                        }
                    }
                } else if key == "$defs" || key == "definitions" {
                    if let Value::Object(defs) = value {
                        defs.values_mut().for_each(|v| lean_node(v, side));
                    }
                } else if !matches!(key.as_str(), "enum" | "const" | "default" | "examples") {
                    // A branch of a union, an array's items, a map's values:
                    // the property's own description says what it is.
                    strip_description(value);
                    lean_node(value, side);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| lean_node(v, side)),
        _ => {}
    }
}

/// Descriptions of the schemas directly under a keyword (`anyOf`'s branches,
/// `items`, `additionalProperties`).
fn strip_description(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("description");
        }
        Value::Array(items) => {
            for item in items.iter_mut().filter_map(Value::as_object_mut) {
                item.remove("description");
            }
        }
        _ => {}
    }
}

/// `{"$ref": "#/$defs/X"}` replaced by X itself (the small enums schemars puts
/// in `$defs` cost more as references than inline), then `$defs` dropped when
/// nothing refers to it any more. Recursive definitions stay references.
fn inline_refs(schema: &mut Value, depth: usize) {
    let Some(defs) = schema.get("$defs").cloned() else {
        return;
    };
    fn walk(node: &mut Value, defs: &Value, depth: usize) -> bool {
        let mut complete = true;
        match node {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref")
                    && let Some(name) = r.strip_prefix("#/$defs/")
                    && depth < 8
                    && let Some(Value::Object(def)) = defs.get(name)
                {
                    let def = def.clone();
                    map.remove("$ref");
                    for (k, v) in def {
                        map.entry(k).or_insert(v);
                    }
                    return walk(node, defs, depth + 1);
                }
                if map.contains_key("$ref") {
                    complete = false;
                }
                for (key, value) in map.iter_mut() {
                    if key != "$defs" {
                        complete &= walk(value, defs, depth);
                    }
                }
            }
            Value::Array(items) => {
                for item in items {
                    complete &= walk(item, defs, depth);
                }
            }
            _ => {}
        }
        complete
    }
    if walk(schema, &defs, depth)
        && let Some(map) = schema.as_object_mut()
    {
        map.remove("$defs");
    }
}

/// An optional field's `["string", "null"]` as `"string"`: leaving it out says
/// the same, and Axon accepts the `null` anyway (the listing is for the model).
fn drop_null_type(prop: &mut Value) {
    // `anyOf: [X, {"type": "null"}]` (an optional enum or struct) → X.
    if let Some(Value::Array(options)) = prop.get("anyOf")
        && options.len() == 2
        && let Some(i) = options.iter().position(|o| o == &json!({"type": "null"}))
    {
        let keep = options[1 - i].clone();
        if let (Some(map), Value::Object(keep)) = (prop.as_object_mut(), keep) {
            map.remove("anyOf");
            for (k, v) in keep {
                map.entry(k).or_insert(v);
            }
        }
    }
    let Some(Value::Array(types)) = prop.get("type") else {
        return;
    };
    let rest: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
    if rest.len() == 1 && rest.len() < types.len() {
        prop["type"] = rest[0].clone();
    }
}
