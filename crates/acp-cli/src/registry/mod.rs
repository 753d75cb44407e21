//! The ACP registry: the catalogue of agents at
//! `https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json`
//! (its format: the registry's `FORMAT.md` and the registry RFD), and
//! installing its agents.
//!
//! A layer below the commands (`acp agents search|add|remove|update`); it
//! uses only [`crate::config`] (paths, the `registry_url` key) and the
//! leaves. Its parts, each one file:
//!
//! - [`index`]: the document's types, read tolerantly; searching it; this
//!   machine's platform; the command line of an npx or uvx package.
//! - [`http`]: HTTPS only (plain HTTP to loopback addresses), redirects
//!   included; size caps; conditional requests.
//! - [`cache`]: the document cached per URL, fetched with its ETag; used
//!   with a note when the registry cannot be reached.
//! - [`archive`]: extracting `.zip`, `.tar.gz`, `.tar.bz2` or a raw binary,
//!   refusing members that could reach outside, with caps against bombs.
//! - [`install`]: the version directories in acp's data directory,
//!   renamed into place only when complete, and the lock that serialises
//!   every change.
//!
//! Data flow of `acp agents add ID`: [`cache::load`] → [`index::Index::get`]
//! → (binary) [`install::Store::lock`] → [`install::Store::install`]
//! ([`http::Http::download`] into `ID/.tmp-…/download`, [`archive::extract`]
//! into `ID/.tmp-…/tree`, [`archive::check_command`], rename to
//! `ID/VERSION`) → the command records the agent in the config file, still
//! under the lock. Nothing here downloads unless a command asks: `acp exec`
//! and `acp chat` only read the cache ([`cache::cached`]).

pub mod archive;
pub mod cache;
mod error;
pub mod http;
pub mod index;
pub mod install;

pub use error::Error;

use crate::config::Config;
use std::path::PathBuf;

/// The registry acp reads unless told otherwise.
pub const DEFAULT_URL: &str =
    "https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json";

/// The environment variable naming another registry (a mirror, a test's).
pub const URL_VARIABLE: &str = "ACP_REGISTRY_URL";

/// The registry's URL: `$ACP_REGISTRY_URL`, else the config's
/// `registry_url`, else [`DEFAULT_URL`].
pub fn url(config: &Config) -> String {
    std::env::var(URL_VARIABLE)
        .ok()
        .filter(|v| !v.is_empty())
        .or_else(|| config.registry_url.clone())
        .unwrap_or_else(|| DEFAULT_URL.to_owned())
}

/// The store of installed agents, `<data dir>/acp/agents`.
pub fn store() -> Option<install::Store> {
    crate::config::paths::agents_dir().map(install::Store::new)
}

/// Where the registry is cached, `<cache dir>/acp`.
pub fn cache_dir() -> Option<PathBuf> {
    crate::config::paths::cache_dir()
}
