//! `acp record`: the proxy is byte-exact both ways (a full `acp exec`
//! session, and lines that are over-long, not UTF-8, CRLF or unterminated),
//! passes standard error, exit codes and signals through, and leaves a
//! readable record file even when killed with SIGKILL.

use crate::common;
use common::*;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// The record file's lines, parsed.
fn records(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The bytes of one stream (`client`, `agent`, `stderr`) rebuilt from the
/// record file, and the recorded full length of each line.
fn stream(records: &[serde_json::Value], from: &str) -> (Vec<u8>, Vec<u64>) {
    use base64::Engine as _;
    let mut bytes = Vec::new();
    let mut lengths = Vec::new();
    for r in records
        .iter()
        .filter(|r| r["from"] == from && r.get("eof").is_none())
    {
        let line = match (&r["line"], &r["base64"]) {
            (serde_json::Value::String(s), _) => s.as_bytes().to_vec(),
            (_, serde_json::Value::String(b)) => {
                base64::engine::general_purpose::STANDARD.decode(b).unwrap()
            }
            _ => panic!("no line in {r}"),
        };
        lengths.push(r["truncated"].as_u64().unwrap_or(line.len() as u64));
        bytes.extend_from_slice(&line);
        if r["newline"] != false {
            bytes.push(b'\n');
        }
    }
    (bytes, lengths)
}

/// `acp record -o FILE -- ARGS…` with piped standard streams.
fn proxy(sb: &Sandbox, file: &Path, agent: &[&str]) -> Child {
    let mut args = vec!["record", "-o", file.to_str().unwrap(), "--"];
    args.extend_from_slice(agent);
    sb.command(&args).stdin(Stdio::piped()).spawn().unwrap()
}

/// Reads the child's stderr until it has said where it records.
fn wait_until_recording(child: &mut Child) -> String {
    let mut stderr = child.stderr.take().unwrap();
    let mut seen = Vec::new();
    let mut byte = [0u8; 1];
    while !seen.ends_with(b".jsonl\n") {
        assert_eq!(stderr.read(&mut byte).unwrap(), 1, "stderr ended: {seen:?}");
        seen.push(byte[0]);
    }
    // Keep draining in the background, so the proxy never blocks on it.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    String::from_utf8(seen).unwrap()
}

#[test]
fn odd_lines_pass_unchanged_both_ways_and_the_record_rebuilds_them() {
    let sb = Sandbox::new();
    let dir = sb.root();
    // Over the record's 64 MiB line limit, so it is recorded in part.
    let over_long = 64 * 1024 * 1024 + 1000;
    let mut agent_out =
        b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n\xff\xfe not utf-8\r\n\n".to_vec();
    agent_out.extend(std::iter::repeat_n(b'a', over_long));
    agent_out.extend_from_slice(b"\n{\"tail\":true}\nno newline at the end");
    let mut client_out = b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\"}\r\n".to_vec();
    client_out.extend(std::iter::repeat_n(b'c', 1 << 20));
    client_out.extend_from_slice(b"\n\xc3\x28 bad utf-8\nunterminated");
    let agent_err = b"err line 1\nerr \xff line 2\n".to_vec();
    std::fs::write(dir.join("agent_out"), &agent_out).unwrap();
    std::fs::write(dir.join("agent_err"), &agent_err).unwrap();
    let received = dir.join("received");
    let script = format!(
        "cat '{0}/agent_out'; cat '{0}/agent_err' >&2; cat > '{1}'",
        dir.display(),
        received.display()
    );
    let file = dir.join("rec.jsonl");
    let mut child = proxy(&sb, &file, &["sh", "-c", &script]);
    let mut stdin = child.stdin.take().unwrap();
    let to_send = client_out.clone();
    let writer = std::thread::spawn(move || stdin.write_all(&to_send));
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut all = Vec::new();
        stdout.read_to_end(&mut all).map(|_| all)
    });
    let mut stderr = child.stderr.take().unwrap();
    let mut err = Vec::new();
    stderr.read_to_end(&mut err).unwrap();
    writer.join().unwrap().unwrap();
    let status = child.wait().unwrap();
    let got_out = reader.join().unwrap().unwrap();
    assert_eq!(status.code(), Some(0), "{}", String::from_utf8_lossy(&err));

    // What each side sent is what the other received, byte for byte.
    assert!(got_out == agent_out, "the editor got different bytes");
    assert!(
        std::fs::read(&received).unwrap() == client_out,
        "the agent got different bytes"
    );
    let banner = format!("acp record: recording to {}\n", file.display());
    assert_eq!(err[..banner.len()], *banner.as_bytes());
    assert_eq!(err[banner.len()..], agent_err[..]);

    // The record file holds every line; the over-long one by its first
    // 64 MiB and its full length.
    let records = records(&file);
    assert_eq!(records[0]["acpRecord"], 1);
    assert_eq!(records[0]["agent"][0], "sh");
    let line_lengths = |bytes: &[u8]| -> Vec<u64> {
        bytes
            .split(|&b| b == b'\n')
            .map(|l| l.len() as u64)
            .collect()
    };
    let (client, lengths) = stream(&records, "client");
    assert!(client == client_out);
    assert_eq!(lengths, line_lengths(&client_out));
    let (stderr_rec, _) = stream(&records, "stderr");
    assert_eq!(stderr_rec, agent_err);
    let (agent, lengths) = stream(&records, "agent");
    assert_eq!(lengths, line_lengths(&agent_out));
    assert_eq!(lengths[3], over_long as u64);
    let cut = 64 * 1024 * 1024;
    let start = agent_out.iter().position(|&b| b == b'a').unwrap();
    let mut expected = agent_out.clone();
    expected.drain(start + cut..start + over_long);
    assert!(
        agent == expected,
        "the agent's stream differs in the record"
    );
    assert!(
        records
            .iter()
            .any(|r| r["from"] == "agent" && r["base64"].is_string())
    );
    let last = records.last().unwrap();
    assert_eq!(last["exit"]["code"], 0, "{last}");
}

#[test]
fn a_full_exec_session_is_byte_exact_on_both_sides() {
    let sb = Sandbox::new();
    let dir = sb.root();
    // Taps on both sides of the proxy: what acp exec sent and received,
    // and what the agent received and sent.
    let tap = |name: &str, inner: &str| -> PathBuf {
        let path = dir.join(name);
        let body = format!(
            "#!/bin/sh\ntee '{0}/{name}.in' | {inner} | tee '{0}/{name}.out'\n",
            dir.display()
        );
        std::fs::write(&path, body).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    };
    let agent_tap = tap("agent-side", test_agent());
    let rec = dir.join("rec.jsonl");
    let proxied = format!(
        "{ACP} record -o {} -- {}",
        rec.display(),
        agent_tap.display()
    );
    let client_tap = tap("client-side", &proxied);
    std::fs::write(sb.work().join("notes.txt"), "one\n").unwrap();
    for prompt in ["tool", "permission", "huge 300000", "garbage", "bad-update"] {
        let out = sb.run(&[
            "exec",
            "--approve-all",
            "--agent",
            client_tap.to_str().unwrap(),
            prompt,
        ]);
        assert_code(&out, 0);
        let read = |name: &str| std::fs::read(dir.join(name)).unwrap();
        assert!(!read("client-side.in").is_empty());
        assert_eq!(
            read("client-side.in"),
            read("agent-side.in"),
            "{prompt}: editor → agent"
        );
        assert_eq!(
            read("agent-side.out"),
            read("client-side.out"),
            "{prompt}: agent → editor"
        );
        let records = records(&rec);
        assert_eq!(stream(&records, "client").0, read("client-side.in"));
        assert_eq!(stream(&records, "agent").0, read("agent-side.out"));
        std::fs::remove_file(&rec).unwrap();
    }
}

#[test]
fn the_agents_exit_code_is_the_proxys() {
    let sb = Sandbox::new();
    let file = sb.root().join("rec.jsonl");
    let out = sb.run(&[
        "record",
        "-o",
        file.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        "echo oops >&2; exit 7",
    ]);
    assert_code(&out, 7);
    assert_eq!(
        out.stderr,
        "acp record: recording to $ROOT/rec.jsonl\noops\n"
    );
    let records = records(&file);
    let stderr: Vec<_> = records.iter().filter(|r| r["from"] == "stderr").collect();
    assert_eq!(stderr.len(), 1);
    assert_eq!(stderr[0]["line"], "oops");
    assert_eq!(records.last().unwrap()["exit"]["code"], 7);
}

#[test]
fn signals_are_forwarded_and_a_signal_death_is_128_plus_it() {
    let sb = Sandbox::new();
    for (signal, code) in [
        (nix::sys::signal::Signal::SIGINT, 130),
        (nix::sys::signal::Signal::SIGTERM, 143),
        (nix::sys::signal::Signal::SIGHUP, 129),
    ] {
        let file = sb.root().join(format!("{signal}.jsonl"));
        // exec: the agent is `sleep` itself, which dies of the signal.
        let mut child = proxy(&sb, &file, &["sh", "-c", "echo ready; exec sleep 30"]);
        let mut stdout = child.stdout.take().unwrap();
        let mut ready = [0u8; 6];
        stdout.read_exact(&mut ready).unwrap();
        wait_until_recording(&mut child);
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        nix::sys::signal::kill(pid, signal).unwrap();
        let started = Instant::now();
        let status = child.wait().unwrap();
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(status.code(), Some(code), "{signal}");
        let records = records(&file);
        let signal_number = signal as i32;
        assert_eq!(
            records.last().unwrap()["exit"]["signal"],
            signal_number,
            "{signal}"
        );
    }
    // An agent that handles the signal decides the exit code.
    let file = sb.root().join("trap.jsonl");
    let script = "trap 'echo bye >&2; exit 42' TERM; echo ready; while :; do sleep 0.05; done";
    let mut child = proxy(&sb, &file, &["sh", "-c", script]);
    let mut stdout = child.stdout.take().unwrap();
    let mut ready = [0u8; 6];
    stdout.read_exact(&mut ready).unwrap();
    wait_until_recording(&mut child);
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(42));
    let records = records(&file);
    assert!(records.iter().any(|r| r["line"] == "bye"), "{records:?}");
}

#[test]
fn a_proxy_killed_with_sigkill_leaves_every_written_record_whole() {
    let sb = Sandbox::new();
    let file = sb.root().join("rec.jsonl");
    let script = "i=0; while :; do echo \"{\\\"n\\\":$i}\"; i=$((i+1)); done";
    let mut child = proxy(&sb, &file, &["sh", "-c", script]);
    let stdout = child.stdout.take().unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stdout));
    for _ in 0..20_000 {
        lines.next().unwrap().unwrap();
    }
    // The writer runs behind the pumps; give it a moment to write some.
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();
    drop(lines); // The agent dies of SIGPIPE on its next line.
    let text = std::fs::read(&file).unwrap();
    let lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
    let (last, whole) = lines.split_last().unwrap();
    assert!(
        whole.len() > 1000,
        "only {} records were written",
        whole.len()
    );
    for (i, line) in whole.iter().enumerate() {
        serde_json::from_slice::<serde_json::Value>(line)
            .unwrap_or_else(|e| panic!("record {} is not whole: {e}", i + 1));
    }
    // Whatever came last may be cut; `acp trace` still reads the file.
    let _ = last;
    let out = sb.run(&["trace", "--format", "json", file.to_str().unwrap()]);
    assert_code(&out, 0);
}

#[test]
fn by_default_the_record_goes_to_the_state_dir_readable_by_its_owner_only() {
    let sb = Sandbox::new();
    let state = sb.root().join("state");
    let sb = sb.env("XDG_STATE_HOME", state.to_str().unwrap());
    let out = sb.run(&["record", "--", "sh", "-c", "true"]);
    assert_code(&out, 0);
    let line = out.stderr.lines().next().unwrap();
    let path = line
        .strip_prefix("acp record: recording to $ROOT/state/acp/recordings/")
        .unwrap_or_else(|| panic!("{line}"));
    assert!(path.ends_with(".jsonl"), "{path}");
    assert_eq!(
        path.len(),
        "2025-01-02T03-04-05.678Z-".len() + path.split('-').next_back().unwrap().len()
    );
    let file = state.join("acp/recordings").join(path);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let dir_mode = std::fs::metadata(file.parent().unwrap())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(dir_mode & 0o777, 0o700);
    // -o DIR puts a new file in DIR.
    let out = sb.run(&["record", "-o", sb.root().to_str().unwrap(), "--", "true"]);
    assert_code(&out, 0);
    assert!(
        out.stderr.starts_with("acp record: recording to $ROOT/20"),
        "{}",
        out.stderr
    );
}

#[test]
fn an_existing_file_is_never_overwritten_and_a_missing_agent_is_127() {
    let sb = Sandbox::new();
    let file = sb.root().join("keep.jsonl");
    std::fs::write(&file, "precious\n").unwrap();
    let marker = sb.root().join("started");
    let script = format!("touch '{}'", marker.display());
    let out = sb.run(&[
        "record",
        "-o",
        file.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        &script,
    ]);
    assert_code(&out, 2);
    assert!(
        out.stderr.contains("a recording is never overwritten"),
        "{}",
        out.stderr
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "precious\n");
    assert!(!marker.exists(), "the agent was started");

    let missing = sb.root().join("new.jsonl");
    let out = sb.run(&[
        "record",
        "-o",
        missing.to_str().unwrap(),
        "--",
        "no-such-agent-xyz",
    ]);
    assert_code(&out, 127);
    assert!(
        out.stderr
            .starts_with("acp: cannot start no-such-agent-xyz"),
        "{}",
        out.stderr
    );
    assert!(!missing.exists(), "an empty recording was left behind");

    let out = sb.run(&["record"]);
    assert_code(&out, 2);
    // --agent names exec's and chat's agent; here it would be ignored.
    let out = sb.run(&["record", "--agent", "x", "--", "true"]);
    assert_code(&out, 2);
    assert!(out.stderr.contains("acp record -- AGENT"), "{}", out.stderr);
}

#[test]
fn redact_masks_secrets_in_the_record_but_not_on_the_wire() {
    let sb = Sandbox::new().env("MY_API_KEY", "sk-test-0123456789");
    let file = sb.root().join("rec.jsonl");
    let script = r#"read line; echo "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"apiKey\":\"abc\",\"echo\":\"$MY_API_KEY\"}}"; echo "key=$MY_API_KEY" >&2"#;
    let mut child = sb
        .command(&[
            "record",
            "--redact",
            "-o",
            file.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            script,
            "--token=hunter2hunter2",
        ])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"authenticate\",\"params\":{\"methodId\":\"m\",\"_meta\":{\"cookie\":\"c\"}}}\n")
        .unwrap();
    let out = sb.output(child.wait_with_output().unwrap());
    assert_code(&out, 0);
    // The editor sees the real values.
    assert_eq!(
        out.stdout,
        "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"apiKey\":\"abc\",\"echo\":\"sk-test-0123456789\"}}\n"
    );
    assert!(out.stderr.ends_with("key=sk-test-0123456789\n"));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains("sk-test-0123456789"), "{text}");
    assert!(!text.contains("hunter2hunter2"), "{text}");
    let records = records(&file);
    assert_eq!(records[0]["redacted"], true);
    assert_eq!(records[0]["agent"][3], "--token=[REDACTED]");
    let agent = records
        .iter()
        .find(|r| r["from"] == "agent" && r["line"].is_string())
        .unwrap();
    assert_eq!(
        agent["line"],
        "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"apiKey\":\"[REDACTED]\",\"echo\":\"[REDACTED]\"}}"
    );
    assert_eq!(agent["redacted"], true);
    let client = records
        .iter()
        .find(|r| r["from"] == "client" && r["line"].is_string())
        .unwrap();
    assert!(
        client["line"]
            .as_str()
            .unwrap()
            .contains("\"_meta\":{\"cookie\":\"[REDACTED]\"}")
    );
    assert!(records.iter().any(|r| r["line"] == "key=[REDACTED]"));
}
