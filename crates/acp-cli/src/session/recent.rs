//! The sessions `acp chat` had, by directory and agent, so that
//! `acp chat --continue` can pick the last one up and `--session` can take
//! a unique prefix of an ID.
//!
//! They are kept in `<state dir>/acp/sessions.jsonl`, one JSON object per
//! line (`cwd`, `agent`, `sessionId`, `at` in seconds since the epoch, and
//! once a prompt was sent `prompts`, how many acp sent, and `title`, the
//! first line of the first), newest last, at most [`KEEP`] of them. The file is rewritten whole
//! through a temporary file renamed over it, so a crash leaves the old list
//! or the new one, never half of one; two chats writing at once may lose
//! one of their entries, not the file. A line that does not decode is
//! skipped.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// How many sessions the file keeps.
pub const KEEP: usize = 200;

/// One session acp had.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Recent {
    /// The session's directory.
    pub cwd: String,
    /// The agent, as the config names it or as its command line.
    pub agent: String,
    /// The session.
    pub session_id: String,
    /// When it was last opened or prompted, in seconds since the epoch.
    pub at: u64,
    /// How many prompts acp sent in it (only those: not other clients').
    #[serde(default, skip_serializing_if = "is_zero")]
    pub prompts: u64,
    /// The first line of the first prompt acp sent in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The longest title kept, in characters.
pub const TITLE_CHARS: usize = 80;

/// Where the list is kept.
pub fn path() -> Option<PathBuf> {
    crate::config::paths::state_dir().map(|dir| dir.join("sessions.jsonl"))
}

/// The sessions in the file at `path`, oldest first (none when it is
/// missing or unreadable).
pub fn read(path: &Path) -> Vec<Recent> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// Records that `entry` was opened now: it moves to the end of the list,
/// keeping the prompt count and title recorded before.
pub fn record(path: &Path, entry: Recent) -> std::io::Result<()> {
    rewrite(path, |list| {
        let mut entry = entry;
        if let Some(old) = take(list, &entry.agent, &entry.session_id) {
            entry.prompts = entry.prompts.max(old.prompts);
            entry.title = entry.title.or(old.title);
        }
        list.push(entry);
    })
}

/// Records that acp sent `prompt` in the session `entry` names: one more
/// prompt, and the title if it had none.
pub fn prompted(path: &Path, entry: Recent, prompt: &str) -> std::io::Result<()> {
    rewrite(path, |list| {
        let mut entry = entry;
        if let Some(old) = take(list, &entry.agent, &entry.session_id) {
            entry.prompts = old.prompts;
            entry.title = old.title;
        }
        entry.prompts += 1;
        if entry.title.is_none() {
            let first = prompt.lines().map(str::trim).find(|l| !l.is_empty());
            entry.title = first.map(|l| l.chars().take(TITLE_CHARS).collect());
        }
        list.push(entry);
    })
}

fn take(list: &mut Vec<Recent>, agent: &str, id: &str) -> Option<Recent> {
    let at = list
        .iter()
        .position(|r| r.session_id == id && r.agent == agent)?;
    Some(list.remove(at))
}

/// Changes the list with `change`, keeps the newest [`KEEP`], and writes it
/// through a temporary file renamed over the old one.
fn rewrite(path: &Path, change: impl FnOnce(&mut Vec<Recent>)) -> std::io::Result<()> {
    let mut list = read(path);
    change(&mut list);
    let skip = list.len().saturating_sub(KEEP);
    let mut text = String::new();
    for r in &list[skip..] {
        if let Ok(line) = serde_json::to_string(r) {
            text.push_str(&line);
            text.push('\n');
        }
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut file, text.as_bytes())?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The last session with `agent` in `cwd`.
pub fn last(list: &[Recent], cwd: &str, agent: &str) -> Option<Recent> {
    list.iter()
        .rev()
        .find(|r| r.cwd == cwd && r.agent == agent)
        .cloned()
}

/// What a `--session` value names, given the IDs known: itself when it is
/// one of them or no known ID starts with it; the ID when exactly one
/// starts with it; an error listing them when several do.
pub fn expand(prefix: &str, known: &[String]) -> Result<String, String> {
    if prefix.is_empty() || known.iter().any(|k| k == prefix) {
        return Ok(prefix.to_owned());
    }
    let mut matches: Vec<&String> = known.iter().filter(|k| k.starts_with(prefix)).collect();
    matches.sort();
    matches.dedup();
    match matches.as_slice() {
        [] => Ok(prefix.to_owned()),
        [one] => Ok((*one).clone()),
        many => Err(format!(
            "--session {prefix} could be any of {}; give more of the ID",
            many.iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Seconds since the epoch, now.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(cwd: &str, agent: &str, id: &str) -> Recent {
        Recent {
            cwd: cwd.into(),
            agent: agent.into(),
            session_id: id.into(),
            at: 1,
            prompts: 0,
            title: None,
        }
    }

    #[test]
    fn the_last_session_here_with_this_agent() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/sessions.jsonl");
        record(&path, entry("/a", "x", "s1")).unwrap();
        record(&path, entry("/b", "x", "s2")).unwrap();
        record(&path, entry("/a", "y", "s3")).unwrap();
        // A broken line is skipped, not fatal.
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{not json\n");
        std::fs::write(&path, text).unwrap();
        let list = read(&path);
        assert_eq!(list.len(), 3);
        assert_eq!(last(&list, "/a", "x").unwrap().session_id, "s1");
        assert_eq!(last(&list, "/a", "y").unwrap().session_id, "s3");
        assert!(last(&list, "/c", "x").is_none());
        // Opening s1 again makes it the newest; it is kept once.
        record(&path, entry("/a", "x", "s1")).unwrap();
        let list = read(&path);
        assert_eq!(list.len(), 3);
        assert_eq!(list.last().unwrap().session_id, "s1");
    }

    #[test]
    fn prompts_are_counted_and_the_first_is_the_title() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions.jsonl");
        record(&path, entry("/a", "x", "s1")).unwrap();
        prompted(
            &path,
            entry("/a", "x", "s1"),
            "\n  fix the parser  \nplease",
        )
        .unwrap();
        prompted(&path, entry("/a", "x", "s1"), "and the tests").unwrap();
        // Opening it again keeps both.
        record(&path, entry("/a", "x", "s1")).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "{\"cwd\":\"/a\",\"agent\":\"x\",\"sessionId\":\"s1\",\"at\":1,\"prompts\":2,\"title\":\"fix the parser\"}\n"
        );
        // A line written before these fields existed still reads.
        std::fs::write(
            &path,
            "{\"cwd\":\"/a\",\"agent\":\"x\",\"sessionId\":\"s2\",\"at\":5}\n",
        )
        .unwrap();
        let list = read(&path);
        assert_eq!(list[0].prompts, 0);
        assert_eq!(list[0].title, None);
    }

    #[test]
    fn the_list_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions.jsonl");
        for i in 0..KEEP + 5 {
            record(&path, entry("/a", "x", &format!("s{i}"))).unwrap();
        }
        let list = read(&path);
        assert_eq!(list.len(), KEEP);
        assert_eq!(list[0].session_id, "s5");
    }

    #[test]
    fn prefixes_expand_when_unique() {
        let known = vec![
            "sess-18ed37c6d833a1f3-15551-0".to_owned(),
            "sess-18ed37c6d833a1f3-15551-1".to_owned(),
            "other-1".to_owned(),
        ];
        assert_eq!(expand("oth", &known).unwrap(), "other-1");
        assert_eq!(expand("other-1", &known).unwrap(), "other-1");
        assert_eq!(expand("nope", &known).unwrap(), "nope");
        let err = expand("sess-18ed", &known).unwrap_err();
        assert!(err.contains("sess-18ed37c6d833a1f3-15551-0, sess-18ed37c6d833a1f3-15551-1"));
        assert_eq!(
            expand("sess-18ed37c6d833a1f3-15551-1", &known).unwrap(),
            "sess-18ed37c6d833a1f3-15551-1"
        );
    }
}
