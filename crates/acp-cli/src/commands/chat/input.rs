//! The line editor's helpers for `acp chat`: tab completion of slash
//! commands and `@` paths, and the validator that makes Enter after a
//! trailing backslash start a new line.

use super::BUILTINS;
use crate::view::Commands;
use rustyline::completion::{Completer, Pair};
use rustyline::validate::{ValidationContext, ValidationResult};
use std::path::{Path, PathBuf};
use std::sync::PoisonError;

/// A line as typed, with each backslash that ended a line (Enter after a
/// trailing `\`) removed.
pub fn join_continued(line: &str) -> String {
    line.replace("\\\n", "\n")
}

/// Tab completion of slash commands (built-in and the agent's) and of
/// `@` paths under the session's directories.
pub(super) struct ChatHelper {
    pub(super) commands: Commands,
    /// The session's directory, then the added ones.
    pub(super) roots: Vec<PathBuf>,
}

impl ChatHelper {
    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = BUILTINS.iter().map(|(n, _)| (*n).to_owned()).collect();
        names.extend(
            self.commands
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .iter()
                .map(|c| c.name.clone()),
        );
        names.sort();
        names.dedup();
        names
    }
}

/// The completions of `line` up to `pos`: command names when the line is a
/// slash followed by a partial name.
pub fn complete_command(names: &[String], line: &str, pos: usize) -> Vec<String> {
    let before = &line[..pos];
    match before.strip_prefix('/') {
        Some(partial) if !partial.contains(char::is_whitespace) => names
            .iter()
            .filter(|n| n.starts_with(partial))
            .map(|n| format!("/{n} "))
            .collect(),
        _ => Vec::new(),
    }
}

/// The completions of an `@` path ending at `pos`: where the word starts
/// and the candidates (display, replacement). Paths are relative to the
/// first root where the directory part exists, or absolute; hidden files
/// only when the name typed starts with a dot; directories end with `/`.
pub fn complete_path(roots: &[PathBuf], line: &str, pos: usize) -> Option<(usize, Vec<Pair>)> {
    let before = &line[..pos];
    let start = before.rfind(char::is_whitespace).map_or(0, |i| {
        i + before[i..].chars().next().map_or(1, char::len_utf8)
    });
    let partial = before[start..].strip_prefix('@')?;
    let (dir_part, name_part) = match partial.rfind('/') {
        Some(i) => (&partial[..=i], &partial[i + 1..]),
        None => ("", partial),
    };
    let dir = if Path::new(dir_part).is_absolute() {
        PathBuf::from(dir_part)
    } else {
        roots
            .iter()
            .map(|r| r.join(dir_part))
            .find(|d| d.is_dir())?
    };
    let mut pairs: Vec<Pair> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            if !name.starts_with(name_part)
                || (name.starts_with('.') && !name_part.starts_with('.'))
            {
                return None;
            }
            let is_dir = entry.path().is_dir();
            let shown = if is_dir { format!("{name}/") } else { name };
            let replacement = if is_dir {
                format!("@{dir_part}{shown}")
            } else {
                format!("@{dir_part}{shown} ")
            };
            Some(Pair {
                display: shown,
                replacement,
            })
        })
        .collect();
    pairs.sort_by(|a, b| a.display.cmp(&b.display));
    Some((start, pairs))
}

impl Completer for ChatHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        if let Some(found) = complete_path(&self.roots, line, pos) {
            return Ok(found);
        }
        let pairs = complete_command(&self.names(), line, pos)
            .into_iter()
            .map(|c| Pair {
                display: c.trim_end().to_owned(),
                replacement: c,
            })
            .collect();
        Ok((0, pairs))
    }
}

impl rustyline::hint::Hinter for ChatHelper {
    type Hint = String;
}
impl rustyline::highlight::Highlighter for ChatHelper {}
/// Enter after a trailing backslash goes on to a new line.
impl rustyline::validate::Validator for ChatHelper {
    fn validate(&self, ctx: &mut ValidationContext<'_>) -> rustyline::Result<ValidationResult> {
        Ok(if ctx.input().ends_with('\\') {
            ValidationResult::Incomplete
        } else {
            ValidationResult::Valid(None)
        })
    }
}
impl rustyline::Helper for ChatHelper {}
