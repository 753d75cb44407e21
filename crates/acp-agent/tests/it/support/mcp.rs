//! A minimal MCP server over streamable HTTP, for the MCP tests.

use super::read_request;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

/// A minimal MCP server over streamable HTTP (JSON responses only) with one
/// read-only tool, `shout`, that upper-cases its `text` argument.
pub struct McpFixture {
    pub url: String,
    pub calls: Arc<Mutex<Vec<Value>>>,
}

impl McpFixture {
    pub async fn start() -> McpFixture {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let calls = Arc::new(Mutex::new(Vec::new()));
        let calls2 = calls.clone();
        tokio::spawn(async move {
            loop {
                let Ok((sock, _)) = listener.accept().await else {
                    return;
                };
                let calls3 = calls2.clone();
                tokio::spawn(async move {
                    let _ = mcp_serve_one(sock, calls3).await;
                });
            }
        });
        McpFixture {
            url: format!("http://{addr}/mcp"),
            calls,
        }
    }
}

async fn mcp_serve_one(
    mut sock: tokio::net::TcpStream,
    calls: Arc<Mutex<Vec<Value>>>,
) -> std::io::Result<()> {
    let Some((head, msg)) = read_request(&mut sock).await? else {
        return Ok(());
    };
    if !head.starts_with("post ") {
        sock.write_all(
            b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
        )
        .await?;
        return Ok(());
    }
    let Some(id) = msg.get("id").cloned() else {
        sock.write_all(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            .await?;
        return Ok(());
    };
    let result = match msg["method"].as_str().unwrap_or("") {
        "initialize" => json!({
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fixture", "version": "1.0.0"}
        }),
        "tools/list" => json!({"tools": [{
            "name": "shout",
            "description": "Upper-cases text",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
            "annotations": {"readOnlyHint": true}
        }]}),
        "tools/call" => {
            calls.lock().unwrap().push(msg["params"].clone());
            let text = msg["params"]["arguments"]["text"]
                .as_str()
                .unwrap_or("")
                .to_uppercase();
            json!({"content": [{"type": "text", "text": text}], "isError": false})
        }
        _ => json!({}),
    };
    let body = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nmcp-session-id: fixture-session\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    sock.write_all(head.as_bytes()).await?;
    sock.write_all(body.as_bytes()).await?;
    Ok(())
}
