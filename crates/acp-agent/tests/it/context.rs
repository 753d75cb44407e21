//! What the system prompt tells the model: the project's instructions
//! (`AGENTS.md`, else `CLAUDE.md`, from each workspace root up), the
//! environment (OS, shell, date, working and additional directories) and a
//! git summary. The mock model server records each request, so the tests read
//! the system prompt the model got.

use crate::support;

use acp::schema::*;
use support::*;

#[tokio::test]
async fn project_instructions_and_environment_are_in_the_system_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let root = canonical(dir.path());
    let project = root.join("project");
    let cwd = project.join("crates/app");
    let extra = root.join("shared-lib");
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::create_dir_all(&extra).unwrap();
    std::fs::write(
        project.join("AGENTS.md"),
        "Always run `make check` before finishing.\n",
    )
    .unwrap();
    std::fs::write(
        project.join("CLAUDE.md"),
        "Not read: AGENTS.md is preferred.\n",
    )
    .unwrap();
    std::fs::write(cwd.join("CLAUDE.md"), "This crate uses tabs.\n").unwrap();
    std::fs::write(extra.join("AGENTS.md"), "The shared library is frozen.\n").unwrap();
    let mock = MockLlm::start(vec![text_reply("ok"), text_reply("ok")]).await;
    let env = openai_env(&mock);
    let r = start_agent(&env, TestClient::new("allow_once")).await;
    let init = r.initialize().await;
    assert!(
        init.agent_capabilities
            .session_capabilities
            .additional_directories
            .is_some()
    );
    let sid = r
        .conn
        .new_session(
            NewSessionRequest::new(cwd.display().to_string())
                .additional_directories(vec![extra.display().to_string()]),
        )
        .await
        .unwrap()
        .session_id;
    r.prompt(&sid, "hi").await;
    let system = mock.system_prompt(0);
    for needle in [
        "Always run `make check` before finishing.",
        "This crate uses tabs.",
        "The shared library is frozen.",
        format!("## {}", project.join("AGENTS.md").display()).as_str(),
        format!("## {}", cwd.join("CLAUDE.md").display()).as_str(),
        format!("- Working directory: {}", cwd.display()).as_str(),
        format!(
            "- Additional directories (also part of the workspace): {}",
            extra.display()
        )
        .as_str(),
        "- Operating system: linux",
        "- The user's shell: not set; run_command runs commands with `sh -c`",
        "- Today's date: 20",
        "The user is asked to approve each edit and command",
    ] {
        assert!(system.contains(needle), "missing {needle:?} in:\n{system}");
    }
    assert!(!system.contains("Not read"), "{system}");
    // Outermost first: the nearest file has the last word.
    let outer = system.find("make check").unwrap();
    let inner = system.find("uses tabs").unwrap();
    assert!(outer < inner, "{system}");

    // Instructions are read again at each turn.
    std::fs::write(project.join("AGENTS.md"), "Now use `just test`.\n").unwrap();
    r.prompt(&sid, "again").await;
    let system = mock.system_prompt(1);
    assert!(system.contains("Now use `just test`."), "{system}");
    assert!(!system.contains("make check"), "{system}");
}

#[tokio::test]
async fn a_git_summary_names_the_branch_and_changed_files() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = canonical(dir.path());
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(&cwd)
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !git(&["init", "-q", "-b", "feature-x"]) {
        eprintln!("skipped: no git here");
        return;
    }
    std::fs::write(cwd.join("tracked.txt"), "one\n").unwrap();
    assert!(git(&["add", "tracked.txt"]));
    assert!(git(&["commit", "-q", "-m", "first"]));
    std::fs::write(cwd.join("tracked.txt"), "two\n").unwrap();
    std::fs::write(cwd.join("new.txt"), "new\n").unwrap();
    let mock = MockLlm::start(vec![text_reply("ok")]).await;
    let env = openai_env(&mock);
    let r = start_agent(&env, TestClient::new("allow_once")).await;
    let sid = open_session(&r, caps(false, false), &cwd).await;
    r.prompt(&sid, "status?").await;
    let system = mock.system_prompt(0);
    assert!(
        system.contains(&format!(
            "- Git (at the session's start), {}: branch feature-x, 2 changed files:\n   M tracked.txt\n  ?? new.txt",
            cwd.display()
        )),
        "{system}"
    );
    // The agent's `git status` took no lock of the user's repository.
    assert!(!cwd.join(".git/index.lock").exists());
}
