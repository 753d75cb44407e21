//! The system prompt: who the agent is and how to work, the session's mode,
//! the environment (OS, shell, date, working directory, additional
//! directories, a git summary) and the project's instructions.
//!
//! Project instructions are `AGENTS.md` files, or `CLAUDE.md` where a
//! directory has no `AGENTS.md`: from each workspace root (the working
//! directory and each additional directory) up to the file system's root,
//! the nearest last so that it has the last word. Each file is cut at
//! [`MAX_INSTRUCTION_FILE`] bytes and all of them at
//! [`MAX_INSTRUCTIONS`]. They are read again at every turn, so an edit (or
//! `/init`) takes effect at the next one.
//!
//! The environment is gathered once, at the session's first turn, so that
//! the system prompt stays the same from one call to the next (which lets
//! providers cache it); the git summary says it is a snapshot.

use super::settings::Mode;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Most bytes of one instruction file put in the system prompt.
pub const MAX_INSTRUCTION_FILE: usize = 32 * 1024;
/// Most bytes of all instruction files put in the system prompt.
pub const MAX_INSTRUCTIONS: usize = 64 * 1024;
/// Most changed files listed in the git summary.
const MAX_GIT_FILES: usize = 20;
/// How long `git status` may take.
const GIT_TIMEOUT: Duration = Duration::from_secs(5);

/// The instruction file names, in order of preference within a directory.
const INSTRUCTION_FILES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// The system prompt for a session in `mode`, with its environment and
/// project instructions.
pub(super) fn system_prompt(mode: Mode, environment: &str, instructions: &str) -> String {
    let mode_note = match mode {
        Mode::ReadOnly => {
            "The session is in read-only mode: you can read and search files but cannot edit them or run commands."
        }
        Mode::Ask => {
            "The user is asked to approve each edit and command; a rejected tool call means the user does not want it: adapt instead of retrying it."
        }
        Mode::Auto => "Edits and commands run without asking the user; be careful and deliberate.",
    };
    let mut prompt = format!(
        "You are acp-agent, a coding agent working in the user's project inside their editor.\n\
         Use the tools to inspect and change the project: read files before editing them, prefer edit_file for \
         small changes, run commands to build and test, and keep a plan with update_plan for multi-step tasks. \
         Relative paths are resolved against the working directory. Large files are read in parts: read_file \
         says how to get the next one. {mode_note}\n\
         Be concise: report what you did and what the user should know.\n\n\
         # Environment\n{environment}"
    );
    if !instructions.is_empty() {
        prompt.push_str(
            "\n\n# Project instructions\n\
             The user's instructions for this project, from the files below (a file nearer to the working \
             directory comes later and takes precedence). Follow them.\n",
        );
        prompt.push_str(instructions);
    }
    prompt
}

/// The environment section: OS, shell, date, directories and, for each
/// root in a git repository, its branch and changed files.
pub(super) async fn environment(cwd: &Path, additional: &[PathBuf]) -> String {
    let mut lines = vec![format!("- Working directory: {}", cwd.display())];
    if !additional.is_empty() {
        let dirs: Vec<String> = additional.iter().map(|d| d.display().to_string()).collect();
        lines.push(format!(
            "- Additional directories (also part of the workspace): {}",
            dirs.join(", ")
        ));
    }
    lines.push(format!("- Operating system: {}", os_description().await));
    let shell = std::env::var("SHELL")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "not set".into());
    lines.push(format!(
        "- The user's shell: {shell}; run_command runs commands with `sh -c`"
    ));
    lines.push(format!(
        "- Today's date: {} (UTC)",
        &crate::store::rfc3339(crate::store::now_ms())[..10]
    ));
    let mut seen = Vec::new();
    for root in std::iter::once(cwd).chain(additional.iter().map(PathBuf::as_path)) {
        if let Some(summary) = git_summary(root).await
            && !seen.contains(&summary)
        {
            lines.push(summary.clone());
            seen.push(summary);
        }
    }
    lines.join("\n")
}

/// The OS, with the distribution's name where it says (Linux's
/// `/etc/os-release`).
async fn os_description() -> String {
    let base = format!("{} ({})", std::env::consts::OS, std::env::consts::ARCH);
    let release = tokio::fs::read_to_string("/etc/os-release")
        .await
        .ok()
        .and_then(|text| {
            text.lines().find_map(|l| {
                l.strip_prefix("PRETTY_NAME=")
                    .map(|v| v.trim_matches('"').to_string())
            })
        });
    match release {
        Some(name) if !name.is_empty() => format!("{base}, {name}"),
        _ => base,
    }
}

/// `git status` of the repository holding `dir`, summarised: its branch and
/// up to [`MAX_GIT_FILES`] changed files. `None` outside a repository, or
/// without git.
async fn git_summary(dir: &Path) -> Option<String> {
    let run = tokio::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "status",
            "--porcelain=v1",
            "--branch",
            "--untracked-files=normal",
        ])
        // Never take the index lock: the user's own git may be running.
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(GIT_TIMEOUT, run).await.ok()?.ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let branch_line = lines.next()?.strip_prefix("## ")?;
    let branch = branch_line
        .split("...")
        .next()
        .unwrap_or(branch_line)
        .replace("No commits yet on ", "");
    let changed: Vec<&str> = lines.filter(|l| !l.trim().is_empty()).collect();
    let mut s = format!(
        "- Git (at the session's start), {}: branch {branch}",
        dir.display()
    );
    if let Some(ahead) = branch_line
        .split_once(" [")
        .map(|(_, rest)| rest.trim_end_matches(']'))
    {
        s.push_str(&format!(" ({ahead})"));
    }
    if changed.is_empty() {
        s.push_str(", no uncommitted changes");
    } else {
        s.push_str(&format!(", {} changed files:", changed.len()));
        for l in changed.iter().take(MAX_GIT_FILES) {
            s.push_str(&format!("\n  {l}"));
        }
        if changed.len() > MAX_GIT_FILES {
            s.push_str(&format!("\n  … and {} more", changed.len() - MAX_GIT_FILES));
        }
    }
    Some(s)
}

/// The project instructions of the workspace roots, formatted for the
/// system prompt (empty when there are none). Reads files: call it off the
/// async threads.
pub(super) fn instructions(roots: &[PathBuf]) -> String {
    let files = instruction_files(roots);
    let mut out = String::new();
    let mut left = MAX_INSTRUCTIONS;
    for path in files {
        if left == 0 {
            out.push_str(&format!(
                "\n(Further instruction files were left out: the limit of {MAX_INSTRUCTIONS} bytes is reached; \
                 {} is one of them.)\n",
                path.display()
            ));
            break;
        }
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let cap = MAX_INSTRUCTION_FILE.min(left);
        let shown = crate::llm::truncate(text, cap);
        left = left.saturating_sub(shown.len());
        out.push_str(&format!("\n## {}\n\n{shown}\n", path.display()));
        if text.len() > cap {
            out.push_str(&format!(
                "\n(This file is {} bytes; only the first {cap} are shown. Read it with read_file for the rest.)\n",
                text.len()
            ));
        }
    }
    out
}

/// The instruction files of each root, from the outermost directory to the
/// root itself; a file is listed once even when roots share directories.
fn instruction_files(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for root in roots {
        let mut chain = Vec::new();
        let mut dir = Some(root.as_path());
        while let Some(d) = dir {
            if let Some(file) = INSTRUCTION_FILES
                .iter()
                .map(|name| d.join(name))
                .find(|p| p.is_file())
            {
                chain.push(file);
            }
            dir = d.parent();
        }
        for file in chain.into_iter().rev() {
            if !out.contains(&file) {
                out.push(file);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_nearest_last_and_agents_before_claude() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        let sub = root.join("crates/x");
        let other = dir.path().join("other");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(root.join("AGENTS.md"), "Use tabs.").unwrap();
        std::fs::write(root.join("CLAUDE.md"), "ignored: AGENTS.md wins").unwrap();
        std::fs::write(sub.join("CLAUDE.md"), "Run cargo test -p x.").unwrap();
        std::fs::write(other.join("AGENTS.md"), "Other rules.").unwrap();
        let text = instructions(&[sub.clone(), other.clone()]);
        let a = text.find("Use tabs.").unwrap();
        let b = text.find("Run cargo test -p x.").unwrap();
        let c = text.find("Other rules.").unwrap();
        assert!(a < b && b < c, "{text}");
        assert!(!text.contains("ignored"), "{text}");
        assert!(text.contains(&format!("## {}", sub.join("CLAUDE.md").display())));
        // The same root twice lists its files once.
        assert_eq!(
            instructions(&[sub.clone(), sub])
                .matches("Use tabs.")
                .count(),
            1
        );
    }

    #[test]
    fn instructions_are_capped() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("AGENTS.md"),
            "x".repeat(MAX_INSTRUCTION_FILE + 10),
        )
        .unwrap();
        let text = instructions(&[dir.path().to_path_buf()]);
        assert!(text.len() < MAX_INSTRUCTION_FILE + 500);
        assert!(
            text.contains("only the first 32768 are shown"),
            "{}",
            &text[text.len() - 200..]
        );
    }

    #[tokio::test]
    async fn environment_names_the_directories_and_the_git_branch() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        let git = |args: &[&str]| {
            std::process::Command::new("git")
                .arg("-C")
                .arg(&repo)
                .args(args)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .output()
                .map(|o| o.status.success())
                .unwrap_or(false)
        };
        let have_git = git(&["init", "-q", "-b", "trunk"]);
        std::fs::write(repo.join("new.txt"), "x").unwrap();
        let extra = dir.path().join("extra");
        let env = environment(&repo, std::slice::from_ref(&extra)).await;
        assert!(
            env.contains(&format!("- Working directory: {}", repo.display())),
            "{env}"
        );
        assert!(env.contains(&extra.display().to_string()), "{env}");
        assert!(env.contains("Today's date: 20"), "{env}");
        assert!(env.contains("Operating system: "), "{env}");
        if have_git {
            assert!(env.contains("branch trunk"), "{env}");
            assert!(env.contains("?? new.txt"), "{env}");
        }
    }
}
