//! The agent's own tools, for a client that offers neither files nor
//! terminals: they run on `acp-host`, so they keep `acp`'s guarantees
//! (confinement, read-only files, output order, signal names, character
//! boundaries, no surviving descendants).

use crate::support;

use acp::schema::*;
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};
use support::*;

use acp_host::is_alive as alive;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_tools_keep_the_hosts_guarantees() {
    let dir = tempfile::tempdir().unwrap();
    let base = canonical(dir.path());
    let cwd = base.join("project");
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::write(base.join("secret.txt"), "secret").unwrap();
    std::fs::write(cwd.join("ro.txt"), "keep").unwrap();
    std::fs::set_permissions(cwd.join("ro.txt"), std::fs::Permissions::from_mode(0o444)).unwrap();
    let pid_file = cwd.join("pid");
    let tools = [
        ("read_file", json!({"path": "../secret.txt"})),
        (
            "write_file",
            json!({"path": "ro.txt", "content": "changed"}),
        ),
        (
            "run_command",
            json!({"command": "echo one; echo two >&2; echo three"}),
        ),
        ("run_command", json!({"command": "kill -9 $$"})),
        // 80,000 bytes of a 3-byte character: cut to the last 64 KiB, on a
        // character boundary.
        (
            "run_command",
            json!({"command": "i=0; while [ $i -lt 26667 ]; do printf '€'; i=$((i+1)); done"}),
        ),
        // A process that leaves the session, then a time limit.
        (
            "run_command",
            json!({
                "command": format!("setsid sh -c 'echo $$ > {}; exec sleep 1000' & sleep 1000", pid_file.display()),
                "timeout_secs": 1
            }),
        ),
    ];
    let mut replies: Vec<Reply> = tools
        .iter()
        .enumerate()
        .map(|(i, (name, args))| tool_reply(&format!("t{i}"), name, args.clone()))
        .collect();
    replies.push(text_reply("Done."));
    let mock = MockLlm::start(replies).await;
    let env = openai_env(&mock);
    let r = start_agent(&env, TestClient::new("allow_once")).await;
    let sid = open_session(&r, caps(false, false), &cwd).await;
    assert_eq!(r.prompt(&sid, "go").await, StopReason::EndTurn);

    let reqs = mock.requests();
    let results = tool_results(&reqs[tools.len()]);
    assert_eq!(results.len(), tools.len(), "{results:#?}");
    assert!(
        results[0].contains("access denied")
            && results[0].contains("outside the session's directories"),
        "{}",
        results[0]
    );
    assert!(
        results[1].contains("read-only (mode 0444)"),
        "{}",
        results[1]
    );
    assert_eq!(std::fs::read_to_string(cwd.join("ro.txt")).unwrap(), "keep");
    assert!(
        results[2].ends_with("Exit code: 0\none\ntwo\nthree\n"),
        "{}",
        results[2]
    );
    assert!(
        results[3].contains("Killed by signal SIGKILL"),
        "{}",
        results[3]
    );
    assert!(results[4].contains("[output truncated; showing the end]"));
    assert!(!results[4].contains('\u{FFFD}'), "cut inside a character");
    let euros = results[4].rsplit('\n').next().unwrap();
    assert_eq!(euros.len(), 64 * 1024 / 3 * 3);
    assert!(results[5].contains("timed out after 1s"), "{}", results[5]);
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // The tool result came after the kill, which answers once all are gone;
    // a moment for /proc to show it on a loaded machine.
    let deadline = Instant::now() + Duration::from_secs(30);
    while alive(pid) {
        assert!(
            Instant::now() < deadline,
            "the setsid process survived the timeout"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
