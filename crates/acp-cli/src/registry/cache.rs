//! The registry's document as acp last fetched it, kept in acp's cache
//! directory (one file per registry URL, replaced atomically), and fetched
//! again with a conditional request (`If-None-Match` with its ETag).
//!
//! With no network (or a registry that answers with an error or a document
//! that is not the registry format), the cached copy is used and
//! [`Catalog::note`] says how old it is and why; with no cached copy
//! either, the error names the URL.

use super::Error;
use super::http::{Fetched, Http, check_url, hex};
use super::index::Index;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The largest registry document acp reads.
pub const INDEX_LIMIT: u64 = 32 << 20;

/// The cache file: the document and what its next request needs.
#[derive(Debug, Serialize, Deserialize)]
struct CacheFile {
    url: String,
    etag: Option<String>,
    /// When the registry last sent or confirmed this copy (RFC 3339).
    checked: String,
    body: String,
}

/// The registry, and how current it is.
#[derive(Debug, Clone)]
pub struct Catalog {
    /// Its agents.
    pub index: Index,
    /// Where it comes from.
    pub url: String,
    /// When the registry last sent or confirmed this copy.
    pub checked: jiff::Timestamp,
    /// Why the cached copy is used instead of a fresh one (`None`: it is
    /// fresh).
    pub stale: Option<String>,
}

impl Catalog {
    /// For a cached copy: a line saying so, how old it is and why.
    pub fn note(&self) -> Option<String> {
        let why = self.stale.as_ref()?;
        Some(format!(
            "using the copy of the registry cached {} ago ({why})",
            age(self.checked, jiff::Timestamp::now())
        ))
    }
}

/// Where the copy of the registry at `url` is cached.
pub fn cache_path(cache_dir: &Path, url: &str) -> PathBuf {
    let digest = hex(&Sha256::digest(url.as_bytes()));
    cache_dir
        .join("registry")
        .join(format!("{}.json", &digest[..16]))
}

/// The cached copy of the registry at `url`, without asking the network;
/// `None` when there is none (or it cannot be read).
pub fn cached(cache_dir: &Path, url: &str) -> Option<Catalog> {
    let file = read_cache(cache_dir, url)?;
    let index = Index::parse(file.body.as_bytes()).ok()?;
    Some(Catalog {
        index,
        url: url.to_owned(),
        checked: file.checked.parse().ok()?,
        stale: Some("cached".to_owned()),
    })
}

fn read_cache(cache_dir: &Path, url: &str) -> Option<CacheFile> {
    let text = std::fs::read_to_string(cache_path(cache_dir, url)).ok()?;
    let file: CacheFile = serde_json::from_str(&text).ok()?;
    (file.url == url).then_some(file)
}

/// The registry at `url`: fetched (conditionally, when a copy is cached in
/// `cache_dir`), else the cached copy with a note, else the error.
pub async fn load(http: &Http, cache_dir: Option<&Path>, url: &str) -> Result<Catalog, Error> {
    let parsed = check_url(url)?;
    let cache = cache_dir.and_then(|dir| read_cache(dir, url));
    let etag = cache.as_ref().and_then(|c| c.etag.as_deref());
    let failure = match http.get(&parsed, etag, INDEX_LIMIT).await {
        Ok(Fetched::NotModified) => match &cache {
            Some(cached) => match Index::parse(cached.body.as_bytes()) {
                Ok(index) => {
                    let checked = jiff::Timestamp::now();
                    save(cache_dir, url, cached.etag.clone(), checked, &cached.body);
                    return Ok(Catalog {
                        index,
                        url: url.to_owned(),
                        checked,
                        stale: None,
                    });
                }
                Err(reason) => Error::BadIndex {
                    origin: "the cached registry".into(),
                    reason,
                },
            },
            None => Error::BadIndex {
                origin: url.to_owned(),
                reason: "it answered 304 Not Modified to a request that was not conditional".into(),
            },
        },
        Ok(Fetched::Body { bytes, etag }) => match Index::parse(&bytes) {
            Ok(index) => {
                let checked = jiff::Timestamp::now();
                let body = String::from_utf8_lossy(&bytes);
                save(cache_dir, url, etag, checked, &body);
                return Ok(Catalog {
                    index,
                    url: url.to_owned(),
                    checked,
                    stale: None,
                });
            }
            Err(reason) => Error::BadIndex {
                origin: url.to_owned(),
                reason,
            },
        },
        Err(e) => e,
    };
    let cached = cache_dir.and_then(|dir| cached(dir, url));
    match cached {
        Some(mut catalog) => {
            catalog.stale = Some(failure.to_string());
            Ok(catalog)
        }
        None => Err(failure),
    }
}

/// Replaces the cache file; a cache that cannot be written is no error
/// (the next run fetches again).
fn save(
    cache_dir: Option<&Path>,
    url: &str,
    etag: Option<String>,
    checked: jiff::Timestamp,
    body: &str,
) {
    let Some(cache_dir) = cache_dir else { return };
    let path = cache_path(cache_dir, url);
    let file = CacheFile {
        url: url.to_owned(),
        etag,
        checked: checked.to_string(),
        body: body.to_owned(),
    };
    let write = || -> std::io::Result<()> {
        let dir = path.parent().expect("the cache file is in a directory");
        std::fs::create_dir_all(dir)?;
        let mut tmp = tempfile::Builder::new()
            .prefix(".registry.")
            .tempfile_in(dir)?;
        tmp.write_all(serde_json::to_string(&file)?.as_bytes())?;
        tmp.persist(&path).map_err(|e| e.error)?;
        Ok(())
    };
    let _ = write();
}

/// How long ago `then` was, in words ("3 hours").
pub fn age(then: jiff::Timestamp, now: jiff::Timestamp) -> String {
    let secs = now.duration_since(then).as_secs().max(0);
    let (n, unit) = match secs {
        0..90 => (secs, "second"),
        90..5_400 => (secs / 60, "minute"),
        5_400..129_600 => (secs / 3_600, "hour"),
        _ => (secs / 86_400, "day"),
    };
    format!("{n} {unit}{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_in_words() {
        let now: jiff::Timestamp = "2026-01-02T00:00:00Z".parse().unwrap();
        let ago = |secs: i64| age(now - jiff::SignedDuration::from_secs(secs), now);
        assert_eq!(ago(1), "1 second");
        assert_eq!(ago(89), "89 seconds");
        assert_eq!(ago(120), "2 minutes");
        assert_eq!(ago(3 * 3600), "3 hours");
        assert_eq!(ago(3 * 86_400), "3 days");
        assert_eq!(ago(-5), "0 seconds");
    }
}
