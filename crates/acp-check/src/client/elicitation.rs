//! The elicitation part of the turn: a form, then a URL, each only when the
//! client advertises that mode.
//!
//! The form asks for one field of every property type the schema has (two
//! of them required, so a person can answer it quickly in an interactive
//! client), and an accepted answer is judged against it field by field:
//! every required field present, no field the form did not ask for, each of
//! the right JSON type, strings within their length, numbers within their
//! bounds, and choices among the values offered. Declining or cancelling
//! is a fine answer, and the pass says which it was.
//!
//! The URL elicitation points at a name that cannot resolve
//! (`example.invalid`). Accepting it (the user was sent there) is followed
//! by `elicitation/complete`, after which the client must still answer.

use super::cx::ClientCx;
use super::judge::{session_id, still_answers, strictly};
use crate::report::Outcome;
use crate::wire::Call;
use serde_json::{Map, Value, json};

/// The id of the URL elicitation, repeated in `elicitation/complete`.
const URL_ID: &str = "acp-check-elicitation-1";

/// The form the client is asked to fill in.
fn form() -> Value {
    json!({
        "type": "object",
        "title": "acp check",
        "description": "Any answer is fine; only name and colour are required.",
        "properties": {
            "name": {"type": "string", "title": "Name", "minLength": 1, "maxLength": 64},
            "color": {"type": "string", "title": "Colour", "enum": ["red", "green", "blue"]},
            "size": {"type": "string", "title": "Size", "oneOf": [
                {"const": "s", "title": "Small"},
                {"const": "l", "title": "Large"},
            ]},
            "age": {"type": "integer", "title": "Age", "minimum": 0, "maximum": 150},
            "ratio": {"type": "number", "title": "A number from 0 to 1", "minimum": 0, "maximum": 1},
            "subscribe": {"type": "boolean", "title": "Subscribe", "default": false},
            "tags": {"type": "array", "title": "Tags (at most two)", "maxItems": 2,
                "items": {"type": "string", "enum": ["a", "b", "c"]}},
        },
        "required": ["name", "color"],
    })
}

/// The outcome of an answer that is not a result: an error, or none.
fn not_answered(what: &str, call: &Call) -> Outcome {
    let Some(r) = &call.response else {
        return Outcome::fail(format!("{what}: {}", call.describe()));
    };
    let code = r.value.as_ref().and_then(|v| v["error"]["code"].as_i64());
    let why = match code {
        Some(-32601) => format!(
            "{what}: answered -32601 (method not found), though the client advertises this mode; \
             a client that cannot ask the user should not advertise it"
        ),
        _ => format!("{what}: answered with an error"),
    };
    Outcome::fail(why).with_message(&r.line)
}

/// Judges an `elicitation/create` result's action against `schema` (a
/// form) or, for a URL, against none. `Ok` is the action taken.
pub(super) fn judge(result: &Value, schema: Option<&Value>) -> Result<String, String> {
    let content = result.get("content").filter(|c| !c.is_null());
    match result["action"].as_str() {
        Some(action @ ("decline" | "cancel")) => match content {
            Some(_) => Err(format!(
                "answered {action:?} with content: only an accepted elicitation carries answers"
            )),
            None if action == "decline" => Ok("declined".into()),
            None => Ok("cancelled".into()),
        },
        Some("accept") => match schema {
            Some(schema) => {
                let fields = judge_content(content, schema)?;
                Ok(format!("accepted with {fields}"))
            }
            None => match content {
                // The schema allows it; nothing in it can mean anything.
                Some(c) if c.as_object().is_some_and(|o| !o.is_empty()) => Ok(format!(
                    "accepted, with content {c} though a URL elicitation has no form"
                )),
                _ => Ok("accepted".into()),
            },
        },
        Some(other) => Err(format!(
            "action {other:?} is none of accept, decline and cancel"
        )),
        None => Err("the result has no action".into()),
    }
}

/// Judges accepted `content` against the form `schema`; the fields given,
/// in words.
fn judge_content(content: Option<&Value>, schema: &Value) -> Result<String, String> {
    let empty = Map::new();
    let properties = schema["properties"].as_object().unwrap_or(&empty);
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let content = match content {
        None => &empty,
        Some(Value::Object(c)) => c,
        Some(other) => return Err(format!("accepted with content {other}, not an object")),
    };
    let missing: Vec<&str> = required
        .iter()
        .copied()
        .filter(|r| !content.contains_key(*r))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "accepted without the required field{} {}",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", ")
        ));
    }
    for (name, value) in content {
        let Some(property) = properties.get(name) else {
            return Err(format!(
                "accepted with field {name:?}, which the form does not ask for"
            ));
        };
        judge_value(value, property).map_err(|why| format!("field {name:?}: {why}"))?;
    }
    // Sorted: the order of a JSON object depends on serde_json's features.
    let mut names: Vec<&str> = content.keys().map(String::as_str).collect();
    names.sort_unstable();
    Ok(if names.is_empty() {
        "no fields".into()
    } else {
        names.join(", ")
    })
}

/// The values a string property (`enum` or `oneOf`) or the items of a
/// multi-select (`enum` or `anyOf`) offer; `None` when any value goes.
fn offered(schema: &Value) -> Option<Vec<&str>> {
    if let Some(values) = schema["enum"].as_array() {
        return Some(values.iter().filter_map(Value::as_str).collect());
    }
    let options = schema["oneOf"].as_array().or(schema["anyOf"].as_array())?;
    Some(options.iter().filter_map(|o| o["const"].as_str()).collect())
}

fn choice(text: &str, schema: &Value) -> Result<(), String> {
    match offered(schema) {
        Some(values) if !values.contains(&text) => Err(format!(
            "{text:?} is not one of the values offered ({})",
            values.join(", ")
        )),
        _ => Ok(()),
    }
}

/// Judges one answer against its property's schema.
fn judge_value(value: &Value, property: &Value) -> Result<(), String> {
    let kind = property["type"].as_str().unwrap_or_default();
    let wrong = || Err(format!("{value} is not {}", article(kind)));
    let bound = |n: f64| -> Result<(), String> {
        if let Some(min) = property["minimum"].as_f64()
            && n < min
        {
            return Err(format!("{value} is below the minimum {min}"));
        }
        if let Some(max) = property["maximum"].as_f64()
            && n > max
        {
            return Err(format!("{value} is above the maximum {max}"));
        }
        Ok(())
    };
    match kind {
        "string" => {
            let Some(text) = value.as_str() else {
                return wrong();
            };
            let chars = text.chars().count() as u64;
            if let Some(min) = property["minLength"].as_u64()
                && chars < min
            {
                return Err(format!("{value} is shorter than the minimum length {min}"));
            }
            if let Some(max) = property["maxLength"].as_u64()
                && chars > max
            {
                return Err(format!("{value} is longer than the maximum length {max}"));
            }
            choice(text, property)
        }
        "integer" => match value.as_f64() {
            Some(n) if n.fract() == 0.0 => bound(n),
            _ => wrong(),
        },
        "number" => match value.as_f64() {
            Some(n) => bound(n),
            None => wrong(),
        },
        "boolean" if value.is_boolean() => Ok(()),
        "boolean" => wrong(),
        "array" => {
            let Some(items) = value.as_array() else {
                return wrong();
            };
            let count = items.len() as u64;
            if let Some(min) = property["minItems"].as_u64()
                && count < min
            {
                return Err(format!("{value} has fewer choices than the {min} required"));
            }
            if let Some(max) = property["maxItems"].as_u64()
                && count > max
            {
                return Err(format!("{value} has more choices than the {max} allowed"));
            }
            for item in items {
                let Some(text) = item.as_str() else {
                    return Err(format!("{value} is not a list of strings"));
                };
                choice(text, &property["items"])?;
            }
            Ok(())
        }
        // A type this form does not use: nothing to hold it to.
        _ => Ok(()),
    }
}

fn article(kind: &str) -> String {
    match kind {
        "integer" => "an integer".into(),
        "array" => "a list of choices".into(),
        kind => format!("a {kind}"),
    }
}

/// Runs the part: the form, then the URL.
pub(super) async fn run(cx: &mut ClientCx) {
    let session = session_id(cx);
    if cx.capability("/elicitation/form") {
        let schema = form();
        let params = json!({
            "sessionId": session,
            "mode": "form",
            "message": "acp check: a form to fill in (any answer, declining too, is fine)",
            "requestedSchema": schema,
        });
        let call = cx.call("elicitation/create", params).await;
        let o = match call.result() {
            None => not_answered("elicitation/create (form)", &call),
            Some(r) => match strictly(cx, &call) {
                Some(bad) => bad,
                None => match judge(r, Some(&schema)) {
                    Ok(how) => Outcome::pass().with_notes([how]),
                    Err(why) => Outcome::fail(why).with_message(&call.describe()),
                },
            },
        };
        cx.record("elicitation.form", o);
    } else {
        cx.record(
            "elicitation.form",
            Outcome::skip("the client does not advertise elicitation.form"),
        );
    }
    if cx.capability("/elicitation/url") {
        let params = json!({
            "sessionId": session,
            "mode": "url",
            "elicitationId": URL_ID,
            "url": "https://example.invalid/acp-check",
            "message": "acp check: a link to open (nothing is there; declining is fine)",
        });
        let call = cx.call("elicitation/create", params).await;
        let o = match call.result() {
            None => not_answered("elicitation/create (url)", &call),
            Some(r) => match strictly(cx, &call) {
                Some(bad) => bad,
                None => match judge(r, None) {
                    Err(why) => Outcome::fail(why).with_message(&call.describe()),
                    Ok(how) if how.starts_with("accepted") => {
                        cx.notify("elicitation/complete", json!({"elicitationId": URL_ID}));
                        let after = still_answers(cx, "elicitation/complete").await;
                        if after.status == crate::Status::Pass {
                            Outcome::pass()
                                .with_notes([format!("{how}; elicitation/complete followed")])
                        } else {
                            after
                        }
                    }
                    Ok(how) => Outcome::pass().with_notes([how]),
                },
            },
        };
        cx.record("elicitation.url", o);
    } else {
        cx.record(
            "elicitation.url",
            Outcome::skip("the client does not advertise elicitation.url"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form_answer(content: Value) -> Result<String, String> {
        judge(
            &json!({"action": "accept", "content": content}),
            Some(&form()),
        )
    }

    #[test]
    fn a_full_answer_in_range_passes() {
        let got = form_answer(json!({
            "name": "Ada", "color": "green", "size": "l", "age": 36, "ratio": 0.5,
            "subscribe": true, "tags": ["a", "c"],
        }));
        assert_eq!(
            got.unwrap(),
            "accepted with age, color, name, ratio, size, subscribe, tags"
        );
        // An integer written as 36.0 is still an integer.
        assert!(form_answer(json!({"name": "Ada", "color": "red", "age": 36.0})).is_ok());
        assert_eq!(
            judge(&json!({"action": "decline"}), Some(&form())).unwrap(),
            "declined"
        );
        assert_eq!(
            judge(&json!({"action": "cancel", "content": null}), Some(&form())).unwrap(),
            "cancelled"
        );
    }

    #[test]
    fn each_way_of_not_matching_the_form_fails_with_the_reason() {
        let cases = [
            (
                json!({"color": "red"}),
                "accepted without the required field name",
            ),
            (
                json!({"name": "Ada", "color": "red", "age": "36"}),
                "field \"age\": \"36\" is not an integer",
            ),
            (
                json!({"name": "Ada", "color": "red", "age": 36.5}),
                "field \"age\": 36.5 is not an integer",
            ),
            (
                json!({"name": "Ada", "color": "red", "age": 151}),
                "field \"age\": 151 is above the maximum 150",
            ),
            (
                json!({"name": "Ada", "color": "red", "ratio": -0.1}),
                "field \"ratio\": -0.1 is below the minimum 0",
            ),
            (
                json!({"name": "", "color": "red"}),
                "field \"name\": \"\" is shorter than the minimum length 1",
            ),
            (
                json!({"name": "Ada", "color": "purple"}),
                "field \"color\": \"purple\" is not one of the values offered (red, green, blue)",
            ),
            (
                json!({"name": "Ada", "color": "red", "size": "Small"}),
                "field \"size\": \"Small\" is not one of the values offered (s, l)",
            ),
            (
                json!({"name": "Ada", "color": "red", "subscribe": "yes"}),
                "field \"subscribe\": \"yes\" is not a boolean",
            ),
            (
                json!({"name": "Ada", "color": "red", "tags": ["a", "d"]}),
                "field \"tags\": \"d\" is not one of the values offered (a, b, c)",
            ),
            (
                json!({"name": "Ada", "color": "red", "tags": ["a", "b", "c"]}),
                "field \"tags\": [\"a\",\"b\",\"c\"] has more choices than the 2 allowed",
            ),
            (
                json!({"name": "Ada", "color": "red", "tags": "a"}),
                "field \"tags\": \"a\" is not a list of choices",
            ),
            (
                json!({"name": "Ada", "color": "red", "email": "a@b"}),
                "accepted with field \"email\", which the form does not ask for",
            ),
            (
                json!(["Ada"]),
                "accepted with content [\"Ada\"], not an object",
            ),
        ];
        for (content, why) in cases {
            assert_eq!(form_answer(content.clone()), Err(why.into()), "{content}");
        }
        assert_eq!(
            judge(&json!({"action": "accept"}), Some(&form())),
            Err("accepted without the required fields name, color".into())
        );
    }

    #[test]
    fn actions_and_url_answers() {
        assert_eq!(
            judge(&json!({"action": "accept"}), None).unwrap(),
            "accepted"
        );
        assert_eq!(
            judge(&json!({"action": "accept", "content": {}}), None).unwrap(),
            "accepted"
        );
        assert_eq!(
            judge(&json!({"action": "accept", "content": {"ok": true}}), None).unwrap(),
            "accepted, with content {\"ok\":true} though a URL elicitation has no form"
        );
        assert_eq!(
            judge(
                &json!({"action": "decline", "content": {"name": "x"}}),
                None
            ),
            Err(
                "answered \"decline\" with content: only an accepted elicitation carries answers"
                    .into()
            )
        );
        assert_eq!(
            judge(&json!({"action": "ok"}), None),
            Err("action \"ok\" is none of accept, decline and cancel".into())
        );
        assert_eq!(
            judge(&json!({}), None),
            Err("the result has no action".into())
        );
    }
}
