//! `acp agents import-zed`: Zed's custom agents become `[agents.NAME]`
//! tables, without touching the rest of the config.

mod common;
use common::*;
use std::path::{Path, PathBuf};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/zed-settings.json"
);

const CONFIG: &str = "\
# my acp config
default_agent = \"existing\" # the usual one

[agents.existing]
command = \"existing-agent\"
args = [\"--keep\"]
";

/// A sandbox whose PATH finds `acp-test-agent`, with `CONFIG` as the
/// config file.
fn sandbox() -> Sandbox {
    let dir = Path::new(AGENT).parent().unwrap().display().to_string();
    let path = std::env::var("PATH").unwrap_or_default();
    let sb = Sandbox::new().env("PATH", &format!("{dir}:{path}"));
    std::fs::create_dir_all(sb.config_file().parent().unwrap()).unwrap();
    std::fs::write(sb.config_file(), CONFIG).unwrap();
    sb
}

/// Zed's default settings path in the sandbox ($XDG_CONFIG_HOME/zed).
fn zed_settings(sb: &Sandbox) -> PathBuf {
    let path = sb.dir.path().join("config/zed/settings.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    path
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn imports_custom_agents_and_skips_builtins_and_existing_ones() {
    let sb = sandbox();
    std::fs::copy(FIXTURE, zed_settings(&sb)).unwrap();
    let out = sb.run(&["agents", "import-zed"]);
    assert_code(&out, 0);
    assert_eq!(
        out.stdout,
        "added   test-agent: acp-test-agent --acp '// not a comment' (env: ACP_TEST_AGENT_EMBEDDED)\n\
         skipped claude: a Zed built-in agent, named without a command; add [agents.claude] by hand; \
         for example: command = \"npx\", args = [\"-y\", \"@zed-industries/claude-code-acp\"]\n\
         skipped existing: already in the config (left unchanged)\n\
         imported 1 agent from $ROOT/config/zed/settings.json into $ROOT/config/acp/config.toml\n"
    );
    assert_eq!(out.stderr, "");
    // The old text is kept byte for byte; the new agent follows it.
    assert_eq!(
        read(&sb.config_file()),
        format!(
            "{CONFIG}\n[agents.test-agent]\ncommand = \"acp-test-agent\"\n\
             args = [\"--acp\", \"// not a comment\"]\nenv = {{ ACP_TEST_AGENT_EMBEDDED = \"1\" }}\n"
        )
    );
    // No temporary file is left behind.
    assert_eq!(
        files_in(sb.config_file().parent().unwrap()),
        ["config.toml"]
    );

    let out = sb.run(&["agents"]);
    assert_code(&out, 0);
    assert_eq!(
        out.stdout,
        "existing    existing-agent --keep (default)\n\
         test-agent  acp-test-agent --acp '// not a comment'\n"
    );
    // The imported agent runs, with its environment (embedded context).
    std::fs::write(sb.work().join("notes.md"), "remember").unwrap();
    let out = sb.run(&["exec", "--agent", "test-agent", "blocks @notes.md"]);
    assert_code(&out, 0);
    assert_eq!(
        out.stdout,
        "text: blocks @notes.md\nresource: file://$WORK/notes.md \"remember\"\n"
    );

    // A second import, from an explicit path, adds nothing and writes nothing.
    let before = std::fs::metadata(sb.config_file())
        .unwrap()
        .modified()
        .unwrap();
    let out = sb.run(&["agents", "import-zed", FIXTURE]);
    assert_code(&out, 0);
    assert!(
        out.stdout
            .contains("skipped test-agent: already in the config (left unchanged)\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .ends_with("nothing imported; $ROOT/config/acp/config.toml is unchanged\n"),
        "{}",
        out.stdout
    );
    let after = std::fs::metadata(sb.config_file())
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after);
}

#[test]
fn creates_the_config_file_when_there_is_none() {
    let sb = Sandbox::new();
    let config = sb.dir.path().join("new/dir/acp.toml");
    let out = sb.run(&[
        "--config",
        config.to_str().unwrap(),
        "agents",
        "import-zed",
        FIXTURE,
    ]);
    assert_code(&out, 0);
    assert!(out.stdout.contains("added   test-agent"), "{}", out.stdout);
    assert!(
        out.stdout.contains("added   existing: must-not-replace\n"),
        "{}",
        out.stdout
    );
    assert_eq!(
        read(&config),
        "[agents.test-agent]\ncommand = \"acp-test-agent\"\nargs = [\"--acp\", \"// not a comment\"]\n\
         env = { ACP_TEST_AGENT_EMBEDDED = \"1\" }\n\n[agents.existing]\ncommand = \"must-not-replace\"\n"
    );
}

#[test]
fn a_broken_config_or_settings_file_changes_nothing() {
    let sb = sandbox();
    let broken = "[agents.a]\nargs = []\n";
    std::fs::write(sb.config_file(), broken).unwrap();
    let out = sb.run(&["agents", "import-zed", FIXTURE]);
    assert_code(&out, 2);
    assert!(out.stderr.contains("bad config file"), "{}", out.stderr);
    assert_eq!(read(&sb.config_file()), broken);

    let sb = sandbox();
    let settings = zed_settings(&sb);
    std::fs::write(
        &settings,
        "{\n  \"agent_servers\": {\n    \"x\": {\"command\": }\n  }\n}\n",
    )
    .unwrap();
    let out = sb.run(&["agents", "import-zed"]);
    assert_code(&out, 2);
    assert!(
        out.stderr
            .starts_with("acp: bad Zed settings $ROOT/config/zed/settings.json: ")
            && out.stderr.contains("line 3"),
        "{}",
        out.stderr
    );
    assert_eq!(read(&sb.config_file()), CONFIG);

    let out = sb.run(&["agents", "import-zed", "/nonexistent/settings.json"]);
    assert_code(&out, 2);
    assert!(
        out.stderr
            .contains("cannot read Zed's settings /nonexistent/settings.json"),
        "{}",
        out.stderr
    );
}

#[test]
fn the_config_behind_a_symlink_is_replaced_in_place() {
    let sb = sandbox();
    // The config is a link into a dotfiles folder; the link stays a link.
    let dotfiles = sb.dir.path().join("dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    let real = dotfiles.join("acp.toml");
    std::fs::rename(sb.config_file(), &real).unwrap();
    std::os::unix::fs::symlink(&real, sb.config_file()).unwrap();
    let out = sb.run(&["agents", "import-zed", FIXTURE]);
    assert_code(&out, 0);
    assert!(
        std::fs::symlink_metadata(sb.config_file())
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        read(&real).contains("[agents.test-agent]"),
        "{}",
        read(&real)
    );
}
