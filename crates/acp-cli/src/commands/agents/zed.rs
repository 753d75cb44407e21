//! `acp agents import-zed`: copies the custom agents of Zed's
//! `settings.json` (`agent_servers.NAME` with `command`, `args`, `env`,
//! `default_mode`, `default_model`, `default_config_options`) into the
//! config file as `[agents.NAME]` tables.
//!
//! The command is expanded as Zed expands it: a leading `~` is the home
//! directory; `$NAME` and `${NAME}` are environment variables (an unset
//! one leaves the agent out, with a note). Entries Zed installs itself
//! (`"type": "registry"` or `"extension"`) and Zed's built-in agents (an
//! entry holding only settings) have no command to import; the report says
//! what to add by hand, with the current package. An entry of a type acp
//! does not know is reported as such.
//!
//!
//! Zed's settings are JSON with comments and trailing commas; [`parse_jsonc`]
//! reads that. Adding the agents to acp's config is [`super::import`].

use serde_json::{Map, Value};
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
    /// The program (expanded), or why there is none to import.
    pub command: Result<String, String>,
    /// Its arguments.
    pub args: Vec<String>,
    /// Extra environment variables, in Zed's order.
    pub env: Vec<(String, String)>,
    /// `default_mode`.
    pub default_mode: Option<String>,
    /// `default_model`.
    pub default_model: Option<String>,
    /// `default_config_options`, in Zed's order.
    pub default_config_options: Vec<(String, String)>,
    /// How the command was expanded (`~`, variables), for the report.
    pub expanded_from: Option<String>,
}

impl Default for ZedAgent {
    fn default() -> Self {
        ZedAgent {
            name: String::new(),
            command: Err("no command".to_owned()),
            args: Vec::new(),
            env: Vec::new(),
            default_mode: None,
            default_model: None,
            default_config_options: Vec::new(),
            expanded_from: None,
        }
    }
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

/// The command line of a well-known agent, by the names Zed and the ACP
/// registry give it, for advice.
pub fn known_command(name: &str) -> Option<&'static str> {
    Some(match name {
        "claude" | "claude-code" | "claude_code" | "claude-acp" | "claude-code-acp"
        | "claude-agent-acp" => "npx -y @agentclientprotocol/claude-agent-acp",
        "codex" | "codex-acp" => "npx -y @zed-industries/codex-acp",
        "gemini" | "gemini-cli" => "npx -y @google/gemini-cli --acp",
        "qwen" | "qwen-code" => "npx -y @qwen-code/qwen-code --acp",
        "auggie" => "npx -y @augmentcode/auggie --acp",
        "github-copilot" | "copilot" | "github-copilot-cli" => "npx -y @github/copilot --acp",
        "opencode" => "opencode acp",
        "mistral-vibe" | "vibe" => "vibe-acp",
        "kimi" | "kimi-cli" => "kimi acp",
        "fast-agent" => "uvx fast-agent-acp",
        _ => return None,
    })
}

/// The TOML to add by hand for a well-known agent, or nothing.
fn by_hand(name: &str) -> String {
    match known_command(name) {
        Some(line) => {
            let mut words = line.split(' ');
            let command = words.next().unwrap_or_default();
            let args: Vec<String> = words.map(|w| format!("{w:?}")).collect();
            format!(
                "; for example: command = \"{command}\", args = [{}]",
                args.join(", ")
            )
        }
        None => String::new(),
    }
}

/// Expands a command as Zed does: a leading `~` (alone or before `/`) is
/// the home directory; `$NAME` and `${NAME}` are variables of `env`.
/// `Err` names a variable that is not set.
pub fn expand_command(
    command: &str,
    home: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let mut text = command.to_owned();
    if let Some(rest) = command.strip_prefix('~')
        && (rest.is_empty() || rest.starts_with('/'))
        && let Some(home) = home
    {
        text = format!("{}{rest}", home.display());
    }
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, tail) = if let Some(braced) = after.strip_prefix('{') {
            match braced.find('}') {
                Some(end) => (&braced[..end], &braced[end + 1..]),
                None => return Err(format!("its command {command:?} has an unclosed ${{")),
            }
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], &after[end..])
        };
        if name.is_empty() {
            out.push('$');
        } else {
            match env(name) {
                Some(value) => out.push_str(&value),
                None => {
                    return Err(format!(
                        "its command {command:?} names ${name}, which is not set"
                    ));
                }
            }
        }
        rest = tail;
    }
    out.push_str(rest);
    Ok(out)
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
        ..ZedAgent::default()
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
    agent.default_mode = entry
        .get("default_mode")
        .and_then(Value::as_str)
        .map(str::to_owned);
    agent.default_model = entry
        .get("default_model")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if let Some(Value::Object(options)) = entry.get("default_config_options") {
        for (id, value) in options {
            let value = match value {
                Value::String(s) => s.clone(),
                Value::Bool(b) => b.to_string(),
                _ => continue,
            };
            agent.default_config_options.push((id.clone(), value));
        }
    }
    let kind = entry.get("type").and_then(Value::as_str);
    agent.command = match (kind, command) {
        (Some(kind @ ("extension" | "registry")), _) => Err(format!(
            "Zed installs it ({kind} agent), and settings.json has no command for it; \
             add [agents.{name}] by hand{}",
            by_hand(name)
        )),
        (Some(kind), _) if kind != "custom" => {
            Err(format!("an entry of a type acp does not know ({kind:?})"))
        }
        (_, Some(Value::String(c))) if !c.trim().is_empty() => {
            let home = dirs::home_dir();
            let env = |name: &str| std::env::var(name).ok();
            match expand_command(c, home.as_deref(), &env) {
                Ok(expanded) => {
                    if expanded != *c {
                        agent.expanded_from = Some(c.clone());
                    }
                    Ok(expanded)
                }
                Err(why) => Err(why),
            }
        }
        (_, Some(_)) => Err("its command is not a text".to_owned()),
        (Some(_), None) => Err("its entry has no command".to_owned()),
        (None, None) if known_command(name).is_some() => Err(format!(
            "Zed's built-in agent {name}: settings.json holds only its settings, not a command; \
             add [agents.{name}] by hand{}",
            by_hand(name)
        )),
        (None, None) => Err("its entry has no command".to_owned()),
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
    let env = if command.is_some() {
        fields.get("env")
    } else {
        entry.get("env")
    };
    match env {
        None | Some(Value::Null) => {}
        Some(Value::Object(vars)) => {
            for (key, value) in vars {
                match value.as_str() {
                    Some(v) => agent.env.push((key.clone(), v.to_owned())),
                    None if agent.command.is_ok() => {
                        agent.command = Err(format!("its env value {key} is not a text"))
                    }
                    None => {}
                }
            }
        }
        Some(_) if agent.command.is_ok() => {
            agent.command = Err("its env is not an object".to_owned())
        }
        Some(_) => {}
    }
    agent
}

/// Whether an environment variable's name says it holds a secret.
pub fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"]
        .iter()
        .any(|w| upper.contains(w))
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
                .contains("@agentclientprotocol/claude-agent-acp")
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
    fn commands_are_expanded_as_zed_does() {
        let home = Path::new("/home/u");
        let env = |name: &str| (name == "TOOLS").then(|| "/opt/tools".to_owned());
        let x = |c: &str| expand_command(c, Some(home), &env);
        assert_eq!(x("~/bin/agent"), Ok("/home/u/bin/agent".into()));
        assert_eq!(x("~"), Ok("/home/u".into()));
        assert_eq!(x("~other/x"), Ok("~other/x".into()));
        assert_eq!(x("$TOOLS/agent"), Ok("/opt/tools/agent".into()));
        assert_eq!(x("${TOOLS}/a-$"), Ok("/opt/tools/a-$".into()));
        assert!(
            x("$NOPE/agent")
                .unwrap_err()
                .contains("$NOPE, which is not set")
        );
        assert!(x("${TOOLS").is_err());
        assert_eq!(x("plain"), Ok("plain".into()));
    }

    #[test]
    fn types_defaults_and_builtins() {
        let settings = serde_json::json!({"agent_servers": {
            "mine": {"type": "custom", "command": "m", "default_mode": "plan",
                     "default_model": "opus", "default_config_options": {"effort": "high", "web": true}},
            "weird": {"type": "carrier-pigeon", "command": "x"},
            "codex": {"env": {"K": "v"}},
            "unnamed": {"default_mode": "x"},
            "reg": {"type": "registry", "default_mode": "x"},
        }});
        let agents = zed_agents(&settings).unwrap();
        assert_eq!(agents[0].command, Ok("m".to_owned()));
        assert_eq!(agents[0].default_mode.as_deref(), Some("plan"));
        assert_eq!(agents[0].default_model.as_deref(), Some("opus"));
        assert_eq!(
            agents[0].default_config_options,
            [
                ("effort".to_owned(), "high".to_owned()),
                ("web".to_owned(), "true".to_owned())
            ]
        );
        assert!(
            agents[1]
                .command
                .as_ref()
                .unwrap_err()
                .contains("type acp does not know (\"carrier-pigeon\")")
        );
        let codex = agents[2].command.as_ref().unwrap_err();
        assert!(
            codex.contains("built-in agent codex") && codex.contains("@zed-industries/codex-acp"),
            "{codex}"
        );
        assert_eq!(
            agents[3].command,
            Err("its entry has no command".to_owned())
        );
        assert!(
            agents[4]
                .command
                .as_ref()
                .unwrap_err()
                .contains("Zed installs it (registry agent)")
        );
    }
}
