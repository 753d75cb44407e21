//! A hostile agent driven by `acp exec`: files outside the roots, links,
//! special files, oversized and binary files, protected and read-only
//! files, policies that must mean what they say, processes that try to
//! outlive their terminal, a kill of acp in the middle of a write, and the
//! sandbox.

use crate::common;
use common::*;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// `acp exec --agent <hostile agent> FLAGS… STEPS`, with `$TMPDIR` inside
/// the sandbox (so that the rest of /tmp is outside every writable place).
fn hostile(sb: &Sandbox, flags: &[&str], steps: &str) -> Output {
    let out = hostile_command(sb, flags, steps).output().unwrap();
    sb.output(out)
}

fn hostile_command(sb: &Sandbox, flags: &[&str], steps: &str) -> std::process::Command {
    let mut args = vec!["exec", "--agent", hostile_agent()];
    args.extend_from_slice(flags);
    args.push(steps);
    let tmp = sb.dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut command = sb.command(&args);
    command.env("TMPDIR", tmp);
    command
}

fn w(sb: &Sandbox, name: &str) -> String {
    sb.work().join(name).display().to_string()
}

/// Waits (a minute at most, for a loaded machine) until `check` holds.
fn wait_until(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

use acp_host::is_alive as alive;

fn pids(file: &Path) -> Vec<i32> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

fn temp_files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(".acp-write-")
        })
        .collect()
}

#[test]
fn reads_and_writes_outside_the_roots_are_refused_through_any_path() {
    let sb = Sandbox::new();
    let outside = sb.root().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret"), "secret").unwrap();
    symlink(outside.join("secret"), sb.work().join("file-link")).unwrap();
    symlink(&outside, sb.work().join("dir-link")).unwrap();
    symlink(outside.join("planted"), sb.work().join("dangling")).unwrap();
    let steps = [
        format!("read {}/secret", outside.display()),
        format!("read {}/../outside/secret", sb.work().display()),
        format!("read {}", w(&sb, "file-link")),
        format!("read {}", w(&sb, "dir-link/secret")),
        format!("write {} evil", w(&sb, "dir-link/new")),
        format!("write {} evil", w(&sb, "dangling")),
        format!("read {}/a\\0b", sb.work().display()),
        "read notes.txt".to_owned(),
    ]
    .join(" ;; ");
    let out = hostile(&sb, &["--approve-all"], &steps);
    assert_code(&out, 0);
    assert_eq!(
        out.stdout,
        "error -32602: access denied: $ROOT/outside/secret is outside the session's directories ($WORK)\n\
         error -32602: access denied: $WORK/../outside/secret (it resolves to $ROOT/outside/secret) is outside the session's directories ($WORK)\n\
         error -32602: access denied: $WORK/file-link (it resolves to $ROOT/outside/secret) is outside the session's directories ($WORK)\n\
         error -32602: access denied: $WORK/dir-link/secret (it resolves to $ROOT/outside/secret) is outside the session's directories ($WORK)\n\
         error -32602: access denied: $WORK/dir-link/new (it resolves to $ROOT/outside/new) is outside the session's directories ($WORK)\n\
         error -32602: access denied: $WORK/dangling (it resolves to $ROOT/outside/planted) is outside the session's directories ($WORK)\n\
         error -32602: the path \"$WORK/a\\\\0b\" contains a NUL byte\n\
         error -32602: the path \"notes.txt\" is relative; paths must be absolute, for example $WORK/notes.txt\n"
    );
    assert!(!outside.join("new").exists() && !outside.join("planted").exists());
}

#[test]
fn special_oversized_and_binary_files_are_refused_at_once() {
    let sb = Sandbox::new();
    let fifo = sb.work().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    // Over the 64 MiB message limit, but sparse, with a short last line.
    let big = sb.work().join("big.txt");
    let file = std::fs::File::create(&big).unwrap();
    file.set_len(65 * 1024 * 1024).unwrap();
    drop(file);
    std::fs::OpenOptions::new()
        .append(true)
        .open(&big)
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"\nlast line\n"))
        .unwrap();
    std::fs::write(sb.work().join("bin"), b"text\n\xff\xfe\n").unwrap();
    let steps = [
        format!("read {}", w(&sb, "fifo")),
        "read /dev/zero".to_owned(),
        format!("read {}", sb.work().display()),
        format!("read {}", w(&sb, "big.txt")),
        format!("read {} 2 1", w(&sb, "big.txt")),
        format!("read {}", w(&sb, "bin")),
        format!("read {} 1 1", w(&sb, "bin")),
    ]
    .join(" ;; ");
    let out = hostile(&sb, &["--approve-all", "--allow-outside-cwd"], &steps);
    assert_code(&out, 0);
    let size = 65 * 1024 * 1024 + 11;
    let budget = 64 * 1024 * 1024 - 1024;
    assert_eq!(
        out.stdout,
        format!(
            "error -32602: $WORK/fifo is a FIFO (named pipe); only regular text files can be read\n\
             error -32602: /dev/zero is a device; only regular text files can be read\n\
             error -32602: $WORK is a directory; only regular text files can be read\n\
             error -32602: $WORK/big.txt is too large to send in one answer ({size} bytes; at most {budget}); read it in parts with line and limit\n\
             read 10 bytes\n\
             error -32602: $WORK/bin is not UTF-8 text (line 2 has bytes that are not UTF-8); only text files can be read\n\
             read 5 bytes\n"
        )
    );
}

#[test]
fn writes_onto_directories_read_only_files_and_git_internals_are_refused() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.work().join(".git/hooks")).unwrap();
    std::fs::create_dir_all(sb.work().join("dir")).unwrap();
    let ro = sb.work().join("ro.txt");
    std::fs::write(&ro, "keep").unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
    let hook = w(&sb, ".git/hooks/post-checkout");
    let steps = [
        format!("write {} x", w(&sb, "dir")),
        format!("write {} x", w(&sb, "ro.txt")),
        format!("write {hook} evil"),
        format!("write {} evil", w(&sb, ".git/config")),
        // A grant that does not name the hook does not cover it.
        "grant edit".to_owned(),
        format!("write {hook} evil"),
        format!("write {} fine", w(&sb, "ok.txt")),
    ]
    .join(" ;; ");
    let out = hostile(&sb, &["--approve-all"], &steps);
    assert_eq!(
        out.stdout,
        "error -32602: $WORK/dir is a directory; a file cannot be written in its place\n\
         error -32602: $WORK/ro.txt is read-only (mode 0444); it was left unchanged\n\
         error -32600: refused: write $WORK/.git/hooks/post-checkout, a protected file (git internals or acp's config), which no permission of this turn named; ask for permission first (session/request_permission)\n\
         error -32600: refused: write $WORK/.git/config, a protected file (git internals or acp's config), which no permission of this turn named; ask for permission first (session/request_permission)\n\
         granted\n\
         error -32600: refused: write $WORK/.git/hooks/post-checkout, a protected file (git internals or acp's config), which no permission of this turn named; ask for permission first (session/request_permission)\n\
         wrote\n"
    );
    assert_eq!(read(&ro), "keep");
    assert!(!Path::new(&hook).exists());
    assert!(!sb.work().join(".git/config").exists());
    // A permission naming the hook lets it through.
    let out = hostile(
        &sb,
        &["--approve-all"],
        &format!("grant edit {hook} ;; write {hook} named"),
    );
    assert_eq!(out.stdout, "granted\nwrote\n");
    assert_eq!(read(Path::new(&hook)), "named");
}

#[test]
fn deny_all_and_approve_reads_run_nothing_and_write_nothing() {
    let sb = Sandbox::new();
    let steps = format!(
        "caps ;; write {} x ;; run touch {} ;; read {}",
        w(&sb, "written"),
        w(&sb, "ran"),
        w(&sb, "present")
    );
    std::fs::write(sb.work().join("present"), "here").unwrap();
    for (flags, name) in [
        (&["--deny-all"][..], "--deny-all"),
        (&["--approve-reads"][..], "--approve-reads"),
        // No flag and no terminal: --deny-all.
        (&[][..], "--deny-all"),
    ] {
        let out = hostile(&sb, flags, &steps);
        assert_eq!(
            out.stdout,
            format!(
                "caps: read=true write=false terminal=false\n\
                 error -32601: acp runs with {name}: the agent may not write files in this session\n\
                 error -32601: acp runs with {name}: the agent may not run commands in this session\n\
                 read 4 bytes\n"
            ),
            "{flags:?}"
        );
        assert!(!sb.work().join("written").exists());
        assert!(!sb.work().join("ran").exists());
    }
    let out = hostile(&sb, &["--approve-all"], &steps);
    assert_eq!(
        out.stdout,
        "caps: read=true write=true terminal=true\nwrote\nexit: 0\n\nread 4 bytes\n"
    );
    assert!(sb.work().join("written").exists() && sb.work().join("ran").exists());
}

#[test]
fn terminal_cwd_is_confined_to_the_roots() {
    let sb = Sandbox::new();
    let out = hostile(&sb, &["--approve-all"], "run --cwd / cat /etc/hostname");
    assert_eq!(
        out.stdout,
        "error -32602: access denied: / is outside the session's directories ($WORK)\n"
    );
}

#[test]
fn no_descendant_survives_kill_release_or_acps_exit() {
    let sb = Sandbox::new();
    for mode in ["kill", "release"] {
        let dir = sb.work().join(mode);
        std::fs::create_dir_all(&dir).unwrap();
        let out = hostile(
            &sb,
            &["--approve-all"],
            &format!("escape {mode} {}", dir.display()),
        );
        assert_eq!(
            out.stdout, "alive before: 2, survivors: 0\n",
            "{mode}: {}",
            out.stderr
        );
    }
    // Left running: acp's exit ends them.
    let dir = sb.work().join("leave");
    std::fs::create_dir_all(&dir).unwrap();
    let out = hostile(
        &sb,
        &["--approve-all"],
        &format!("escape leave {}", dir.display()),
    );
    assert_eq!(out.stdout, "left running: 2\n");
    let left = pids(&dir.join("pids"));
    assert_eq!(left.len(), 2);
    wait_until("acp's exit to end the terminal's processes", || {
        left.iter().all(|&p| !alive(p))
    });
}

#[test]
fn no_descendant_survives_a_kill_9_of_acp() {
    let sb = Sandbox::new();
    let dir = sb.work().join("k9");
    std::fs::create_dir_all(&dir).unwrap();
    let mut acp = hostile_command(
        &sb,
        &["--approve-all"],
        &format!("escape leave {} ;; run sleep 1000", dir.display()),
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let file = dir.join("pids");
    wait_until("the escapees", || pids(&file).len() == 2);
    let left = pids(&file);
    kill9(&mut acp);
    wait_until("the supervisors to end what acp left", || {
        left.iter().all(|&p| !alive(p))
    });
}

fn kill9(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn a_kill_9_during_a_large_replace_never_tears_the_file() {
    let sb = Sandbox::new();
    const SIZE: usize = 50 * 1024 * 1024;
    let target = sb.work().join("big.txt");
    std::fs::write(&target, vec![b'a'; SIZE]).unwrap();
    let mut torn_checks = 0;
    // Rounds whose kill left a temporary file for the sweep (most, unless
    // the machine is so slow that whole writes fall between two looks).
    let mut left_behind = 0;
    for round in 0..6 {
        let (old, new) = if round % 2 == 0 {
            ('a', 'b')
        } else {
            ('b', 'a')
        };
        std::fs::write(&target, vec![old as u8; SIZE]).unwrap();
        let mut acp = hostile_command(
            &sb,
            &["--approve-all"],
            &format!("write-big {} {SIZE} {new}", target.display()),
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
        // Kill at a different point of the write each round: once the
        // temporary file holds this much (or when acp is done anyway).
        let threshold = (round as u64) * (SIZE as u64) / 5;
        let work = sb.work();
        wait_until("the write to get going", || {
            acp.try_wait().unwrap().is_some()
                || temp_files(&work)
                    .iter()
                    .any(|t| std::fs::metadata(t).is_ok_and(|m| m.len() >= threshold))
        });
        kill9(&mut acp);
        let content = std::fs::read(&target).unwrap();
        assert_eq!(content.len(), SIZE, "round {round}: the file changed size");
        let first = content[0];
        assert!(first == old as u8 || first == new as u8);
        assert!(
            content.iter().all(|&b| b == first),
            "round {round}: the file is torn"
        );
        torn_checks += 1;
        if !temp_files(&work).is_empty() {
            left_behind += 1;
        }
        // The next session in this directory sweeps what the killed one left.
        let out = hostile(&sb, &["--approve-all"], "caps");
        assert_code(&out, 0);
        assert_eq!(temp_files(&work), Vec::<PathBuf>::new(), "round {round}");
    }
    assert_eq!(torn_checks, 6);
    eprintln!("{left_behind} of 6 kills left a temporary file, swept by the next run");
}

#[test]
fn sandboxed_commands_cannot_write_outside_the_roots() {
    if !acp_host::sandbox_support().is_available() {
        eprintln!("skipped: {}", acp_host::sandbox_support());
        return;
    }
    let sb = Sandbox::new();
    let outside = sb.root().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let target = outside.join("escaped");
    let steps = format!(
        "run echo in > inside && echo out > {} ; echo status $?",
        target.display()
    );
    let out = hostile(&sb, &["--approve-all"], &steps);
    assert!(
        out.stdout.contains("Permission denied") && out.stdout.ends_with("status 2\n"),
        "{}",
        out.stdout
    );
    assert!(
        !target.exists(),
        "the kernel let a write outside the roots through"
    );
    assert_eq!(read(&sb.work().join("inside")), "in\n");
    // The temporary directory is writable.
    let out = hostile(
        &sb,
        &["--approve-all"],
        "run echo t > $TMPDIR/t && cat $TMPDIR/t",
    );
    assert_eq!(out.stdout, "exit: 0\nt\n");

    let out = hostile(&sb, &["--approve-all", "--no-sandbox"], &steps);
    assert_eq!(out.stdout, "exit: 0\nstatus 0\n");
    assert_eq!(read(&target), "out\n");
}

#[test]
fn verbose_exec_shows_the_policy_and_the_sandbox() {
    let sb = Sandbox::new();
    let out = hostile(&sb, &["--approve-all", "--verbose"], "caps");
    let support = acp_host::sandbox_support();
    let sandbox_line = if support.is_available() {
        format!("[sandbox] sandbox: on ({support}): commands may write only in $WORK, $ROOT/tmp")
    } else {
        format!("[sandbox] sandbox: unavailable ({support})")
    };
    assert!(out.stderr.contains(&sandbox_line), "{}", out.stderr);
    assert!(
        out.stderr.contains("[policy] permissions: --approve-all"),
        "{}",
        out.stderr
    );
    let out = hostile(&sb, &["--approve-all", "--verbose", "--no-sandbox"], "caps");
    assert!(
        out.stderr.contains("[sandbox] sandbox: off (--no-sandbox)"),
        "{}",
        out.stderr
    );
    let out = hostile(&sb, &["--deny-all", "--verbose"], "caps");
    assert!(
        out.stderr
            .contains("[sandbox] sandbox: not needed (no command runs)"),
        "{}",
        out.stderr
    );
}
