//! MCP servers the client asks the agent to use (stdio and streamable HTTP),
//! connected through `rmcp`, whose tools are offered to the model as
//! `mcp__<server>__<tool>`.

use crate::llm::{ToolSpec, truncate};
use acp::schema::McpServer;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService, ServiceExt};
use rmcp::transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// How long connecting to one server (and listing its tools) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

struct Server {
    name: String,
    service: RunningService<RoleClient, ()>,
    tools: Vec<rmcp::model::Tool>,
}

/// An MCP tool as the model sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct McpToolInfo {
    /// The server's name.
    pub server: String,
    /// The tool's name on the server.
    pub tool: String,
    /// Whether the server says the tool changes nothing.
    pub read_only: bool,
}

/// The MCP servers of one session.
#[derive(Default)]
pub struct McpServers {
    servers: Vec<Server>,
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn is_read_only(t: &rmcp::model::Tool) -> bool {
    t.annotations
        .as_ref()
        .and_then(|a| a.read_only_hint)
        .unwrap_or(false)
}

fn model_name(server: &str, tool: &str) -> String {
    let name = format!("mcp__{}__{}", sanitize(server), sanitize(tool));
    name.chars().take(64).collect()
}

async fn connect_one(server: &McpServer, cwd: &Path) -> Result<Server, String> {
    let service = match server {
        McpServer::Stdio(s) => {
            let cmd = tokio::process::Command::new(&s.command).configure(|c| {
                c.args(&s.args)
                    .envs(s.env.iter().map(|e| (e.name.clone(), e.value.clone())))
                    .current_dir(cwd)
                    .stderr(std::process::Stdio::null());
            });
            let transport = TokioChildProcess::new(cmd)
                .map_err(|e| format!("could not start {}: {e}", s.command))?;
            ().serve(transport).await.map_err(|e| e.to_string())?
        }
        McpServer::Http(h) => {
            let mut config =
                rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
                    h.url.clone(),
                );
            for header in &h.headers {
                if header.name.eq_ignore_ascii_case("authorization") {
                    config.auth_header = Some(
                        header
                            .value
                            .strip_prefix("Bearer ")
                            .unwrap_or(&header.value)
                            .to_string(),
                    );
                } else if let (Ok(n), Ok(v)) = (
                    reqwest::header::HeaderName::from_bytes(header.name.as_bytes()),
                    reqwest::header::HeaderValue::from_str(&header.value),
                ) {
                    config.custom_headers.insert(n, v);
                }
            }
            let transport = StreamableHttpClientTransport::from_config(config);
            ().serve(transport).await.map_err(|e| e.to_string())?
        }
        _ => return Err("only stdio and http MCP servers are supported".into()),
    };
    let tools = service
        .list_all_tools()
        .await
        .map_err(|e| format!("could not list tools: {e}"))?;
    Ok(Server {
        name: server.name().as_deref().unwrap_or("mcp").to_string(),
        service,
        tools,
    })
}

impl McpServers {
    /// Connects to every server; returns those that worked and a message per
    /// server that did not.
    pub async fn connect(list: &[McpServer], cwd: &Path) -> (McpServers, Vec<String>) {
        let mut servers = Vec::new();
        let mut errors = Vec::new();
        for server in list {
            let name = server.name().as_deref().unwrap_or("?").to_string();
            match tokio::time::timeout(CONNECT_TIMEOUT, connect_one(server, cwd)).await {
                Ok(Ok(s)) => servers.push(s),
                Ok(Err(e)) => errors.push(format!("MCP server {name}: {e}")),
                Err(_) => errors.push(format!(
                    "MCP server {name}: no answer within {}s",
                    CONNECT_TIMEOUT.as_secs()
                )),
            }
        }
        (McpServers { servers }, errors)
    }

    /// The tools offered to the model; with `read_only`, only those the
    /// server marks read-only.
    pub fn specs(&self, read_only: bool) -> Vec<ToolSpec> {
        self.servers
            .iter()
            .flat_map(|s| {
                s.tools
                    .iter()
                    .filter(move |t| !read_only || is_read_only(t))
                    .map(|t| ToolSpec {
                        name: model_name(&s.name, &t.name),
                        description: t
                            .description
                            .as_deref()
                            .map(str::to_string)
                            .unwrap_or_else(|| format!("Tool {} of MCP server {}", t.name, s.name)),
                        parameters: Value::Object((*t.input_schema).clone()),
                    })
            })
            .collect()
    }

    /// The MCP tool the model calls `name`, if any.
    pub fn find(&self, name: &str) -> Option<McpToolInfo> {
        self.servers.iter().find_map(|s| {
            s.tools
                .iter()
                .find(|t| model_name(&s.name, &t.name) == name)
                .map(|t| McpToolInfo {
                    server: s.name.clone(),
                    tool: t.name.to_string(),
                    read_only: is_read_only(t),
                })
        })
    }

    /// Calls a tool; the text for the model, or an error message.
    pub async fn call(&self, info: &McpToolInfo, arguments: Value) -> Result<String, String> {
        let server = self
            .servers
            .iter()
            .find(|s| s.name == info.server)
            .ok_or_else(|| format!("MCP server {} is gone", info.server))?;
        let mut params = CallToolRequestParams::new(info.tool.clone());
        match arguments {
            Value::Object(map) => params = params.with_arguments(map),
            Value::Null => {}
            other => return Err(format!("the arguments must be a JSON object, not {other}")),
        }
        let result = server
            .service
            .call_tool(params)
            .await
            .map_err(|e| format!("MCP call failed: {e}"))?;
        let mut text = Vec::new();
        for block in &result.content {
            match block.as_text() {
                Some(t) => text.push(t.text.clone()),
                None => text.push(truncate(
                    &serde_json::to_string(block).unwrap_or_default(),
                    4000,
                )),
            }
        }
        if text.is_empty()
            && let Some(s) = &result.structured_content
        {
            text.push(s.to_string());
        }
        let text = text.join("\n");
        if result.is_error == Some(true) {
            Err(text)
        } else {
            Ok(text)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_safe_for_models() {
        assert_eq!(model_name("my server", "do.it"), "mcp__my_server__do_it");
        assert!(model_name(&"x".repeat(100), "t").len() <= 64);
    }
}
