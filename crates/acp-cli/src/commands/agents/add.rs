//! `acp agents add ID` and `acp agents remove ID`.
//!
//! Add: a binary is installed into `<data dir>/acp/agents/ID/VERSION/`
//! ([`crate::registry::install`]), then `[agents.ID]` is written to the
//! config file naming its program; an npx or uvx package is only written
//! to the config (`npx -y PACKAGE ARGS…`, `uvx PACKAGE ARGS…`), its runner
//! fetches it when the agent starts. Remove takes the entry out of the
//! config first, then the files, so the config never names a missing
//! program. Both run under the registry's lock.

use super::search::printable;
use crate::cli::Distribution;
use crate::config::file::{AddedAgent, ConfigFile};
use crate::config::{Config, RegistryOrigin, shell_quote};
use crate::exit::Failure;
use crate::registry::{
    self,
    http::Http,
    index::{Agent, Kind, current_platform, valid_id},
    install::{Limits, Lock, Store},
};
use std::path::Path;

/// The registry's kind for the option's.
fn kind(distribution: Distribution) -> Kind {
    match distribution {
        Distribution::Binary => Kind::Binary,
        Distribution::Npx => Kind::Npx,
        Distribution::Uvx => Kind::Uvx,
    }
}

/// The store of installed agents and its lock, taken (saying so when
/// another acp holds it).
pub fn locked_store() -> Result<(Store, Lock), Failure> {
    let store = registry::store()
        .ok_or_else(|| Failure::usage("cannot find acp's data directory (is HOME set?)"))?;
    let lock = store.lock(|| {
        eprintln!("acp: another acp is adding, updating or removing agents; waiting for it")
    })?;
    Ok((store, lock))
}

/// Says that `id` is added already, when it is (from the registry), and
/// refuses to replace an entry of the user's.
fn already(config: &Config, id: &str, path: &Path) -> Result<bool, Failure> {
    match config.agents.get(id) {
        None => Ok(false),
        Some(entry) => match &entry.registry {
            Some(origin) => {
                println!(
                    "{id} is already added ({} {}); acp agents update {id} moves it to the newest version",
                    origin.distribution, origin.version
                );
                Ok(true)
            }
            None => Err(Failure::usage(format!(
                "{} already has an agent named {id} ({}), not added from the registry; \
                 remove or rename [agents.{id}] to add the registry's",
                path.display(),
                entry.display()
            ))),
        },
    }
}

/// Runs `acp agents add ID`.
pub async fn add(
    id: &str,
    distribution: Option<Distribution>,
    config: &Config,
    path: &Path,
) -> Result<u8, Failure> {
    if !valid_id(id) {
        return Err(Failure::usage(format!(
            "{id:?} is not an agent id of the registry (lowercase letters, digits and hyphens); \
             acp agents search lists them"
        )));
    }
    if already(config, id, path)? {
        return Ok(crate::exit::OK);
    }
    let (http, catalog) = super::load(config).await?;
    let agent = catalog.index.get(id).ok_or_else(|| {
        Failure::usage(format!(
            "the registry ({}) has no agent {id}; acp agents search TEXT looks for one",
            catalog.url
        ))
    })?;
    let platform = current_platform();
    let kinds = agent.kinds(platform);
    let chosen = match distribution.map(kind) {
        Some(wanted) if kinds.contains(&wanted) => wanted,
        None if !kinds.is_empty() => kinds[0],
        wanted => {
            let offered = if kinds.is_empty() {
                "nothing".to_owned()
            } else {
                kinds
                    .iter()
                    .map(|k| k.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let what = match wanted {
                Some(k) => format!("no {} distribution", k.as_str()),
                None => "nothing acp can install".to_owned(),
            };
            let platforms: Vec<&str> = agent
                .distribution
                .binary
                .keys()
                .map(String::as_str)
                .collect();
            let binaries = if platforms.is_empty() {
                String::new()
            } else {
                format!(" (binaries for {})", platforms.join(", "))
            };
            return Err(Failure::usage(format!(
                "{id} {} has {what} for {}: it offers {offered}{binaries}",
                agent.version,
                platform.unwrap_or("this platform")
            )));
        }
    };
    let (store, lock) = locked_store()?;
    // Another acp may have added it while this one waited.
    let mut file = ConfigFile::open(path)?;
    if already(&file.config()?, id, path)? {
        return Ok(crate::exit::OK);
    }
    let origin = RegistryOrigin {
        version: agent.version.clone(),
        distribution: chosen.as_str().to_owned(),
    };
    let recorded = record(&mut file, &store, &lock, &http, agent, chosen, &origin).await?;
    println!(
        "added {id} {} ({}) as [agents.{id}] in {}",
        agent.version,
        chosen.as_str(),
        path.display()
    );
    for line in recorded {
        println!("  {line}");
    }
    println!("  run it: acp chat --agent {id}");
    Ok(crate::exit::OK)
}

/// Installs `agent` as `kind` (for a binary) and writes its entry to the
/// config file; a binary installed for it is removed again when the config
/// cannot be written. Returns lines saying what was done.
pub async fn record(
    file: &mut ConfigFile,
    store: &Store,
    lock: &Lock,
    http: &Http,
    agent: &Agent,
    kind: Kind,
    origin: &RegistryOrigin,
) -> Result<Vec<String>, Failure> {
    let id = &agent.id;
    let mut lines = Vec::new();
    let (command, args, env, installed) = match kind {
        Kind::Binary => {
            let platform = current_platform().unwrap_or_default();
            let target = agent.distribution.binary.get(platform).ok_or_else(|| {
                Failure::usage(format!(
                    "{id} {} has no binary for {platform}",
                    agent.version
                ))
            })?;
            let installed = store
                .install(lock, http, id, &agent.version, target, Limits::default())
                .await?;
            if installed.downloaded > 0 {
                lines.push(format!(
                    "installed into {} ({} downloaded from {})",
                    installed.dir.display(),
                    size(installed.downloaded),
                    target.archive
                ));
            } else {
                lines.push(format!(
                    "installed into {} (it was there already)",
                    installed.dir.display()
                ));
            }
            let command = installed.program.display().to_string();
            (
                command,
                target.args.clone(),
                target.env.clone(),
                Some(installed),
            )
        }
        Kind::Npx | Kind::Uvx => {
            let package = agent.package(kind).expect("a kind the agent offers");
            let (command, args) = package
                .command_line(kind)
                .map_err(|e| Failure::usage(format!("{id}: {e}")))?;
            lines.push(format!(
                "{command} fetches {} when the agent starts",
                printable(&package.package)
            ));
            (command, args, package.env.clone(), None)
        }
    };
    let entry = AddedAgent {
        command: &command,
        args: &args,
        env: &env,
        origin,
    };
    let saved = file.set_agent(id, &entry).and_then(|()| file.save());
    if let Err(failure) = saved {
        if let Some(installed) = installed {
            // Not recorded, so not kept (unless an earlier run had it).
            if installed.downloaded > 0 {
                let _ = store.remove_version(lock, id, &agent.version);
            }
        }
        return Err(failure);
    }
    let mut line = format!(
        "command: {}",
        std::iter::once(&command)
            .chain(&args)
            .map(|w| shell_quote(w))
            .collect::<Vec<_>>()
            .join(" ")
    );
    if !env.is_empty() {
        line.push_str(&format!(
            " (env: {})",
            env.keys().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    lines.push(printable(&line));
    Ok(lines)
}

/// Runs `acp agents remove ID`.
pub fn remove(id: &str, path: &Path) -> Result<u8, Failure> {
    if !valid_id(id) {
        return Err(Failure::usage(format!(
            "{id:?} is not an agent id of the registry"
        )));
    }
    let (store, lock) = locked_store()?;
    let mut file = ConfigFile::open(path)?;
    let config = file.config()?;
    let dir = store.root().join(id);
    match config.agents.get(id) {
        Some(entry) if entry.registry.is_none() => {
            return Err(Failure::usage(format!(
                "[agents.{id}] in {} was not added from the registry; edit the file to remove it",
                path.display()
            )));
        }
        Some(entry) => {
            file.remove_agent(id);
            file.save()?;
            let origin = entry.registry.as_ref().expect("matched above");
            println!(
                "removed {id} ({} {}): [agents.{id}] from {}",
                origin.distribution,
                origin.version,
                path.display()
            );
        }
        None if !dir.exists() => {
            return Err(Failure::usage(format!(
                "no agent {id} in {} (acp agents lists them)",
                path.display()
            )));
        }
        None => {}
    }
    if store.remove_agent(&lock, id)? {
        println!("removed {}", dir.display());
    }
    if config.default_agent.as_deref() == Some(id) {
        eprintln!(
            "acp: warning: default_agent in {} still names {id}; change it",
            path.display()
        );
    }
    Ok(crate::exit::OK)
}

/// A size in words: "512 bytes", "3.2 MiB".
fn size(bytes: u64) -> String {
    if bytes < 1 << 20 {
        format!("{bytes} bytes")
    } else {
        format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
    }
}
