//! The slash commands of `acp chat`: `/help`, `/mode`, `/config`,
//! `/sessions`, `/load`, `/permissions`, `/quit`, and the agent's own
//! commands, which travel as prompt text.

use super::{BUILTINS, Chat, Next};
use crate::exit::Failure;
use crate::session::choices::{describe_value, parse_config_value};
use acp::schema::*;
use std::sync::PoisonError;

impl Chat<'_> {
    pub(super) async fn command(&mut self, line: &str) -> Result<Next, Failure> {
        let mut words = line.split_whitespace();
        let name = words.next().unwrap_or("");
        let rest: Vec<&str> = words.collect();
        match name {
            "quit" | "exit" => return Ok(Next::Quit),
            "help" => self.help(),
            "mode" => self.mode(rest.first().copied()).await?,
            "config" => self.config(&rest).await?,
            "model" => self.model(&rest).await?,
            "sessions" => self.sessions(&rest).await?,
            "permissions" => self.permissions(&rest),
            "load" => match rest.first() {
                Some(id) => self.open_session(id).await?,
                None => self.error("usage: /load SESSION-ID"),
            },
            _ => {
                let known = self
                    .commands
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .iter()
                    .any(|c| c.name == name);
                if known {
                    // Agent commands travel as ordinary prompt text.
                    return self.turn(&format!("/{line}")).await;
                }
                self.error(&format!(
                    "unknown command /{name}; /help lists the commands"
                ));
            }
        }
        Ok(Next::Continue)
    }

    /// `/permissions`: the "always" answers, numbered; `revoke N` or
    /// `revoke all` forgets them.
    fn permissions(&self, args: &[&str]) {
        let client = self.client().clone();
        match args {
            [] => {
                let list = client.remembered();
                if list.is_empty() {
                    self.say("No \"always\" answers in this chat.");
                    return;
                }
                let mut text = String::from("Remembered answers:");
                for (i, r) in list.iter().enumerate() {
                    text.push_str(&format!("\n  {}) {r}", i + 1));
                }
                text.push_str("\n/permissions revoke N forgets one.");
                self.say(&text);
            }
            ["revoke" | "forget", "all"] => {
                client.forget_all();
                self.say("Forgot every \"always\" answer.");
            }
            ["revoke" | "forget", n] => {
                match n.parse::<usize>().ok().and_then(|n| n.checked_sub(1)) {
                    Some(i) => match client.forget(i) {
                        Some(r) => self.say(&format!("Forgot: {r}")),
                        None => self.error(&format!("no answer {n}; /permissions lists them")),
                    },
                    None => self.error("usage: /permissions revoke N|all"),
                }
            }
            _ => self.error("usage: /permissions, or /permissions revoke N|all"),
        }
    }

    fn help(&self) {
        let style = self.transcript(|t| t.style());
        let cols = self.transcript(|t| t.columns()).saturating_sub(1);
        // Each entry's text hangs under where it starts.
        let entry =
            |lead: String, what: &str| crate::view::markdown::hanging(&lead, what, cols).join("\n");
        let mut text = style.bold("Commands:");
        for (name, what) in BUILTINS {
            let lead = format!("  /{name:<11} ");
            text.push_str(&format!("\n{}", entry(lead, what)));
        }
        let agent = self
            .commands
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if !agent.is_empty() {
            text.push_str(&format!("\n{}", style.bold("The agent's commands:")));
            for command in agent {
                let hint = match &command.input {
                    Some(AvailableCommandInput::Unstructured(u)) => format!(" {}", u.hint),
                    _ => String::new(),
                };
                let lead = format!("  /{}{hint}  ", command.name);
                text.push_str(&format!(
                    "\n{}",
                    entry(lead, &style.dim(&command.description))
                ));
            }
        }
        text.push_str(&format!("\n{}\n", style.bold("Keys:")));
        text.push_str(&entry(
            "  ".to_owned(),
            "Tab completes commands and @paths; Up/Down walk the history; Alt-Enter, Ctrl-J, \
             or Enter after a trailing \\, starts a new line; what you type during a turn \
             waits in the input line until the turn ends; Ctrl-C cancels a turn (twice: kills \
             the agent) or clears the line; Ctrl-D quits.",
        ));
        self.say(&text);
    }

    async fn mode(&mut self, id: Option<&str>) -> Result<(), Failure> {
        let (modes, current) = self.store(|s| (s.modes.clone(), s.current_mode.clone()));
        let Some(id) = id else {
            if modes.is_empty() {
                self.say("The agent offers no session modes.");
                return Ok(());
            }
            let mut text = String::from("Modes:");
            for mode in &modes {
                let mark = if current.as_ref() == Some(&mode.id) {
                    "*"
                } else {
                    " "
                };
                text.push_str(&format!("\n {mark} {}  {}", mode.id, mode.name));
                if let Some(d) = &mode.description {
                    text.push_str(&format!(" — {d}"));
                }
            }
            self.say(&text);
            return Ok(());
        };
        if !modes.is_empty() && !modes.iter().any(|m| m.id.to_string() == id) {
            let ids: Vec<String> = modes.iter().map(|m| m.id.to_string()).collect();
            self.error(&format!("no mode {id}; the modes are {}", ids.join(", ")));
            return Ok(());
        }
        let conn = self.opened.conn.clone();
        let request = SetSessionModeRequest::new(self.opened.session_id.clone(), id);
        if self
            .request("session/set_mode", conn.set_session_mode(request))
            .await?
            .is_some()
        {
            self.store(|s| s.current_mode = Some(SessionModeId::new(id)));
            self.say(&format!("Mode: {id}"));
        }
        Ok(())
    }

    async fn config(&mut self, args: &[&str]) -> Result<(), Failure> {
        let options = self.store(|s| s.config_options.clone());
        match args {
            [] => {
                if options.is_empty() {
                    self.say("The agent offers no config options.");
                    return Ok(());
                }
                let mut text = String::from("Config options:");
                for option in &options {
                    text.push_str(&format!(
                        "\n  {} ({}): {}",
                        option.id,
                        option.name,
                        describe_value(option)
                    ));
                }
                self.say(&text);
            }
            [id] | [id, _] => {
                let Some(option) = options.iter().find(|o| o.id.to_string() == *id) else {
                    self.error(&format!("no config option {id}; /config lists them"));
                    return Ok(());
                };
                let value = match (args.get(1), &option.kind) {
                    (Some(text), _) => parse_config_value(option, text),
                    // A boolean option alone is toggled.
                    (None, SessionConfigKind::Boolean(b)) => Ok((!b.current_value).into()),
                    (None, _) => {
                        self.say(&format!("{id}: {}", describe_value(option)));
                        return Ok(());
                    }
                };
                let value = match value {
                    Ok(value) => value,
                    Err(why) => {
                        self.error(&why);
                        return Ok(());
                    }
                };
                let conn = self.opened.conn.clone();
                let request = SetSessionConfigOptionRequest::new(
                    self.opened.session_id.clone(),
                    option.id.clone(),
                    value,
                );
                if let Some(response) = self
                    .request(
                        "session/set_config_option",
                        conn.set_session_config_option(request),
                    )
                    .await?
                {
                    let now = response
                        .config_options
                        .iter()
                        .find(|o| o.id == option.id)
                        .map(describe_value)
                        .unwrap_or_default();
                    self.store(|s| s.config_options = response.config_options);
                    self.say(&format!("{id}: {now}"));
                }
            }
            _ => self.error(
                "usage: /config, /config ID (shows it; toggles a boolean), or /config ID VALUE",
            ),
        }
        Ok(())
    }
}
