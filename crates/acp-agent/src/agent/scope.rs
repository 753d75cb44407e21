//! What an "always allow" or "always reject" answer covers: never "every
//! command" or "every edit".
//!
//! - A command line is split into its simple commands (at `&&`, `||`, `;`,
//!   `|`, `&` and newlines); each is covered by its program and, for a
//!   program known to have subcommands (`cargo`, `git`, `npm`, `make`…), its
//!   subcommand: `cargo test -p x` by `cargo test`, `ls -la src` by `ls`,
//!   `./build.sh test` by `./build.sh`. A line the split
//!   cannot see through (command substitution, redirections, subshells,
//!   variable assignments, a program that runs other programs such as `sh`,
//!   `sudo` or `xargs`) is covered only by itself, exactly.
//! - An edit (`write_file`, `edit_file`) is covered by the directory of the
//!   file, and everything below it.
//! - A tool of an MCP server is covered by its name.
//!
//! A call is allowed without asking when every scope it needs is covered by
//! one the user allowed, and refused when any is covered by one the user
//! rejected.

use crate::tools::{ToolInput, display_path};
use std::path::{Path, PathBuf};

/// Something an "always" answer can cover.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Scope {
    /// Commands with this program and subcommand (`cargo test`), or program
    /// alone (`ls`).
    Command(String),
    /// Exactly this command line.
    ExactCommand(String),
    /// Edits of files in this directory or below it.
    EditsIn(PathBuf),
    /// Every call of this tool (an MCP server's).
    Tool(String),
}

impl Scope {
    /// Whether an answer given for `self` covers `needed`.
    fn covers(&self, needed: &Scope) -> bool {
        match (self, needed) {
            (Scope::EditsIn(dir), Scope::EditsIn(d)) => d.starts_with(dir),
            (a, b) => a == b,
        }
    }
}

/// The scopes a built-in tool call needs (none for tools that need no
/// permission).
pub(super) fn for_input(input: &ToolInput) -> Vec<Scope> {
    match input {
        ToolInput::RunCommand { command, .. } => for_command(command),
        ToolInput::WriteFile { path, .. } | ToolInput::EditFile { path, .. } => {
            let dir = path.parent().unwrap_or(Path::new("/"));
            vec![Scope::EditsIn(dir.to_path_buf())]
        }
        _ => Vec::new(),
    }
}

/// The scopes of a command line.
pub(super) fn for_command(line: &str) -> Vec<Scope> {
    match command_keys(line) {
        Some(keys) if !keys.is_empty() => {
            let mut out: Vec<Scope> = Vec::new();
            for k in keys {
                let s = Scope::Command(k);
                if !out.contains(&s) {
                    out.push(s);
                }
            }
            out
        }
        _ => vec![Scope::ExactCommand(line.trim().to_string())],
    }
}

/// Whether every scope in `needed` is covered by one of `given`.
pub(super) fn all_covered(given: &[Scope], needed: &[Scope]) -> bool {
    !needed.is_empty() && needed.iter().all(|n| given.iter().any(|g| g.covers(n)))
}

/// Whether any scope in `needed` is covered by one of `given`.
pub(super) fn any_covered(given: &[Scope], needed: &[Scope]) -> bool {
    needed.iter().any(|n| given.iter().any(|g| g.covers(n)))
}

/// What the scopes cover, for the permission options: "`cargo test`
/// commands", "edits in src/", "this exact command".
pub(super) fn describe(scopes: &[Scope], cwd: &Path) -> String {
    let mut commands = Vec::new();
    let mut rest = Vec::new();
    for s in scopes {
        match s {
            Scope::Command(k) => commands.push(format!("`{k}`")),
            Scope::ExactCommand(_) => rest.push("this exact command".to_string()),
            Scope::EditsIn(dir) => rest.push(if dir == cwd {
                "edits in the working directory".to_string()
            } else {
                let mut shown = display_path(dir, cwd);
                if !shown.ends_with('/') {
                    shown.push('/');
                }
                format!("edits in {shown}")
            }),
            Scope::Tool(name) => rest.push(format!("{name} calls")),
        }
    }
    if !commands.is_empty() {
        rest.insert(0, format!("{} commands", join_and(&commands)));
    }
    join_and(&rest)
}

fn join_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Programs whose arguments are other commands or code: a subcommand says
/// nothing about what they run.
const RUNNERS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "fish", "ksh", "eval", "exec", "env", "sudo", "doas", "su",
    "xargs", "nohup", "time", "nice", "timeout", "command", "builtin", "source", ".", "watch",
    "parallel", "ssh",
];

/// Programs whose first argument is a subcommand that says what they do.
const WITH_SUBCOMMANDS: &[&str] = &[
    "cargo",
    "rustup",
    "git",
    "gh",
    "glab",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "deno",
    "npx",
    "go",
    "docker",
    "podman",
    "kubectl",
    "helm",
    "make",
    "just",
    "pip",
    "pip3",
    "uv",
    "poetry",
    "dotnet",
    "mvn",
    "gradle",
    "gradlew",
    "bundle",
    "rails",
    "rake",
    "mix",
    "brew",
    "apt",
    "apt-get",
    "dnf",
    "yum",
    "pacman",
    "systemctl",
    "terraform",
    "nix",
    "conda",
    "swift",
    "zig",
    "stack",
    "cabal",
    "composer",
    "php",
    "flutter",
    "dart",
];

/// The program-and-subcommand key of each simple command of `line`, or
/// `None` when the line cannot be seen through.
fn command_keys(line: &str) -> Option<Vec<String>> {
    let mut keys = Vec::new();
    for words in simple_commands(line)? {
        let program = words.first()?;
        if program.contains('=')
            || program.starts_with('$')
            || program.contains(['*', '?', '[', '{', '~'])
            || RUNNERS.contains(&program.rsplit('/').next().unwrap_or(program))
        {
            return None;
        }
        let name = program.rsplit('/').next().unwrap_or(program);
        let key = match words.get(1) {
            Some(sub) if WITH_SUBCOMMANDS.contains(&name) && is_subcommand(sub) => {
                format!("{program} {sub}")
            }
            _ => program.clone(),
        };
        keys.push(key);
    }
    Some(keys)
}

/// Whether `word` reads as a subcommand (`test`, `run-script`, `db:migrate`)
/// rather than a flag, a path or a value.
fn is_subcommand(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
}

/// Splits `line` into simple commands, each as its words (quotes removed);
/// `None` if it holds what the split cannot see through: `$(…)`, backquotes,
/// redirections, parentheses, braces, here-documents, an unclosed quote.
fn simple_commands(line: &str) -> Option<Vec<Vec<String>>> {
    let mut commands = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    let end_word = |words: &mut Vec<String>, word: &mut String, in_word: &mut bool| {
        if *in_word {
            words.push(std::mem::take(word));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        ch => word.push(ch),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => word.push(chars.next()?),
                        '`' => return None,
                        '$' if chars.peek() == Some(&'(') => return None,
                        ch => word.push(ch),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next()? {
                    '\n' => {}
                    ch => word.push(ch),
                }
            }
            '>' => {
                // Only redirections that write no file: `2>&1`, `>/dev/null`.
                if in_word && word.chars().all(|ch| ch.is_ascii_digit()) {
                    word.clear();
                    in_word = false;
                } else {
                    end_word(&mut words, &mut word, &mut in_word);
                }
                if chars.peek() == Some(&'&') {
                    chars.next();
                    let mut digits = 0;
                    while chars.peek().is_some_and(char::is_ascii_digit) {
                        chars.next();
                        digits += 1;
                    }
                    if digits == 0 {
                        return None;
                    }
                } else {
                    while chars.peek() == Some(&' ') {
                        chars.next();
                    }
                    let mut target = String::new();
                    while let Some(&ch) = chars.peek() {
                        if ch.is_whitespace() || matches!(ch, ';' | '&' | '|') {
                            break;
                        }
                        target.push(ch);
                        chars.next();
                    }
                    if target != "/dev/null" {
                        return None;
                    }
                }
            }
            '`' | '(' | ')' | '<' | '{' | '}' => return None,
            '$' if chars.peek() == Some(&'(') => return None,
            '#' if !in_word => {
                // A comment runs to the end of the line.
                for ch in chars.by_ref() {
                    if ch == '\n' {
                        break;
                    }
                }
                end_word(&mut words, &mut word, &mut in_word);
                if !words.is_empty() {
                    commands.push(std::mem::take(&mut words));
                }
            }
            ';' | '&' | '|' | '\n' => {
                end_word(&mut words, &mut word, &mut in_word);
                if chars.peek() == Some(&c) && c != ';' && c != '\n' {
                    chars.next();
                }
                if !words.is_empty() {
                    commands.push(std::mem::take(&mut words));
                }
            }
            c if c.is_whitespace() => end_word(&mut words, &mut word, &mut in_word),
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    end_word(&mut words, &mut word, &mut in_word);
    if !words.is_empty() {
        commands.push(words);
    }
    Some(commands)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(line: &str) -> Option<Vec<String>> {
        command_keys(line)
    }

    #[test]
    fn program_and_subcommand() {
        assert_eq!(keys("cargo test -p acp"), Some(vec!["cargo test".into()]));
        assert_eq!(keys("ls -la src"), Some(vec!["ls".into()]));
        assert_eq!(keys("git status"), Some(vec!["git status".into()]));
        assert_eq!(keys("npm run build"), Some(vec!["npm run".into()]));
        assert_eq!(
            keys("./build.sh --release"),
            Some(vec!["./build.sh".into()])
        );
        assert_eq!(
            keys("cd 'my dir' && cargo build; cargo test | tee out.txt"),
            Some(vec![
                "cd".into(),
                "cargo build".into(),
                "cargo test".into(),
                "tee".into()
            ])
        );
        assert_eq!(
            keys("grep -r \"a|b\" . # find it"),
            Some(vec!["grep".into()])
        );
        assert_eq!(
            keys("cargo test 2>&1 | tail -5"),
            Some(vec!["cargo test".into(), "tail".into()])
        );
        assert_eq!(keys("make >/dev/null 2>&1"), Some(vec!["make".into()]));
    }

    #[test]
    fn what_cannot_be_seen_through_is_exact() {
        for line in [
            "echo $(rm -rf /)",
            "echo `id`",
            "echo x > ~/.bashrc",
            "echo x >>log",
            "cargo test >& out",
            "cat < /etc/shadow",
            "(cd /; rm -rf x)",
            "FOO=1 cargo test",
            "sh -c 'cargo test'",
            "sudo rm -rf /",
            "find . | xargs rm",
            "$EDITOR file",
            "echo 'unclosed",
            "{ ls; }",
        ] {
            assert_eq!(keys(line), None, "{line}");
            assert_eq!(
                for_command(line),
                vec![Scope::ExactCommand(line.trim().to_string())]
            );
        }
    }

    #[test]
    fn coverage() {
        let allowed = for_command("cargo test -p a");
        assert!(all_covered(&allowed, &for_command("cargo test --all")));
        assert!(!all_covered(&allowed, &for_command("cargo build")));
        assert!(
            !all_covered(&allowed, &for_command("cargo test && rm -rf target")),
            "every part must be covered"
        );
        assert!(!all_covered(&allowed, &[]));
        let exact = for_command("echo $(date)");
        assert!(all_covered(&exact, &for_command("echo $(date)")));
        assert!(!all_covered(&exact, &for_command("echo $(id)")));
        let edits = [Scope::EditsIn(PathBuf::from("/p/src"))];
        assert!(all_covered(&edits, &[Scope::EditsIn("/p/src/a".into())]));
        assert!(!all_covered(&edits, &[Scope::EditsIn("/p".into())]));
        assert!(!all_covered(&edits, &[Scope::EditsIn("/p/srcx".into())]));
        let rejected = for_command("rm x");
        assert!(any_covered(&rejected, &for_command("ls && rm -rf y")));
    }

    #[test]
    fn descriptions() {
        let cwd = Path::new("/p");
        assert_eq!(
            describe(&for_command("cd x && cargo test"), cwd),
            "`cd` and `cargo test` commands"
        );
        assert_eq!(
            describe(&for_command("echo $(date)"), cwd),
            "this exact command"
        );
        assert_eq!(
            describe(&[Scope::EditsIn("/p/src".into())], cwd),
            "edits in src/"
        );
        assert_eq!(
            describe(&[Scope::EditsIn("/p".into())], cwd),
            "edits in the working directory"
        );
        assert_eq!(
            describe(&[Scope::EditsIn("/etc".into())], cwd),
            "edits in /etc/"
        );
    }
}
