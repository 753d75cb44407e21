//! Diffs as acp shows them: a unified diff of two texts, and how many
//! lines it adds and removes.

use crate::style::Style;

/// A unified diff of two texts, coloured when `style` is.
pub fn unified_diff(path: &str, old: &str, new: &str, style: Style) -> String {
    let diff = similar::TextDiff::from_lines(old, new);
    let mut out = String::new();
    out.push_str(&style.bold(&format!("--- {path}")));
    out.push('\n');
    out.push_str(&style.bold(&format!("+++ {path}")));
    out.push('\n');
    for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
        out.push_str(&style.cyan(&hunk.header().to_string()));
        out.push('\n');
        for change in hunk.iter_changes() {
            let value = change.value();
            let value = value.strip_suffix('\n').unwrap_or(value);
            let line = match change.tag() {
                similar::ChangeTag::Insert => style.green(&format!("+{value}")),
                similar::ChangeTag::Delete => style.red(&format!("-{value}")),
                similar::ChangeTag::Equal => format!(" {value}"),
            };
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// Lines added and removed between two texts.
pub fn diff_stat(old: &str, new: &str) -> (usize, usize) {
    let diff = similar::TextDiff::from_lines(old, new);
    let mut added = 0;
    let mut removed = 0;
    for change in diff.iter_all_changes() {
        match change.tag() {
            similar::ChangeTag::Insert => added += 1,
            similar::ChangeTag::Delete => removed += 1,
            similar::ChangeTag::Equal => {}
        }
    }
    (added, removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_is_unified() {
        let text = unified_diff(
            "f.txt",
            "one\ntwo\nthree\n",
            "one\n2\nthree\nfour\n",
            Style::new(false),
        );
        assert_eq!(
            text,
            "--- f.txt\n+++ f.txt\n@@ -1,3 +1,4 @@\n one\n-two\n+2\n three\n+four\n"
        );
    }

    #[test]
    fn diff_stats() {
        assert_eq!(diff_stat("a\nb\nc\n", "a\nB\nc\nd\n"), (2, 1));
        assert_eq!(diff_stat("", "x\n"), (1, 0));
    }
}
