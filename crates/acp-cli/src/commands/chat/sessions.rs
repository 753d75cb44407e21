//! `/sessions` and `/load`: the sessions of this directory, and opening
//! one of them.
//!
//! `/sessions` merges what the agent lists (`session/list`, every page up
//! to [`MAX_SESSION_PAGES`], asked for this directory) with acp's own
//! record ([`crate::session::recent`]: the sessions acp had here with this agent,
//! how many prompts it sent in each and the first of them). Each row shows
//! a title (the agent's, else acp's first prompt in quotes), how long ago
//! the session was last active, the number of prompts when acp knows it,
//! and the ID; the newest come first. Then it asks which to open, by
//! number (`/sessions N` opens number N without asking). An answer that
//! is not a number of the list is refused with a message; the chat goes
//! on in the session it was in.
//!
//! Opening is `session/load` when the agent can load (its history is
//! replayed into the transcript like a live turn), else `session/resume`
//! (nothing is replayed: a note says so).

use super::{Chat, MAX_SESSION_PAGES};
use crate::exit::Failure;
use crate::session::open::How;
use crate::session::recent::Recent;
use crate::tty::Tty;
use acp::schema::*;
use jiff::Timestamp;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// One row of the picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The session.
    pub id: String,
    /// What the row calls it: the agent's title, or acp's first prompt
    /// in quotes, or `(untitled)`.
    pub title: String,
    /// When it was last active, in seconds since the epoch, if known.
    pub at: Option<u64>,
    /// How many prompts acp sent in it, if acp sent any.
    pub prompts: Option<u64>,
}

/// The sessions in `cwd`: the agent's (`listed`, those in `cwd`) and
/// acp's own (`ours`, those in `cwd` with `agent`), merged by ID, newest
/// first (those with no time last, in the agent's order).
pub fn merge(listed: &[SessionInfo], ours: &[Recent], cwd: &str, agent: &str) -> Vec<Listed> {
    let ours: Vec<&Recent> = ours
        .iter()
        .filter(|r| r.cwd == cwd && r.agent == agent)
        .collect();
    let mine = |id: &str| ours.iter().rev().find(|r| r.session_id == id);
    let quoted = |r: &Recent| r.title.as_ref().map(|t| format!("\"{t}\""));
    let mut rows: Vec<Listed> = Vec::new();
    for info in listed.iter().filter(|i| i.cwd == cwd) {
        let id = info.session_id.to_string();
        if rows.iter().any(|r| r.id == id) {
            continue;
        }
        let ours = mine(&id);
        let at = [
            info.updated_at.as_deref().and_then(parse_time),
            ours.map(|r| r.at),
        ]
        .into_iter()
        .flatten()
        .max();
        let title = info
            .title
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(one_line)
            .or_else(|| ours.and_then(|r| quoted(r)))
            .unwrap_or_else(|| "(untitled)".to_owned());
        rows.push(Listed {
            id,
            title,
            at,
            prompts: ours.map(|r| r.prompts).filter(|n| *n > 0),
        });
    }
    for r in ours.iter().rev() {
        if rows.iter().any(|row| row.id == r.session_id) {
            continue;
        }
        rows.push(Listed {
            id: r.session_id.clone(),
            title: quoted(r).unwrap_or_else(|| "(untitled)".to_owned()),
            at: Some(r.at),
            prompts: Some(r.prompts).filter(|n| *n > 0),
        });
    }
    // Stable: rows without a time keep their order, after the others.
    rows.sort_by_key(|r| std::cmp::Reverse(r.at.map_or(0, |at| at + 1)));
    rows
}

/// A title on one line, without control characters.
fn one_line(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .filter(|c| !c.is_control())
        .collect()
}

/// The picker's text: a heading, then one numbered row per session.
pub fn listing(rows: &[Listed], cwd: &str, current: &str, now: u64) -> String {
    let mut text = format!("Sessions in {cwd}:");
    for (i, row) in rows.iter().enumerate() {
        let mut parts = vec![row.title.clone()];
        if let Some(at) = row.at {
            parts.push(ago(now, at));
        }
        match row.prompts {
            Some(1) => parts.push("1 prompt".to_owned()),
            Some(n) => parts.push(format!("{n} prompts")),
            None => {}
        }
        parts.push(row.id.clone());
        text.push_str(&format!("\n  {}) {}", i + 1, parts.join(" · ")));
        if row.id == current {
            text.push_str(" (this session)");
        }
    }
    text
}

/// What an answer to "Open which?" chooses among `count` rows: nothing
/// (empty), a row (its index), or an error saying what was wrong.
pub fn parse_choice(answer: &str, count: usize) -> Result<Option<usize>, String> {
    let answer = answer.trim();
    if answer.is_empty() {
        return Ok(None);
    }
    let range = if count == 1 {
        "1".to_owned()
    } else {
        format!("1-{count}")
    };
    match answer.parse::<u64>() {
        Ok(n) if n >= 1 && n <= count as u64 => Ok(Some(n as usize - 1)),
        Ok(n) => Err(format!("there is no session {n} in the list ({range})")),
        Err(_) => Err(format!(
            "`{}` is not a number from the list ({range})",
            one_line(answer)
        )),
    }
}

/// How long ago `at` was, for people: `just now`, `3 min ago`, `5 h ago`,
/// `2 days ago`, or the date (`on 2025-01-02`) after 30 days.
pub fn ago(now: u64, at: u64) -> String {
    let s = now.saturating_sub(at);
    match s {
        0..60 => "just now".to_owned(),
        60..3600 => format!("{} min ago", s / 60),
        3600..86_400 => format!("{} h ago", s / 3600),
        86_400..172_800 => "yesterday".to_owned(),
        172_800..2_592_000 => format!("{} days ago", s / 86_400),
        _ => {
            let day = i64::try_from(at)
                .ok()
                .and_then(|s| Timestamp::from_second(s).ok())
                .unwrap_or(Timestamp::MAX);
            format!("on {}", day.strftime("%Y-%m-%d"))
        }
    }
}

/// An RFC 3339 time (`2025-01-02T03:04:05Z`, with optional fraction and a
/// `Z` or `±HH:MM` offset; jiff also reads the other ISO 8601 forms that
/// carry an offset) in seconds since the epoch.
pub fn parse_time(text: &str) -> Option<u64> {
    let at: Timestamp = text.trim().parse().ok()?;
    u64::try_from(at.as_second()).ok()
}

impl Chat<'_> {
    /// `/sessions [N]`: the picker (see the module docs).
    pub(super) async fn sessions(&mut self, args: &[&str]) -> Result<(), Failure> {
        if args.len() > 1 {
            self.error("usage: /sessions, or /sessions N to open number N");
            return Ok(());
        }
        let cwd = self.setup.cwd.to_string_lossy().into_owned();
        let lists = self.opened.caps.session_capabilities.list.is_some();
        let (listed, more) = if lists {
            self.list_pages(&cwd).await?
        } else {
            (Vec::new(), false)
        };
        let ours = self
            .recent
            .as_deref()
            .map(crate::session::recent::read)
            .unwrap_or_default();
        let rows = merge(&listed, &ours, &cwd, &self.label);
        let mut text = if rows.is_empty() {
            format!("No sessions in {cwd}.")
        } else {
            let current = self.opened.session_id.to_string();
            listing(&rows, &cwd, &current, crate::session::recent::now())
        };
        if more {
            text.push_str("\n  (more sessions not shown)");
        }
        if !lists {
            text.push_str(
                "\n  (the agent does not list its sessions: these are the ones acp had here)",
            );
        }
        self.say(&text);
        if rows.is_empty() {
            return Ok(());
        }
        let answer = match args.first() {
            Some(n) => n.to_string(),
            None => match self.ask_which(rows.len()).await {
                Some(answer) => answer,
                None => {
                    self.say("No session opened (/sessions N opens number N).");
                    return Ok(());
                }
            },
        };
        match parse_choice(&answer, rows.len()) {
            Ok(None) => self.say("No session opened."),
            Ok(Some(i)) if rows[i].id == self.opened.session_id.to_string() => {
                self.say(&format!("Already in session {}.", rows[i].id));
            }
            Ok(Some(i)) => {
                let id = rows[i].id.clone();
                self.open_session(&id).await?;
            }
            Err(why) => self.error(&format!(
                "{why}; no session opened, still in {}",
                self.opened.session_id
            )),
        }
        Ok(())
    }

    /// The agent's sessions in `cwd`, following `nextCursor` from page to
    /// page (at most [`MAX_SESSION_PAGES`] pages; a cursor seen before ends
    /// the listing), and whether there were more. A failed request is
    /// shown as an error and ends the listing.
    async fn list_pages(&mut self, cwd: &str) -> Result<(Vec<SessionInfo>, bool), Failure> {
        let conn = self.opened.conn.clone();
        let mut sessions = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = std::collections::HashSet::new();
        for page in 0.. {
            if page == MAX_SESSION_PAGES {
                return Ok((sessions, true));
            }
            let mut request = ListSessionsRequest::new();
            request.cwd = Some(cwd.to_owned());
            if let Some(cursor) = &cursor {
                request = request.cursor(cursor.clone());
            }
            let Some(response) = self
                .request("session/list", conn.list_sessions(request))
                .await?
            else {
                return Ok((sessions, page > 0));
            };
            sessions.extend(response.sessions);
            match response.next_cursor {
                Some(next) if seen.insert(next.clone()) => cursor = Some(next),
                _ => break,
            }
        }
        Ok((sessions, false))
    }

    /// Asks on the terminal which of `count` rows to open; `None` when
    /// there is no terminal, at end of input, or on Ctrl-C.
    async fn ask_which(&mut self, count: usize) -> Option<String> {
        let abort = Arc::new(AtomicBool::new(false));
        let flag = abort.clone();
        let range = if count == 1 {
            "1".to_owned()
        } else {
            format!("1-{count}")
        };
        let prompt = format!("Open which? [{range}, Enter: none] ");
        let mut question = tokio::task::spawn_blocking(move || {
            Tty::open(flag).and_then(|mut tty| tty.ask(&prompt))
        });
        tokio::select! {
            answer = &mut question => answer.ok().flatten(),
            _ = self.session.interrupts.recv() => {
                abort.store(true, Ordering::Relaxed);
                // Gone within one poll, so it cannot take the next line.
                let _ = question.await;
                println!();
                None
            }
        }
    }

    /// `/load ID`, or a choice of `/sessions`: loads the session (the
    /// agent replays it into the transcript), or resumes it when the agent
    /// cannot load. A unique prefix of an ID acp recorded stands for it.
    pub(super) async fn open_session(&mut self, given: &str) -> Result<(), Failure> {
        let caps = self.opened.caps.clone();
        let load = caps.load_session;
        let resume = caps.session_capabilities.resume.is_some();
        if !load && !resume {
            self.error("the agent can neither load nor resume sessions");
            return Ok(());
        }
        let known: Vec<String> = self
            .recent
            .as_deref()
            .map(crate::session::recent::read)
            .unwrap_or_default()
            .into_iter()
            .map(|r| r.session_id)
            .collect();
        let id = match crate::session::recent::expand(given, &known) {
            Ok(id) => id,
            Err(why) => {
                self.error(why.trim_start_matches("--session "));
                return Ok(());
            }
        };
        let cwd = self.setup.cwd.to_string_lossy().into_owned();
        let dirs: Option<Vec<String>> = (!self.setup.add_dirs.is_empty()
            && caps.session_capabilities.additional_directories.is_some())
        .then(|| {
            self.setup
                .add_dirs
                .iter()
                .map(|d| d.to_string_lossy().into_owned())
                .collect()
        });
        let conn = self.opened.conn.clone();
        let (modes, config_options, models, how) = if load {
            let mut request = LoadSessionRequest::new(id.as_str(), cwd);
            if let Some(dirs) = dirs {
                request = request.additional_directories(dirs);
            }
            self.say(&format!("Loading session {id}…"));
            let Some(response) = self
                .request("session/load", conn.load_session(request))
                .await?
            else {
                return Ok(());
            };
            // The replay is over: what it left open is committed.
            self.client().with_view(|v| v.end_turn());
            (
                response.modes,
                response.config_options,
                response.models,
                How::Loaded,
            )
        } else {
            let mut request = ResumeSessionRequest::new(id.as_str(), cwd);
            if let Some(dirs) = dirs {
                request = request.additional_directories(dirs);
            }
            let Some(response) = self
                .request("session/resume", conn.resume_session(request))
                .await?
            else {
                return Ok(());
            };
            (
                response.modes,
                response.config_options,
                response.models,
                How::Resumed,
            )
        };
        self.opened.session_id = SessionId::new(id.as_str());
        self.opened.how = how;
        self.opened.modes = modes;
        self.opened.config_options = config_options;
        self.opened.models = models;
        self.adopt_state();
        self.remember_session();
        self.transcript(|t| {
            if how == How::Resumed {
                t.note(RESUMED_NOTE);
            }
            t.note(&format!("[session] {id}"));
        });
        Ok(())
    }
}

/// Said when a session is resumed, which replays nothing.
pub(super) const RESUMED_NOTE: &str =
    "[session] resumed: the agent replays nothing, so earlier turns are not shown";

#[cfg(test)]
mod tests {
    use super::*;

    fn ours(id: &str, at: u64, prompts: u64, title: Option<&str>) -> Recent {
        Recent {
            cwd: "/w".into(),
            agent: "a".into(),
            session_id: id.into(),
            at,
            prompts,
            title: title.map(Into::into),
        }
    }

    #[test]
    fn times_are_read_and_told() {
        assert_eq!(parse_time("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_time("2025-01-02T03:04:05Z"), Some(1_735_787_045));
        assert_eq!(parse_time("2025-01-02T03:04:05.123Z"), Some(1_735_787_045));
        assert_eq!(parse_time("2025-01-02T05:04:05+02:00"), Some(1_735_787_045));
        assert_eq!(parse_time("2025-01-02T01:04:05-02:00"), Some(1_735_787_045));
        assert_eq!(parse_time("2024-02-29T00:00:00Z"), Some(1_709_164_800));
        for bad in [
            "",
            "yesterday",
            "2025-13-02T03:04:05Z",
            "2025-01-02",
            "2025-01-02T03:04:05",
        ] {
            assert_eq!(parse_time(bad), None, "{bad}");
        }
        let now = 1_735_787_045;
        assert_eq!(ago(now, now - 5), "just now");
        assert_eq!(ago(now, now - 185), "3 min ago");
        assert_eq!(ago(now, now - 5 * 3600), "5 h ago");
        assert_eq!(ago(now, now - 90_000), "yesterday");
        assert_eq!(ago(now, now - 3 * 86_400), "3 days ago");
        assert_eq!(ago(now, 1_709_164_800), "on 2024-02-29");
        // A clock that went back is "just now", not a panic.
        assert_eq!(ago(now, now + 100), "just now");
    }

    #[test]
    fn the_agents_list_and_acps_record_are_merged_newest_first() {
        let now = 1_735_787_045;
        let listed = vec![
            SessionInfo::new("s-old", "/w")
                .title("Fix the parser")
                .updated_at("2024-02-29T00:00:00Z"),
            SessionInfo::new("s-mine", "/w"),
            SessionInfo::new("s-elsewhere", "/other").title("Not here"),
            SessionInfo::new("s-untimed", "/w").title("  Two\nlines  "),
        ];
        let record = vec![
            ours("s-mine", now - 185, 3, Some("add a test")),
            ours("s-only-ours", now - 7200, 1, None),
            Recent {
                agent: "another agent".into(),
                ..ours("s-other-agent", now, 1, None)
            },
        ];
        let rows = merge(&listed, &record, "/w", "a");
        let text = listing(&rows, "/w", "s-mine", now);
        assert_eq!(
            text,
            "Sessions in /w:\n  \
             1) \"add a test\" · 3 min ago · 3 prompts · s-mine (this session)\n  \
             2) (untitled) · 2 h ago · 1 prompt · s-only-ours\n  \
             3) Fix the parser · on 2024-02-29 · s-old\n  \
             4) Two lines · s-untimed"
        );
    }

    #[test]
    fn choices_are_checked() {
        assert_eq!(parse_choice("2", 3), Ok(Some(1)));
        assert_eq!(parse_choice(" 1 ", 1), Ok(Some(0)));
        assert_eq!(parse_choice("", 3), Ok(None));
        assert_eq!(
            parse_choice("4", 3),
            Err("there is no session 4 in the list (1-3)".into())
        );
        assert_eq!(
            parse_choice("0", 1),
            Err("there is no session 0 in the list (1)".into())
        );
        assert_eq!(
            parse_choice("two", 3),
            Err("`two` is not a number from the list (1-3)".into())
        );
        assert!(parse_choice("99999999999999999999999", 3).is_err());
    }
}
