//! The sessions `acp chat` had, by directory and agent, so that
//! `acp chat --continue` can pick the last one up and `--session` can take
//! a unique prefix of an ID.
//!
//! They are kept in `<state dir>/acp/sessions.jsonl`, one JSON object per
//! line (`cwd`, `agent`, `sessionId`, `at` in seconds since the epoch),
//! newest last, at most [`KEEP`] of them. The file is rewritten whole
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
    /// When it was last opened, in seconds since the epoch.
    pub at: u64,
}

/// Where the list is kept.
pub fn path() -> Option<PathBuf> {
    crate::chat::state_dir().map(|dir| dir.join("sessions.jsonl"))
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

/// Records that `entry` was opened now: it moves to the end of the list.
pub fn record(path: &Path, entry: Recent) -> std::io::Result<()> {
    let mut list = read(path);
    list.retain(|r| r.session_id != entry.session_id || r.agent != entry.agent);
    list.push(entry);
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
