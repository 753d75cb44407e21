//! MCP servers given by the client: streamable HTTP and stdio tools offered
//! to the model and called, a broken server reported to the user.

use crate::support;

use acp::schema::*;
use serde_json::json;
use support::*;

#[tokio::test]
async fn mcp_http_tools_are_offered_and_called() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = McpFixture::start().await;
    let mock = MockLlm::start(vec![
        tool_reply("m1", "mcp__fixture__shout", json!({"text": "hi there"})),
        tool_reply("m2", "mcp__local__touch", json!({})),
        text_reply("done"),
    ])
    .await;
    // A stdio MCP server written in POSIX sh, answering in the order a client asks.
    let script = dir.path().join("server.sh");
    std::fs::write(&script, STDIO_MCP_SERVER).unwrap();
    let marker = dir.path().join("marker.txt");
    let env = openai_env(&mock);
    let r = start_agent(&env, TestClient::new("allow_once")).await;
    let init = r.initialize().await;
    let mcp_caps = &init.agent_capabilities.mcp_capabilities;
    assert!(mcp_caps.http && !mcp_caps.sse);
    let servers = vec![
        McpServer::from(McpServerHttp::new("fixture", fixture.url.clone())),
        McpServer::from(McpServerStdio::new("broken", "/nonexistent/mcp-server")),
        McpServer::from(
            McpServerStdio::new("local", "sh")
                .args(vec![script.display().to_string()])
                .env(vec![EnvVariable::new(
                    "MARKER",
                    marker.display().to_string(),
                )]),
        ),
    ];
    let sid = r
        .conn
        .new_session(NewSessionRequest::new(dir.path().display().to_string()).mcp_servers(servers))
        .await
        .unwrap()
        .session_id;
    assert_eq!(r.prompt(&sid, "shout").await, StopReason::EndTurn);
    let reqs = mock.requests();
    let tool = reqs[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "mcp__fixture__shout")
        .expect("the MCP tool is offered")
        .clone();
    assert_eq!(tool["function"]["parameters"]["required"], json!(["text"]));
    assert_eq!(tool_results(&reqs[1]), ["HI THERE"]);
    assert_eq!(tool_results(&reqs[2]), ["HI THERE", "touched"]);
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "called\n");
    assert_eq!(fixture.calls.lock().unwrap()[0]["name"], "shout");
    let calls = r.client.rec.final_tool_calls();
    assert_eq!(calls[0].title, "fixture: shout");
    assert_eq!(
        (calls[0].kind.clone(), calls[0].status.clone()),
        (ToolKind::Read, ToolCallStatus::Completed)
    );
    assert_eq!(calls[1].title, "local: touch");
    assert_eq!(calls[1].status, ToolCallStatus::Completed);
    let perms = r.client.rec.permissions.lock().unwrap().clone();
    assert_eq!(
        perms.len(),
        1,
        "only the tool not marked read-only needs permission"
    );
    assert_eq!(perms[0].tool_call.tool_call_id, calls[1].tool_call_id);
    assert!(
        r.client.rec.message_text().contains("MCP server broken"),
        "{}",
        r.client.rec.message_text()
    );
}

const STDIO_MCP_SERVER: &str = r#"
while IFS= read -r line; do
  id=$(printf '%s\n' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case "$line" in
    *'"method":"initialize"'*)
      pv=$(printf '%s\n' "$line" | sed -n 's/.*"protocolVersion":"\([^"]*\)".*/\1/p')
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"%s","capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"1"}}}\n' "$id" "$pv";;
    *'"method":"tools/list"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"touch","description":"Writes a marker file","inputSchema":{"type":"object","properties":{}}}]}}\n' "$id";;
    *'"method":"tools/call"'*)
      echo called > "$MARKER"
      printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"touched"}]}}\n' "$id";;
    *) if [ -n "$id" ]; then printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id"; fi;;
  esac
done
"#;
