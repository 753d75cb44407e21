//! Property test of path resolution: on random trees of directories,
//! files and links (inside, outside, dangling, looping, relative,
//! absolute), `Roots::resolve` agrees with the kernel's own resolution
//! (`realpath`) wherever the path exists, never returns a path that
//! still holds a link or a `..`, and never lets a path out of the roots.

use acp_host::Roots;
use proptest::prelude::*;
use std::path::{Component, Path, PathBuf};

const NAMES: &[&str] = &["a", "b", "l0", "l1", "l2", "l3", "f", "new"];

#[derive(Debug, Clone)]
enum Target {
    /// Relative to the link's directory, through these components.
    Relative(Vec<usize>),
    /// Absolute, below the outside directory.
    Outside(Vec<usize>),
    /// Absolute, below the root.
    Root(Vec<usize>),
}

fn component(i: usize) -> &'static str {
    match i {
        0 => "..",
        1 => ".",
        n => NAMES[(n - 2) % NAMES.len()],
    }
}

fn join(base: &Path, parts: &[usize]) -> PathBuf {
    let mut p = base.to_path_buf();
    for &i in parts {
        p.push(component(i));
    }
    p
}

fn target() -> impl Strategy<Value = Target> {
    let parts = prop::collection::vec(0usize..10, 0..4);
    prop_oneof![
        parts.clone().prop_map(Target::Relative),
        parts.clone().prop_map(Target::Outside),
        parts.prop_map(Target::Root),
    ]
}

/// Builds root/{a,b}/… and outside/{a,b}/… with a file `f` in some
/// directories and links `l0`..`l3` wherever asked.
fn build(base: &Path, links: &[(usize, usize, Target)]) -> (PathBuf, PathBuf) {
    let root = base.join("root");
    let outside = base.join("outside");
    for top in [&root, &outside] {
        for dir in ["a", "a/b", "b"] {
            std::fs::create_dir_all(top.join(dir)).unwrap();
        }
        std::fs::write(top.join("a/f"), "x").unwrap();
    }
    let dirs = [
        root.clone(),
        root.join("a"),
        root.join("b"),
        outside.join("a"),
    ];
    for (dir, name, target) in links {
        let at = dirs[dir % dirs.len()].join(format!("l{}", name % 4));
        let to = match target {
            Target::Relative(parts) => join(Path::new(""), parts),
            Target::Outside(parts) => join(&outside, parts),
            Target::Root(parts) => join(&root, parts),
        };
        let to = if to.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            to
        };
        let _ = std::os::unix::fs::symlink(&to, &at);
    }
    (root, outside)
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

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn resolution_matches_the_kernel_and_stays_inside(
        links in prop::collection::vec((0usize..4, 0usize..4, target()), 0..8),
        path in prop::collection::vec(0usize..10, 0..7),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let (root, outside) = build(&base, &links);
        let roots = Roots::new([&root]).unwrap();
        let given = join(&root, &path);
        let result = roots.resolve(given.to_str().unwrap());
        let real = std::fs::canonicalize(&given);
        match &result {
            Ok(resolved) => {
                prop_assert!(resolved.starts_with(&root), "{resolved:?} escaped");
                prop_assert!(!resolved.starts_with(&outside));
                prop_assert!(canonical(resolved), "{resolved:?} still holds a link");
                if let Ok(real) = &real {
                    prop_assert_eq!(resolved, real);
                }
            }
            Err(e) => {
                if let Ok(real) = &real {
                    prop_assert!(!real.starts_with(&root), "refused {given:?} -> {real:?}: {}", e.message);
                }
            }
        }
        // Unconfined, every path resolves (or loops), to the kernel's answer.
        let open = roots.clone().confined(false);
        if let (Ok(resolved), Ok(real)) = (open.resolve(given.to_str().unwrap()), &real) {
            prop_assert_eq!(&resolved, real);
        }
    }
}
