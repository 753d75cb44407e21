//! Arbitrary paths from an agent, through `acp_host::Roots::resolve`.
//!
//! A fixed tree is built once: a root and a directory beside it, each with
//! subdirectories and a file, and links of every kind (inside, outside,
//! relative, absolute, dangling, looping, to `..`). The input, read as
//! UTF-8, is taken as a path below the root when it is relative and as it
//! is when absolute. Whatever comes back must be a path inside the root
//! with no link and no `.` or `..` left in it, and where the path exists it
//! must be the kernel's own resolution (`realpath`); a path the kernel
//! resolves inside the root must not be refused.
#![no_main]

use acp_host::Roots;
use libfuzzer_sys::fuzz_target;
use std::os::unix::fs::symlink;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
    roots: Roots,
}

fn tree() -> &'static Tree {
    static TREE: OnceLock<Tree> = OnceLock::new();
    TREE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let root = base.join("r");
        let out = base.join("o");
        for top in [&root, &out] {
            std::fs::create_dir_all(top.join("a/b")).unwrap();
            std::fs::write(top.join("a/f"), "x").unwrap();
        }
        let links: [(&str, PathBuf); 9] = [
            ("r/l", PathBuf::from("a")),
            ("r/a/up", PathBuf::from("..")),
            ("r/a/upup", PathBuf::from("../..")),
            ("r/out", out.clone()),
            ("r/a/outf", out.join("a/f")),
            ("r/dang", out.join("nope")),
            ("r/loop", PathBuf::from("loop2")),
            ("r/loop2", PathBuf::from("loop")),
            ("o/back", root.join("a")),
        ];
        for (at, to) in links {
            symlink(to, base.join(at)).unwrap();
        }
        let roots = Roots::new([&root]).unwrap();
        Tree {
            _dir: dir,
            root,
            roots,
        }
    })
}

fn canonical(p: &Path) -> bool {
    let mut prefix = PathBuf::new();
    for c in p.components() {
        match c {
            Component::RootDir => prefix.push("/"),
            Component::Normal(n) => {
                prefix.push(n);
                if std::fs::symlink_metadata(&prefix).is_ok_and(|m| m.file_type().is_symlink()) {
                    return false;
                }
            }
            _ => return false,
        }
    }
    true
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let t = tree();
    let path = if text.starts_with('/') {
        text.to_owned()
    } else {
        format!("{}/{text}", t.root.display())
    };
    let real = if path.contains('\0') {
        None
    } else {
        std::fs::canonicalize(&path).ok()
    };
    match t.roots.resolve(&path) {
        Ok(resolved) => {
            assert!(resolved.starts_with(&t.root), "{path:?} -> {resolved:?}");
            assert!(canonical(&resolved), "{path:?} -> {resolved:?} holds a link");
            if let Some(real) = real {
                assert_eq!(resolved, real, "{path:?}");
            }
        }
        Err(e) => {
            if let Some(real) = real {
                assert!(!real.starts_with(&t.root), "{path:?} refused: {}", e.message);
            }
        }
    }
});
