//! For operators (feature `http`): the list of a server's connections, and
//! a read-only watch of one's traffic (see the module docs of
//! [`crate::remote`]). Both take the server's ACP URL (`ws://`, `wss://`,
//! `http://` or `https://`, any path) and the options of a client of it
//! (its token, its roots).

use super::http::{Https, http_client};
use super::{ClientOptions, refused};
use bytes::{Buf, Bytes};
use http_body_util::{BodyExt, Full, Limited};
use hyper::Method;
use hyper_util::client::legacy::Client;
use serde::Deserialize;
use std::io;

/// The longest list of connections read.
const MAX_LIST_BYTES: usize = 16 * 1024 * 1024;

/// One connection of a server, as `GET /connections` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ConnectionSummary {
    /// Its id (`Acp-Connection-Id`).
    pub id: String,
    /// `websocket` or `http`.
    pub profile: String,
    /// The client's address, as the server saw it first.
    pub peer: String,
    /// What the agent is (the label its upstream was given).
    pub agent: String,
    /// Seconds since it opened.
    pub age_seconds: u64,
    /// `attached` (a client is there) or `detached` (waiting for a resume).
    pub state: String,
    /// Messages from the client passed to the agent.
    pub messages_in: u64,
    /// Messages handed to the client.
    pub messages_out: u64,
    /// Bytes the server holds for the client.
    pub buffered_bytes: u64,
    /// Watchers attached.
    pub watchers: u64,
}

#[derive(Deserialize)]
struct List {
    connections: Vec<ConnectionSummary>,
}

/// `url` with an HTTP scheme and `path`.
fn at(url: &str, path_and_query: &str) -> io::Result<::http::Uri> {
    let uri: ::http::Uri = url.parse().map_err(|e| {
        io::Error::new(io::ErrorKind::InvalidInput, format!("bad URL {url:?}: {e}"))
    })?;
    let scheme = match uri.scheme_str() {
        Some("ws" | "http") => "http",
        Some("wss" | "https") => "https",
        _ => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("URL {url:?} is not ws://, wss://, http:// or https://"),
            ));
        }
    };
    let authority = uri.authority().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("URL {url:?} has no host"),
        )
    })?;
    ::http::Uri::builder()
        .scheme(scheme)
        .authority(authority.clone())
        .path_and_query(path_and_query)
        .build()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))
}

async fn get(
    client: &Client<Https, Full<Bytes>>,
    uri: ::http::Uri,
    options: &ClientOptions,
) -> io::Result<::http::Response<hyper::body::Incoming>> {
    let mut request = ::http::Request::builder()
        .method(Method::GET)
        .uri(uri.clone());
    for (name, value) in &options.header_map()? {
        request = request.header(name, value);
    }
    let request = request
        .body(Full::new(Bytes::new()))
        .map_err(io::Error::other)?;
    let response = tokio::time::timeout(options.connect_timeout, client.request(request))
        .await
        .map_err(|_| {
            io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "{uri} did not answer in {} s",
                    options.connect_timeout.as_secs()
                ),
            )
        })?
        .map_err(|e| {
            io::Error::new(
                io::ErrorKind::ConnectionRefused,
                format!("GET {uri} failed: {e}"),
            )
        })?;
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let body = Limited::new(response.into_body(), 8 * 1024)
        .collect()
        .await
        .map(|b| String::from_utf8_lossy(&b.to_bytes()).into_owned())
        .unwrap_or_default();
    Err(refused(status, &format!("GET {}", uri.path()), &body))
}

/// The connections of the server at `url` (`GET /connections`), oldest
/// first.
pub async fn list_connections(
    url: &str,
    options: &ClientOptions,
) -> io::Result<Vec<ConnectionSummary>> {
    let uri = at(url, "/connections")?;
    let client = http_client(&uri, options)?;
    let response = get(&client, uri, options).await?;
    let body = Limited::new(response.into_body(), MAX_LIST_BYTES)
        .collect()
        .await
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?
        .to_bytes();
    let list: List = serde_json::from_slice(&body).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("the list of connections does not decode: {e}"),
        )
    })?;
    Ok(list.connections)
}

/// A watch of one connection's traffic: its lines, in the format of `acp
/// record`.
pub struct Watch {
    body: hyper::body::Incoming,
    pending: Vec<u8>,
    /// The longest line taken: a record of the longest message, escaped.
    max_line: usize,
    _client: Client<Https, Full<Bytes>>,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch").finish_non_exhaustive()
    }
}

impl Watch {
    /// The next line (without its newline; keep-alive blank lines are
    /// skipped); `None` when the connection closed and the stream ended. A
    /// line longer than a record of the longest message (six times
    /// [`ClientOptions::max_message_size`]) is an error of kind
    /// `InvalidData`.
    pub async fn next_line(&mut self) -> io::Result<Option<String>> {
        loop {
            if let Some(at) = self.pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=at).collect();
                let line = String::from_utf8_lossy(&line[..at]).trim_end().to_owned();
                if line.is_empty() {
                    continue;
                }
                return Ok(Some(line));
            }
            if self.pending.len() > self.max_line {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "the watch stream sent a line longer than {} bytes",
                        self.max_line
                    ),
                ));
            }
            match self.body.frame().await {
                Some(Ok(frame)) => {
                    if let Ok(mut data) = frame.into_data() {
                        while data.has_remaining() {
                            let chunk = data.chunk();
                            self.pending.extend_from_slice(chunk);
                            let n = chunk.len();
                            data.advance(n);
                        }
                    }
                }
                Some(Err(e)) => {
                    return Err(io::Error::new(
                        io::ErrorKind::ConnectionAborted,
                        format!("the watch stream broke: {e}"),
                    ));
                }
                None => {
                    let rest = String::from_utf8_lossy(&std::mem::take(&mut self.pending))
                        .trim()
                        .to_owned();
                    return Ok((!rest.is_empty()).then_some(rest));
                }
            }
        }
    }
}

/// Watches connection `id` of the server at `url`
/// (`GET /connections/{id}/watch`): its traffic both ways, read-only, from
/// the oldest message the server kept (`from_start`) or from now. A closed
/// connection is an error of kind `NotFound` saying why.
pub async fn watch(
    url: &str,
    id: &str,
    from_start: bool,
    options: &ClientOptions,
) -> io::Result<Watch> {
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{id:?} is not a connection id"),
        ));
    }
    let query = if from_start { "?from=start" } else { "" };
    let uri = at(url, &format!("/connections/{id}/watch{query}"))?;
    let client = http_client(&uri, options)?;
    let response = get(&client, uri, options).await?;
    Ok(Watch {
        body: response.into_body(),
        pending: Vec::new(),
        // A message of `max_message_size` bytes, every byte escaped as
        // `\u00XX`, in a record.
        max_line: options
            .max_message_size
            .saturating_mul(6)
            .saturating_add(1024),
        _client: client,
    })
}

#[cfg(test)]
mod tests {
    use super::at;

    #[test]
    fn operator_urls_come_from_the_acp_url() {
        for (url, expected) in [
            (
                "ws://127.0.0.1:8080/acp",
                "http://127.0.0.1:8080/connections",
            ),
            ("wss://host/acp", "https://host/connections"),
            ("http://[::1]:9/x/y", "http://[::1]:9/connections"),
            ("https://h:1", "https://h:1/connections"),
        ] {
            assert_eq!(at(url, "/connections").unwrap().to_string(), expected);
        }
        assert!(at("ftp://h/acp", "/connections").is_err());
        assert!(at("/acp", "/connections").is_err());
    }
}
