//! `acp agents update [ID]`: fetches the registry again, then moves each
//! agent added from it (or only ID) to the registry's newer version.
//!
//! For a binary, the new version is installed beside the old one
//! ([`crate::registry::install`]: complete, or not at all), then the
//! config is pointed at it, then the old version's directory is removed:
//! at every moment the config names a complete install. A failed update
//! leaves the old version installed and in the config. An npx or uvx agent
//! gets its new package in the config.

use super::add::{locked_store, record};
use crate::config::file::ConfigFile;
use crate::config::{Config, RegistryOrigin};
use crate::exit::Failure;
use crate::registry::index::{Kind, is_newer};
use std::path::Path;

/// Runs `acp agents update [ID]`.
pub async fn run(only: Option<&str>, config: &Config, path: &Path) -> Result<u8, Failure> {
    if let Some(id) = only {
        match config.agents.get(id) {
            Some(entry) if entry.registry.is_some() => {}
            Some(_) => {
                return Err(Failure::usage(format!(
                    "[agents.{id}] in {} was not added from the registry, so acp does not update it",
                    path.display()
                )));
            }
            None => {
                return Err(Failure::usage(format!(
                    "no agent {id} in {} (acp agents add {id} adds it)",
                    path.display()
                )));
            }
        }
    }
    let (http, catalog) = super::load(config).await?;
    if !config.agents.values().any(|e| e.registry.is_some()) {
        println!(
            "the registry is up to date ({} agents); no agent of {} was added from it (acp agents add ID)",
            catalog.index.agents.len(),
            path.display()
        );
        return Ok(crate::exit::OK);
    }
    let (store, lock) = locked_store()?;
    let mut file = ConfigFile::open(path)?;
    // What the file says now (another acp may have changed it meanwhile).
    let current = file.config()?;
    let mut failures = 0;
    for (id, entry) in &current.agents {
        let Some(origin) = &entry.registry else {
            continue;
        };
        if only.is_some_and(|only| only != id) {
            continue;
        }
        let Some(agent) = catalog.index.get(id) else {
            println!(
                "{id}: no longer in the registry; left as it is ({})",
                origin.version
            );
            continue;
        };
        if !is_newer(&agent.version, &origin.version) {
            println!("{id}: up to date ({})", origin.version);
            continue;
        }
        let Some(kind) = Kind::parse(&origin.distribution) else {
            println!(
                "{id}: installed as {:?}, which acp does not know; left as it is",
                origin.distribution
            );
            failures += 1;
            continue;
        };
        if !agent
            .kinds(crate::registry::index::current_platform())
            .contains(&kind)
        {
            println!(
                "{id}: {} is not offered as {} here; left at {}",
                agent.version,
                kind.as_str(),
                origin.version
            );
            failures += 1;
            continue;
        }
        let new = RegistryOrigin {
            version: agent.version.clone(),
            distribution: kind.as_str().to_owned(),
        };
        match record(&mut file, &store, &lock, &http, agent, kind, &new).await {
            Ok(lines) => {
                println!(
                    "{id}: updated {} → {} ({})",
                    origin.version,
                    agent.version,
                    kind.as_str()
                );
                for line in lines {
                    println!("  {line}");
                }
                if kind == Kind::Binary && origin.version != agent.version {
                    let old = store.version_dir(id, &origin.version);
                    match store.remove_version(&lock, id, &origin.version) {
                        Ok(()) => println!("  removed {}", old.display()),
                        Err(e) => println!("  could not remove {}: {e}", old.display()),
                    }
                }
            }
            Err(failure) => {
                println!(
                    "{id}: the update to {} failed, {} is still installed and used: {}",
                    agent.version, origin.version, failure.message
                );
                failures += 1;
                // The document may hold the half-made change: start again
                // from the file.
                file = ConfigFile::open(path)?;
            }
        }
    }
    Ok(if failures == 0 {
        crate::exit::OK
    } else {
        crate::exit::AGENT_ERROR
    })
}
