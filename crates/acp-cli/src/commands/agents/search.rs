//! `acp agents search [TEXT]`: the registry's agents whose id, name or
//! description contains TEXT, as a table or (`--format json`) one JSON
//! array.

use crate::cli::ListFormat;
use crate::config::Config;
use crate::exit::Failure;
use crate::registry::index::{Agent, current_platform, is_newer};
use serde_json::json;
use unicode_width::UnicodeWidthStr;

/// Runs `acp agents search`.
pub async fn run(text: Option<&str>, format: ListFormat, config: &Config) -> Result<u8, Failure> {
    let (_, catalog) = super::load(config).await?;
    let platform = current_platform();
    let found = catalog.index.search(text.unwrap_or(""));
    match format {
        ListFormat::Json => {
            let agents: Vec<_> = found
                .iter()
                .map(|agent| json_entry(agent, config, platform))
                .collect();
            println!("{}", serde_json::Value::Array(agents));
        }
        ListFormat::Text if found.is_empty() => match text {
            Some(text) => println!("no agent of the registry matches {text:?}"),
            None => println!("the registry lists no agents"),
        },
        ListFormat::Text => {
            let mut rows = vec![[
                "ID".to_owned(),
                "NAME".to_owned(),
                "VERSION".to_owned(),
                "DISTRIBUTION".to_owned(),
                "ADDED".to_owned(),
            ]];
            for agent in &found {
                rows.push([
                    agent.id.clone(),
                    printable(&agent.name),
                    agent.version.clone(),
                    distribution(agent, platform),
                    added(agent, config),
                ]);
            }
            print!("{}", table(&rows));
        }
    }
    Ok(crate::exit::OK)
}

/// How `agent` can be installed here ("binary, npx"); "none for PLATFORM"
/// when only other platforms have a binary.
fn distribution(agent: &Agent, platform: Option<&str>) -> String {
    let kinds: Vec<&str> = agent.kinds(platform).iter().map(|k| k.as_str()).collect();
    if kinds.is_empty() {
        format!("none for {}", platform.unwrap_or("this platform"))
    } else {
        kinds.join(", ")
    }
}

/// Whether `agent` is added: "-", "yes", or "1.0.0 (update: 1.1.0)".
fn added(agent: &Agent, config: &Config) -> String {
    match config
        .agents
        .get(&agent.id)
        .and_then(|e| e.registry.as_ref())
    {
        None => "-".to_owned(),
        Some(origin) if is_newer(&agent.version, &origin.version) => {
            format!("{} (update: {})", origin.version, agent.version)
        }
        Some(_) => "yes".to_owned(),
    }
}

fn json_entry(agent: &Agent, config: &Config, platform: Option<&str>) -> serde_json::Value {
    let mut kinds = Vec::new();
    if !agent.distribution.binary.is_empty() {
        kinds.push("binary");
    }
    if agent.distribution.npx.is_some() {
        kinds.push("npx");
    }
    if agent.distribution.uvx.is_some() {
        kinds.push("uvx");
    }
    let added = config
        .agents
        .get(&agent.id)
        .and_then(|e| e.registry.as_ref())
        .map(|origin| {
            json!({
                "version": origin.version,
                "distribution": origin.distribution,
                "updateAvailable": is_newer(&agent.version, &origin.version),
            })
        });
    json!({
        "id": agent.id,
        "name": agent.name,
        "version": agent.version,
        "description": agent.description,
        "repository": agent.repository,
        "website": agent.website,
        "authors": agent.authors,
        "license": agent.license,
        "distribution": kinds,
        "platforms": agent.distribution.binary.keys().collect::<Vec<_>>(),
        "installable": agent.kinds(platform),
        "added": added,
    })
}

/// Rows as columns two spaces apart, the last column not padded.
fn table<const N: usize>(rows: &[[String; N]]) -> String {
    let mut widths = [0; N];
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.width());
        }
    }
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            line.push_str(cell);
            if i + 1 < N {
                line.push_str(&" ".repeat(widths[i] - cell.width() + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `text` with control characters (a terminal's escape sequences from a
/// hostile registry) shown as `?`.
pub fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}
