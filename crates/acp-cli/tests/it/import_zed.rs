//! `acp agents import-zed`: Zed's custom agents become `[agents.NAME]`
//! tables, without touching the rest of the config.

use crate::common;
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
    let dir = Path::new(test_agent())
        .parent()
        .unwrap()
        .display()
        .to_string();
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
         skipped claude: Zed's built-in agent claude: settings.json holds only its settings, not a \
         command; add [agents.claude] by hand; for example: command = \"npx\", args = [\"-y\", \
         \"@agentclientprotocol/claude-agent-acp\"]\n\
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

#[test]
fn home_and_variables_in_commands_are_expanded() {
    use std::os::unix::fs::PermissionsExt;
    let sb = sandbox();
    // An agent in ~/bin that is the test agent.
    let bin = sb.dir.path().join("home/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = bin.join("my-agent");
    std::fs::write(
        &script,
        format!("#!/bin/sh\nexec '{}' \"$@\"\n", test_agent()),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let sb = sb.env("AGENT_DIR", bin.to_str().unwrap());
    std::fs::write(
        zed_settings(&sb),
        r#"{"agent_servers": {
            "tilde": {"type": "custom", "command": "~/bin/my-agent"},
            "var": {"type": "custom", "command": "${AGENT_DIR}/my-agent"},
            "unset": {"type": "custom", "command": "$NO_SUCH_DIR/agent"},
            "odd": {"type": "carrier-pigeon", "command": "x"},
            "empty": {"type": "custom"},
        }}"#,
    )
    .unwrap();
    let out = sb.run(&["agents", "import-zed"]);
    assert_code(&out, 0);
    assert_eq!(
        out.stdout,
        "added   tilde: $ROOT/home/bin/my-agent (expanded from ~/bin/my-agent)\n\
         added   var: $ROOT/home/bin/my-agent (expanded from ${AGENT_DIR}/my-agent)\n\
         skipped unset: its command \"$NO_SUCH_DIR/agent\" names $NO_SUCH_DIR, which is not set\n\
         skipped odd: an entry of a type acp does not know (\"carrier-pigeon\")\n\
         skipped empty: its entry has no command\n\
         imported 2 agents from $ROOT/config/zed/settings.json into $ROOT/config/acp/config.toml\n"
    );
    // Both run (the agent would fail with 127 if ~ had been kept).
    for name in ["tilde", "var"] {
        let out = sb.run(&["exec", "--agent", name, "hi"]);
        assert_code(&out, 0);
        assert_eq!(out.stdout, "You said: hi\n");
    }
}

#[test]
fn default_mode_and_model_are_kept_and_applied() {
    let sb = sandbox();
    let log = sb.dir.path().join("agent.log");
    let sb = sb
        .env("ACP_TEST_AGENT_EXTRAS", "1")
        .env("ACP_TEST_AGENT_LOG", log.to_str().unwrap());
    std::fs::write(
        zed_settings(&sb),
        r#"{"agent_servers": {"moded": {"type": "custom", "command": "acp-test-agent",
            "default_mode": "auto", "default_model": "smart",
            "default_config_options": {"web": true}}}}"#,
    )
    .unwrap();
    let out = sb.run(&["agents", "import-zed"]);
    assert_code(&out, 0);
    assert!(
        out.stdout.contains(
            "added   moded: acp-test-agent (default mode auto; default model smart; web = true)\n"
        ),
        "{}",
        out.stdout
    );
    assert!(
        read(&sb.config_file()).ends_with(
            "[agents.moded]\ncommand = \"acp-test-agent\"\ndefault_mode = \"auto\"\n\
             default_model = \"smart\"\ndefault_config_options = { web = \"true\" }\n"
        ),
        "{}",
        read(&sb.config_file())
    );
    let out = sb.run(&["exec", "--agent", "moded", "hi"]);
    assert_code(&out, 0);
    let log = read(&log);
    for line in [
        "session/set_mode auto",
        "session/set_config_option model smart",
        "session/set_config_option web true",
    ] {
        assert!(log.lines().any(|l| l == line), "{line} missing in\n{log}");
    }
    // A default that does not fit is a note, not an error.
    std::fs::write(
        sb.config_file(),
        "[agents.moded]\ncommand = \"acp-test-agent\"\ndefault_mode = \"turbo\"\n",
    )
    .unwrap();
    let out = sb.run(&["exec", "--agent", "moded", "hi"]);
    assert_code(&out, 0);
    assert!(
        out.stderr.contains(
            "[note] the agent has no mode turbo; its modes are ask, auto (a default of the agent's config entry)"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn secrets_are_copied_into_a_private_file_with_a_warning() {
    use std::os::unix::fs::PermissionsExt;
    let sb = sandbox();
    std::fs::set_permissions(sb.config_file(), std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::write(
        zed_settings(&sb),
        r#"{"agent_servers": {"keyed": {"type": "custom", "command": "acp-test-agent",
            "env": {"ANTHROPIC_API_KEY": "sk-secret", "LOG_LEVEL": "debug"}}}}"#,
    )
    .unwrap();
    let out = sb.run(&["agents", "import-zed"]);
    assert_code(&out, 0);
    assert!(!out.stdout.contains("sk-secret"), "{}", out.stdout);
    assert_eq!(
        out.stderr,
        "acp: warning: the config file now holds secrets (ANTHROPIC_API_KEY); it is readable only \
         by you (0600). Keep it out of backups and dotfile repositories, or move the secrets to \
         your environment.\n"
    );
    let mode = std::fs::metadata(sb.config_file())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    // A new config file is private from the start.
    let fresh = sb.dir.path().join("fresh.toml");
    let out = sb.run(&[
        "--config",
        fresh.to_str().unwrap(),
        "agents",
        "import-zed",
        FIXTURE,
    ]);
    assert_code(&out, 0);
    let mode = std::fs::metadata(&fresh).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}
