//! The config file and choosing which agent to run.
//!
//! The file is TOML, at `<config dir>/acp/config.toml` (on Linux
//! `$XDG_CONFIG_HOME/acp/config.toml`, falling back to
//! `~/.config/acp/config.toml`), or wherever `--config` points:
//!
//! ```toml
//! default_agent = "claude"          # optional
//!
//! [agents.claude]
//! command = "npx"
//! args = ["-y", "@agentclientprotocol/claude-agent-acp"]
//! env = { ANTHROPIC_LOG = "debug" }
//! default_mode = "plan"             # optional: the session's mode
//! default_model = "sonnet"          # optional: the model config option
//! default_config_options = { effort = "high" }   # optional
//! protocol = 2                      # optional: ask for protocol v2 (a draft)
//!
//! # Written by `acp agents add ID` for an agent of the ACP registry:
//! [agents.some-agent]
//! command = "/home/me/.local/share/acp/agents/some-agent/1.2.0/bin/agent"
//! args = ["--acp"]
//! registry = { version = "1.2.0", distribution = "binary" }
//! ```
//!
//! `registry_url = "https://…"` (top level) names another ACP registry
//! (`$ACP_REGISTRY_URL` wins over it).
//!
//! A command that starts with `~/` is found in the home directory.
//!
//! Where acp keeps its files is [`paths`]; agents given by URL are
//! [`remote`]; writing the file (keeping the user's formatting) is
//! [`file`](mod@file). This layer uses only [`crate::cli`]'s options and
//! [`crate::exit`].
//!
//! `--agent VALUE` names an agent of the file, or else is a command line.
//! With no `--agent`, `default_agent` is used, and then `acp-agent` (found
//! on `PATH` or beside the `acp` executable).

pub mod file;
pub mod paths;
pub mod remote;

use crate::exit::Failure;
use acp::AgentCommand;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The program run when no agent is named.
pub const DEFAULT_AGENT_PROGRAM: &str = "acp-agent";

/// The parsed config file.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The agent used when `--agent` is not given.
    #[serde(default)]
    pub default_agent: Option<String>,
    /// Named agents.
    #[serde(default)]
    pub agents: BTreeMap<String, AgentEntry>,
    /// The ACP registry to use instead of the default one.
    #[serde(default)]
    pub registry_url: Option<String>,
}

/// One `[agents.NAME]` table.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AgentEntry {
    /// The program to run.
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment variables.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The mode to switch a new session to (`session/set_mode`, or a config
    /// option of category `mode`).
    #[serde(default)]
    pub default_mode: Option<String>,
    /// The model to choose (the config option of category `model`).
    #[serde(default)]
    pub default_model: Option<String>,
    /// Values for config options, by option id.
    #[serde(default)]
    pub default_config_options: BTreeMap<String, String>,
    /// The protocol version to ask it for (1 or 2; `--protocol` wins).
    #[serde(default, deserialize_with = "protocol_version")]
    pub protocol: Option<u8>,
    /// Set when `acp agents add` added the agent from the ACP registry.
    #[serde(default)]
    pub registry: Option<RegistryOrigin>,
}

/// `protocol = 1` or `2`.
fn protocol_version<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u8>, D::Error> {
    match u8::deserialize(d)? {
        v @ (1 | 2) => Ok(Some(v)),
        v => Err(serde::de::Error::custom(format!(
            "protocol must be 1 or 2, not {v}"
        ))),
    }
}

/// What `acp agents add` installed: the agent's registry id is its name in
/// the config.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RegistryOrigin {
    /// The version installed.
    pub version: String,
    /// How it was installed: `binary`, `npx` or `uvx`.
    pub distribution: String,
}

impl AgentEntry {
    /// The entry as a command line, for display.
    pub fn display(&self) -> String {
        let mut words = vec![self.command.clone()];
        words.extend(self.args.iter().cloned());
        words
            .iter()
            .map(|w| {
                if w.is_empty() || w.contains(|c: char| c.is_whitespace() || c == '\'' || c == '"')
                {
                    format!("'{}'", w.replace('\'', r"'\''"))
                } else {
                    w.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn command(&self) -> AgentCommand {
        AgentCommand::new(expand_home(&self.command))
            .args(&self.args)
            .envs(&self.env)
    }

    fn defaults(&self) -> AgentDefaults {
        AgentDefaults {
            mode: self.default_mode.clone(),
            model: self.default_model.clone(),
            options: self
                .default_config_options
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            protocol: self.protocol,
        }
    }
}

/// `~` or `~/…` at the start of `command` in the home directory (as Zed
/// expands its agents' commands); anything else as it is.
pub fn expand_home(command: &str) -> String {
    let rest = match command.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => rest,
        _ => return command.to_owned(),
    };
    match dirs::home_dir() {
        Some(home) => format!("{}{rest}", home.display()),
        None => command.to_owned(),
    }
}

/// What a new session starts with, from the agent's config entry.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentDefaults {
    /// `default_mode`.
    pub mode: Option<String>,
    /// `default_model`.
    pub model: Option<String>,
    /// `default_config_options`, by option id.
    pub options: Vec<(String, String)>,
    /// `protocol`: the version to ask for.
    pub protocol: Option<u8>,
}

impl Config {
    /// Parses a config file's text; `origin` names it in error messages.
    pub fn parse(text: &str, origin: &Path) -> Result<Config, Failure> {
        toml::from_str(text).map_err(|e| {
            Failure::usage(format!(
                "bad config file {}: {}",
                origin.display(),
                e.to_string().trim_end()
            ))
        })
    }

    /// Loads the config file at `path`. A missing file at the default
    /// location is an empty config; a missing file named explicitly is an
    /// error.
    pub fn load(path: &Path, explicit: bool) -> Result<Config, Failure> {
        match std::fs::read_to_string(path) {
            Ok(text) => Config::parse(&text, path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !explicit => {
                Ok(Config::default())
            }
            Err(e) => Err(Failure::usage(format!(
                "cannot read config file {}: {e}",
                path.display()
            ))),
        }
    }
}

/// The agent chosen for a run, with a human-readable description.
#[derive(Debug, Clone)]
pub struct ChosenAgent {
    /// How to start it.
    pub command: AgentCommand,
    /// What to call it in messages (`name` or the command line).
    pub label: String,
    /// The `--agent …` words that choose it again (empty when it is the
    /// default), for commands acp suggests.
    pub flag: String,
    /// What its sessions start with.
    pub defaults: AgentDefaults,
}

/// Picks the agent: `requested` (a config name or a command line), else the
/// config's `default_agent`, else [`DEFAULT_AGENT_PROGRAM`].
pub fn choose_agent(config: &Config, requested: Option<&str>) -> Result<ChosenAgent, Failure> {
    let flag = requested
        .map(|value| format!("--agent {}", shell_quote(value)))
        .unwrap_or_default();
    let requested = requested.or(config.default_agent.as_deref());
    if let Some(value) = requested {
        if let Some(entry) = config.agents.get(value) {
            return Ok(ChosenAgent {
                command: entry.command(),
                label: format!("{value} ({})", entry.display()),
                flag,
                defaults: entry.defaults(),
            });
        }
        let command = AgentCommand::parse(value)
            .map_err(|e| Failure::usage(format!("bad --agent value {value:?}: {e}")))?;
        return Ok(ChosenAgent {
            command,
            label: value.to_owned(),
            flag,
            defaults: AgentDefaults::default(),
        });
    }
    let program = find_default_agent().ok_or_else(|| {
        Failure::new(
            crate::exit::AGENT_NOT_FOUND,
            format!(
                "no agent chosen and {DEFAULT_AGENT_PROGRAM:?} was found neither on PATH nor beside the acp executable.\n\
                 Name one with --agent \"<command line>\" (for example --agent \"npx -y @agentclientprotocol/claude-agent-acp\"),\n\
                 or add an [agents.NAME] table and default_agent = \"NAME\" to {}",
                paths::config_path_hint()
            ),
        )
    })?;
    Ok(ChosenAgent {
        label: program.display().to_string(),
        command: AgentCommand::new(program),
        flag: String::new(),
        defaults: AgentDefaults::default(),
    })
}

/// `acp-agent` beside the running executable, else on `PATH`.
fn find_default_agent() -> Option<PathBuf> {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join(DEFAULT_AGENT_PROGRAM)));
    if let Some(path) = beside.filter(|p| is_executable(p)) {
        return Some(path);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(DEFAULT_AGENT_PROGRAM))
        .find(|p| is_executable(p))
}

/// Whether `program` (a bare name) is an executable file in a directory
/// of `PATH`.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| is_executable(&dir.join(program)))
    })
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Quotes a word for a POSIX shell when it needs it.
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_agents_and_default() {
        let text = r#"
default_agent = "a"
[agents.a]
command = "npx"
args = ["-y", "some agent"]
env = { KEY = "v" }
[agents.b]
command = "/bin/b"
"#;
        let config = Config::parse(text, Path::new("c.toml")).unwrap();
        assert_eq!(config.default_agent.as_deref(), Some("a"));
        assert_eq!(config.agents["a"].args, ["-y", "some agent"]);
        assert_eq!(config.agents["a"].env["KEY"], "v");
        assert_eq!(config.agents["a"].display(), "npx -y 'some agent'");
        assert!(config.agents["b"].args.is_empty());
        let chosen = choose_agent(&config, None).unwrap();
        assert_eq!(chosen.command.get_program(), "npx");
        let chosen = choose_agent(&config, Some("b")).unwrap();
        assert_eq!(chosen.command.get_program(), "/bin/b");
        let chosen = choose_agent(&config, Some("my-agent --flag 'x y'")).unwrap();
        assert_eq!(chosen.command.get_program(), "my-agent");
        assert_eq!(chosen.command.get_args(), ["--flag", "x y"]);
    }

    #[test]
    fn rejects_bad_config_and_command_lines() {
        let err = Config::parse("[agents.a]\nargs = []\n", Path::new("c.toml")).unwrap_err();
        assert_eq!(err.code, crate::exit::USAGE);
        assert!(err.message.contains("command"), "{}", err.message);
        let err = Config::parse(
            "[agents.a]\ncommand = \"x\"\ncmd = 1\n",
            Path::new("c.toml"),
        )
        .unwrap_err();
        assert!(err.message.contains("cmd"), "{}", err.message);
        let err = choose_agent(&Config::default(), Some("agent 'unterminated")).unwrap_err();
        assert_eq!(err.code, crate::exit::USAGE);
    }
}
