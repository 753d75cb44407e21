//! Permission requests (`session/request_permission`): the policies that
//! answer them without asking ([`decide`]) and the questions asked on the
//! terminal when the policy is to ask.
//!
//! In chat, a question first shows what is asked ([`Asked`]): the command
//! and its directory, the paths, the diff (the first rows of a long one;
//! `d` shows it whole, through `$PAGER`), then the options. An "always"
//! answer is remembered for its [`Scope`]: the exact command line, else the
//! exact set of paths, else the exact title — with the tool kind — never for
//! the tool kind alone, so one allowed `cat` does not let `rm` run.

use crate::style::Style;
use crate::tty::Tty;
use crate::view::diff::unified_diff;
use acp::schema::*;

/// How permission requests are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PermissionPolicy {
    /// Allow everything (`--approve-all`).
    ApproveAll,
    /// Allow tool calls of kind `read` or `search`, deny the rest
    /// (`--approve-reads`).
    ApproveReads,
    /// Deny everything (`--deny-all`; the default without a terminal).
    DenyAll,
    /// Ask on the controlling terminal.
    Ask,
}

/// What the policy decided for one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Pick this allowing option.
    Allow(PermissionOption),
    /// Pick this rejecting option.
    Reject(PermissionOption),
    /// Answer `cancelled` (no fitting option, or the turn was cancelled).
    Cancel,
}

/// The note saying how a permission request was answered:
/// `[permission] TITLE: allowed (allow_once: Allow)`.
pub fn decision_note(title: &str, decision: &Decision) -> String {
    let what = match decision {
        Decision::Allow(o) => format!("allowed ({}: {})", o.kind, o.name),
        Decision::Reject(o) => format!("denied ({}: {})", o.kind, o.name),
        Decision::Cancel => "cancelled".to_owned(),
    };
    format!("[permission] {title}: {what}")
}

/// Picks the option that carries out `allow` (allow_once before
/// allow_always; reject_once before reject_always).
pub fn pick_option(options: &[PermissionOption], allow: bool) -> Decision {
    let order: [PermissionOptionKind; 2] = if allow {
        [
            PermissionOptionKind::AllowOnce,
            PermissionOptionKind::AllowAlways,
        ]
    } else {
        [
            PermissionOptionKind::RejectOnce,
            PermissionOptionKind::RejectAlways,
        ]
    };
    for kind in order {
        if let Some(option) = options.iter().find(|o| o.kind == kind) {
            return if allow {
                Decision::Allow(option.clone())
            } else {
                Decision::Reject(option.clone())
            };
        }
    }
    Decision::Cancel
}

/// Decides a request under a non-interactive policy; `None` for
/// [`PermissionPolicy::Ask`].
pub fn decide(
    policy: PermissionPolicy,
    kind: Option<&ToolKind>,
    options: &[PermissionOption],
) -> Option<Decision> {
    let allow = match policy {
        PermissionPolicy::ApproveAll => true,
        PermissionPolicy::ApproveReads => matches!(kind, Some(ToolKind::Read | ToolKind::Search)),
        PermissionPolicy::DenyAll => false,
        PermissionPolicy::Ask => return None,
    };
    Some(match pick_option(options, allow) {
        // An approving policy with no allow option still must not hang.
        Decision::Cancel if allow => pick_option(options, false),
        other => other,
    })
}

/// What a permission request asks, as far as acp can tell from the
/// request and the tool call it is about.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Asked {
    /// The tool call's kind.
    pub kind: Option<ToolKind>,
    /// The tool call's title.
    pub title: String,
    /// The command line, for a command (`rawInput.command`, or an
    /// `execute` call's title).
    pub command: Option<String>,
    /// The directory the command runs in (`rawInput.cwd`).
    pub cwd: Option<String>,
    /// The paths it touches (locations and diffs), sorted, no repeats.
    pub paths: Vec<String>,
    /// The diffs it carries: path, old text, new text.
    pub diffs: Vec<(String, Option<String>, String)>,
    /// Text content it carries.
    pub texts: Vec<String>,
}

/// What an "always" answer is remembered for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Scope {
    /// This exact command line.
    Command(String),
    /// These exact paths.
    Paths(Vec<String>),
    /// A call with this exact title.
    Title(String),
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Scope::Command(c) => write!(f, "the command `{c}`"),
            Scope::Paths(p) if p.len() == 1 => write!(f, "{}", p[0]),
            Scope::Paths(p) => write!(f, "{}", p.join(", ")),
            Scope::Title(t) => write!(f, "\"{t}\""),
        }
    }
}

/// A remembered "always" answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Remembered {
    /// The tool kind it holds for.
    pub kind: Option<ToolKind>,
    /// What it holds for.
    pub scope: Scope,
    /// Allow (true) or reject.
    pub allow: bool,
}

impl std::fmt::Display for Remembered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let verb = if self.allow { "allow" } else { "reject" };
        let kind = self
            .kind
            .as_ref()
            .map_or("unknown".to_owned(), |k| k.to_string());
        write!(f, "always {verb} {} ({kind})", self.scope)
    }
}

/// A text field of a JSON object, or its array of texts joined by spaces.
fn text_field(value: Option<&serde_json::Value>, key: &str) -> Option<String> {
    let field = value?.get(key)?;
    if let Some(text) = field.as_str() {
        return Some(text.to_owned());
    }
    let words: Option<Vec<&str>> = field.as_array()?.iter().map(|w| w.as_str()).collect();
    Some(words?.join(" "))
}

impl Asked {
    /// What the request asks: its tool call, completed by what is known of
    /// the call from earlier updates (`known`).
    pub fn new(call: &ToolCallUpdate, known: Option<&ToolCall>) -> Asked {
        let kind = call.kind.clone().or_else(|| known.map(|k| k.kind.clone()));
        let title = call
            .title
            .clone()
            .or_else(|| known.map(|k| k.title.clone()))
            .unwrap_or_else(|| call.tool_call_id.to_string());
        let raw = call
            .raw_input
            .as_ref()
            .or_else(|| known.and_then(|k| k.raw_input.as_ref()))
            .map(RawJson::to_value);
        let raw = raw.as_ref();
        let locations = call
            .locations
            .as_deref()
            .or_else(|| known.map(|k| k.locations.as_slice()))
            .unwrap_or_default();
        let content = call
            .content
            .as_deref()
            .or_else(|| known.map(|k| k.content.as_slice()))
            .unwrap_or_default();
        let command = text_field(raw, "command")
            .or_else(|| text_field(raw, "cmd"))
            .or_else(|| {
                (kind == Some(ToolKind::Execute)).then(|| title.trim_matches('`').to_owned())
            })
            .map(|c| c.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|c| !c.is_empty());
        let cwd = text_field(raw, "cwd");
        let mut paths: Vec<String> = locations.iter().map(|l| l.path.clone()).collect();
        let mut diffs = Vec::new();
        let mut texts = Vec::new();
        for item in content {
            match item {
                ToolCallContent::Diff(d) => {
                    paths.push(d.path.clone());
                    diffs.push((d.path.clone(), d.old_text.clone(), d.new_text.clone()));
                }
                ToolCallContent::Content(c) => {
                    if let ContentBlock::Text(t) = &c.content {
                        texts.push(t.text.clone());
                    }
                }
                _ => {}
            }
        }
        if paths.is_empty()
            && let Some(path) = text_field(raw, "path").or_else(|| text_field(raw, "file_path"))
        {
            paths.push(path);
        }
        paths.sort();
        paths.dedup();
        Asked {
            kind,
            title,
            command,
            cwd,
            paths,
            diffs,
            texts,
        }
    }

    /// What an "always" answer to this request holds for.
    pub fn scope(&self) -> Scope {
        if let Some(command) = &self.command {
            Scope::Command(command.clone())
        } else if !self.paths.is_empty() {
            Scope::Paths(self.paths.clone())
        } else {
            Scope::Title(self.title.clone())
        }
    }

    /// The diffs, unified.
    pub fn diff_text(&self, style: Style) -> String {
        self.diffs
            .iter()
            .map(|(path, old, new)| unified_diff(path, old.as_deref().unwrap_or(""), new, style))
            .collect()
    }

    /// The question's text before the options: the title, the command,
    /// its directory, the paths and the diff (at most `rows` rows of it;
    /// then how to see the rest). True in the second place when the diff
    /// was cut.
    pub fn describe(&self, style: Style, rows: usize) -> (String, bool) {
        let kind = self
            .kind
            .as_ref()
            .map(|k| format!(" ({k})"))
            .unwrap_or_default();
        let mut text = format!(
            "{} {}{kind}\n",
            style.yellow_bold("? Permission:"),
            self.title
        );
        if let Some(command) = &self.command {
            text.push_str(&format!("  {} {}\n", style.dim("$"), style.bold(command)));
        }
        if let Some(cwd) = &self.cwd {
            text.push_str(&format!("  {}\n", style.dim(&format!("in {cwd}"))));
        }
        if self.diffs.is_empty() && self.command.is_none() {
            for path in &self.paths {
                text.push_str(&format!("  {}\n", style.dim(&format!("↳ {path}"))));
            }
        }
        for t in &self.texts {
            for line in t.lines().take(rows) {
                text.push_str(&format!("  {}\n", style.dim(line)));
            }
        }
        let diff = self.diff_text(style);
        let lines: Vec<&str> = diff.lines().collect();
        let cut = lines.len() > rows;
        for line in lines.iter().take(rows) {
            text.push_str(line);
            text.push('\n');
        }
        if cut {
            text.push_str(&style.dim(&format!(
                "  … {} more lines of the diff (d shows it all)\n",
                lines.len() - rows
            )));
        }
        (text, cut)
    }
}

/// How many rows of a diff a question shows: the terminal's height less
/// room for the question, at least 10.
fn diff_rows() -> usize {
    let height = terminal_size::terminal_size_of(std::io::stdout())
        .map(|(_, h)| h.0 as usize)
        .unwrap_or(24);
    height.saturating_sub(12).max(10)
}

/// Shows `text` through `$PAGER` (else `less -R`), or prints it when no
/// pager can be run.
fn page(tty: &mut Tty, text: &str) {
    use std::io::Write as _;
    let pager = std::env::var("PAGER")
        .ok()
        .filter(|p| !p.trim().is_empty())
        .unwrap_or_else(|| "less -R".to_owned());
    let words = shell_words::split(&pager).unwrap_or_default();
    if let Some((program, args)) = words.split_first()
        && let Ok(mut child) = std::process::Command::new(program)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .spawn()
    {
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(text.as_bytes());
        }
        if child.wait().is_ok() {
            return;
        }
    }
    tty.write(text);
}

/// Chat: the permission question: what is asked, then numbered options
/// (an "always" option says what it will be remembered for).
pub(crate) fn ask_permission(
    tty: &mut Tty,
    asked: &Asked,
    options: &[PermissionOption],
    color: bool,
) -> Decision {
    let style = Style::new(color);
    let (mut text, cut) = asked.describe(style, diff_rows());
    let scope = asked.scope();
    for (i, option) in options.iter().enumerate() {
        let always = matches!(
            option.kind,
            PermissionOptionKind::AllowAlways | PermissionOptionKind::RejectAlways
        );
        let note = if always {
            style.dim(&format!(" — remembered for {scope} in this chat"))
        } else {
            String::new()
        };
        // Wrapped on word boundaries, under the option's name.
        let lead = format!("  {}) ", i + 1);
        let body = format!(
            "{} {}{note}",
            option.name,
            style.dim(&format!("[{}]", option.kind))
        );
        let cols = crate::view::markdown::terminal_columns().saturating_sub(1);
        for row in crate::view::markdown::hanging(&lead, &body, cols) {
            text.push_str(&row);
            text.push('\n');
        }
    }
    tty.write(&text);
    let prompt = if cut {
        format!("Choose 1-{} (d: the whole diff): ", options.len())
    } else {
        format!("Choose 1-{}: ", options.len())
    };
    loop {
        let Some(line) = tty.ask(&prompt) else {
            tty.write("\n");
            return Decision::Cancel;
        };
        if cut && line.trim().eq_ignore_ascii_case("d") {
            page(tty, &asked.diff_text(style));
            continue;
        }
        if let Some(decision) = chosen(&line, options) {
            return decision;
        }
    }
}

/// `acp exec`: asks on the terminal in plain words; end of input counts as
/// a rejection.
pub(crate) fn ask_on_tty(tty: &mut Tty, title: &str, options: &[PermissionOption]) -> Decision {
    loop {
        let mut text = format!("The agent asks permission: {title}\n");
        for (i, option) in options.iter().enumerate() {
            text.push_str(&format!("  {}) {} [{}]\n", i + 1, option.name, option.kind));
        }
        tty.write(&text);
        let Some(line) = tty.ask(&format!("Choose 1-{}: ", options.len())) else {
            return pick_option(options, false);
        };
        if let Some(decision) = chosen(&line, options) {
            return decision;
        }
    }
}

/// The decision an answer like `2` picks, if it names an option.
fn chosen(line: &str, options: &[PermissionOption]) -> Option<Decision> {
    let option = line
        .trim()
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| options.get(i))?;
    Some(match option.kind {
        PermissionOptionKind::AllowOnce | PermissionOptionKind::AllowAlways => {
            Decision::Allow(option.clone())
        }
        _ => Decision::Reject(option.clone()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> Vec<PermissionOption> {
        vec![
            PermissionOption::new("always", "Always", PermissionOptionKind::AllowAlways),
            PermissionOption::new("once", "Once", PermissionOptionKind::AllowOnce),
            PermissionOption::new("never", "Never", PermissionOptionKind::RejectAlways),
            PermissionOption::new("no", "No", PermissionOptionKind::RejectOnce),
        ]
    }

    fn id(d: Option<Decision>) -> String {
        match d.unwrap() {
            Decision::Allow(o) => format!("allow {}", o.option_id),
            Decision::Reject(o) => format!("reject {}", o.option_id),
            Decision::Cancel => "cancel".to_owned(),
        }
    }

    #[test]
    fn policies_pick_matching_kinds() {
        let o = options();
        assert_eq!(
            id(decide(PermissionPolicy::ApproveAll, None, &o)),
            "allow once"
        );
        assert_eq!(id(decide(PermissionPolicy::DenyAll, None, &o)), "reject no");
        assert_eq!(
            id(decide(
                PermissionPolicy::ApproveReads,
                Some(&ToolKind::Read),
                &o
            )),
            "allow once"
        );
        assert_eq!(
            id(decide(
                PermissionPolicy::ApproveReads,
                Some(&ToolKind::Search),
                &o
            )),
            "allow once"
        );
        assert_eq!(
            id(decide(
                PermissionPolicy::ApproveReads,
                Some(&ToolKind::Edit),
                &o
            )),
            "reject no"
        );
        assert_eq!(
            id(decide(PermissionPolicy::ApproveReads, None, &o)),
            "reject no"
        );
        assert!(decide(PermissionPolicy::Ask, None, &o).is_none());
        let only_always = vec![o[0].clone(), o[2].clone()];
        assert_eq!(
            id(decide(PermissionPolicy::ApproveAll, None, &only_always)),
            "allow always"
        );
        assert_eq!(
            id(decide(PermissionPolicy::DenyAll, None, &only_always)),
            "reject never"
        );
        let only_allow = vec![o[1].clone()];
        assert_eq!(
            id(decide(PermissionPolicy::DenyAll, None, &only_allow)),
            "cancel"
        );
        let only_reject = vec![o[3].clone()];
        assert_eq!(
            id(decide(PermissionPolicy::ApproveAll, None, &only_reject)),
            "reject no"
        );
    }

    #[test]
    fn always_is_scoped_to_the_command_the_paths_or_the_title() {
        let run = |command: &str| {
            let call = ToolCall::new("c", format!("`{command}`"))
                .kind(ToolKind::Execute)
                .raw_input(serde_json::json!({"command": command, "cwd": "/w"}));
            Asked::new(&ToolCallUpdate::new("c"), Some(&call))
        };
        let cat = run("cat  notes.txt");
        assert_eq!(cat.scope(), Scope::Command("cat notes.txt".into()));
        assert_eq!(cat.cwd.as_deref(), Some("/w"));
        assert_ne!(cat.scope(), run("rm -rf /").scope());
        // An execute call without rawInput: its title is the command.
        let titled = ToolCall::new("t", "`ls -l`").kind(ToolKind::Execute);
        let asked = Asked::new(&ToolCallUpdate::new("t"), Some(&titled));
        assert_eq!(asked.scope(), Scope::Command("ls -l".into()));
        // An edit: the paths of its locations and diffs.
        let update = ToolCallUpdate::new("e")
            .kind(ToolKind::Edit)
            .title("Edit")
            .locations(vec![ToolCallLocation::new("/w/b.txt")])
            .content(vec![ToolCallContent::from(Diff::new(
                "/w/a.txt",
                Some("x\n".to_owned()),
                "y\n",
            ))]);
        let edit = Asked::new(&update, None);
        assert_eq!(
            edit.scope(),
            Scope::Paths(vec!["/w/a.txt".into(), "/w/b.txt".into()])
        );
        let (text, cut) = edit.describe(Style::new(false), 10);
        assert!(!cut);
        assert_eq!(
            text,
            "? Permission: Edit (edit)\n--- /w/a.txt\n+++ /w/a.txt\n@@ -1 +1 @@\n-x\n+y\n"
        );
        let (text, cut) = edit.describe(Style::new(false), 3);
        assert!(cut);
        assert!(text.ends_with("@@ -1 +1 @@\n  … 2 more lines of the diff (d shows it all)\n"));
        // Nothing else known: the title.
        let bare = Asked::new(&ToolCallUpdate::new("x").title("Remove build/"), None);
        assert_eq!(bare.scope(), Scope::Title("Remove build/".into()));
    }

    #[test]
    fn an_answer_picks_the_option_it_numbers() {
        let o = options();
        assert_eq!(id(chosen(" 1 ", &o)), "allow always");
        assert_eq!(id(chosen("3", &o)), "reject never");
        assert!(chosen("0", &o).is_none());
        assert!(chosen("5", &o).is_none());
        assert!(chosen("yes", &o).is_none());
    }
}
