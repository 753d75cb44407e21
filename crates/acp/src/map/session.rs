//! `initialize`'s results, auth methods, MCP servers, session setup and config
//! options between the versions.
//!
//! Lost on the way to v2: an agent without `agentInfo` is named `unknown`
//! (v2 requires `info`); SSE MCP support and SSE servers (v2 has no SSE); a v1
//! agent's session modes are shown as a config option of category `mode`
//! (`configId` `mode`, unless the agent already has an option of that
//! category). On the way to v1: a v2 agent that cannot start stdio MCP servers
//! cannot say so (v1 assumes every agent can); a custom (`_`) auth method or
//! MCP server type is passed on as it is; a v2 agent's mode option becomes v1
//! modes.

use super::content::{blocks_to_v1, blocks_to_v2};
use acp_schema::{self as v1, EnvVariable, Implementation, OrderedMap, ProtocolVersion, v2};

/// The name v2 requires for a peer that did not say.
fn unknown() -> Implementation {
    Implementation::new("unknown", "unknown")
}

/// A v1 agent's `initialize` result as a v2 agent's.
pub(crate) fn initialize_response_to_v2(r: v1::InitializeResponse) -> v2::InitializeResponse {
    let caps = r.agent_capabilities;
    let mut prompt = v2::PromptCapabilities::new();
    if caps.prompt_capabilities.image {
        prompt = prompt.image(v2::PromptImageCapabilities::new());
    }
    if caps.prompt_capabilities.audio {
        prompt = prompt.audio(v2::PromptAudioCapabilities::new());
    }
    if caps.prompt_capabilities.embedded_context {
        prompt = prompt.embedded_context(v2::PromptEmbeddedContextCapabilities::new());
    }
    let mut mcp = v2::McpCapabilities::new().stdio(v2::McpStdioCapabilities::new());
    if caps.mcp_capabilities.http {
        mcp = mcp.http(v2::McpHttpCapabilities::new());
    }
    let mut session = v2::SessionCapabilities::new().prompt(prompt).mcp(mcp);
    session.delete = caps.session_capabilities.delete;
    session.additional_directories = caps.session_capabilities.additional_directories;
    let mut out = v2::InitializeResponse::new(r.agent_info.unwrap_or_else(unknown))
        .capabilities(v2::AgentCapabilities::new().session(session))
        .auth_methods(
            r.auth_methods
                .into_iter()
                .map(auth_method_to_v2)
                .collect::<Vec<_>>(),
        );
    out.meta = r.meta;
    out
}

/// A v2 agent's `initialize` result as a v1 agent's.
pub(crate) fn initialize_response_to_v1(r: v2::InitializeResponse) -> v1::InitializeResponse {
    let mut caps = v1::AgentCapabilities::new();
    if let Some(session) = r.capabilities.session {
        caps.load_session = true;
        if let Some(prompt) = session.prompt {
            caps.prompt_capabilities = v1::PromptCapabilities::new()
                .image(prompt.image.is_some())
                .audio(prompt.audio.is_some())
                .embedded_context(prompt.embedded_context.is_some());
        }
        if let Some(mcp) = session.mcp {
            caps.mcp_capabilities = v1::McpCapabilities::new().http(mcp.http.is_some());
        }
        let mut sc = v1::SessionCapabilities::new()
            .list(v1::SessionListCapabilities::new())
            .resume(v1::SessionResumeCapabilities::new())
            .close(v1::SessionCloseCapabilities::new());
        sc.delete = session.delete;
        sc.additional_directories = session.additional_directories;
        caps.session_capabilities = sc;
    }
    if !r.auth_methods.is_empty() {
        caps.auth = v1::AgentAuthCapabilities::new().logout(v1::LogoutCapabilities::new());
    }
    let mut out = v1::InitializeResponse::new(ProtocolVersion::V1)
        .agent_capabilities(caps)
        .agent_info(r.info);
    out.auth_methods = r.auth_methods.into_iter().map(auth_method_to_v1).collect();
    out.meta = r.meta;
    out
}

/// A v1 client's `initialize` as a v2 client's (asking for version 2): the
/// client's file system and terminal have no v2 form (a v2 agent uses its
/// own).
pub(crate) fn initialize_request_to_v2(r: v1::InitializeRequest) -> v2::InitializeRequest {
    let mut caps = v2::ClientCapabilities::new();
    if r.client_capabilities.auth.terminal {
        caps = caps
            .auth(v2::ClientAuthCapabilities::new().terminal(v2::TerminalAuthCapabilities::new()));
    }
    caps.elicitation = r.client_capabilities.elicitation;
    caps.meta = r.client_capabilities.meta;
    let mut out =
        v2::InitializeRequest::new(r.client_info.unwrap_or_else(unknown)).capabilities(caps);
    out.meta = r.meta;
    out
}

/// A v1 auth method as v2's (`id` becomes `methodId`; an `agent` method
/// says its `type`).
pub fn auth_method_to_v2(m: v1::AuthMethod) -> v2::AuthMethod {
    match m {
        v1::AuthMethod::Agent(a) => {
            let mut out = v2::AuthMethodAgent::new(a.id, a.name);
            out.description = a.description;
            out.meta = a.meta;
            v2::AuthMethod::Agent(out)
        }
        v1::AuthMethod::Terminal(t) => {
            let mut out = v2::AuthMethodTerminal::new(t.id, t.name);
            out.description = t.description;
            out.args = t.args.unwrap_or_default();
            out.env = t
                .env
                .map(|env| {
                    env.into_iter()
                        .map(|(k, v)| EnvVariable::new(k, v))
                        .collect()
                })
                .unwrap_or_default();
            out.meta = t.meta;
            v2::AuthMethod::Terminal(out)
        }
        v1::AuthMethod::Other(raw) => v2::AuthMethod::Other(raw),
        other => v2::AuthMethod::Other(super::content::raw_object(&other)),
    }
}

/// A v2 auth method as v1's.
pub(crate) fn auth_method_to_v1(m: v2::AuthMethod) -> v1::AuthMethod {
    match m {
        v2::AuthMethod::Agent(a) => {
            let mut out = v1::AuthMethodAgent::new(a.method_id, a.name);
            out.description = a.description;
            out.meta = a.meta;
            v1::AuthMethod::Agent(out)
        }
        v2::AuthMethod::Terminal(t) => {
            let mut out = v1::AuthMethodTerminal::new(t.method_id, t.name);
            out.description = t.description;
            out.args = (!t.args.is_empty()).then_some(t.args);
            out.env = (!t.env.is_empty()).then(|| {
                t.env
                    .into_iter()
                    .map(|e| (e.name, e.value))
                    .collect::<OrderedMap<String>>()
            });
            out.meta = t.meta;
            v1::AuthMethod::Terminal(out)
        }
        v2::AuthMethod::Other(raw) => v1::AuthMethod::Other(raw),
        other => v1::AuthMethod::Other(super::content::raw_object(&other)),
    }
}

/// A v2 MCP server as v1's (`stdio` or `http`; another type is kept as it
/// is).
pub fn mcp_server_to_v1(s: v2::McpServer) -> v1::McpServer {
    match s {
        v2::McpServer::Http(h) => {
            let mut out = v1::McpServerHttp::new(h.name, h.url);
            out.headers = h.headers;
            out.meta = h.meta;
            v1::McpServer::Http(out)
        }
        v2::McpServer::Stdio(s) => {
            let mut out = v1::McpServerStdio::new(s.name, s.command);
            out.args = s.args;
            out.env = s.env;
            out.meta = s.meta;
            v1::McpServer::Stdio(out)
        }
        v2::McpServer::Other(raw) => v1::McpServer::Other(raw),
        other => v1::McpServer::Other(super::content::raw_object(&other)),
    }
}

/// A v1 MCP server as v2's (`None` for SSE, which v2 does not have).
pub(crate) fn mcp_server_to_v2(s: v1::McpServer) -> Option<v2::McpServer> {
    Some(match s {
        v1::McpServer::Http(h) => {
            let mut out = v2::McpServerHttp::new(h.name, h.url);
            out.headers = h.headers;
            out.meta = h.meta;
            v2::McpServer::Http(out)
        }
        v1::McpServer::Stdio(s) => {
            let mut out = v2::McpServerStdio::new(s.name, s.command);
            out.args = s.args;
            out.env = s.env;
            out.meta = s.meta;
            v2::McpServer::Stdio(out)
        }
        v1::McpServer::Sse(_) => return None,
        v1::McpServer::Other(raw) => v2::McpServer::Other(raw),
        other => v2::McpServer::Other(super::content::raw_object(&other)),
    })
}

/// v2's `session/new` (`cwd`, directories, MCP servers) as v1's.
pub fn new_session_to_v1(r: v2::NewSessionRequest) -> v1::NewSessionRequest {
    let mut out = v1::NewSessionRequest::new(r.cwd);
    out.additional_directories =
        (!r.additional_directories.is_empty()).then_some(r.additional_directories);
    out.mcp_servers = r.mcp_servers.into_iter().map(mcp_server_to_v1).collect();
    out.meta = r.meta;
    out
}

/// The v1 session environment as v2's.
pub(crate) fn new_session_to_v2(r: v1::NewSessionRequest) -> v2::NewSessionRequest {
    let mut out = v2::NewSessionRequest::new(r.cwd);
    out.additional_directories = r.additional_directories.unwrap_or_default();
    out.mcp_servers = r
        .mcp_servers
        .into_iter()
        .filter_map(mcp_server_to_v2)
        .collect();
    out.meta = r.meta;
    out
}

/// A v1 config option as v2's (`id` becomes `configId`, a group's `group`
/// its `groupId`).
pub fn config_option_to_v2(o: v1::SessionConfigOption) -> v2::SessionConfigOption {
    let kind = match o.kind {
        v1::SessionConfigKind::Select(s) => {
            let options = match s.options {
                v1::SessionConfigSelectOptions::Grouped(groups) => {
                    v2::SessionConfigSelectOptions::Grouped(
                        groups
                            .into_iter()
                            .map(|g| {
                                let mut out =
                                    v2::SessionConfigSelectGroup::new(g.group, g.name, g.options);
                                out.meta = g.meta;
                                out
                            })
                            .collect(),
                    )
                }
                v1::SessionConfigSelectOptions::Ungrouped(v) => {
                    v2::SessionConfigSelectOptions::Ungrouped(v)
                }
                other => v2::SessionConfigSelectOptions::Ungrouped(other.iter().cloned().collect()),
            };
            v2::SessionConfigKind::Select(v2::SessionConfigSelect::new(s.current_value, options))
        }
        v1::SessionConfigKind::Boolean(b) => v2::SessionConfigKind::Boolean(b),
        v1::SessionConfigKind::Other(raw) => v2::SessionConfigKind::Other(raw),
        other => v2::SessionConfigKind::Other(super::content::raw_object(&other)),
    };
    let mut out = v2::SessionConfigOption::new(o.id, o.name, kind);
    out.description = o.description;
    out.category = o.category;
    out.meta = o.meta;
    out
}

/// A v2 config option as v1's.
pub(crate) fn config_option_to_v1(o: v2::SessionConfigOption) -> v1::SessionConfigOption {
    let kind = match o.kind {
        v2::SessionConfigKind::Select(s) => {
            let options = match s.options {
                v2::SessionConfigSelectOptions::Grouped(groups) => {
                    v1::SessionConfigSelectOptions::Grouped(
                        groups
                            .into_iter()
                            .map(|g| {
                                let mut out = v1::SessionConfigSelectGroup::new(
                                    g.group_id, g.name, g.options,
                                );
                                out.meta = g.meta;
                                out
                            })
                            .collect(),
                    )
                }
                v2::SessionConfigSelectOptions::Ungrouped(v) => {
                    v1::SessionConfigSelectOptions::Ungrouped(v)
                }
                other => v1::SessionConfigSelectOptions::Ungrouped(other.iter().cloned().collect()),
            };
            v1::SessionConfigKind::Select(v1::SessionConfigSelect::new(s.current_value, options))
        }
        v2::SessionConfigKind::Boolean(b) => v1::SessionConfigKind::Boolean(b),
        v2::SessionConfigKind::Other(raw) => v1::SessionConfigKind::Other(raw),
        other => v1::SessionConfigKind::Other(super::content::raw_object(&other)),
    };
    let mut out = v1::SessionConfigOption::new(o.config_id, o.name, kind);
    out.description = o.description;
    out.category = o.category;
    out.meta = o.meta;
    out
}

/// The `configId` of the option the bridge shows a v1 agent's modes as.
pub(crate) const MODE_OPTION: &str = "mode";

/// A v1 agent's config options as v2's, its modes shown as an option of
/// category `mode` unless it has one already.
pub(crate) fn config_options_to_v2(
    options: Vec<v1::SessionConfigOption>,
    modes: Option<&v1::SessionModeState>,
) -> Vec<v2::SessionConfigOption> {
    let has_mode = options
        .iter()
        .any(|o| o.category == Some(v1::SessionConfigOptionCategory::Mode));
    let mut out: Vec<_> = options.into_iter().map(config_option_to_v2).collect();
    if let (Some(modes), false) = (modes, has_mode) {
        out.push(mode_option(modes));
    }
    out
}

/// A v1 agent's modes as a v2 select option of category `mode`.
pub(crate) fn mode_option(modes: &v1::SessionModeState) -> v2::SessionConfigOption {
    let values: Vec<v1::SessionConfigSelectOption> = modes
        .available_modes
        .iter()
        .map(|m| {
            let mut o = v1::SessionConfigSelectOption::new(m.id.as_str(), m.name.clone());
            o.description = m.description.clone();
            o
        })
        .collect();
    let mut out = v2::SessionConfigOption::select(
        MODE_OPTION,
        "Mode",
        modes.current_mode_id.as_str(),
        values,
    );
    out.category = Some(v1::SessionConfigOptionCategory::Mode);
    out
}

/// A v2 agent's mode option (a select of category `mode`) as v1 modes.
pub(crate) fn modes_to_v1(options: &[v2::SessionConfigOption]) -> Option<v1::SessionModeState> {
    options.iter().find_map(|o| {
        let v2::SessionConfigKind::Select(select) = &o.kind else {
            return None;
        };
        (o.category == Some(v1::SessionConfigOptionCategory::Mode)).then(|| {
            let modes = select
                .options
                .iter()
                .map(|v| {
                    let mut m = v1::SessionMode::new(v.value.as_str(), v.name.clone());
                    m.description = v.description.clone();
                    m
                })
                .collect::<Vec<_>>();
            v1::SessionModeState::new(select.current_value.as_str(), modes)
        })
    })
}

/// The `configId` of a v2 agent's mode option.
pub(crate) fn mode_option_id(options: &[v2::SessionConfigOption]) -> Option<v1::SessionConfigId> {
    options
        .iter()
        .find(|o| {
            o.category == Some(v1::SessionConfigOptionCategory::Mode)
                && matches!(o.kind, v2::SessionConfigKind::Select(_))
        })
        .map(|o| o.config_id.clone())
}

/// A v1 session as `session/list` reports it, as v2's.
pub fn session_info_to_v2(i: v1::SessionInfo) -> v2::SessionInfo {
    let mut out = v2::SessionInfo::new(i.session_id, i.cwd);
    out.additional_directories = i.additional_directories.unwrap_or_default();
    out.title = i.title;
    out.updated_at = i.updated_at;
    out.meta = i.meta;
    out
}

/// A v2 session as `session/list` reports it, as v1's.
pub(crate) fn session_info_to_v1(i: v2::SessionInfo) -> v1::SessionInfo {
    let mut out = v1::SessionInfo::new(i.session_id, i.cwd);
    out.additional_directories =
        (!i.additional_directories.is_empty()).then_some(i.additional_directories);
    out.title = i.title;
    out.updated_at = i.updated_at;
    out.meta = i.meta;
    out
}

/// A v2 prompt as v1's.
pub(crate) fn prompt_to_v1(r: v2::PromptRequest) -> v1::PromptRequest {
    let mut out = v1::PromptRequest::new(r.session_id, blocks_to_v1(r.prompt));
    out.meta = r.meta;
    out
}

/// A v1 prompt as v2's.
pub(crate) fn prompt_to_v2(r: v1::PromptRequest) -> v2::PromptRequest {
    let mut out = v2::PromptRequest::new(r.session_id, blocks_to_v2(r.prompt));
    out.meta = r.meta;
    out
}

/// A v1 stop reason as v2's (the same names).
pub fn stop_reason_to_v2(r: v1::StopReason) -> v2::StopReason {
    v2::StopReason::from(r.as_str())
}
