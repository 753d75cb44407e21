//! `acp check agent --protocol 2`: judging an agent that speaks protocol
//! version 2 (a draft; the types of `acp_schema::v2`).
//!
//! The checker is a v2 client: it asks for version 2 at `initialize`,
//! opens a session, runs the ordinary turns (`--prompt`) up to their idle
//! `state_update`, cancels a turn, tries the session methods, and probes a
//! process of its own with what v2 refuses (v1's methods, a batch). An
//! agent that answers another version is reported plainly: the version
//! check fails and every other v2 check is NOT TESTED with that reason.
//! The checks are in [`V2_CHECKS`].
//!
//! # Layout
//! - `cx.rs`: [`V2Cx`], the agent's v2 life (processes, initialize, the
//!   sessions, the turns up to idle, the probe process) and the v2
//!   client's answers to the agent's permission questions.
//! - `checks.rs`: one function per check, judged over the recorded lines
//!   (strict types through `acp_schema::v2`'s decoding).
//! - here: the table and [`run_with`].
//!
//! Arrows point down: the table → `checks` → `cx` → the crate's `wire`,
//! `process`, `report`, [`AgentOptions`] and what v1 and v2 share
//! (`agent/run.rs`: the workspace the agent starts in, `run_checks`).

mod checks;
mod cx;

pub use cx::{V2Cx, V2Turn};

use super::AgentOptions;
use crate::catalog::Check;
use crate::report::{CheckResult, Report, Tier};

macro_rules! check {
    ($name:literal, $area:literal, $doc:literal, $feature:expr, $tier:ident, $rule:literal, $f:path) => {
        Check {
            name: $name,
            area: $area,
            doc: $doc,
            feature: $feature,
            tier: Tier::$tier,
            kit: None,
            rule: $rule,
            run: |cx| Box::pin(async move { $f(cx).await.unwrap_or_else(|early| early) }),
        }
    };
}

/// Every check of `acp check agent --protocol 2`, in the order they run.
pub static V2_CHECKS: &[Check<V2Cx>] = &[
    check!(
        "v2.init.version",
        "initialize",
        "v2/initialization",
        None,
        Mandatory,
        "asked for version 2, the agent answers 2 with a well-formed v2 result",
        checks::init_version
    ),
    check!(
        "v2.init.v1",
        "initialize",
        "v2/initialization",
        None,
        Mandatory,
        "asked for version 1, the agent answers 1 (it speaks v1 too) or refuses with -32022 (v2 only)",
        checks::init_v1
    ),
    check!(
        "v2.session.new",
        "session",
        "v2/session-setup",
        None,
        Mandatory,
        "`session/new` answers a well-formed v2 result with a session id",
        checks::session_new
    ),
    check!(
        "v2.prompt.ack",
        "prompt",
        "v2/prompt-lifecycle",
        None,
        Mandatory,
        "`session/prompt` is answered with the user message's `messageId` once accepted, before the turn ends",
        checks::prompt_ack
    ),
    check!(
        "v2.prompt.user-message",
        "prompt",
        "v2/prompt-lifecycle",
        None,
        Mandatory,
        "the user message is reported (`user_message` or its chunks) with the acknowledged `messageId`",
        checks::prompt_user_message
    ),
    check!(
        "v2.prompt.running-idle",
        "prompt",
        "v2/prompt-lifecycle",
        None,
        Mandatory,
        "a turn reports `state_update` running, then idle, within `--timeout`",
        checks::prompt_running_idle
    ),
    check!(
        "v2.prompt.stop-reason",
        "prompt",
        "v2/prompt-lifecycle",
        None,
        Advisory,
        "the idle `state_update` that ends a turn carries a stop reason",
        checks::prompt_stop_reason
    ),
    check!(
        "v2.prompt.message-ids",
        "prompt",
        "v2/prompt-lifecycle",
        None,
        Mandatory,
        "every message update and chunk carries a `messageId`",
        checks::prompt_message_ids
    ),
    check!(
        "v2.prompt.session-id",
        "prompt",
        "v2/prompt-lifecycle",
        None,
        Mandatory,
        "every update of a turn carries the turn's session id",
        checks::prompt_session_id
    ),
    check!(
        "v2.tools.upsert",
        "tools",
        "v2/tool-calls",
        Some("tools"),
        Mandatory,
        "tool calls are upserted by id (`tool_call_update` with a `toolCallId`; no v1 `tool_call`)",
        checks::tools_upsert
    ),
    check!(
        "v2.cancel.idle-cancelled",
        "cancel",
        "v2/prompt-lifecycle",
        None,
        Mandatory,
        "after `session/cancel` the turn ends idle with stop reason `cancelled` within `--cancel-within`",
        checks::cancel_idle
    ),
    check!(
        "v2.cancel.session-usable",
        "cancel",
        "v2/prompt-lifecycle",
        None,
        Mandatory,
        "after a cancelled turn the session takes another prompt up to idle",
        checks::cancel_usable
    ),
    check!(
        "v2.session.list",
        "session",
        "v2/session-setup",
        Some("list"),
        Capability,
        "with `capabilities.session`, `session/list` answers well-formed pages to the end",
        checks::session_list
    ),
    check!(
        "v2.session.resume",
        "session",
        "v2/session-setup",
        Some("resume"),
        Capability,
        "with `capabilities.session`, `session/resume` of the open session succeeds",
        checks::session_resume
    ),
    check!(
        "v2.session.close",
        "session",
        "v2/session-setup",
        Some("close"),
        Capability,
        "with `capabilities.session`, `session/close` of a new session succeeds",
        checks::session_close
    ),
    check!(
        "v2.session.closed-refused",
        "session",
        "v2/session-setup",
        Some("close"),
        Informational,
        "a prompt to a closed session is answered with an error (the spec says only that the session's resources are freed)",
        checks::session_closed_refused
    ),
    check!(
        "v2.session.delete",
        "session",
        "v2/session-setup",
        Some("delete"),
        Capability,
        "with `capabilities.session.delete`, `session/delete` succeeds",
        checks::session_delete
    ),
    check!(
        "v2.rpc.v1-methods-refused",
        "rpc",
        "v2/overview",
        None,
        Advisory,
        "v1's methods (`session/load`, `session/set_mode`, `authenticate`) are answered -32601",
        checks::v1_methods_refused
    ),
    check!(
        "v2.rpc.batch-refused",
        "rpc",
        "v2/overview",
        None,
        Advisory,
        "a JSON-RPC batch (an array) is answered -32600, not as a batch",
        checks::batch_refused
    ),
    check!(
        "v2.wire.json-lines",
        "wire",
        "transports#stdio",
        None,
        Mandatory,
        "everything a v2 connection of the agent writes is JSON-RPC 2.0 messages, one per line",
        checks::wire_json_lines
    ),
    check!(
        "v2.wire.types",
        "wire",
        "v2/schema",
        None,
        Mandatory,
        "every message of a v2 connection decodes as its v2 type (unknown methods are notes)",
        checks::wire_types
    ),
];

/// Runs `acp check agent --protocol 2`, handing each result to `decided`
/// as soon as it is decided.
pub async fn run_with(
    opts: AgentOptions,
    decided: &mut (dyn FnMut(&CheckResult) + Send),
) -> std::io::Result<Report> {
    crate::agent::run::run_checks::<V2Cx>(opts, V2_CHECKS, decided).await
}

#[cfg(test)]
mod tests {
    use super::V2_CHECKS;

    #[test]
    fn the_readme_lists_every_v2_agent_requirement() {
        let table = crate::catalog::markdown(V2_CHECKS);
        assert!(
            crate::catalog::readme_has("## The v2 checks", &table),
            "the v2 requirement table in README.md is stale; put the output of `acp check agent --protocol 2 --list` there (or run the test with BLESS=1):\n{table}"
        );
        let mut names: Vec<&str> = V2_CHECKS.iter().map(|c| c.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), V2_CHECKS.len(), "requirement ids are unique");
    }
}
