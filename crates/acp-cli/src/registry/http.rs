//! HTTP for the registry: HTTPS only (plain HTTP only to a loopback
//! address, for mirrors and tests on this machine), also where redirects
//! lead; bodies capped in size; conditional requests with an ETag.

use super::Error;
use reqwest::Url;
use sha2::{Digest, Sha256};
use std::io::Write;
use std::time::Duration;

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a response may send nothing before acp gives up.
const READ_TIMEOUT: Duration = Duration::from_secs(60);
/// How many redirects are followed.
const MAX_REDIRECTS: usize = 10;

/// Parses `text` as a URL acp may fetch: `https://`, or `http://` to a
/// loopback address (`127.0.0.0/8`, `::1`, `localhost`).
pub fn check_url(text: &str) -> Result<Url, Error> {
    let url = Url::parse(text).map_err(|e| Error::BadUrl {
        url: text.to_owned(),
        reason: e.to_string(),
    })?;
    allowed(&url).map_err(|reason| Error::BadUrl {
        url: text.to_owned(),
        reason,
    })?;
    Ok(url)
}

fn allowed(url: &Url) -> Result<(), String> {
    match url.scheme() {
        "https" => Ok(()),
        "http" if is_loopback(url) => Ok(()),
        "http" => Err("plain HTTP is allowed only to a loopback address; use https://".into()),
        other => Err(format!("{other}: is not HTTPS")),
    }
}

fn is_loopback(url: &Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => host.eq_ignore_ascii_case("localhost"),
    }
}

/// What a conditional GET brought.
#[derive(Debug)]
pub enum Fetched {
    /// `304 Not Modified`: the copy with that ETag is current.
    NotModified,
    /// A new body, with its ETag when the server sent one.
    Body {
        /// The body.
        bytes: Vec<u8>,
        /// Its `ETag`.
        etag: Option<String>,
    },
}

/// A downloaded file's size and SHA-256 (hex).
#[derive(Debug, Clone, PartialEq)]
pub struct Downloaded {
    /// Bytes written.
    pub bytes: u64,
    /// The SHA-256 of what was written, lowercase hex.
    pub sha256: String,
}

/// The HTTP client of the registry layer.
#[derive(Debug, Clone)]
pub struct Http {
    client: reqwest::Client,
}

impl Http {
    /// A client that follows redirects only to URLs [`check_url`] accepts.
    pub fn new() -> Result<Http, Error> {
        let policy = reqwest::redirect::Policy::custom(|attempt| {
            if attempt.previous().len() >= MAX_REDIRECTS {
                attempt.error("too many redirects")
            } else if let Err(reason) = allowed(attempt.url()) {
                let message = format!("redirected to {}: {reason}", attempt.url());
                attempt.error(message)
            } else {
                attempt.follow()
            }
        });
        let client = reqwest::Client::builder()
            .user_agent(concat!("acp/", env!("CARGO_PKG_VERSION")))
            .redirect(policy)
            .connect_timeout(CONNECT_TIMEOUT)
            .read_timeout(READ_TIMEOUT)
            .build()
            .map_err(|e| Error::Unreachable {
                url: String::new(),
                reason: format!("cannot set up HTTP: {}", describe(&e)),
            })?;
        Ok(Http { client })
    }

    /// GET `url`, conditional on `etag` (`If-None-Match`), the body at most
    /// `limit` bytes.
    pub async fn get(&self, url: &Url, etag: Option<&str>, limit: u64) -> Result<Fetched, Error> {
        let mut request = self.client.get(url.clone());
        if let Some(etag) = etag {
            request = request.header(reqwest::header::IF_NONE_MATCH, etag);
        }
        let mut response = self.send(url, request).await?;
        if response.status() == reqwest::StatusCode::NOT_MODIFIED {
            return Ok(Fetched::NotModified);
        }
        let etag = response
            .headers()
            .get(reqwest::header::ETAG)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let mut bytes = Vec::new();
        self.body(url, &mut response, limit, |chunk| {
            bytes.extend_from_slice(chunk);
            Ok(())
        })
        .await?;
        Ok(Fetched::Body { bytes, etag })
    }

    /// Downloads `url` into `file`, at most `limit` bytes.
    pub async fn download(
        &self,
        url: &Url,
        file: &mut std::fs::File,
        limit: u64,
    ) -> Result<Downloaded, Error> {
        let mut response = self.send(url, self.client.get(url.clone())).await?;
        let mut hash = Sha256::new();
        let mut written = 0;
        self.body(url, &mut response, limit, |chunk| {
            hash.update(chunk);
            written += chunk.len() as u64;
            file.write_all(chunk)
                .map_err(Error::io(format!("cannot write the download of {url}")))
        })
        .await?;
        file.flush()
            .map_err(Error::io(format!("cannot write the download of {url}")))?;
        Ok(Downloaded {
            bytes: written,
            sha256: hex(&hash.finalize()),
        })
    }

    async fn send(
        &self,
        url: &Url,
        request: reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, Error> {
        allowed(url).map_err(|reason| Error::BadUrl {
            url: url.to_string(),
            reason,
        })?;
        let response = request.send().await.map_err(|e| Error::Unreachable {
            url: url.to_string(),
            reason: describe(&e),
        })?;
        let status = response.status();
        if status.is_success() || status == reqwest::StatusCode::NOT_MODIFIED {
            Ok(response)
        } else {
            Err(Error::Status {
                url: url.to_string(),
                status: status.as_u16(),
            })
        }
    }

    /// Reads the body chunk by chunk into `sink`, failing once it passes
    /// `limit` (at once when `Content-Length` says it will).
    async fn body(
        &self,
        url: &Url,
        response: &mut reqwest::Response,
        limit: u64,
        mut sink: impl FnMut(&[u8]) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let too_large = || Error::TooLarge {
            url: url.to_string(),
            limit,
        };
        if response.content_length().is_some_and(|n| n > limit) {
            return Err(too_large());
        }
        let mut total: u64 = 0;
        loop {
            let chunk = response.chunk().await.map_err(|e| Error::Unreachable {
                url: url.to_string(),
                reason: describe(&e),
            })?;
            let Some(chunk) = chunk else { return Ok(()) };
            total += chunk.len() as u64;
            if total > limit {
                return Err(too_large());
            }
            sink(&chunk)?;
        }
    }
}

/// An error and its causes, for people ("connection refused", not just
/// "error sending request").
fn describe(error: &reqwest::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    if error.is_timeout() {
        parts.push("timed out".into());
    }
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let text = cause.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = cause.source();
    }
    if parts.is_empty() {
        parts.push(error.to_string());
    }
    parts.join(": ")
}

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_or_loopback_http_only() {
        for ok in [
            "https://cdn.example.com/registry.json",
            "http://127.0.0.1:8080/r.json",
            "http://127.1.2.3/r.json",
            "http://[::1]:9/r.json",
            "http://localhost/r.json",
        ] {
            check_url(ok).unwrap();
        }
        for bad in [
            "http://example.com/r.json",
            "http://10.0.0.1/r.json",
            "http://127.0.0.1.example.com/r.json",
            "ftp://127.0.0.1/r.json",
            "file:///etc/passwd",
            "not a url",
        ] {
            assert!(check_url(bad).is_err(), "{bad}");
        }
    }
}

#[cfg(test)]
mod body_tests {
    use super::*;
    use std::io::{Read, Write};

    /// Serves one response of `head` then `body` bytes (no length: until
    /// the connection closes) on a loopback port.
    fn serve_once(head: &'static str, body: Vec<u8>) -> Url {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/file", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut request = [0u8; 4096];
            let _ = conn.read(&mut request);
            let _ = conn.write_all(head.as_bytes());
            let _ = conn.write_all(&body);
        });
        Url::parse(&url).unwrap()
    }

    #[tokio::test]
    async fn a_body_without_a_length_stops_at_the_cap() {
        let http = Http::new().unwrap();
        let url = serve_once(
            "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n",
            vec![7; 100_000],
        );
        let err = http.get(&url, None, 10_000).await.unwrap_err();
        assert!(
            matches!(err, Error::TooLarge { limit: 10_000, .. }),
            "{err}"
        );
        let url = serve_once(
            "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n",
            vec![7; 100_000],
        );
        let mut file = tempfile::tempfile().unwrap();
        let err = http.download(&url, &mut file, 10_000).await.unwrap_err();
        assert!(matches!(err, Error::TooLarge { .. }), "{err}");
        // At the cap exactly is fine; its checksum is the body's.
        let url = serve_once(
            "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n",
            vec![7; 10_000],
        );
        let mut file = tempfile::tempfile().unwrap();
        let got = http.download(&url, &mut file, 10_000).await.unwrap();
        assert_eq!(got.bytes, 10_000);
        assert_eq!(got.sha256, hex(&Sha256::digest(vec![7u8; 10_000])));
    }
}
