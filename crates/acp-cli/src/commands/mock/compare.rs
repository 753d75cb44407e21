//! Loose comparison of what the client sent with what was expected.
//!
//! "Loose" means: every field the expected value has must be there with an
//! equal value (objects recursively, arrays element by element and of the
//! same length), and fields the expected value does not have are allowed.
//! So a client that sends more capabilities, or a newer field, still
//! matches; one that sends a different prompt, answer or option does not.
//!
//! When replaying a recording, a few fields that differ from run to run
//! without meaning anything are not compared at all ([`IGNORED`]).

use serde_json::Value;

/// Fields a replay does not compare: `_meta` (free-form), `clientInfo`
/// and protocol v2's `info` (the client's name and version) and `cwd`
/// (where the client runs).
pub const IGNORED: [&str; 4] = ["_meta", "clientInfo", "info", "cwd"];

/// Where `actual` fails to contain `expected`, as `path: why` lines
/// (empty when it does). Keys in `ignored` are skipped at any depth.
pub fn differences(expected: &Value, actual: &Value, ignored: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    walk("", expected, actual, ignored, &mut out);
    out
}

fn show(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 80 {
        let cut: String = text.chars().take(80).collect();
        format!("{cut}…")
    } else {
        text
    }
}

fn walk(path: &str, expected: &Value, actual: &Value, ignored: &[&str], out: &mut Vec<String>) {
    let here = if path.is_empty() {
        "(the whole value)"
    } else {
        path
    };
    match (expected, actual) {
        (Value::Object(want), Value::Object(got)) => {
            for (key, want_value) in want {
                if ignored.contains(&key.as_str()) {
                    continue;
                }
                let child = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                match got.get(key) {
                    Some(got_value) => walk(&child, want_value, got_value, ignored, out),
                    None => out.push(format!("{child}: missing (expected {})", show(want_value))),
                }
            }
        }
        (Value::Array(want), Value::Array(got)) => {
            if want.len() != got.len() {
                out.push(format!(
                    "{here}: {} items, expected {}",
                    got.len(),
                    want.len()
                ));
                return;
            }
            for (i, (w, g)) in want.iter().zip(got).enumerate() {
                walk(&format!("{path}[{i}]"), w, g, ignored, out);
            }
        }
        (Value::Number(w), Value::Number(g)) if w.as_f64() == g.as_f64() => {}
        (w, g) if w == g => {}
        (w, g) => out.push(format!("{here}: {}, expected {}", show(g), show(w))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn extra_fields_are_fine_and_missing_or_different_ones_are_not() {
        let want = json!({"a": 1, "b": {"c": "x"}, "d": [1, {"e": true}]});
        let got =
            json!({"a": 1.0, "b": {"c": "x", "more": 2}, "d": [1, {"e": true, "f": 0}], "z": 0});
        assert_eq!(differences(&want, &got, &[]), Vec::<String>::new());
        let got = json!({"b": {"c": "y"}, "d": [1]});
        assert_eq!(
            differences(&want, &got, &[]),
            [
                "a: missing (expected 1)",
                "b.c: \"y\", expected \"x\"",
                "d: 1 items, expected 2"
            ]
        );
        assert_eq!(
            differences(&json!(1), &json!("1"), &[]),
            ["(the whole value): \"1\", expected 1"]
        );
    }

    #[test]
    fn ignored_fields_are_skipped_at_any_depth() {
        let want = json!({"cwd": "/a", "x": {"_meta": {"k": 1}, "clientInfo": {"name": "z"}}});
        let got = json!({"cwd": "/b", "x": {}});
        assert!(differences(&want, &got, &IGNORED).is_empty());
    }
}
