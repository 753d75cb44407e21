//! `--help` text as people read it: wrapped at the terminal's width, on
//! word boundaries.

use crate::common;
use common::*;

#[test]
fn help_is_wrapped_on_word_boundaries() {
    let sb = Sandbox::new();
    for width in [40usize, 60, 100] {
        let mut command = sb.command(&["exec", "--help"]);
        command.env("COLUMNS", width.to_string());
        let out = sb.output(command.output().unwrap());
        assert_code(&out, 0);
        for line in out.stdout.lines() {
            let long = line.chars().count() > width;
            // Only a single word too long for the width may overflow.
            assert!(
                !long || line.split_whitespace().count() == 1,
                "{width}: {line:?}"
            );
        }
        // No word is cut: a phrase of the prompt's help is there whole once
        // the lines are joined.
        let joined = out.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            joined.contains("read from standard input when absent or \"-\""),
            "{width}: {joined}"
        );
    }
}
