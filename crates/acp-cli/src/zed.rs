//! `acp agents import-zed`: copies the custom agents of Zed's
//! `settings.json` (`agent_servers.NAME` with `command`, `args`, `env`)
//! into the config file as `[agents.NAME]` tables.
//!
//! Zed's settings are JSON with comments and trailing commas; [`parse_jsonc`]
//! reads that. The config file is edited with `toml_edit`, so its comments,
//! order and formatting stay as they were; agents already configured are
//! left alone; the new file is written to a temporary file beside the old
//! one and renamed over it, so a failure never leaves half a config.

use crate::config::Config;
use crate::exit::Failure;
use serde_json::{Map, Value};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where Zed keeps its user settings: `~/.config/zed/settings.json`
/// (`$XDG_CONFIG_HOME/zed/settings.json` on Linux when that is set).
pub fn default_settings_path() -> Option<PathBuf> {
    let config = if cfg!(target_os = "macos") {
        dirs::home_dir().map(|home| home.join(".config"))
    } else {
        dirs::config_dir()
    };
    config.map(|dir| dir.join("zed").join("settings.json"))
}

/// An agent found in Zed's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ZedAgent {
    /// Its name (the key under `agent_servers`).
    pub name: String,
    /// The program, or why there is none to import.
    pub command: Result<String, String>,
    /// Its arguments.
    pub args: Vec<String>,
    /// Extra environment variables, in Zed's order.
    pub env: Vec<(String, String)>,
}

/// What an import did with one agent.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Added as `[agents.NAME]`.
    Added,
    /// Left out, and why.
    Skipped(String),
}

/// Reads JSON that may have `//` and `/* */` comments and trailing commas
/// (Zed's settings files). Line and column numbers in errors are those of
/// the original text.
pub fn parse_jsonc(text: &str) -> Result<Value, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let plain = strip_jsonc(text)?;
    serde_json::from_str(&plain).map_err(|e| e.to_string())
}

/// Blanks out comments (keeping line breaks) and drops commas that are
/// followed only by whitespace and a closing bracket.
fn strip_jsonc(text: &str) -> Result<String, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    // Where in `out` the last comma outside a string is, while only
    // whitespace has followed it.
    let mut comma: Option<usize> = None;
    // The last character outside comments and whitespace.
    let mut prev: Option<char> = None;
    let mut i = 0;
    let mut line = 1;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '"' => {
                comma = None;
                prev = Some('"');
                out.push(c);
                i += 1;
                while i < chars.len() {
                    let s = chars[i];
                    out.push(s);
                    i += 1;
                    if s == '\\' && i < chars.len() {
                        out.push(chars[i]);
                        i += 1;
                    } else if s == '"' {
                        break;
                    } else if s == '\n' {
                        line += 1;
                    }
                }
            }
            '/' if chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    out.push(' ');
                    i += 1;
                }
            }
            '/' if chars.get(i + 1) == Some(&'*') => {
                let start = line;
                out.push_str("  ");
                i += 2;
                loop {
                    match chars.get(i) {
                        None => return Err(format!("unterminated /* comment from line {start}")),
                        Some('*') if chars.get(i + 1) == Some(&'/') => {
                            out.push_str("  ");
                            i += 2;
                            break;
                        }
                        Some('\n') => {
                            line += 1;
                            out.push('\n');
                            i += 1;
                        }
                        Some(_) => {
                            out.push(' ');
                            i += 1;
                        }
                    }
                }
            }
            ',' => {
                // Only a comma after a value can be a trailing one.
                comma = match prev {
                    Some('[' | '{' | ',' | ':') | None => None,
                    _ => Some(out.len()),
                };
                prev = Some(c);
                out.push(c);
                i += 1;
            }
            '}' | ']' => {
                if let Some(at) = comma.take() {
                    out.replace_range(at..at + 1, " ");
                }
                prev = Some(c);
                out.push(c);
                i += 1;
            }
            c if c.is_whitespace() => {
                if c == '\n' {
                    line += 1;
                }
                out.push(c);
                i += 1;
            }
            _ => {
                comma = None;
                prev = Some(c);
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(out)
}

/// Advice for Zed's built-in agents, which settings.json names without a
/// command.
fn builtin_hint(name: &str) -> &'static str {
    match name {
        "claude" | "claude_code" | "claude-code" => {
            "; for example: command = \"npx\", args = [\"-y\", \"@zed-industries/claude-code-acp\"]"
        }
        "gemini" => "; for example: command = \"gemini\", args = [\"--experimental-acp\"]",
        _ => "",
    }
}

/// The agents under `agent_servers` in Zed's settings, in file order.
pub fn zed_agents(settings: &Value) -> Result<Vec<ZedAgent>, String> {
    let Some(servers) = settings.get("agent_servers") else {
        return Ok(Vec::new());
    };
    let servers = servers
        .as_object()
        .ok_or("agent_servers is not an object")?;
    Ok(servers
        .iter()
        .map(|(name, entry)| zed_agent(name, entry))
        .collect())
}

fn zed_agent(name: &str, entry: &Value) -> ZedAgent {
    let mut agent = ZedAgent {
        name: name.to_owned(),
        command: Err(String::new()),
        args: Vec::new(),
        env: Vec::new(),
    };
    let Some(entry) = entry.as_object() else {
        agent.command = Err("its entry is not an object".to_owned());
        return agent;
    };
    // Older Zed versions nest the command: "command": {"path", "args", "env"}.
    let (command, fields): (Option<&Value>, &Map<String, Value>) = match entry.get("command") {
        Some(Value::Object(nested)) => (nested.get("path"), nested),
        other => (other, entry),
    };
    let kind = entry.get("type").and_then(Value::as_str);
    agent.command = match command {
        Some(Value::String(c)) if !c.trim().is_empty() => Ok(c.clone()),
        Some(_) => Err("its command is not a text".to_owned()),
        None => Err(match kind {
            Some(kind @ ("extension" | "registry")) => format!(
                "Zed installs it ({kind} agent) and settings.json has no command for it; \
                 add [agents.{name}] by hand"
            ),
            _ => format!(
                "a Zed built-in agent, named without a command; add [agents.{name}] by hand{}",
                builtin_hint(name)
            ),
        }),
    };
    match fields.get("args") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            match items
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
            {
                Some(args) => agent.args = args,
                None => agent.command = Err("its args are not all texts".to_owned()),
            }
        }
        Some(_) => agent.command = Err("its args are not a list".to_owned()),
    }
    match fields.get("env") {
        None | Some(Value::Null) => {}
        Some(Value::Object(vars)) => {
            for (key, value) in vars {
                match value.as_str() {
                    Some(v) => agent.env.push((key.clone(), v.to_owned())),
                    None => agent.command = Err(format!("its env value {key} is not a text")),
                }
            }
        }
        Some(_) => agent.command = Err("its env is not an object".to_owned()),
    }
    agent
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
    let created = !doc.contains_key("agents");
    if let Some(toml_edit::Item::Value(toml_edit::Value::InlineTable(inline))) = doc.get("agents") {
        let table = inline.clone().into_table();
        doc["agents"] = toml_edit::Item::Table(table);
    }
    let table = doc
        .entry("agents")
        .or_insert_with(toml_edit::table)
        .as_table_mut()
        .ok_or_else(|| {
            Failure::usage(format!(
                "bad config file {}: agents is not a table",
                origin.display()
            ))
        })?;
    if created {
        table.set_implicit(true);
    }
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

/// Replaces the file at `path` with `text`: a temporary file in the same
/// directory, synced, then renamed over it. A symbolic link is followed, so
/// the file it points to is the one replaced; the old file's permissions
/// are kept.
pub fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let target = match std::fs::canonicalize(path) {
        Ok(real) => real,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => path.to_path_buf(),
        Err(e) => return Err(e),
    };
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir)?;
    let mut file = tempfile::Builder::new()
        .prefix(".config.toml.")
        .tempfile_in(&dir)?;
    file.write_all(text.as_bytes())?;
    file.as_file().sync_all()?;
    let permissions = match std::fs::metadata(&target) {
        Ok(meta) => meta.permissions(),
        Err(_) => {
            use std::os::unix::fs::PermissionsExt;
            std::fs::Permissions::from_mode(0o644)
        }
    };
    file.as_file().set_permissions(permissions)?;
    file.persist(&target).map_err(|e| e.error)?;
    Ok(())
}

/// Runs `acp agents import-zed`: reads `settings` (default: Zed's) and adds
/// its custom agents to the config file at `config_path`. Prints what was
/// added and skipped.
pub fn import(settings: Option<&Path>, config_path: &Path) -> Result<u8, Failure> {
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
    if added > 0 {
        write_atomically(config_path, &new_text).map_err(|e| {
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
                if !agent.env.is_empty() {
                    let keys: Vec<&str> = agent.env.iter().map(|(k, _)| k.as_str()).collect();
                    line.push_str(&format!(" (env: {})", keys.join(", ")));
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
    }
    .display()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonc_comments_and_trailing_commas() {
        let text = "\u{feff}{\n  // a comment, with \"quotes\" and a trailing comma,\n  \"a\": \"// not a comment /* either */\",\n  /* block\n     comment */ \"b\": [1, 2, ],\n  \"c\": {\"d\": \"x\\\",\", },\n}\n";
        let value = parse_jsonc(text).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"a": "// not a comment /* either */", "b": [1, 2], "c": {"d": "x\","}})
        );
        // Errors point at the original line.
        let err = parse_jsonc("{\n// x\n\"a\": ,\n}").unwrap_err();
        assert!(err.contains("line 3"), "{err}");
        assert!(
            parse_jsonc("{ /* open")
                .unwrap_err()
                .contains("unterminated")
        );
        // A lone comma is still an error.
        assert!(parse_jsonc("[,]").is_err());
    }

    #[test]
    fn reads_custom_nested_and_builtin_agents() {
        let settings = serde_json::json!({"agent_servers": {
            "mine": {"type": "custom", "command": "/bin/mine", "args": ["--acp"], "env": {"K": "v"}},
            "old": {"command": {"path": "old-agent", "args": ["x"], "env": {}}},
            "claude": {"default_mode": "plan"},
            "reg": {"type": "registry"},
            "bad": {"command": "b", "env": {"N": 1}},
        }});
        let agents = zed_agents(&settings).unwrap();
        let names: Vec<&str> = agents.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["mine", "old", "claude", "reg", "bad"]);
        assert_eq!(agents[0].command, Ok("/bin/mine".to_owned()));
        assert_eq!(agents[0].args, ["--acp"]);
        assert_eq!(agents[0].env, [("K".to_owned(), "v".to_owned())]);
        assert_eq!(agents[1].command, Ok("old-agent".to_owned()));
        assert_eq!(agents[1].args, ["x"]);
        assert!(agents[2].command.as_ref().unwrap_err().contains("built-in"));
        assert!(
            agents[2]
                .command
                .as_ref()
                .unwrap_err()
                .contains("claude-code-acp")
        );
        assert!(agents[3].command.as_ref().unwrap_err().contains("registry"));
        assert!(
            agents[4]
                .command
                .as_ref()
                .unwrap_err()
                .contains("env value N")
        );
        assert_eq!(zed_agents(&serde_json::json!({})).unwrap(), []);
    }

    #[test]
    fn merge_keeps_the_file_and_existing_agents() {
        let text =
            "# my config\ndefault_agent = \"a\" # keep\n\n[agents.a]\ncommand = \"a-agent\"\n";
        let agents = vec![
            ZedAgent {
                name: "a".into(),
                command: Ok("other".into()),
                args: vec![],
                env: vec![],
            },
            ZedAgent {
                name: "My Agent".into(),
                command: Ok("/opt/my agent".into()),
                args: vec!["--acp".into()],
                env: vec![("TOKEN".into(), "t".into())],
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
