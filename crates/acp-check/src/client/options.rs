//! How `acp check client` runs: its options, and the client's command line
//! with `{agent}` put in.

use crate::report::Filters;
use std::path::PathBuf;
use std::time::Duration;

/// How `acp check client` runs.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// The client's command line, with `{agent}` somewhere in it.
    pub command: Vec<String>,
    /// The program (and its first arguments) that runs the [relay](super::relay); the
    /// socket's path is added as the last argument. `acp` uses
    /// `acp check __agent`.
    pub relay: Vec<String>,
    /// How long each request may take, and how long the client may take to
    /// start the agent and to prompt (`--timeout`).
    pub timeout: Duration,
    /// How long after the interrupt the client may take to send
    /// `session/cancel` (`--cancel-within`).
    pub cancel_within: Duration,
    /// Whether to send SIGINT to the client to have it cancel the turn.
    pub interrupt: bool,
    /// Where to write every line exchanged (`--trace`).
    pub trace: Option<PathBuf>,
    /// Which checks run and how they count.
    pub filters: Filters,
}

impl ClientOptions {
    /// Options with the defaults for `command`, relayed by `relay`.
    pub fn new(command: Vec<String>, relay: Vec<String>) -> ClientOptions {
        ClientOptions {
            command,
            relay,
            timeout: Duration::from_secs(30),
            cancel_within: Duration::from_secs(10),
            interrupt: true,
            trace: None,
            filters: Filters::default(),
        }
    }
}

/// The placeholder for the checking agent in the client's command line.
pub const PLACEHOLDER: &str = "{agent}";

/// Why [`substitute`] refused the client's command line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CommandLineError {
    /// No word of the command line has [`PLACEHOLDER`].
    #[error(
        "the client's command line has no {{agent}}: put it where the client takes the agent's command"
    )]
    NoPlaceholder,
}

/// `command` with `{agent}` replaced by `agent`: a whole word as it is, a
/// part of a word shell-quoted. An error when no word has it.
pub fn substitute(command: &[String], agent: &str) -> Result<Vec<String>, CommandLineError> {
    if !command.iter().any(|w| w.contains(PLACEHOLDER)) {
        return Err(CommandLineError::NoPlaceholder);
    }
    Ok(command
        .iter()
        .map(|w| {
            if w == PLACEHOLDER {
                agent.to_string()
            } else {
                w.replace(PLACEHOLDER, &shell_quote(agent))
            }
        })
        .collect())
}

/// `text` quoted for a POSIX shell (unchanged when nothing needs quoting).
pub fn shell_quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./,:@%+=".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_placeholder_is_a_word_or_a_quoted_part_of_one() {
        let got = substitute(
            &words(&["acp", "exec", "--agent", "{agent}", "sh -c '{agent} --x'"]),
            "/tmp/a b/agent",
        )
        .unwrap();
        assert_eq!(
            got,
            words(&[
                "acp",
                "exec",
                "--agent",
                "/tmp/a b/agent",
                "sh -c ''/tmp/a b/agent' --x'"
            ])
        );
        assert_eq!(
            substitute(&words(&["c", "--agent={agent}"]), "/tmp/x/agent").unwrap(),
            words(&["c", "--agent=/tmp/x/agent"])
        );
        assert!(substitute(&words(&["c", "agent"]), "/x").is_err());
        assert_eq!(
            substitute(&words(&["c", "agent"]), "/x")
                .unwrap_err()
                .to_string(),
            "the client's command line has no {agent}: put it where the client takes the agent's command"
        );
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
