//! The terminal part of the turn: env and cwd, exit codes, the output
//! limit, kill, release, and a released id refused.
//!
//! The commands are `sh -c …` scripts, so any POSIX client machine runs
//! them. Every terminal created is released.

use super::cx::ClientCx;
use super::judge::{allowed, failed, fresh_path, session_id, strictly};
use crate::report::{Outcome, shorten};
use crate::wire::Call;
use serde_json::{Value, json};
use std::time::Duration;

/// The checks of this part.
const NAMES: [&str; 10] = [
    "terminal.create",
    "terminal.env",
    "terminal.cwd",
    "terminal.wait-for-exit",
    "terminal.output",
    "terminal.exit-code",
    "terminal.output-limit",
    "terminal.kill",
    "terminal.release",
    "terminal.released-rejected",
];

/// The value of the variable the first terminal prints.
const VALUE: &str = "ünïcödé ✓ 日本語";
/// The limit of the output-limit terminal, in bytes: an odd number, so a
/// cut between bytes would split a two-byte `é`.
const LIMIT: usize = 11;

fn skip_all(cx: &mut ClientCx, why: &str) {
    for name in NAMES {
        cx.record(name, Outcome::skip(why));
    }
}

async fn create(cx: &mut ClientCx, script: &str, extra: Value) -> (Option<String>, Call) {
    let mut params = json!({"sessionId": session_id(cx), "command": "sh", "args": ["-c", script]});
    if let (Some(p), Some(extra)) = (params.as_object_mut(), extra.as_object()) {
        p.extend(extra.clone());
    }
    let call = cx.call("terminal/create", params).await;
    let id = call
        .result()
        .and_then(|r| r["terminalId"].as_str())
        .map(str::to_string);
    (id, call)
}

async fn on(cx: &mut ClientCx, method: &str, terminal: &str) -> Call {
    let session = session_id(cx);
    cx.call(
        method,
        json!({"sessionId": session, "terminalId": terminal}),
    )
    .await
}

/// Judges a result: a failure when there is none or it breaks the types.
fn result<'a>(cx: &ClientCx, what: &str, call: &'a Call) -> Result<&'a Value, Outcome> {
    let Some(r) = call.result() else {
        return Err(failed(what, call));
    };
    match strictly(cx, call) {
        Some(bad) => Err(bad),
        None => Ok(r),
    }
}

/// Runs the terminal part.
pub async fn run(cx: &mut ClientCx) {
    if !cx.capability("/terminal") {
        skip_all(cx, "the client does not advertise terminal");
        return;
    }
    let tool = match allowed(cx, "acp check: run commands", "execute", json!([])).await {
        Ok(t) => t,
        Err(o) => {
            skip_all(cx, &o.reason);
            return;
        }
    };
    let cwd = cx
        .session
        .as_ref()
        .map(|s| s.cwd.clone())
        .unwrap_or_default();
    let dir = fresh_path(&cwd, "dir");
    let made = std::fs::create_dir(&dir).is_ok();
    let dir = if made { dir } else { cwd.clone() };
    run_in(cx, &tool, &dir).await;
    if made {
        let _ = std::fs::remove_dir(&dir);
    }
}

/// The terminals, run in `dir`, under the permission of tool call `tool`.
async fn run_in(cx: &mut ClientCx, tool: &str, dir: &std::path::Path) {
    let tool = tool.to_string();
    let extra = json!({
        "env": [{"name": "ACP_CHECK_VAR", "value": VALUE}],
        "cwd": dir.display().to_string(),
    });
    let (id, call) = create(cx, "printf '%s\\n' \"$ACP_CHECK_VAR\"; pwd", extra).await;
    let Some(first) = id else {
        let o = match result(cx, "terminal/create with env and cwd", &call) {
            Err(o) => o,
            Ok(_) => Outcome::fail("terminal/create answered no terminalId")
                .with_message(&call.describe()),
        };
        cx.record("terminal.create", o);
        skip_all(cx, "needs terminal/create, which failed");
        cx.tool_done(&tool, "failed");
        return;
    };
    let o = strictly(cx, &call).unwrap_or_else(Outcome::pass);
    cx.record("terminal.create", o);
    let call = on(cx, "terminal/wait_for_exit", &first).await;
    let o = match result(cx, "terminal/wait_for_exit", &call) {
        Err(o) => o,
        Ok(r) if r["exitCode"] == 0 => Outcome::pass(),
        Ok(r) => Outcome::fail(format!(
            "`printf …; pwd` should exit 0, the client says exitCode {} signal {}",
            r["exitCode"], r["signal"]
        ))
        .with_message(&call.describe()),
    };
    cx.record("terminal.wait-for-exit", o);
    let call = on(cx, "terminal/output", &first).await;
    match result(cx, "terminal/output", &call) {
        Err(o) => {
            for name in ["terminal.output", "terminal.env", "terminal.cwd"] {
                cx.record(name, o.clone());
            }
        }
        Ok(r) => {
            let output = r["output"].as_str().unwrap_or("").to_string();
            let o = if r["exitStatus"]["exitCode"] != 0 {
                Outcome::fail("after the exit, terminal/output has no exitStatus with exitCode 0")
                    .with_message(&call.describe())
            } else if r["truncated"] != false {
                Outcome::fail("a short output (no limit) is marked truncated")
                    .with_message(&call.describe())
            } else {
                Outcome::pass()
            };
            cx.record("terminal.output", o);
            let mut lines = output.lines();
            let o = match lines.next() {
                Some(v) if v == VALUE => Outcome::pass(),
                _ => Outcome::fail(format!(
                    "the command printed {}, not the env variable's value {VALUE:?}",
                    shorten(&format!("{output:?}"), 80)
                ))
                .with_message(&call.describe()),
            };
            cx.record("terminal.env", o);
            let printed = lines.next().unwrap_or("");
            let same = |a: &std::path::Path, b: &std::path::Path| {
                a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
            };
            let o = if same(std::path::Path::new(printed), dir) {
                Outcome::pass()
            } else {
                Outcome::fail(format!(
                    "the command ran in {printed:?}, not in the cwd asked for ({})",
                    dir.display()
                ))
                .with_message(&call.describe())
            };
            cx.record("terminal.cwd", o);
        }
    }
    let _ = on(cx, "terminal/release", &first).await;

    let (id, call) = create(cx, "echo failing; exit 3", json!({})).await;
    let o = match id {
        None => failed("terminal/create", &call),
        Some(t) => {
            let wait = on(cx, "terminal/wait_for_exit", &t).await;
            let out = on(cx, "terminal/output", &t).await;
            let _ = on(cx, "terminal/release", &t).await;
            match (
                result(cx, "terminal/wait_for_exit", &wait),
                result(cx, "terminal/output", &out),
            ) {
                (Err(o), _) | (_, Err(o)) => o,
                (Ok(w), _) if w["exitCode"] != 3 => Outcome::fail(format!(
                    "`exit 3` reported as exitCode {} by terminal/wait_for_exit",
                    w["exitCode"]
                ))
                .with_message(&wait.describe()),
                (_, Ok(r)) if r["exitStatus"]["exitCode"] != 3 => Outcome::fail(format!(
                    "`exit 3` reported as exitStatus {} by terminal/output",
                    r["exitStatus"]
                ))
                .with_message(&out.describe()),
                _ => Outcome::pass(),
            }
        }
    };
    cx.record("terminal.exit-code", o);

    let full = "é".repeat(50);
    let (id, call) = create(
        cx,
        &format!("printf '%s' '{full}'"),
        json!({"outputByteLimit": LIMIT}),
    )
    .await;
    let o = match id {
        None => failed("terminal/create with outputByteLimit", &call),
        Some(t) => {
            let _ = on(cx, "terminal/wait_for_exit", &t).await;
            let out = on(cx, "terminal/output", &t).await;
            let _ = on(cx, "terminal/release", &t).await;
            match result(cx, "terminal/output", &out) {
                Err(o) => o,
                Ok(r) => judge_limit(r, &full).map_or_else(
                    |why| Outcome::fail(why).with_message(&out.describe()),
                    |notes| Outcome::pass().with_notes(notes),
                ),
            }
        }
    };
    cx.record("terminal.output-limit", o);

    let (id, call) = create(cx, "echo started; exec sleep 60", json!({})).await;
    let Some(t) = id else {
        let o = failed("terminal/create", &call);
        for name in [
            "terminal.kill",
            "terminal.release",
            "terminal.released-rejected",
        ] {
            cx.record(name, o.clone());
        }
        cx.tool_done(&tool, "failed");
        return;
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let kill = on(cx, "terminal/kill", &t).await;
    let o = match result(cx, "terminal/kill", &kill) {
        Err(o) => o,
        Ok(_) => {
            let wait = on(cx, "terminal/wait_for_exit", &t).await;
            let out = on(cx, "terminal/output", &t).await;
            match (
                result(cx, "terminal/wait_for_exit after kill", &wait),
                result(cx, "terminal/output after kill", &out),
            ) {
                (Err(o), _) | (_, Err(o)) => o,
                (Ok(w), _) if w["exitCode"] == 0 => Outcome::fail(
                    "a killed `sleep 60` is reported as exitCode 0 by terminal/wait_for_exit",
                )
                .with_message(&wait.describe()),
                _ => Outcome::pass(),
            }
        }
    };
    cx.record("terminal.kill", o);
    let release = on(cx, "terminal/release", &t).await;
    let o = result(cx, "terminal/release", &release)
        .map(|_| Outcome::pass())
        .unwrap_or_else(|o| o);
    let released = o.status == crate::Status::Pass;
    cx.record("terminal.release", o);
    let o = if !released {
        Outcome::skip("needs terminal/release, which failed")
    } else {
        let out = on(cx, "terminal/output", &t).await;
        match (&out.response, out.error()) {
            (None, _) => Outcome::fail(out.describe()),
            (Some(_), Some(_)) => Outcome::pass(),
            (Some(r), None) => Outcome::fail(
                "terminal/output of a released terminal was answered with a result, not an error",
            )
            .with_message(&r.line),
        }
    };
    cx.record("terminal.released-rejected", o);
    cx.tool_done(&tool, "completed");
}

/// Judges the output of `printf 'éé…'` under the byte limit: `Err(why)`,
/// or the notes of a pass.
fn judge_limit(r: &Value, full: &str) -> Result<Vec<String>, String> {
    let output = r["output"].as_str().unwrap_or("");
    if r["truncated"] != true {
        return Err(format!(
            "{} bytes of output under a limit of {LIMIT} must be marked truncated: true",
            full.len()
        ));
    }
    if output.len() > LIMIT {
        return Err(format!(
            "{} bytes of output kept, more than outputByteLimit {LIMIT}",
            output.len()
        ));
    }
    if !full.ends_with(output) {
        return Err(format!(
            "the output kept, {output:?}, is not the end of what was printed cut on a \
             character boundary"
        ));
    }
    let mut notes = Vec::new();
    if output.len() + 4 <= LIMIT {
        notes.push(format!(
            "only {} of the {LIMIT} bytes allowed were kept",
            output.len()
        ));
    }
    Ok(notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_judged_on_bytes_and_character_boundaries() {
        let full = "é".repeat(50);
        let ok = json!({"output": "ééééé", "truncated": true});
        assert_eq!(judge_limit(&ok, &full), Ok(vec![]));
        let split = json!({"output": "\u{fffd}éééé", "truncated": true});
        assert!(judge_limit(&split, &full).unwrap_err().contains("boundary"));
        let unmarked = json!({"output": "ééééé", "truncated": false});
        assert!(
            judge_limit(&unmarked, &full)
                .unwrap_err()
                .contains("truncated")
        );
        let long = json!({"output": "éééééé", "truncated": true});
        assert!(judge_limit(&long, &full).unwrap_err().contains("more than"));
        let head = json!({"output": "a", "truncated": true});
        assert!(judge_limit(&head, &full).is_err());
    }
}
