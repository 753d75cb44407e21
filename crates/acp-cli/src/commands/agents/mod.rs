//! `acp agents`: the agents of the config file ([`list`]); the agents of
//! the ACP registry: [`search`], [`add`] (and remove), [`update`]; and
//! importing Zed's (`acp agents import-zed`: [`import`], reading Zed's
//! settings: [`zed`]).
//!
//! The registry itself (its document, the cache, downloads, archives, the
//! install directories) is [`crate::registry`]; these modules say what
//! happened and keep the config file in step, under the registry's lock.

pub mod add;
pub mod import;
pub mod search;
pub mod update;
pub mod zed;

use crate::cli::AgentsAction;
use crate::config::Config;
use crate::exit::Failure;
use crate::registry::{self, cache::Catalog, http::Http, index::is_newer};
use std::path::Path;

/// Runs `acp agents [ACTION]` (but `import-zed`, which reads no config)
/// with the config loaded from `path`.
pub async fn run(
    action: Option<AgentsAction>,
    config: &Config,
    path: Option<&Path>,
) -> Result<u8, Failure> {
    let path_or_fail = || {
        path.ok_or_else(|| {
            Failure::usage("cannot find the config directory; name the config file with --config")
        })
    };
    match action {
        None => {
            list(config, path);
            Ok(crate::exit::OK)
        }
        Some(AgentsAction::Search { text, format }) => {
            search::run(text.as_deref(), format, config).await
        }
        Some(AgentsAction::Add { id, distribution }) => {
            add::add(&id, distribution, config, path_or_fail()?).await
        }
        Some(AgentsAction::Remove { id }) => add::remove(&id, path_or_fail()?),
        Some(AgentsAction::Update { id }) => {
            update::run(id.as_deref(), config, path_or_fail()?).await
        }
        Some(AgentsAction::ImportZed { settings }) => {
            import::run(settings.as_deref(), path_or_fail()?)
        }
    }
}

/// The registry, fetched (or its cached copy, with a note on standard
/// error saying how old it is).
pub async fn load(config: &Config) -> Result<(Http, Catalog), Failure> {
    let http = Http::new()?;
    let url = registry::url(config);
    let catalog = registry::cache::load(&http, registry::cache_dir().as_deref(), &url)
        .await
        .map_err(|e| {
            Failure::agent(format!(
                "{e}\nacp has no cached copy of the registry at {url} either. \
                 (Another registry: set {} or registry_url in the config file.)",
                registry::URL_VARIABLE
            ))
        })?;
    if let Some(note) = catalog.note() {
        eprintln!("acp: {note}");
    }
    if !catalog.index.skipped.is_empty() {
        eprintln!(
            "acp: {} entries of the registry were left out: {}",
            catalog.index.skipped.len(),
            catalog.index.skipped.join("; ")
        );
    }
    Ok((http, catalog))
}

/// `acp agents`: prints the agents of the config file at `path`, the
/// default one marked; for agents added from the registry, the version
/// installed and, when the cached registry has a newer one, that one.
pub fn list(config: &Config, path: Option<&Path>) {
    let origin = path.map(|p| p.display().to_string()).unwrap_or_default();
    if config.agents.is_empty() {
        println!("no agents configured in {origin}");
        println!(
            "add one like this:\n\n[agents.NAME]\ncommand = \"npx\"\nargs = [\"-y\", \"@agentclientprotocol/claude-agent-acp\"]"
        );
        println!("\nor one of the ACP registry's: acp agents search, then acp agents add ID");
    }
    // Only the cache: listing never waits for the network.
    let catalog = config
        .agents
        .values()
        .any(|e| e.registry.is_some())
        .then(registry::cache_dir)
        .flatten()
        .and_then(|dir| registry::cache::cached(&dir, &registry::url(config)));
    let width = config.agents.keys().map(String::len).max().unwrap_or(0);
    for (name, entry) in &config.agents {
        let mark = if config.default_agent.as_deref() == Some(name) {
            " (default)"
        } else {
            ""
        };
        let mut line = format!("{name:width$}  {}{mark}", entry.display());
        if let Some(origin) = &entry.registry {
            line.push_str(&format!(
                "  [registry {} {}",
                origin.distribution, origin.version
            ));
            match catalog.as_ref().and_then(|c| c.index.get(name)) {
                Some(agent) if is_newer(&agent.version, &origin.version) => line.push_str(
                    &format!("; {} is out: acp agents update {name}]", agent.version),
                ),
                _ => line.push(']'),
            }
        }
        println!("{line}");
    }
}
