//! `fs/*` served by `acp exec`: line ranges, atomic writes, confinement.

use crate::common;
use common::*;

#[test]
fn reads_inside_the_cwd_with_line_and_limit() {
    let sb = Sandbox::new();
    let file = sb.work().join("a.txt");
    std::fs::write(&file, "1\n2\n3\n4\n").unwrap();
    let path = file.to_str().unwrap();
    let out = sb.exec(&[&format!("read {path}")]);
    assert_code(&out, 0);
    assert_eq!(out.stdout, "1\n2\n3\n4\n");
    let out = sb.exec(&[&format!("read {path} 2 2")]);
    assert_eq!(out.stdout, "2\n3\n");
}

#[test]
fn refuses_paths_outside_and_relative_paths() {
    let sb = Sandbox::new();
    let outside = sb.root().join("secret.txt");
    std::fs::write(&outside, "secret").unwrap();
    let out = sb.exec(&[&format!("read {}", outside.display())]);
    assert_code(&out, 0);
    assert_eq!(
        out.stdout,
        "error: access denied: $ROOT/secret.txt is outside the session's directories ($WORK)\n"
    );
    let out = sb.exec(&["read notes.txt"]);
    assert_eq!(
        out.stdout,
        "error: the path \"notes.txt\" is relative; paths must be absolute, for example \
         $WORK/notes.txt\n"
    );
    let out = sb.exec(&[&format!("read {}/../secret.txt", sb.work().display())]);
    assert!(
        out.stdout.starts_with("error: access denied"),
        "{}",
        out.stdout
    );
    std::os::unix::fs::symlink(&outside, sb.work().join("link")).unwrap();
    let out = sb.exec(&[&format!("read {}/link", sb.work().display())]);
    assert!(
        out.stdout.starts_with("error: access denied"),
        "{}",
        out.stdout
    );
    let out = sb.exec(&[
        "--allow-outside-cwd",
        &format!("read {}", outside.display()),
    ]);
    assert_eq!(out.stdout, "secret\n");
    let out = sb.exec(&[
        "--add-dir",
        sb.root().to_str().unwrap(),
        &format!("read {}", outside.display()),
    ]);
    assert_eq!(out.stdout, "secret\n");
}

#[test]
fn writes_atomically_inside_and_refuses_outside() {
    let sb = Sandbox::new();
    let target = sb.work().join("new/dir/out.txt");
    let out = sb.exec(&[
        "--approve-all",
        &format!("write {} hello there", target.display()),
    ]);
    assert_code(&out, 0);
    assert_eq!(out.stdout, "wrote $WORK/new/dir/out.txt\n");
    assert_eq!(read(&target), "hello there");
    let entries: Vec<_> = std::fs::read_dir(target.parent().unwrap())
        .unwrap()
        .collect();
    assert_eq!(entries.len(), 1, "no temporary file is left");
    let outside = sb.root().join("evil.txt");
    let out = sb.exec(&["--approve-all", &format!("write {} x", outside.display())]);
    assert!(
        out.stdout.starts_with("error: access denied"),
        "{}",
        out.stdout
    );
    assert!(!outside.exists());
}

#[test]
fn missing_file_is_reported() {
    let sb = Sandbox::new();
    let out = sb.exec(&[&format!("read {}/nope.txt", sb.work().display())]);
    assert_eq!(
        out.stdout,
        "error: cannot read $WORK/nope.txt: no such file\n"
    );
}
