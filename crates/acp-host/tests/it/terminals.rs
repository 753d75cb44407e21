//! `Terminals` as a client uses it: order of output, exit statuses, the
//! environment, and kills that leave no descendant behind.

use acp_host::{Roots, Sandbox, SupervisorProgram, TerminalSettings, Terminals};
use acp_schema::*;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const SUPERVISOR: &str = env!("CARGO_BIN_EXE_acp-host-supervisor");

struct Setup {
    _dir: tempfile::TempDir,
    root: PathBuf,
    terminals: Terminals,
}

fn setup(sandbox: impl FnOnce(&Path) -> Sandbox) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let settings = TerminalSettings::new(Roots::new([&root]).unwrap())
        .sandbox(sandbox(&root))
        .supervisor(SupervisorProgram::Path(SUPERVISOR.into()));
    Setup {
        _dir: dir,
        root,
        terminals: Terminals::new(settings),
    }
}

fn unsandboxed() -> Setup {
    setup(|_| Sandbox::off())
}

fn sh(script: &str) -> CreateTerminalRequest {
    CreateTerminalRequest::new("s1", "sh").args(vec!["-c".to_owned(), script.to_owned()])
}

impl Setup {
    async fn start(&self, request: CreateTerminalRequest) -> TerminalId {
        self.terminals.create(request).await.unwrap().terminal_id
    }

    async fn release(&self, id: TerminalId) {
        self.terminals
            .release(ReleaseTerminalRequest::new("s1", id))
            .await
            .unwrap();
    }

    async fn run(&self, request: CreateTerminalRequest) -> (TerminalExitStatus, String, bool) {
        let id = self.start(request).await;
        let exit = self
            .terminals
            .wait_for_exit(WaitForTerminalExitRequest::new("s1", id.clone()))
            .await
            .unwrap()
            .exit_status();
        let out = self
            .terminals
            .output(&TerminalOutputRequest::new("s1", id.clone()))
            .unwrap();
        self.release(id).await;
        assert_eq!(out.exit_status.as_ref(), Some(&exit));
        (exit, out.output, out.truncated)
    }
}

/// Waits (up to a minute, for a loaded machine) until `check` holds.
fn wait_until(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

use acp_host::is_alive as alive;

fn pids(file: &Path, count: usize) -> Vec<i32> {
    wait_until("the command to write its pids", || {
        std::fs::read_to_string(file).is_ok_and(|t| t.lines().count() >= count)
    });
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect()
}

/// A command that leaves two processes behind and exits: a grandchild that
/// ignores SIGTERM, and one that left the session with `setsid`. Both
/// outlive their parent, which exits at once.
fn escapees(pid_file: &Path) -> CreateTerminalRequest {
    sh(&format!(
        "sh -c 'trap \"\" TERM; echo $$ >> {f}; exec sleep 1000' & \
         setsid sh -c 'echo $$ >> {f}; exec sleep 1000' & exit 0",
        f = pid_file.display()
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_keeps_order_and_exit_statuses_name_signals() {
    let s = unsandboxed();
    let (exit, out, truncated) = s
        .run(sh("echo one; echo two >&2; echo three; pwd; exit 4"))
        .await;
    assert_eq!(exit, TerminalExitStatus::exited(4u32));
    assert_eq!(out, format!("one\ntwo\nthree\n{}\n", s.root.display()));
    assert!(!truncated);
    let (exit, _, _) = s.run(sh("kill -TERM $$")).await;
    assert_eq!(exit, TerminalExitStatus::signaled("SIGTERM"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_limits_cut_on_char_boundaries_with_a_default() {
    let s = unsandboxed();
    let (_, out, truncated) = s.run(sh("printf 'ab€é'").output_byte_limit(4u64)).await;
    assert_eq!((out.as_str(), truncated), ("é", true));
    // No limit given: the last DEFAULT_OUTPUT_LIMIT bytes (3 MiB written).
    let (_, out, truncated) = s
        .run(sh("head -c 3145728 /dev/zero | tr '\\0' 'x'; echo end"))
        .await;
    assert!(truncated);
    assert_eq!(out.len(), acp_host::DEFAULT_OUTPUT_LIMIT);
    assert!(out.ends_with("xend\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn environment_is_the_clients_plus_the_requests_and_nothing_else() {
    let s = unsandboxed();
    let request = sh("echo \"$ACP_HOST_TEST_VAR\"; env | grep -c ACP_HOST_SUPERVISOR; true")
        .env(vec![EnvVariable::new("ACP_HOST_TEST_VAR", "given")]);
    let (_, out, _) = s.run(request).await;
    assert_eq!(out, "given\n0\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_commands_and_cwds_are_errors() {
    let s = unsandboxed();
    let e = s
        .terminals
        .create(CreateTerminalRequest::new("s1", "/no/such/program"))
        .await
        .unwrap_err();
    assert!(
        e.message.contains("cannot run \"/no/such/program\""),
        "{}",
        e.message
    );
    let e = s.terminals.create(sh("true").cwd("/")).await.unwrap_err();
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    assert!(
        e.message.contains("outside the session's directories"),
        "{}",
        e.message
    );
    let e = s
        .terminals
        .output(&TerminalOutputRequest::new("s1", "term-99"))
        .unwrap_err();
    assert!(e.message.contains("no terminal with id term-99"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_ends_descendants_that_left_the_group_or_lost_their_parent() {
    let s = unsandboxed();
    let file = s.root.join("pids");
    let id = s.start(escapees(&file)).await;
    let exit = s
        .terminals
        .wait_for_exit(WaitForTerminalExitRequest::new("s1", id.clone()))
        .await
        .unwrap();
    assert_eq!(exit.exit_status(), TerminalExitStatus::exited(0u32));
    let left = pids(&file, 2);
    assert!(left.iter().all(|&p| alive(p)), "both outlive the command");
    s.terminals
        .kill(KillTerminalRequest::new("s1", id.clone()))
        .await
        .unwrap();
    for pid in &left {
        assert!(!alive(*pid), "process {pid} survived terminal/kill");
    }
    // The terminal and its exit status stay until released.
    let out = s
        .terminals
        .output(&TerminalOutputRequest::new("s1", id.clone()))
        .unwrap();
    assert_eq!(out.exit_status, Some(TerminalExitStatus::exited(0u32)));
    s.release(id).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn release_and_dropping_the_client_end_descendants_too() {
    let s = unsandboxed();
    let file = s.root.join("pids");
    let id = s.start(escapees(&file)).await;
    let left = pids(&file, 2);
    s.release(id).await;
    assert!(left.iter().all(|&p| !alive(p)), "survivors after release");

    let file = s.root.join("pids-2");
    let _id = s.start(escapees(&file)).await;
    let left = pids(&file, 2);
    // The client goes away without a word: its control sockets close.
    drop(s.terminals);
    wait_until("the supervisor to kill what was left", || {
        left.iter().all(|&p| !alive(p))
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clients_other_children_are_still_reaped_by_tokio() {
    let s = unsandboxed();
    let file = s.root.join("pids");
    let id = s.start(escapees(&file)).await;
    let left = pids(&file, 2);
    // A child of our own, started while orphans exist below a terminal.
    let status = tokio::process::Command::new("sh")
        .args(["-c", "sleep 0.2; exit 7"])
        .status()
        .await
        .unwrap();
    assert_eq!(status.code(), Some(7));
    s.release(id).await;
    assert!(left.iter().all(|&p| !alive(p)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sandboxed_commands_write_only_inside_the_roots() {
    if !acp_host::sandbox_support().is_available() {
        eprintln!("skipped: {}", acp_host::sandbox_support());
        return;
    }
    // Not below the temporary directory, which the default sandbox allows.
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let target = outside.path().join("escaped");
    let s = setup(|root| Sandbox::writable([root.to_path_buf()]));
    let script = format!(
        "echo in > inside; echo out > {} || echo refused; cat /etc/hostname >/dev/null && echo read",
        target.display()
    );
    let (exit, out, _) = s.run(sh(&script)).await;
    assert_eq!(exit, TerminalExitStatus::exited(0u32));
    assert!(out.contains("Permission denied"), "{out}");
    assert!(out.ends_with("refused\nread\n"), "{out}");
    assert!(!target.exists(), "the kernel let the write through");
    assert_eq!(
        std::fs::read_to_string(s.root.join("inside")).unwrap(),
        "in\n"
    );

    // Off: the same command writes outside.
    let s = unsandboxed();
    let (_, out, _) = s.run(sh(&script)).await;
    assert_eq!(out, "read\n");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "out\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sandboxed_commands_cannot_kill_their_supervisor() {
    let acp_host::Support::Landlock { signals: true, .. } = acp_host::sandbox_support() else {
        eprintln!("skipped: no Landlock signal scoping here");
        return;
    };
    let s = setup(|root| Sandbox::writable([root.to_path_buf()]));
    let file = s.root.join("pids");
    let script = format!(
        "setsid sh -c 'echo $$ >> {f}; exec sleep 1000' & kill -9 $PPID 2>&1 || echo kept; exit 0",
        f = file.display()
    );
    let (exit, out, _) = {
        let id = s.start(sh(&script)).await;
        let exit = s
            .terminals
            .wait_for_exit(WaitForTerminalExitRequest::new("s1", id.clone()))
            .await
            .unwrap()
            .exit_status();
        let out = s
            .terminals
            .output(&TerminalOutputRequest::new("s1", id.clone()))
            .unwrap();
        let left = pids(&file, 1);
        s.release(id).await;
        assert!(left.iter().all(|&p| !alive(p)), "a survivor after release");
        (exit, out.output, out.truncated)
    };
    assert_eq!(exit, TerminalExitStatus::exited(0u32));
    assert!(out.ends_with("kept\n"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_network_refuses_tcp() {
    let Ok(listener) = std::net::TcpListener::bind("127.0.0.1:0") else {
        return;
    };
    let acp_host::Support::Landlock { network: true, .. } = acp_host::sandbox_support() else {
        eprintln!("skipped: no Landlock network rules here");
        return;
    };
    let port = listener.local_addr().unwrap().port();
    let script = format!("echo hi > /dev/tcp/127.0.0.1/{port} && echo connected || echo refused");
    let bash = |s: &str| CreateTerminalRequest::new("s1", "bash").args(vec!["-c".into(), s.into()]);
    let s = setup(|root| Sandbox::writable([root.to_path_buf()]).no_network(true));
    let (_, out, _) = s.run(bash(&script)).await;
    assert!(out.ends_with("refused\n"), "{out}");
    let s = setup(|root| Sandbox::writable([root.to_path_buf()]));
    let (_, out, _) = s.run(bash(&script)).await;
    assert_eq!(out, "connected\n");
}
