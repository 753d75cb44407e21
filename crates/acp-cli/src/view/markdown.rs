//! The parts of chat's light markdown: tables, list items with a hanging
//! indent, links, inline emphasis and code, and the highlighting of fenced
//! code. [`crate::view::chat`] decides what a line is and calls these; they
//! only lay text out.
//!
//! - A table (a header row, a delimiter row `|---|:--:|`, body rows) is
//!   drawn with box characters, each column as wide as its widest cell and
//!   aligned as the delimiter row says. When it is wider than the terminal,
//!   the widest columns give way and their cells wrap on word boundaries.
//! - A list item (`1.`, `1)`, `-`, `*`, `+`) is wrapped to the terminal's
//!   width on word boundaries, its continuation rows under the text, not
//!   under the marker.
//! - A link `[text](url)` is an OSC 8 hyperlink where the terminal shows
//!   them ([`hyperlinks`]), else `text (url)`; a link whose text is its URL
//!   is the URL alone.

use crate::style::Style;
use std::sync::OnceLock;
use syntect::easy::HighlightLines;
use syntect::highlighting::{Theme, ThemeSet};
use syntect::parsing::SyntaxSet;
use unicode_width::UnicodeWidthChar;

/// How a table column is aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Align {
    Left,
    Center,
    Right,
}

/// Whether `line` can be a row of a table (it starts with `|`).
pub fn is_table_row(line: &str) -> bool {
    line.trim_start().starts_with('|')
}

/// The cells of a table row: split at `|` (not `\|`, not inside a code
/// span), without the outer pipes, trimmed.
fn cells(line: &str) -> Vec<String> {
    let line = line.trim();
    let line = line.strip_prefix('|').unwrap_or(line);
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut in_code = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cell.push('|');
                chars.next();
            }
            '`' => {
                in_code = !in_code;
                cell.push(c);
            }
            '|' if !in_code => cells.push(std::mem::take(&mut cell).trim().to_owned()),
            _ => cell.push(c),
        }
    }
    if !cell.trim().is_empty() {
        cells.push(cell.trim().to_owned());
    }
    cells
}

/// The alignments of a delimiter row (`|---|:--:|--:|`), or `None` when
/// the row is not one.
fn delimiters(line: &str) -> Option<Vec<Align>> {
    let cells = cells(line);
    if cells.is_empty() {
        return None;
    }
    cells
        .iter()
        .map(|c| {
            let dashes = c.trim_matches(':');
            if dashes.is_empty() || !dashes.chars().all(|ch| ch == '-') {
                return None;
            }
            Some(match (c.starts_with(':'), c.ends_with(':')) {
                (true, true) => Align::Center,
                (false, true) => Align::Right,
                _ => Align::Left,
            })
        })
        .collect()
}

/// `rows` (the lines of a table as written) drawn as a box at most `width`
/// columns wide where it can be; `None` when they are not a table (no
/// delimiter row second). `inline` renders a cell's text (emphasis, code,
/// links).
pub fn table(
    rows: &[String],
    width: usize,
    style: Style,
    inline: &dyn Fn(&str) -> String,
) -> Option<Vec<String>> {
    let aligns = delimiters(rows.get(1)?)?;
    let n = aligns.len();
    let parse = |line: &str| -> Vec<String> {
        let mut c: Vec<String> = cells(line).iter().map(|t| inline(t)).collect();
        c.resize(n, String::new());
        c.truncate(n);
        c
    };
    let head = parse(&rows[0]);
    let body: Vec<Vec<String>> = rows[2..].iter().map(|r| parse(r)).collect();
    let mut widths: Vec<usize> = (0..n)
        .map(|i| {
            std::iter::once(&head)
                .chain(&body)
                .map(|r| visible_width(&r[i]))
                .max()
                .unwrap_or(0)
                .max(3)
        })
        .collect();
    // Borders: `│ ` before each cell, ` ` after, and the last `│`.
    let frame = 3 * n + 1;
    let room = width.saturating_sub(frame);
    const NARROWEST: usize = 6;
    while widths.iter().sum::<usize>() > room {
        let (i, w) = widths
            .iter()
            .copied()
            .enumerate()
            .max_by_key(|(i, w)| (*w, std::cmp::Reverse(*i)))
            .unwrap_or((0, 0));
        if w <= NARROWEST {
            break;
        }
        widths[i] = w - 1;
    }
    let rule = |left: &str, mid: &str, right: &str| {
        let parts: Vec<String> = widths.iter().map(|w| "─".repeat(w + 2)).collect();
        style.dim(&format!("{left}{}{right}", parts.join(mid)))
    };
    let bar = style.dim("│");
    let draw = |row: &[String], bold: bool, out: &mut Vec<String>| {
        let wrapped: Vec<Vec<String>> = row
            .iter()
            .zip(&widths)
            .map(|(text, w)| wrap_words(text, *w))
            .collect();
        let height = wrapped.iter().map(Vec::len).max().unwrap_or(1).max(1);
        for line in 0..height {
            let mut text = bar.clone();
            for (i, w) in widths.iter().enumerate() {
                let cell = wrapped[i].get(line).map(String::as_str).unwrap_or("");
                let cell = if bold {
                    style.bold(cell)
                } else {
                    cell.to_owned()
                };
                let pad = w.saturating_sub(visible_width(&cell));
                let (before, after) = match aligns[i] {
                    Align::Left => (0, pad),
                    Align::Right => (pad, 0),
                    Align::Center => (pad / 2, pad - pad / 2),
                };
                text.push_str(&format!(
                    " {}{cell}{} {bar}",
                    " ".repeat(before),
                    " ".repeat(after)
                ));
            }
            out.push(text);
        }
    };
    let mut out = vec![rule("┌", "┬", "┐")];
    draw(&head, true, &mut out);
    out.push(rule("├", "┼", "┤"));
    for row in &body {
        draw(row, false, &mut out);
    }
    out.push(rule("└", "┴", "┘"));
    Some(out)
}

/// A list item's parts: its indent, its marker (`1.`, `2)`, `-`…) and its
/// text; `None` when `line` is not a list item.
pub fn list_item(line: &str) -> Option<(&str, &str, &str)> {
    let trimmed = line.trim_start();
    let indent = &line[..line.len() - trimmed.len()];
    let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
    let marker_len = if digits > 0 && digits <= 9 {
        match trimmed.as_bytes().get(digits) {
            Some(b'.' | b')') => digits + 1,
            _ => return None,
        }
    } else if matches!(trimmed.as_bytes().first(), Some(b'-' | b'*' | b'+')) {
        1
    } else {
        return None;
    };
    let rest = &trimmed[marker_len..];
    let text = rest.strip_prefix(' ')?;
    Some((indent, &trimmed[..marker_len], text.trim_start()))
}

/// `text` after `lead` (an indent and a marker), wrapped to `width` on word
/// boundaries, continuation rows indented as far as the text starts.
pub fn hanging(lead: &str, text: &str, width: usize) -> Vec<String> {
    let hang = visible_width(lead);
    let rows = wrap_words(text, width.saturating_sub(hang).max(10));
    rows.into_iter()
        .enumerate()
        .map(|(i, row)| {
            if i == 0 {
                format!("{lead}{row}")
            } else {
                format!("{}{row}", " ".repeat(hang))
            }
        })
        .collect()
}

/// `text` in rows of at most `width` visible columns, broken between words
/// (a word longer than a row is broken inside). Escape sequences take no
/// room; at least one row.
pub fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut rows = vec![String::new()];
    let mut used = 0;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let w = visible_width(word);
        if used > 0 && used + 1 + w > width {
            rows.push(String::new());
            used = 0;
        }
        let row = rows.last_mut().expect("at least one row");
        if used > 0 {
            row.push(' ');
            used += 1;
        }
        if w <= width - used {
            row.push_str(word);
            used += w;
            continue;
        }
        // Too long for any row: broken where the row ends.
        for (piece, escape) in pieces(word) {
            let row = rows.last_mut().expect("at least one row");
            if escape {
                row.push_str(piece);
                continue;
            }
            let cw = piece.chars().next().and_then(|c| c.width()).unwrap_or(0);
            if used + cw > width && used > 0 {
                rows.push(String::new());
                used = 0;
            }
            rows.last_mut().expect("at least one row").push_str(piece);
            used += cw;
        }
    }
    rows
}

/// A text split into single characters and whole escape sequences (CSI
/// `ESC [ … final`, OSC `ESC ] … ST`), each marked whether it is one.
fn pieces(text: &str) -> Vec<(&str, bool)> {
    let mut out = Vec::new();
    let mut i = 0;
    let b = text.as_bytes();
    while i < text.len() {
        if b[i] == 0x1b {
            let end = match b.get(i + 1) {
                Some(b'[') => {
                    let mut j = i + 2;
                    while j < b.len() && !(0x40..=0x7e).contains(&b[j]) {
                        j += 1;
                    }
                    (j + 1).min(b.len())
                }
                Some(b']') => {
                    // Ends at ESC \ or BEL.
                    let mut j = i + 2;
                    loop {
                        match b.get(j) {
                            None => break b.len(),
                            Some(0x07) => break j + 1,
                            Some(0x1b) if b.get(j + 1) == Some(&b'\\') => break j + 2,
                            _ => j += 1,
                        }
                    }
                }
                _ => (i + 1).min(b.len()),
            };
            out.push((&text[i..end], true));
            i = end;
            continue;
        }
        let len = text[i..].chars().next().map_or(1, char::len_utf8);
        out.push((&text[i..i + len], false));
        i += len;
    }
    out
}

/// The terminal's width in columns (standard output's; 80 when it is not
/// a terminal or says 0).
pub fn terminal_columns() -> usize {
    terminal_size::terminal_size_of(std::io::stdout())
        .map(|(w, _)| w.0 as usize)
        .filter(|w| *w > 0)
        .unwrap_or(80)
}

/// How many columns `text` takes on the screen (escape sequences none).
pub fn visible_width(text: &str) -> usize {
    pieces(text)
        .into_iter()
        .filter(|(_, escape)| !escape)
        .map(|(p, _)| p.chars().next().and_then(|c| c.width()).unwrap_or(0))
        .sum()
}

/// `[text](url)` links in `text`: OSC 8 hyperlinks showing `text`
/// (underlined) when `hyperlinks`, else `text (url)`; a link whose text is
/// its URL shows the URL once. Control characters in a URL end it (they
/// could end the escape sequence early).
pub fn links(text: &str, hyperlinks: bool, style: Style) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        let after = &rest[open + 1..];
        let Some(close) = after.find("](") else { break };
        let label = &after[..close];
        let target = &after[close + 2..];
        let Some(end) = target.find(')') else { break };
        let url = &target[..end];
        if label.contains('[') || url.is_empty() || url.contains(char::is_whitespace) {
            out.push_str(&rest[..open + 1]);
            rest = after;
            continue;
        }
        out.push_str(&rest[..open]);
        let url: String = url.chars().filter(|c| !c.is_control()).collect();
        let shown = if label.is_empty() {
            url.as_str()
        } else {
            label
        };
        if hyperlinks {
            out.push_str(&format!(
                "\x1b]8;;{url}\x1b\\{}\x1b]8;;\x1b\\",
                style.underline(shown)
            ));
        } else if shown == url {
            out.push_str(&url);
        } else {
            out.push_str(&format!("{shown} ({url})"));
        }
        rest = &target[end + 1..];
    }
    out.push_str(rest);
    out
}

/// Whether the terminal shows OSC 8 hyperlinks, from the environment
/// (`var` looks a variable up): `FORCE_HYPERLINK=1` (or `0`) decides;
/// otherwise terminals known to: iTerm2, WezTerm, VS Code, Ghostty, Hyper,
/// Tabby (`TERM_PROGRAM`), kitty (`KITTY_WINDOW_ID` or a `TERM` naming it),
/// foot, Alacritty, Windows Terminal (`WT_SESSION`), Konsole, and VTE
/// terminals (GNOME Terminal…) from VTE 0.50 (`VTE_VERSION` 5000). Not
/// inside tmux or screen, which may not pass them on.
pub fn hyperlinks(var: impl Fn(&str) -> Option<String>) -> bool {
    if let Some(force) = var("FORCE_HYPERLINK") {
        return !matches!(force.trim(), "0" | "false" | "");
    }
    let term = var("TERM").unwrap_or_default();
    if var("TMUX").is_some() || term.starts_with("screen") || term.starts_with("tmux") {
        return false;
    }
    let program = var("TERM_PROGRAM").unwrap_or_default();
    if [
        "iTerm.app",
        "WezTerm",
        "vscode",
        "ghostty",
        "Hyper",
        "Tabby",
    ]
    .contains(&program.as_str())
    {
        return true;
    }
    if var("KITTY_WINDOW_ID").is_some()
        || var("WT_SESSION").is_some()
        || var("KONSOLE_VERSION").is_some()
    {
        return true;
    }
    if ["kitty", "foot", "alacritty", "wezterm", "ghostty"]
        .iter()
        .any(|t| term.contains(t))
    {
        return true;
    }
    var("VTE_VERSION")
        .and_then(|v| v.trim().parse::<u32>().ok())
        .is_some_and(|v| v >= 5000)
}

fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

fn theme() -> &'static Theme {
    static THEME: OnceLock<Theme> = OnceLock::new();
    THEME.get_or_init(|| {
        let mut themes = ThemeSet::load_defaults().themes;
        themes
            .remove("base16-ocean.dark")
            .or_else(|| themes.into_values().next())
            .unwrap_or_default()
    })
}

/// A highlighter for a fenced block whose info string is `info` (its first
/// word names the language: `rust`, `rs`, `python`, `sh`, …), or `None`
/// when the language is missing or unknown.
pub fn highlighter(info: &str) -> Option<HighlightLines<'static>> {
    let lang = info.split_whitespace().next()?;
    let lang = lang.trim_start_matches('{').trim_start_matches('.');
    let lang = lang.split([',', '}']).next().unwrap_or(lang);
    if lang.is_empty() {
        return None;
    }
    let set = syntaxes();
    let syntax = set
        .find_syntax_by_token(lang)
        .or_else(|| set.find_syntax_by_token(&lang.to_ascii_lowercase()))?;
    Some(HighlightLines::new(syntax, theme()))
}

/// One line of code in the theme's colours (24-bit ANSI), ending with a
/// reset; `None` if the highlighter fails.
pub fn highlight(h: &mut HighlightLines<'static>, line: &str) -> Option<String> {
    let with_newline = format!("{line}\n");
    let ranges = h.highlight_line(&with_newline, syntaxes()).ok()?;
    let ranges: Vec<_> = ranges
        .into_iter()
        .map(|(style, text)| (style, text.trim_end_matches('\n')))
        .collect();
    let mut text = syntect::util::as_24_bit_terminal_escaped(&ranges, false);
    text.push_str("\x1b[0m");
    Some(text)
}

/// `**bold**` and `` `code` `` within a line.
pub fn inline(text: &str, style: Style) -> String {
    let mut out = String::new();
    let mut rest = text;
    loop {
        let bold = rest.find("**");
        let code = rest.find('`');
        let (start, marker) = match (bold, code) {
            (Some(b), Some(c)) if c < b => (c, "`"),
            (Some(b), _) => (b, "**"),
            (None, Some(c)) => (c, "`"),
            (None, None) => break,
        };
        let after = &rest[start + marker.len()..];
        let Some(end) = after.find(marker) else { break };
        out.push_str(&rest[..start]);
        let inner = &after[..end];
        out.push_str(&if marker == "`" {
            style.cyan(inner)
        } else {
            style.bold(inner)
        });
        rest = &after[end + marker.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(rows: &[&str], width: usize) -> Vec<String> {
        let rows: Vec<String> = rows.iter().map(|r| (*r).to_owned()).collect();
        table(&rows, width, Style::new(false), &|t| t.to_owned()).unwrap()
    }

    #[test]
    fn a_table_is_drawn_in_aligned_columns() {
        let rows = plain(
            &[
                "| name | size | note |",
                "|------|-----:|:----:|",
                "| alpha | 1 | ok |",
                "| beta gamma | 22 |",
            ],
            80,
        );
        assert_eq!(
            rows.join("\n"),
            "┌────────────┬──────┬──────┐\n\
             │ name       │ size │ note │\n\
             ├────────────┼──────┼──────┤\n\
             │ alpha      │    1 │  ok  │\n\
             │ beta gamma │   22 │      │\n\
             └────────────┴──────┴──────┘"
        );
    }

    #[test]
    fn a_wide_table_wraps_its_widest_cells() {
        let rows = plain(
            &[
                "| key | what it does |",
                "|---|---|",
                "| `a\\|b` | pipes inside code and escaped ones stay in the cell |",
            ],
            30,
        );
        assert_eq!(
            rows.join("\n"),
            "┌───────┬────────────────────┐\n\
             │ key   │ what it does       │\n\
             ├───────┼────────────────────┤\n\
             │ `a|b` │ pipes inside code  │\n\
             │       │ and escaped ones   │\n\
             │       │ stay in the cell   │\n\
             └───────┴────────────────────┘"
        );
        assert!(rows.iter().all(|r| visible_width(r) <= 30), "{rows:?}");
    }

    #[test]
    fn rows_without_a_delimiter_row_are_not_a_table() {
        let rows = vec!["| a | b |".to_owned(), "| c | d |".to_owned()];
        assert!(table(&rows, 80, Style::new(false), &|t| t.to_owned()).is_none());
        assert!(table(&rows[..1], 80, Style::new(false), &|t| t.to_owned()).is_none());
    }

    #[test]
    fn list_items_hang_under_their_text() {
        assert_eq!(list_item("1. first"), Some(("", "1.", "first")));
        assert_eq!(list_item("  12) twelfth"), Some(("  ", "12)", "twelfth")));
        assert_eq!(list_item("- dash"), Some(("", "-", "dash")));
        assert_eq!(
            list_item("2025. was a year"),
            Some(("", "2025.", "was a year"))
        );
        assert_eq!(list_item("1.5 litres"), None);
        assert_eq!(list_item("-x"), None);
        assert_eq!(list_item("**bold**"), None);
        assert_eq!(
            hanging("  3. ", "the third step of the plan, which is long", 24).join("\n"),
            "  3. the third step of\n     the plan, which is\n     long"
        );
        // A word longer than the row is broken.
        assert_eq!(
            wrap_words("see abcdefghijklmnop", 8),
            ["see", "abcdefgh", "ijklmnop"]
        );
    }

    #[test]
    fn links_are_hyperlinks_or_text_and_url() {
        let style = Style::new(false);
        let text =
            "See [the docs](https://example.test/docs) and [https://x.test](https://x.test).";
        assert_eq!(
            links(text, false, style),
            "See the docs (https://example.test/docs) and https://x.test."
        );
        assert_eq!(
            links("[a](https://a.test)", true, style),
            "\x1b]8;;https://a.test\x1b\\a\x1b]8;;\x1b\\"
        );
        // Not links: kept as written.
        for text in ["[x] done", "[a] (b)", "[a](b c)", "a [b](", "[](x)y"] {
            let shown = links(text, false, style);
            if text == "[](x)y" {
                assert_eq!(shown, "xy");
            } else {
                assert_eq!(shown, text);
            }
        }
        // A control character cannot end the escape sequence early.
        assert_eq!(
            links("[a](https://a.test/\x07x)", true, style),
            "\x1b]8;;https://a.test/x\x1b\\a\x1b]8;;\x1b\\"
        );
        assert_eq!(
            visible_width("\x1b]8;;https://a.test\x1b\\ab\x1b]8;;\x1b\\"),
            2
        );
    }

    #[test]
    fn hyperlinks_where_the_terminal_shows_them() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        assert!(hyperlinks(env(&[("TERM_PROGRAM", "iTerm.app")])));
        assert!(hyperlinks(env(&[("TERM", "xterm-kitty")])));
        assert!(hyperlinks(env(&[("VTE_VERSION", "7600")])));
        assert!(!hyperlinks(env(&[("VTE_VERSION", "4600")])));
        assert!(!hyperlinks(env(&[("TERM", "xterm-256color")])));
        assert!(!hyperlinks(env(&[
            ("TERM_PROGRAM", "iTerm.app"),
            ("TMUX", "/tmp/tmux-0/default,1,0")
        ])));
        assert!(hyperlinks(env(&[
            ("FORCE_HYPERLINK", "1"),
            ("TERM", "dumb")
        ])));
        assert!(!hyperlinks(env(&[
            ("FORCE_HYPERLINK", "0"),
            ("TERM_PROGRAM", "WezTerm")
        ])));
    }
}
