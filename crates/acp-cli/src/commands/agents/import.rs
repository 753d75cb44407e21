//! `acp agents import-zed`: copies the custom agents of Zed's settings
//! ([`super::zed`]) into the config file as `[agents.NAME]` tables.
//!
//! The config file is written readable only by its owner (0600) when acp
//! creates it; when the import copies variables that look like secrets
//! (`…KEY`, `…TOKEN`, `…SECRET`, `…PASSWORD`), an existing file is made
//! 0600 too, and the report warns about it.
//!
//! The config file is edited with `toml_edit`, so its comments,
//! order and formatting stay as they were; agents already configured are
//! left alone; the new file is written to a temporary file beside the old
//! one and renamed over it, so a failure never leaves half a config.

use super::zed::{ZedAgent, default_settings_path, looks_secret, parse_jsonc, zed_agents};
use crate::config::Config;
use crate::config::file::write_atomically;
use crate::exit::Failure;
use std::path::Path;

/// What an import did with one agent.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Added as `[agents.NAME]`.
    Added,
    /// Left out, and why.
    Skipped(String),
}

/// Adds `agents` to the TOML config `text` and returns the new text with
/// what happened to each agent. Existing agents are never changed.
pub fn merge_into_config(
    text: &str,
    agents: &[ZedAgent],
    origin: &Path,
) -> Result<(String, Vec<(String, Outcome)>), Failure> {
    // The file must be a valid config before and after.
    Config::parse(text, origin)?;
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| Failure::usage(format!("bad config file {}: {e}", origin.display())))?;
    let table = crate::config::file::agents_table(&mut doc, origin)?;
    let mut outcomes = Vec::new();
    for agent in agents {
        let outcome = match &agent.command {
            Err(why) => Outcome::Skipped(why.clone()),
            Ok(_) if table.contains_key(&agent.name) => {
                Outcome::Skipped("already in the config (left unchanged)".to_owned())
            }
            Ok(command) => {
                let mut entry = toml_edit::Table::new();
                entry.insert("command", toml_edit::value(command.as_str()));
                if !agent.args.is_empty() {
                    let args: toml_edit::Array = agent.args.iter().map(String::as_str).collect();
                    entry.insert("args", toml_edit::value(args));
                }
                if !agent.env.is_empty() {
                    let mut env = toml_edit::InlineTable::new();
                    for (key, value) in &agent.env {
                        env.insert(key, value.as_str().into());
                    }
                    entry.insert("env", toml_edit::value(env));
                }
                if let Some(mode) = &agent.default_mode {
                    entry.insert("default_mode", toml_edit::value(mode.as_str()));
                }
                if let Some(model) = &agent.default_model {
                    entry.insert("default_model", toml_edit::value(model.as_str()));
                }
                if !agent.default_config_options.is_empty() {
                    let mut options = toml_edit::InlineTable::new();
                    for (key, value) in &agent.default_config_options {
                        options.insert(key, value.as_str().into());
                    }
                    entry.insert("default_config_options", toml_edit::value(options));
                }
                table.insert(&agent.name, toml_edit::Item::Table(entry));
                Outcome::Added
            }
        };
        outcomes.push((agent.name.clone(), outcome));
    }
    let new_text = doc.to_string();
    Config::parse(&new_text, origin).map_err(|f| {
        Failure::usage(format!(
            "the imported config would not be valid, so nothing was written: {}",
            f.message
        ))
    })?;
    Ok((new_text, outcomes))
}

/// Runs `acp agents import-zed`: reads `settings` (default: Zed's) and adds
/// its custom agents to the config file at `config_path`. Prints what was
/// added and skipped.
pub fn run(settings: Option<&Path>, config_path: &Path) -> Result<u8, Failure> {
    let settings = match settings {
        Some(path) => path.to_path_buf(),
        None => default_settings_path().ok_or_else(|| {
            Failure::usage("cannot find the home directory; name Zed's settings.json")
        })?,
    };
    let json = std::fs::read_to_string(&settings).map_err(|e| {
        Failure::usage(format!(
            "cannot read Zed's settings {}: {e}",
            settings.display()
        ))
    })?;
    let value = parse_jsonc(&json)
        .map_err(|e| Failure::usage(format!("bad Zed settings {}: {e}", settings.display())))?;
    let agents = zed_agents(&value)
        .map_err(|e| Failure::usage(format!("bad Zed settings {}: {e}", settings.display())))?;
    if agents.is_empty() {
        println!(
            "no agent_servers in {}; nothing to import",
            settings.display()
        );
        return Ok(crate::exit::OK);
    }
    let text = match std::fs::read_to_string(config_path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => {
            return Err(Failure::usage(format!(
                "cannot read config file {}: {e}",
                config_path.display()
            )));
        }
    };
    let (new_text, outcomes) = merge_into_config(&text, &agents, config_path)?;
    let added = outcomes
        .iter()
        .filter(|(_, o)| *o == Outcome::Added)
        .count();
    let secrets: Vec<String> = agents
        .iter()
        .zip(&outcomes)
        .filter(|(_, (_, o))| *o == Outcome::Added)
        .flat_map(|(a, _)| a.env.iter().map(|(k, _)| k.clone()))
        .filter(|k| looks_secret(k))
        .collect();
    if added > 0 {
        write_atomically(config_path, &new_text, !secrets.is_empty()).map_err(|e| {
            Failure::usage(format!(
                "cannot write config file {}: {e} (it was left as it was)",
                config_path.display()
            ))
        })?;
    }
    for (agent, (name, outcome)) in agents.iter().zip(&outcomes) {
        match outcome {
            Outcome::Added => {
                let mut line = format!("added   {name}: {}", agent_line(agent));
                let mut notes = Vec::new();
                if !agent.env.is_empty() {
                    let keys: Vec<&str> = agent.env.iter().map(|(k, _)| k.as_str()).collect();
                    notes.push(format!("env: {}", keys.join(", ")));
                }
                if let Some(mode) = &agent.default_mode {
                    notes.push(format!("default mode {mode}"));
                }
                if let Some(model) = &agent.default_model {
                    notes.push(format!("default model {model}"));
                }
                for (id, value) in &agent.default_config_options {
                    notes.push(format!("{id} = {value}"));
                }
                if let Some(from) = &agent.expanded_from {
                    notes.push(format!("expanded from {from}"));
                }
                if !notes.is_empty() {
                    line.push_str(&format!(" ({})", notes.join("; ")));
                }
                println!("{line}");
            }
            Outcome::Skipped(why) => println!("skipped {name}: {why}"),
        }
    }
    let plural = if added == 1 { "" } else { "s" };
    if added > 0 {
        println!(
            "imported {added} agent{plural} from {} into {}",
            settings.display(),
            config_path.display()
        );
        if !secrets.is_empty() {
            eprintln!(
                "acp: warning: the config file now holds secrets ({}); it is readable only \
                 by you (0600). Keep it out of backups and dotfile repositories, or move the \
                 secrets to your environment.",
                secrets.join(", ")
            );
        }
    } else {
        println!("nothing imported; {} is unchanged", config_path.display());
    }
    Ok(crate::exit::OK)
}

fn agent_line(agent: &ZedAgent) -> String {
    crate::config::AgentEntry {
        command: agent.command.clone().unwrap_or_default(),
        args: agent.args.clone(),
        env: Default::default(),
        default_mode: None,
        default_model: None,
        default_config_options: Default::default(),
        protocol: None,
        registry: None,
    }
    .display()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_keeps_the_file_and_existing_agents() {
        let text =
            "# my config\ndefault_agent = \"a\" # keep\n\n[agents.a]\ncommand = \"a-agent\"\n";
        let agents = vec![
            ZedAgent {
                name: "a".into(),
                command: Ok("other".into()),
                ..ZedAgent::default()
            },
            ZedAgent {
                name: "My Agent".into(),
                command: Ok("/opt/my agent".into()),
                args: vec!["--acp".into()],
                env: vec![("TOKEN".into(), "t".into())],
                ..ZedAgent::default()
            },
        ];
        let (new, outcomes) = merge_into_config(text, &agents, Path::new("c.toml")).unwrap();
        assert_eq!(
            new,
            "# my config\ndefault_agent = \"a\" # keep\n\n[agents.a]\ncommand = \"a-agent\"\n\n\
             [agents.\"My Agent\"]\ncommand = \"/opt/my agent\"\nargs = [\"--acp\"]\nenv = { TOKEN = \"t\" }\n"
        );
        assert!(matches!(outcomes[0].1, Outcome::Skipped(_)));
        assert_eq!(outcomes[1].1, Outcome::Added);
        // Into an empty file, without an [agents] header of its own.
        let (new, _) = merge_into_config("", &agents[1..], Path::new("c.toml")).unwrap();
        assert_eq!(
            new,
            "[agents.\"My Agent\"]\ncommand = \"/opt/my agent\"\nargs = [\"--acp\"]\nenv = { TOKEN = \"t\" }\n"
        );
        // An inline agents table becomes a table.
        let (new, _) = merge_into_config(
            "agents = { b = { command = \"b\" } }\n",
            &agents[1..],
            Path::new("c.toml"),
        )
        .unwrap();
        let config = Config::parse(&new, Path::new("c.toml")).unwrap();
        assert_eq!(config.agents["b"].command, "b");
        assert_eq!(config.agents["My Agent"].env["TOKEN"], "t");
        // A broken config is refused.
        assert!(merge_into_config("[agents.x]\n", &agents, Path::new("c.toml")).is_err());
    }
}
