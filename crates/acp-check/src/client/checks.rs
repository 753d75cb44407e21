//! The checks of `acp check client`, in the order the turn runs them.
//!
//! The turn (`turn.rs`) records each outcome under its check's name; the
//! wire checks are judged from the log once the client's life is over
//! ([`judge_wire`]). A check reads its outcome with [`ClientCx::judged`].

use super::cx::ClientCx;
use crate::catalog::Check;
use crate::report::{Outcome, Tier};
use crate::strict::Envelope;
use crate::wire::Dir;
use std::collections::HashSet;

macro_rules! checks {
    ($(($name:literal, $area:literal, $doc:literal, $feature:expr, $tier:ident, $kit:expr, $rule:literal)),* $(,)?) => {
        /// Every check of `acp check client`.
        pub static CHECKS: &[Check<ClientCx>] = &[$(
            Check {
                name: $name,
                area: $area,
                doc: $doc,
                feature: $feature,
                tier: Tier::$tier,
                kit: $kit,
                rule: $rule,
                run: |cx| Box::pin(std::future::ready(cx.judged($name))),
            }
        ),*];
    };
}

checks![
    (
        "initialize.request",
        "initialize",
        "initialization",
        None,
        Mandatory,
        None,
        "the client's first message is `initialize`, well-formed"
    ),
    (
        "initialize.version",
        "initialize",
        "initialization#protocol-version",
        None,
        Mandatory,
        None,
        "`protocolVersion` is the integer version the client speaks"
    ),
    (
        "initialize.capabilities",
        "initialize",
        "initialization#client-capabilities",
        None,
        Mandatory,
        None,
        "`clientCapabilities` says what the client offers (fs, terminal)"
    ),
    (
        "session.new",
        "session",
        "session-setup#creating-a-session",
        None,
        Mandatory,
        None,
        "`session/new` has an absolute cwd and a list of MCP servers"
    ),
    (
        "session.prompt",
        "session",
        "prompt-turn#1-user-message",
        None,
        Mandatory,
        None,
        "`session/prompt` names the session `session/new` answered, with content blocks"
    ),
    (
        "updates.burst",
        "updates",
        "prompt-turn#3-agent-reports-output",
        None,
        Advisory,
        None,
        "after 1,000 `agent_message_chunk` notifications the client still answers"
    ),
    (
        "updates.large",
        "updates",
        "prompt-turn#3-agent-reports-output",
        None,
        Advisory,
        None,
        "after a 1 MiB message chunk the client still answers"
    ),
    (
        "updates.unicode",
        "updates",
        "content#text-content",
        None,
        Mandatory,
        None,
        "after a chunk of non-ASCII text (combining marks, emoji, bidi controls) the client still answers"
    ),
    (
        "updates.unknown-kind",
        "updates",
        "extensibility",
        None,
        Advisory,
        None,
        "a session update of an unknown kind does not break the client"
    ),
    (
        "updates.ext-notification",
        "updates",
        "extensibility#extension-notifications",
        None,
        Mandatory,
        None,
        "an unknown `_` notification does not break the client"
    ),
    (
        "rpc.method-not-found",
        "rpc",
        "overview",
        None,
        Advisory,
        None,
        "an unknown method is answered -32601"
    ),
    (
        "rpc.ext-method-not-found",
        "rpc",
        "extensibility#extension-methods",
        None,
        Advisory,
        None,
        "an unknown `_` method is answered -32601"
    ),
    (
        "rpc.string-id",
        "rpc",
        "overview",
        None,
        Mandatory,
        None,
        "a string id (`\"7\"`) is echoed as that string"
    ),
    (
        "rpc.large-id",
        "rpc",
        "overview",
        None,
        Mandatory,
        None,
        "a large numeric id (2^53 - 1) is echoed exactly"
    ),
    (
        "rpc.invalid-params",
        "rpc",
        "overview",
        None,
        Advisory,
        None,
        "`session/request_permission` with params of the wrong types is answered -32602"
    ),
    (
        "fs.read",
        "fs",
        "file-system#reading-files",
        Some("fs-read"),
        Capability,
        None,
        "`fs/read_text_file` answers the file's content exactly"
    ),
    (
        "fs.read-lines",
        "fs",
        "file-system#reading-files",
        Some("fs-read"),
        Capability,
        None,
        "`fs/read_text_file` with `line` 2 and `limit` 2 answers those two lines"
    ),
    (
        "fs.read-missing",
        "fs",
        "file-system#reading-files",
        Some("fs-read"),
        Advisory,
        None,
        "reading a file that does not exist is an error (-32002 resource not found), not a result"
    ),
    (
        "permission.all-kinds",
        "permission",
        "tool-calls#requesting-permission",
        None,
        Mandatory,
        None,
        "a request offering all four option kinds is answered `selected` with an offered id, or `cancelled`"
    ),
    (
        "permission.single-kind",
        "permission",
        "tool-calls#permission-options",
        None,
        Mandatory,
        None,
        "requests offering only allow_once, allow_always, reject_once or reject_always are answered with that option or `cancelled`"
    ),
    (
        "fs.write",
        "fs",
        "file-system#writing-files",
        Some("fs-write"),
        Capability,
        None,
        "`fs/write_text_file` answered with success has written the file on disk"
    ),
    (
        "terminal.create",
        "terminal",
        "terminals#executing-commands",
        Some("terminal"),
        Capability,
        None,
        "`terminal/create` with env and cwd answers a terminal id"
    ),
    (
        "terminal.env",
        "terminal",
        "terminals#executing-commands",
        Some("terminal"),
        Capability,
        None,
        "the command sees the environment variable it was given"
    ),
    (
        "terminal.cwd",
        "terminal",
        "terminals#executing-commands",
        Some("terminal"),
        Capability,
        None,
        "the command runs in the cwd it was given"
    ),
    (
        "terminal.wait-for-exit",
        "terminal",
        "terminals#waiting-for-exit",
        Some("terminal"),
        Capability,
        None,
        "`terminal/wait_for_exit` answers exit code 0 for a command that succeeded"
    ),
    (
        "terminal.output",
        "terminal",
        "terminals#getting-output",
        Some("terminal"),
        Capability,
        None,
        "`terminal/output` after the exit has the exit status, and is not truncated without a limit"
    ),
    (
        "terminal.exit-code",
        "terminal",
        "terminals#getting-output",
        Some("terminal"),
        Capability,
        None,
        "`exit 3` is reported as exit code 3 by `terminal/wait_for_exit` and `terminal/output`"
    ),
    (
        "terminal.output-limit",
        "terminal",
        "terminals#getting-output",
        Some("terminal"),
        Capability,
        None,
        "output over `outputByteLimit` keeps at most that many bytes, cut from the start on a character boundary, with `truncated: true`"
    ),
    (
        "terminal.kill",
        "terminal",
        "terminals#killing-commands",
        Some("terminal"),
        Capability,
        None,
        "`terminal/kill` stops the command; its exit and output can still be asked for"
    ),
    (
        "terminal.release",
        "terminal",
        "terminals#releasing-terminals",
        Some("terminal"),
        Capability,
        None,
        "`terminal/release` succeeds"
    ),
    (
        "terminal.released-rejected",
        "terminal",
        "terminals#releasing-terminals",
        Some("terminal"),
        Advisory,
        None,
        "a released terminal id is refused with an error"
    ),
    (
        "elicitation.form",
        "elicitation",
        "elicitation",
        Some("elicitation"),
        Capability,
        None,
        "a form `elicitation/create` is answered accept, decline or cancel; accepted content matches the form (required fields, types, bounds, offered choices)"
    ),
    (
        "elicitation.url",
        "elicitation",
        "elicitation",
        Some("elicitation-url"),
        Capability,
        None,
        "a URL `elicitation/create` is answered accept, decline or cancel; after an accept and `elicitation/complete` the client still answers"
    ),
    (
        "rpc.parse-error",
        "rpc",
        "overview",
        None,
        Informational,
        None,
        "a line that is not JSON is answered -32700 with id null"
    ),
    (
        "rpc.garbage-survived",
        "rpc",
        "transports#stdio",
        None,
        Advisory,
        None,
        "after garbage the client still answers requests"
    ),
    (
        "cancel.notification",
        "cancel",
        "prompt-turn#cancellation",
        Some("cancel"),
        Advisory,
        None,
        "interrupted (SIGINT) during a turn, the client sends `session/cancel` for the session"
    ),
    (
        "permission.cancelled",
        "permission",
        "prompt-turn#cancellation",
        Some("cancel-pending"),
        Mandatory,
        None,
        "a permission request pending when the client cancels is answered `cancelled`"
    ),
    (
        "wire.json-lines",
        "wire",
        "transports#stdio",
        None,
        Mandatory,
        None,
        "everything the client writes to the agent's stdin is JSON-RPC messages, one per line"
    ),
    (
        "wire.strict-types",
        "wire",
        "schema",
        None,
        Mandatory,
        None,
        "every message matches the schema's types strictly (unknown fields are notes)"
    ),
    (
        "wire.responses-match",
        "wire",
        "overview",
        None,
        Mandatory,
        None,
        "every response answers a request the agent sent, once; no request is left unanswered for `--timeout`"
    ),
];

/// Judges the wire checks from the log (after the life).
pub(super) fn judge_wire(cx: &mut ClientCx) {
    let events = cx.log.all();
    let from_client: Vec<_> = events.iter().filter(|e| e.dir == Dir::In).collect();
    if from_client.is_empty() {
        return;
    }
    let mut blank = 0;
    let mut lines = Outcome::pass();
    for e in &from_client {
        if e.line.is_empty() {
            blank += 1;
        } else if (e.value.is_none() || e.envelope.is_none()) && lines.status == crate::Status::Pass
        {
            lines = Outcome::fail(
                "the client wrote a line to the agent's stdin that is not a JSON-RPC message",
            )
            .with_message(&e.line);
        }
    }
    if blank > 0 {
        lines = lines.with_notes([format!("{blank} empty lines")]);
    }
    cx.record("wire.json-lines", lines);

    let mut errors = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut first_bad = None;
    let messages = from_client.iter().filter(|e| e.envelope.is_some()).count();
    for e in from_client.iter().filter(|e| e.envelope.is_some()) {
        if !e.findings.errors.is_empty() {
            first_bad.get_or_insert_with(|| e.line.clone());
            errors.extend(e.findings.errors.iter().cloned());
        }
        for n in &e.findings.notes {
            if !notes.contains(n) && notes.len() < 10 {
                notes.push(n.clone());
            }
        }
    }
    let strict = match first_bad {
        Some(line) => {
            let shown: Vec<String> = errors.iter().take(3).cloned().collect();
            Outcome::fail(format!(
                "{} violations in {messages} messages: {}",
                errors.len(),
                shown.join("; ")
            ))
            .with_message(&line)
        }
        None => Outcome::pass(),
    };
    cx.record("wire.strict-types", strict.with_notes(notes));

    let mut sent: HashSet<String> = HashSet::new();
    let mut answered: HashSet<String> = HashSet::new();
    let mut responses = Outcome::pass();
    for e in &events {
        match e.dir {
            Dir::Out => {
                if let Some(v) = &e.value
                    && v.get("method").is_some()
                    && let Some(id) = v.get("id")
                {
                    sent.insert(id.to_string());
                }
            }
            Dir::In => {
                if let Some(Envelope::Response { id, .. }) = &e.envelope {
                    if id.is_null() {
                        continue; // the answer to the garbage line
                    }
                    let key = id.to_string();
                    let why = if !sent.contains(&key) {
                        Some(format!("a response to id {id}, which the agent never sent"))
                    } else if !answered.insert(key) {
                        Some(format!("request {id} was answered twice"))
                    } else {
                        None
                    };
                    if let Some(why) = why {
                        responses = Outcome::fail(why).with_message(&e.line);
                        break;
                    }
                }
            }
        }
    }
    if responses.status == crate::Status::Pass
        && let Some(why) = &cx.silent
    {
        responses = Outcome::fail(why.clone());
    }
    let extra = *cx.extra_agents.lock().unwrap();
    if extra > 0 {
        responses = responses.with_notes([format!(
            "the client started the agent {extra} more times; those were closed at once (acp check serves one)"
        )]);
    }
    // Not `record`: that the client stopped answering is this check's own
    // failure, not a reason it could not be tested.
    cx.results
        .entry("wire.responses-match")
        .or_insert(responses);
}

#[cfg(test)]
mod tests {
    use super::CHECKS;

    #[test]
    fn the_readme_lists_every_client_check() {
        let table = crate::catalog::markdown(CHECKS);
        assert!(
            crate::catalog::readme_has("### The client checks", &table),
            "the client requirement table in README.md is stale; put the output of `acp check client --list` there (or run the test with BLESS=1):\n{table}"
        );
        let mut names: Vec<&str> = CHECKS.iter().map(|c| c.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), CHECKS.len(), "check names are unique");
    }
}
