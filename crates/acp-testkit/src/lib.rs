//! `acp-testkit`: the test fixtures of the acp workspace, kept out of the
//! published crates, and [`bin`], which hands a test the path of one.
//!
//! # Layout
//! - `src/bin/`: the fixture programs, one per file (or folder):
//!   `acp-test-agent` (a deterministic agent whose behaviour the prompt's
//!   first word chooses; acp-cli's tests run `acp` against it),
//!   `acp-hostile-agent` (tries what a hostile agent would: files, terminals,
//!   policies), `acp-check-mutant` and `acp-check-mutant-client` (an agent
//!   and a client with one deliberate protocol bug each, for the mutation
//!   tests of `acp check`), `acp-check-mutant-v2` and
//!   `acp-check-mutant-client-v2` (the same for `acp check --protocol 2`).
//!   The top of each file says what it does.
//! - `src/lib.rs`: [`bin`]. A new fixture is a new file under `src/bin/`
//!   with its `[[bin]]` entry (`test = false`) in `Cargo.toml`, and a line in
//!   [`FIXTURES`].
//! - `tests/it/`: checks that [`bin`] finds what cargo built.
//!
//! The arrows point into the workspace: the fixtures use `acp`, `acp-host`
//! and `acp-check`; the tests of `acp-cli` and `acp-check` use this crate as
//! a dev-dependency. Nothing published depends on it (`publish = false`).
//!
//! # Why a library finds the programs
//! Cargo builds a package's binaries for that package's own integration
//! tests only (`CARGO_BIN_EXE_*`); a dev-dependency's binaries are not
//! built, and artifact dependencies are unstable. So [`bin`] looks in the
//! directory cargo put the running test in (`target/<profile>/`, derived
//! from [`std::env::current_exe`]) and, when the program is missing or
//! older than a source file it was built from (cargo's dep-info file
//! `NAME.d` beside it lists them), builds it there with
//! `$CARGO build -p acp-testkit --bin NAME` in the same profile and target
//! directory. Under `cargo test --workspace` cargo has built them already
//! (this crate has an integration test), so no second cargo runs.
#![deny(missing_docs)]

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;

/// Every fixture program of this crate, by name.
pub const FIXTURES: &[&str] = &[
    "acp-test-agent",
    "acp-hostile-agent",
    "acp-check-mutant",
    "acp-check-mutant-v2",
    "acp-check-mutant-client",
    "acp-check-mutant-client-v2",
];

/// The path of the fixture program `name` (one of [`FIXTURES`]), built for
/// the profile and target directory of the running test; built first when
/// it is missing or stale. Each program is checked once per process.
///
/// # Panics
/// When `name` is not a fixture, when the running program is not in a
/// cargo target directory, or when cargo fails to build it (the panic
/// quotes cargo's output): a test cannot go on without its fixture.
pub fn bin(name: &str) -> PathBuf {
    assert!(
        FIXTURES.contains(&name),
        "{name} is not a fixture of acp-testkit (one of {FIXTURES:?})"
    );
    static READY: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let mut ready = READY
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(path) = ready.get(name) {
        return path.clone();
    }
    let place = Place::of_running_test();
    let path = place.binary(name);
    if stale(&path) {
        place.build(name);
        assert!(
            path.is_file(),
            "cargo built {name}, but {} does not exist",
            path.display()
        );
    }
    ready.insert(name.to_owned(), path.clone());
    path
}

/// Where the running test was built: `<target dir>[/<triple>]/<profile dir>`.
struct Place {
    /// `target/debug`, `target/release`, `target/<triple>/debug`, …
    profile_dir: PathBuf,
    /// The target directory, when it is not given by `CARGO_TARGET_DIR`.
    target_dir: PathBuf,
    /// `--target TRIPLE` when the test was built for an explicit target.
    triple: Option<OsString>,
}

impl Place {
    /// Reads the place off the running program's path,
    /// `<profile dir>/deps/<test>-<hash>`.
    fn of_running_test() -> Place {
        let exe = std::env::current_exe().expect("the path of the running test");
        let profile_dir = exe
            .parent()
            .filter(|deps| deps.file_name().is_some_and(|n| n == "deps"))
            .and_then(Path::parent)
            .unwrap_or_else(|| {
                panic!(
                    "{} is not in <target>/<profile>/deps/: run it with cargo test",
                    exe.display()
                )
            })
            .to_path_buf();
        let above = profile_dir
            .parent()
            .expect("a profile directory has a parent");
        // Cargo marks the root of a target directory with CACHEDIR.TAG; a
        // directory in between is the target triple of `--target`.
        let (target_dir, triple) = match above.join("CACHEDIR.TAG").exists() {
            true => (above.to_path_buf(), None),
            false => match (above.parent(), above.file_name()) {
                (Some(root), Some(triple)) => (root.to_path_buf(), Some(triple.to_owned())),
                _ => (above.to_path_buf(), None),
            },
        };
        Place {
            profile_dir,
            target_dir,
            triple,
        }
    }

    fn binary(&self, name: &str) -> PathBuf {
        self.profile_dir
            .join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
    }

    /// `$CARGO build -p acp-testkit --bin NAME` into this place.
    fn build(&self, name: &str) {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut command = Command::new(cargo);
        command
            .arg("build")
            .arg("--manifest-path")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
            .args(["-p", "acp-testkit", "--bin", name]);
        match self.profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") => {}
            Some("release") => {
                command.arg("--release");
            }
            Some(profile) => {
                command.args(["--profile", profile]);
            }
            None => {}
        }
        if let Some(triple) = &self.triple {
            command.arg("--target").arg(triple);
        }
        if std::env::var_os("CARGO_TARGET_DIR").is_none() {
            command.arg("--target-dir").arg(&self.target_dir);
        }
        let out = command
            .output()
            .unwrap_or_else(|e| panic!("cannot run cargo to build {name}: {e}"));
        assert!(
            out.status.success(),
            "cargo could not build the fixture {name}:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Whether the program at `path` is missing, or older than a source file
/// its dep-info file (`NAME.d`, written by cargo beside it) lists, or than
/// the workspace's `Cargo.lock` and manifests.
fn stale(path: &Path) -> bool {
    let Some(built) = modified(path) else {
        return true;
    };
    let Ok(depinfo) = std::fs::read_to_string(path.with_extension("d")) else {
        return true;
    };
    let manifests = [
        concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.toml"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.lock"),
    ]
    .map(PathBuf::from);
    sources(&depinfo)
        .into_iter()
        .chain(manifests)
        .any(|source| modified(&source).is_none_or(|changed| changed > built))
}

/// The files a dep-info file (`target: source source…`, spaces in a path
/// escaped with `\`) says the target was built from.
fn sources(depinfo: &str) -> Vec<PathBuf> {
    let Some(line) = depinfo.lines().find(|l| !l.trim().is_empty()) else {
        return Vec::new();
    };
    // The target's path ends at the first ": " that is not escaped.
    let bytes = line.as_bytes();
    let Some(colon) = (0..bytes.len().saturating_sub(1))
        .find(|&i| bytes[i] == b':' && bytes[i + 1] == b' ' && (i == 0 || bytes[i - 1] != b'\\'))
    else {
        return Vec::new();
    };
    let rest = &line[colon + 2..];
    let mut files = Vec::new();
    let mut word = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => word.extend(chars.next()),
            ' ' => {
                if !word.is_empty() {
                    files.push(PathBuf::from(std::mem::take(&mut word)));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        files.push(PathBuf::from(word));
    }
    files
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dep_info_lists_the_sources_after_the_target() {
        let depinfo =
            "/t/debug/acp-test-agent: /w/src/main.rs /w/a\\ b.rs /w/c.rs\n\n/w/src/main.rs:\n";
        assert_eq!(
            sources(depinfo),
            ["/w/src/main.rs", "/w/a b.rs", "/w/c.rs"].map(PathBuf::from)
        );
    }

    #[test]
    fn a_space_in_the_target_path_is_escaped() {
        let depinfo = "/my\\ target/debug/x: /w/src/main.rs\n";
        assert_eq!(sources(depinfo), [PathBuf::from("/w/src/main.rs")]);
    }
}
