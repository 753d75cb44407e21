//! The checks of `acp check agent`, in the order they run ([`CHECKS`]),
//! one file per area. A new check is a function in the file of its area
//! (`async fn(&mut AgentCx) -> Outcome`, or `-> Judged` to use `?` on the
//! steps it needs) and a line in the table. A check of a session method
//! starts with `shared::advertised` (the capability, a session, the main
//! process).
//!
//! Arrows: this table → the areas' files → `shared` (what they share) →
//! the run's context ([`AgentCx`]) and the rules of a turn.

mod initialize;
mod lifecycle;
mod prompt;
mod rpc;
mod session;
mod shared;
mod tools;
mod wire;

use super::cx::AgentCx;
use crate::catalog::Check;
use crate::report::Tier;
use shared::IntoOutcome;

macro_rules! check {
    ($name:literal, $area:literal, $doc:literal, $feature:expr, $tier:ident, $kit:expr, $rule:literal, $f:path) => {
        Check {
            name: $name,
            area: $area,
            doc: $doc,
            feature: $feature,
            tier: Tier::$tier,
            kit: $kit,
            rule: $rule,
            run: |cx| Box::pin(async move { $f(cx).await.into_outcome() }),
        }
    };
}

/// Every check of `acp check agent`.
pub static CHECKS: &[Check<AgentCx>] = &[
    check!(
        "initialize.response",
        "initialize",
        "initialization",
        None,
        Mandatory,
        Some("ACP-INIT-001"),
        "`initialize` is answered with a well-formed result",
        initialize::initialize_response
    ),
    check!(
        "initialize.version",
        "initialize",
        "initialization#protocol-version",
        None,
        Mandatory,
        Some("ACP-INIT-002"),
        "asked for version 1, the agent answers 1",
        initialize::initialize_version
    ),
    check!(
        "initialize.unsupported-version",
        "initialize",
        "initialization#protocol-version",
        None,
        Mandatory,
        Some("ACP-INIT-003"),
        "asked for a version it cannot support, the agent answers with one it supports (not an error)",
        initialize::unsupported_version
    ),
    check!(
        "initialize.auth-methods",
        "initialize",
        "initialization",
        None,
        Advisory,
        Some("ACP-AUTH-001"),
        "auth methods have distinct ids and names",
        initialize::auth_methods
    ),
    check!(
        "auth.authenticate",
        "auth",
        "initialization",
        Some("auth"),
        Capability,
        Some("ACP-AUTH-003"),
        "`authenticate` with `--auth METHOD` (an advertised method) succeeds",
        initialize::authenticate
    ),
    check!(
        "session.new",
        "session",
        "session-setup#creating-a-session",
        None,
        Mandatory,
        Some("ACP-SESSION-001"),
        "`session/new` with an absolute cwd answers a session id",
        session::session_new
    ),
    check!(
        "session.modes",
        "session",
        "session-modes",
        Some("modes"),
        Capability,
        Some("ACP-MODES-001"),
        "the current mode is one of the available modes, whose ids are distinct",
        session::session_modes
    ),
    check!(
        "session.config-options",
        "session",
        "session-config-options",
        Some("config-options"),
        Capability,
        Some("ACP-CONFIG-001"),
        "config option ids are distinct; a select's current value is one of its options",
        session::config_options
    ),
    check!(
        "session.unknown-rejected",
        "session",
        "session-setup",
        None,
        Informational,
        Some("ACP-INFO-UNKNOWNSESSION-001"),
        "a prompt to a session that does not exist is answered with an error",
        session::unknown_session
    ),
    check!(
        "prompt.text",
        "prompt",
        "prompt-turn",
        None,
        Mandatory,
        Some("ACP-PROMPT-001"),
        "a text prompt (`--prompt`) is answered with a stop reason",
        prompt::prompt_text
    ),
    check!(
        "prompt.resource-link",
        "prompt",
        "content#resource-link",
        None,
        Advisory,
        Some("ACP-PROMPT-003"),
        "a prompt with a resource link is answered with a stop reason (every agent must accept it)",
        prompt::prompt_resource_link
    ),
    check!(
        "prompt.session-id",
        "prompt",
        "prompt-turn#3-agent-reports-output",
        None,
        Mandatory,
        Some("ACP-PROMPT-002"),
        "every update of a turn carries the turn's session id",
        prompt::prompt_session_id
    ),
    check!(
        "prompt.no-update-after-response",
        "prompt",
        "prompt-turn#4-check-for-completion",
        None,
        Mandatory,
        None,
        "no turn content arrives after the prompt's response",
        prompt::no_update_after_response
    ),
    check!(
        "session.set-mode",
        "session",
        "session-modes#setting-the-current-mode",
        Some("modes"),
        Capability,
        Some("ACP-MODES-002"),
        "`session/set_mode` to another available mode succeeds",
        session::set_mode
    ),
    check!(
        "session.set-config-option",
        "session",
        "session-config-options",
        Some("config-options"),
        Capability,
        Some("ACP-CONFIG-002"),
        "`session/set_config_option` succeeds and answers the option with its new value",
        session::set_config_option
    ),
    check!(
        "cancel.stop-reason",
        "cancel",
        "prompt-turn#cancellation",
        None,
        Mandatory,
        Some("ACP-CANCEL-001"),
        "after `session/cancel` the turn ends with stop reason `cancelled` within `--cancel-within`; a turn that ended first (its answer the first line after the cancel, within 1 s) is not exercised",
        prompt::cancel_stop_reason
    ),
    check!(
        "cancel.session-usable",
        "cancel",
        "prompt-turn#cancellation",
        None,
        Mandatory,
        None,
        "after a cancelled turn the session answers another prompt",
        prompt::cancel_session_usable
    ),
    check!(
        "tools.update-follows-call",
        "tools",
        "tool-calls#updating",
        Some("tools"),
        Mandatory,
        None,
        "every `tool_call_update` follows the `tool_call` it updates",
        tools::tools_follow
    ),
    check!(
        "tools.status-forward",
        "tools",
        "tool-calls#status",
        Some("tools"),
        Advisory,
        None,
        "tool call statuses move forward (pending, in_progress, completed or failed) and stay finished",
        tools::tools_forward
    ),
    check!(
        "tools.permission-known-call",
        "tools",
        "tool-calls#requesting-permission",
        Some("permission"),
        Advisory,
        None,
        "a permission request names a tool call announced before it",
        tools::permission_known
    ),
    check!(
        "terminals.released",
        "terminals",
        "terminals#releasing-terminals",
        Some("terminal"),
        Mandatory,
        None,
        "every terminal created is released",
        tools::terminals_released
    ),
    check!(
        "fs.absolute-paths",
        "fs",
        "file-system",
        Some("fs"),
        Mandatory,
        None,
        "fs paths and terminal cwds are absolute",
        tools::fs_absolute
    ),
    check!(
        "session.load",
        "session",
        "session-setup#loading-sessions",
        Some("load"),
        Capability,
        Some("ACP-LOAD-002"),
        "`session/load` replays the history before its response",
        lifecycle::session_load
    ),
    check!(
        "session.load-fresh-process",
        "session",
        "session-setup#loading-sessions",
        Some("load"),
        Advisory,
        None,
        "`session/load` in a new process of the agent replays the history before its response",
        lifecycle::session_load_fresh
    ),
    check!(
        "session.list",
        "session",
        "session-list",
        Some("list"),
        Capability,
        Some("ACP-LIST-001"),
        "`session/list` answers well-formed pages, following `nextCursor` to the end",
        lifecycle::session_list
    ),
    check!(
        "session.resume",
        "session",
        "session-setup",
        Some("resume"),
        Capability,
        Some("ACP-RESUME-001"),
        "`session/resume` of the open session succeeds",
        lifecycle::session_resume
    ),
    check!(
        "session.close",
        "session",
        "session-setup",
        Some("close"),
        Capability,
        Some("ACP-CLOSE-001"),
        "`session/close` succeeds and a prompt to the closed session is refused",
        lifecycle::session_close
    ),
    check!(
        "session.delete",
        "session",
        "session-list",
        Some("delete"),
        Capability,
        Some("ACP-DELETE-001"),
        "`session/delete` succeeds and the session leaves `session/list`",
        lifecycle::session_delete
    ),
    check!(
        "rpc.parse-error",
        "rpc",
        "overview",
        None,
        Informational,
        Some("ACP-INFO-PARSE-001"),
        "a line that is not JSON is answered -32700 with id null",
        rpc::parse_error
    ),
    check!(
        "rpc.invalid-request",
        "rpc",
        "overview",
        None,
        Informational,
        Some("ACP-INFO-INVALIDREQ-001"),
        "a request whose method is not a string is answered -32600",
        rpc::invalid_request
    ),
    check!(
        "rpc.method-not-found",
        "rpc",
        "overview",
        None,
        Advisory,
        Some("ACP-JSONRPC-004"),
        "an unknown method is answered -32601",
        rpc::method_not_found
    ),
    check!(
        "rpc.ext-method-not-found",
        "rpc",
        "extensibility#extension-methods",
        None,
        Advisory,
        Some("ACP-JSONRPC-004"),
        "an unknown `_` method is answered -32601",
        rpc::ext_method_not_found
    ),
    check!(
        "rpc.invalid-params",
        "rpc",
        "overview",
        None,
        Advisory,
        None,
        "`session/new` with params of the wrong types is answered -32602",
        rpc::invalid_params
    ),
    check!(
        "rpc.string-id",
        "rpc",
        "overview",
        None,
        Mandatory,
        Some("ACP-JSONRPC-001"),
        "a string id (`\"7\"`) is echoed as that string",
        rpc::string_id
    ),
    check!(
        "rpc.large-id",
        "rpc",
        "overview",
        None,
        Mandatory,
        Some("ACP-JSONRPC-001"),
        "a large numeric id (2^53 - 1) is echoed exactly",
        rpc::large_id
    ),
    check!(
        "rpc.notification-unanswered",
        "rpc",
        "extensibility#extension-notifications",
        None,
        Mandatory,
        Some("ACP-JSONRPC-003"),
        "notifications, known or not, get no response",
        rpc::notification_unanswered
    ),
    check!(
        "rpc.garbage-survived",
        "rpc",
        "transports#stdio",
        None,
        Advisory,
        Some("ACP-JSONRPC-005"),
        "after garbage the agent still answers requests",
        rpc::garbage_survived
    ),
    check!(
        "rpc.exit-on-eof",
        "rpc",
        "transports#stdio",
        None,
        Advisory,
        Some("ACP-SHUTDOWN-001"),
        "the agent exits within 5 s once its stdin ends",
        rpc::exit_on_eof
    ),
    check!(
        "wire.json-lines",
        "wire",
        "transports#stdio",
        None,
        Mandatory,
        Some("ACP-TRANSPORT-001"),
        "everything the agent writes to stdout is JSON-RPC messages, one per line",
        wire::wire_json_lines
    ),
    check!(
        "wire.strict-types",
        "wire",
        "schema",
        None,
        Mandatory,
        Some("ACP-SCHEMA-001"),
        "every message matches the schema's types strictly (unknown fields are notes)",
        wire::wire_strict
    ),
    check!(
        "wire.responses-match",
        "wire",
        "overview",
        None,
        Mandatory,
        None,
        "every response answers a request the checker sent, once; no request is left unanswered for `--timeout`",
        wire::wire_responses
    ),
];

#[cfg(test)]
mod tests {
    use super::CHECKS;

    #[test]
    fn the_readme_lists_every_agent_requirement() {
        let table = crate::catalog::markdown(CHECKS);
        assert!(
            crate::catalog::readme_has("## The checks", &table),
            "the agent requirement table in README.md is stale; put the output of `acp check agent --list` there (or run the test with BLESS=1):\n{table}"
        );
        let mut names: Vec<&str> = CHECKS.iter().map(|c| c.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), CHECKS.len(), "requirement ids are unique");
    }
}
