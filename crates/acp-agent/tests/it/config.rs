//! The config file: the agent configured by `--config` alone, and startup
//! errors for a missing or malformed file.

use crate::support;

use acp::schema::*;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use support::*;

#[tokio::test]
async fn a_config_file_alone_configures_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = canonical(dir.path());
    let mock = MockLlm::start(vec![text_reply("Configured by file.")]).await;
    let config = dir.path().join("agent.toml");
    std::fs::write(
        &config,
        format!(
            "# the mock server\n\
             model = \"openai:mock-model\"\n\
             models = [\"openai:mock-model\", \"openai:other-model\", \"anthropic:not-configured\"]\n\
             max_turn_requests = 5\n\
             \n\
             [openai]\n\
             base_url = \"{}\"\n\
             api_key = \"file-key\"\n",
            mock.base_url
        ),
    )
    .unwrap();
    let data = tempfile::tempdir().unwrap();
    let r = start_agent_with(
        &["--config", config.to_str().unwrap()],
        &[],
        TestClient::new("allow_once"),
        data.path(),
    )
    .await;
    r.initialize().await;
    let new = r
        .conn
        .new_session(NewSessionRequest::new(cwd.display().to_string()))
        .await
        .unwrap();
    let options = new.config_options.unwrap();
    let SessionConfigKind::Select(models) = &options[1].kind else {
        panic!("{options:?}")
    };
    assert_eq!(models.current_value.as_str(), "openai:mock-model");
    let offered: Vec<&str> = models.options.iter().map(|o| o.value.as_str()).collect();
    assert_eq!(offered, ["openai:mock-model", "openai:other-model"]);

    assert_eq!(r.prompt(&new.session_id, "hi").await, StopReason::EndTurn);
    assert_eq!(r.client.rec.message_text(), "Configured by file.");
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0]["model"], "mock-model");
    let heads = mock.heads.lock().unwrap().clone();
    assert!(
        heads[0].contains("authorization: bearer file-key"),
        "{heads:?}"
    );
}

/// Runs the agent with `args` and a closed stdin, its home in `home`.
fn run_agent(args: &[&str], home: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_acp-agent"))
        .args(args)
        .arg("--data-dir")
        .arg(home.join("data"))
        .env_clear()
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn bad_config_files_stop_the_agent_at_startup() {
    let home = tempfile::tempdir().unwrap();
    let bad = home.path().join("bad.toml");
    std::fs::write(&bad, "model = \"openai:x\"\nmax_turn_requests = \"ten\"\n").unwrap();
    let out = run_agent(&["--config", bad.to_str().unwrap()], home.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("config file {}, line 2,", bad.display())),
        "{stderr}"
    );

    let missing = home.path().join("missing.toml");
    let out = run_agent(&["--config", missing.to_str().unwrap()], home.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "config file {}: cannot be read",
            missing.display()
        )),
        "{stderr}"
    );
    assert!(!home.path().join("data").exists(), "no store was opened");

    // The default file is read when present (here under XDG_CONFIG_HOME).
    if cfg!(target_os = "linux") {
        let default = home.path().join("config/acp-agent/config.toml");
        std::fs::create_dir_all(default.parent().unwrap()).unwrap();
        std::fs::write(&default, "[openai]\nbase_ur = \"http://x\"\n").unwrap();
        let out = run_agent(&[], home.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains(&format!("config file {}, line 2,", default.display())),
            "{stderr}"
        );
        assert!(stderr.contains("base_ur"), "{stderr}");
    }
}
