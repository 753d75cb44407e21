//! The official TypeScript SDK's network clients (`createWebSocketStream`
//! with the `ws` package, `createHttpStream`) driving `acp serve` wrapping
//! our `acp-test-agent`: `interop/js/remote-client.mjs` runs a full session
//! (a permission request and an `fs/read_text_file` flowing back to it, a
//! slow turn cancelled with `session/cancel`), with and without the token.

use crate::common;

use acp_interop::Peer::Js;
use acp_interop::run;
use common::served::Served;
use common::{Sandbox, test_agent};

/// `remote-client.mjs ARGS…`, run in the interop sandbox.
fn remote_client(sb: &acp_interop::Sandbox, args: &[&str]) -> acp_interop::Output {
    let programs = Js.programs();
    let mut command = sb.command(&programs.interpreter);
    command
        .arg(programs.dir.join("remote-client.mjs"))
        .args(args);
    run(command)
}

fn expected(read: &str) -> String {
    format!(
        "PROMPT permission\nPERMISSION call-p allow\npermission: selected allow\n\nSTOP end_turn\n\
         PROMPT read {read}\nREAD {read}\nserved notes\n\nSTOP end_turn\n\
         PROMPT slow\ntick 1\ntick 2\ntick 3\n\nSTOP cancelled\n"
    )
}

#[test]
fn the_ts_sdk_clients_drive_acp_serve_over_both_profiles() {
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let served = Served::start(&sb, &[], &[test_agent()]);
    let peer_sb = acp_interop::Sandbox::new();
    let file = peer_sb.write("notes.txt", "served notes\n");
    let read = file.display().to_string();
    for url in [served.url.clone(), served.http_url()] {
        let out = remote_client(&peer_sb, &["--url", &url, "--read", &read]);
        assert_eq!(out.code, Some(0), "{url}: {}{}", out.stdout, out.stderr);
        assert_eq!(out.stdout, expected(&read), "{url}");
    }
}

#[test]
fn the_ts_sdk_clients_need_the_token() {
    if !Js.available() {
        return;
    }
    let sb = Sandbox::new();
    let token = sb.root().join("token");
    std::fs::write(&token, "tok-js-41\n").unwrap();
    let served = Served::start(
        &sb,
        &["--token-file", &token.display().to_string()],
        &[test_agent()],
    );
    let peer_sb = acp_interop::Sandbox::new();
    let file = peer_sb.write("notes.txt", "served notes\n");
    let read = file.display().to_string();
    for url in [served.url.clone(), served.http_url()] {
        let out = remote_client(&peer_sb, &["--url", &url, "--token", "nope"]);
        assert_eq!(out.code, Some(1), "{url}: {}", out.stdout);
        assert!(out.stderr.contains("401"), "{url}: {}", out.stderr);
        let out = remote_client(
            &peer_sb,
            &["--url", &url, "--token", "tok-js-41", "--read", &read],
        );
        assert_eq!(out.code, Some(0), "{url}: {}{}", out.stdout, out.stderr);
        assert_eq!(out.stdout, expected(&read), "{url}");
    }
}
