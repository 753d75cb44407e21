//! Agents given by URL (`--agent ws://…`): they run as this executable's
//! `acp connect URL`, with the options that reach the remote endpoint.
//!
//! `acp connect` resumes a broken connection by itself (unless
//! `--no-reconnect`), and says what happens to the link on its standard
//! error, one [`LinkNote`] a line: readable in an editor's log, and read back
//! by the `acp exec` or `acp chat` that runs it, which shows them
//! (`[reconnecting…]`) and explains a connection the server no longer has.

use crate::cli::RemoteArgs;
use crate::config::ChosenAgent;
use crate::exit::Failure;
use acp::AgentCommand;
use acp::remote::{ClientOptions, LinkEvent, LinkLost, Reconnect};
use std::time::Duration;

/// The agent for `--agent URL`: this executable's `acp connect URL`, with
/// the remote options passed on.
pub fn mirror_agent(url: &str, remote: &RemoteArgs) -> Result<ChosenAgent, Failure> {
    // Fails early, here, on a bad token file or header rather than in the
    // child.
    remote_options(remote)?;
    let exe = std::env::current_exe()
        .map_err(|e| Failure::agent(format!("cannot find the acp executable: {e}")))?;
    let mut command = AgentCommand::new(exe).arg("connect").arg(url);
    for header in &remote.headers {
        command = command.arg("--header").arg(header);
    }
    if let Some(var) = &remote.token_env {
        command = command.arg("--token-env").arg(var);
    }
    if let Some(file) = &remote.token_file {
        command = command.arg("--token-file").arg(file);
    }
    if let Some(file) = &remote.ca_cert {
        command = command.arg("--ca-cert").arg(file);
    }
    if let Some(time) = remote.reconnect_for {
        command = command
            .arg("--reconnect-for")
            .arg(time.as_secs_f64().to_string());
    }
    if remote.no_reconnect {
        command = command.arg("--no-reconnect");
    }
    Ok(ChosenAgent {
        command,
        label: url.to_owned(),
        flag: format!("--agent {}", crate::config::shell_quote(url)),
        defaults: crate::config::AgentDefaults::default(),
    })
}

/// The client options the remote arguments ask for.
pub fn remote_options(remote: &RemoteArgs) -> Result<ClientOptions, Failure> {
    let mut options = ClientOptions::default();
    for header in &remote.headers {
        let Some((name, value)) = header.split_once(':') else {
            return Err(Failure::usage(format!(
                "bad --header {header:?}: write it as \"Name: value\""
            )));
        };
        options = options.header(name.trim(), value.trim());
    }
    let token = match (&remote.token_env, &remote.token_file) {
        (Some(var), _) => Some(std::env::var(var).map_err(|_| {
            Failure::usage(format!(
                "--token-env {var}: the environment variable is not set"
            ))
        })?),
        (None, Some(file)) => Some(read_token(file)?),
        (None, None) => None,
    };
    if let Some(token) = token {
        options = options.bearer_token(token.trim());
    }
    if !remote.no_reconnect {
        let mut policy = Reconnect::default();
        if let Some(time) = remote.reconnect_for {
            policy = policy.give_up_after(time);
        }
        options = options.reconnect(policy);
    }
    if let Some(file) = &remote.ca_cert {
        for cert in acp::remote::tls::load_certificates(file)
            .map_err(|e| Failure::usage(format!("--ca-cert: {e}")))?
        {
            options = options.root_certificate(cert);
        }
    }
    Ok(options)
}

/// A token from a file: its content without surrounding whitespace, never
/// empty.
pub fn read_token(file: &std::path::Path) -> Result<String, Failure> {
    let text = std::fs::read_to_string(file).map_err(|e| {
        Failure::usage(format!(
            "cannot read the token file {}: {e}",
            file.display()
        ))
    })?;
    let token = text.trim();
    if token.is_empty() {
        return Err(Failure::usage(format!(
            "the token file {} is empty",
            file.display()
        )));
    }
    Ok(token.to_owned())
}

/// Whether `agent` is an agent given by URL, run as `acp connect URL`
/// ([`mirror_agent`]): its standard error carries [`LinkNote`]s.
pub fn is_mirror(agent: &ChosenAgent) -> bool {
    acp::remote::is_url(&agent.label)
        && agent
            .command
            .get_args()
            .first()
            .is_some_and(|a| a == "connect")
}

/// How every line `acp connect` writes about its link starts.
const NOTE_PREFIX: &str = "acp connect: [";

/// What `acp connect` says on its standard error about its link to the
/// server: one line each, written by [`LinkNote::line`] and read back by
/// [`LinkNote::parse`].
#[derive(Debug, Clone, PartialEq)]
pub enum LinkNote {
    /// The connection broke; attempt `attempt` to resume it comes after
    /// `delay`.
    Reconnecting {
        /// The attempt coming (1 for the first).
        attempt: u32,
        /// How long until it.
        delay: Duration,
        /// What broke.
        why: String,
    },
    /// The connection was resumed: nothing lost, nothing twice.
    Resumed {
        /// How many attempts it took.
        attempts: u32,
        /// How long the link was down.
        down_for: Duration,
    },
    /// The link is lost for good: `gone` when the server no longer has the
    /// connection (its session may still be loaded on a new one).
    Lost {
        /// Whether the server no longer has the connection.
        gone: bool,
        /// Why, in words.
        why: String,
    },
}

impl LinkNote {
    /// The note for an event of the reconnecting client (`None` for
    /// [`LinkEvent::GaveUp`], said by [`LinkNote::lost`] with the error
    /// that ends the run).
    pub fn of(event: &LinkEvent) -> Option<LinkNote> {
        match event {
            LinkEvent::Reconnecting {
                attempt,
                delay,
                why,
            } => Some(LinkNote::Reconnecting {
                attempt: *attempt,
                delay: *delay,
                why: why.clone(),
            }),
            LinkEvent::Resumed { attempts, down_for } => Some(LinkNote::Resumed {
                attempts: *attempts,
                down_for: *down_for,
            }),
            _ => None,
        }
    }

    /// The note for a link lost for good.
    pub fn lost(lost: &LinkLost) -> LinkNote {
        LinkNote::Lost {
            gone: matches!(lost, LinkLost::Gone { .. }),
            why: lost.to_string(),
        }
    }

    /// The line (without its newline).
    pub fn line(&self) -> String {
        // What the server said goes in too: one line, and nothing a
        // terminal would act on.
        let one_line = |text: &str| -> String {
            text.chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect()
        };
        match self {
            LinkNote::Reconnecting {
                attempt,
                delay,
                why,
            } => format!(
                "{NOTE_PREFIX}reconnecting] attempt {attempt} in {:.3} s: {}",
                delay.as_secs_f64(),
                one_line(why)
            ),
            LinkNote::Resumed { attempts, down_for } => format!(
                "{NOTE_PREFIX}resumed] after {:.3} s, on attempt {attempts}",
                down_for.as_secs_f64()
            ),
            LinkNote::Lost { gone: true, why } => format!("{NOTE_PREFIX}gone] {}", one_line(why)),
            LinkNote::Lost { gone: false, why } => format!("{NOTE_PREFIX}lost] {}", one_line(why)),
        }
    }

    /// The note a line of `acp connect`'s standard error is, if it is one.
    pub fn parse(line: &str) -> Option<LinkNote> {
        let rest = line.strip_prefix(NOTE_PREFIX)?;
        let (kind, rest) = rest.split_once("] ")?;
        let secs = |text: &str| -> Option<Duration> {
            Duration::try_from_secs_f64(text.parse().ok()?).ok()
        };
        match kind {
            "reconnecting" => {
                let rest = rest.strip_prefix("attempt ")?;
                let (attempt, rest) = rest.split_once(" in ")?;
                let (delay, why) = rest.split_once(" s: ")?;
                Some(LinkNote::Reconnecting {
                    attempt: attempt.parse().ok()?,
                    delay: secs(delay)?,
                    why: why.to_owned(),
                })
            }
            "resumed" => {
                let rest = rest.strip_prefix("after ")?;
                let (down_for, attempts) = rest.split_once(" s, on attempt ")?;
                Some(LinkNote::Resumed {
                    attempts: attempts.parse().ok()?,
                    down_for: secs(down_for)?,
                })
            }
            "gone" | "lost" => Some(LinkNote::Lost {
                gone: kind == "gone",
                why: rest.to_owned(),
            }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_notes_are_read_back_as_written() {
        let notes = [
            LinkNote::Reconnecting {
                attempt: 3,
                delay: Duration::from_millis(412),
                why: "the WebSocket broke: connection reset\nby peer".into(),
            },
            LinkNote::Resumed {
                attempts: 2,
                down_for: Duration::from_millis(1607),
            },
            LinkNote::lost(&LinkLost::Gone { reason: None }),
            LinkNote::lost(&LinkLost::TakenOver),
            LinkNote::lost(&LinkLost::Refused {
                status: 403,
                detail: "no\n\u{1b}[2Jacp connect: [gone] x".into(),
            }),
        ];
        let lines: Vec<String> = notes.iter().map(LinkNote::line).collect();
        assert_eq!(
            lines,
            [
                "acp connect: [reconnecting] attempt 3 in 0.412 s: the WebSocket broke: connection reset by peer",
                "acp connect: [resumed] after 1.607 s, on attempt 2",
                "acp connect: [gone] the server no longer has the connection (it restarted, or kept it no longer)",
                "acp connect: [lost] another client resumed the connection",
                // A server's words cannot start a line nor move the cursor.
                "acp connect: [lost] the server refused the resume with HTTP 403: no  [2Jacp connect: [gone] x",
            ]
        );
        let back: Vec<LinkNote> = lines.iter().filter_map(|l| LinkNote::parse(l)).collect();
        assert_eq!(back.len(), 5);
        assert!(matches!(&back[4], LinkNote::Lost { gone: false, .. }));
        assert!(
            matches!(&back[0], LinkNote::Reconnecting { attempt: 3, why, .. } if why.ends_with("by peer"))
        );
        assert_eq!(back[1], notes[1]);
        assert_eq!(back[2], notes[2]);
        assert_eq!(back[3], notes[3]);
        // Anything else on the stream is not a note.
        for line in [
            "acp connect: cannot connect to ws://h/acp: refused",
            "acp connect: [reconnecting] attempt x in 1 s: y",
            "agent: [gone] x",
        ] {
            assert_eq!(LinkNote::parse(line), None, "{line}");
        }
    }
}
