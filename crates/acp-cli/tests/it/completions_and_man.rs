//! `acp completions SHELL` and `acp man` cover every subcommand there is:
//! the list comes from the same clap definition the binary parses with, so
//! a subcommand added later is checked without touching this file.

use crate::common;

use common::ACP;
use std::collections::BTreeSet;
use std::process::{Command, Stdio};

/// `acp ARGS…` with no config in reach (these commands read none).
fn acp(args: &[&str]) -> std::process::Output {
    let home = tempfile::tempdir().expect("home");
    Command::new(ACP)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("no-such-dir"))
        .stdin(Stdio::null())
        .output()
        .expect("run acp")
}

fn stdout_of(args: &[&str]) -> String {
    let out = acp(args);
    assert!(
        out.status.success(),
        "acp {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// Every subcommand at any depth, as paths of names.
fn subcommand_paths() -> Vec<Vec<String>> {
    acp_cli::docs::subcommands(&acp_cli::docs::command())
        .into_iter()
        .map(|(path, _)| path)
        .collect()
}

#[test]
fn the_subcommand_list_is_the_real_one() {
    let paths = subcommand_paths();
    let names: BTreeSet<String> = paths.iter().map(|p| p.join(" ")).collect();
    for expected in [
        "exec",
        "chat",
        "agents",
        "agents import-zed",
        "completions",
        "man",
    ] {
        assert!(names.contains(expected), "{expected} in {names:?}");
    }
    assert!(
        !names.contains("help"),
        "clap's help is not a page of its own"
    );
    // What `acp --help` lists is what the list holds at the top level.
    let help = stdout_of(&["--help"]);
    for path in paths.iter().filter(|p| p.len() == 1) {
        assert!(
            help.contains(&format!("  {}", path[0])),
            "{}: {help}",
            path[0]
        );
    }
}

#[test]
fn completions_for_every_shell_name_every_subcommand() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let script = stdout_of(&["completions", shell]);
        assert!(script.len() > 500, "{shell}: {script}");
        for path in subcommand_paths() {
            let name = path.last().expect("a name");
            assert!(script.contains(name.as_str()), "{shell} lacks {name}");
        }
        // Options of a nested subcommand are there too.
        assert!(script.contains("approve-all"), "{shell}");
    }
    // The bash script defines the completion function it registers.
    let bash = stdout_of(&["completions", "bash"]);
    assert!(bash.contains("complete -F _acp"), "{bash}");
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    let out = acp(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bash"), "lists the shells: {stderr}");
}

#[test]
fn the_manual_page_lists_every_subcommand() {
    let page = stdout_of(&["man"]);
    assert!(
        page.starts_with(".ie") || page.contains(".TH acp 1"),
        "{page}"
    );
    assert!(page.contains(".TH acp 1"), "{page}");
    for path in subcommand_paths().iter().filter(|p| p.len() == 1) {
        assert!(
            page.contains(&format!("acp\\-{}(1)", path[0].replace('-', "\\-"))),
            "acp(1) refers to acp-{}(1)",
            path[0]
        );
    }
    // It refers to no page that `acp man --dir` does not write.
    assert!(!page.contains("acp\\-help(1)"), "{page}");
}

#[test]
fn man_dir_writes_a_page_per_subcommand() {
    let dir = tempfile::tempdir().expect("dir");
    let listed = stdout_of(&["man", "--dir", &dir.path().display().to_string()]);
    let mut expected = vec!["acp".to_owned()];
    expected.extend(
        subcommand_paths()
            .iter()
            .map(|p| format!("acp-{}", p.join("-"))),
    );
    let mut files: Vec<String> = std::fs::read_dir(dir.path())
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut want: Vec<String> = expected.iter().map(|n| format!("{n}.1")).collect();
    want.sort();
    assert_eq!(files, want, "no more, no fewer, no temporary files left");
    assert_eq!(listed.lines().count(), want.len(), "{listed}");
    for name in &expected {
        let page = std::fs::read_to_string(dir.path().join(format!("{name}.1"))).expect("page");
        assert!(page.contains(&format!(".TH {name} 1")), "{name}: {page}");
    }
    let exec = std::fs::read_to_string(dir.path().join("acp-exec.1")).expect("page");
    assert!(exec.contains("approve\\-all"), "{exec}");
}

#[test]
fn man_dir_that_cannot_be_written_is_an_error() {
    let dir = tempfile::tempdir().expect("dir");
    let missing = dir.path().join("no/such/dir");
    let out = acp(&["man", "--dir", &missing.display().to_string()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot write"), "{stderr}");
    assert!(stderr.contains("acp.1"), "{stderr}");
}

#[test]
fn completions_and_man_work_with_a_broken_config_file() {
    let home = tempfile::tempdir().expect("home");
    let config = home.path().join("config.toml");
    std::fs::write(&config, "this is = = not toml").expect("config");
    let out = Command::new(ACP)
        .args([
            "--config",
            &config.display().to_string(),
            "completions",
            "zsh",
        ])
        .output()
        .expect("run acp");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("#compdef acp"));
}
