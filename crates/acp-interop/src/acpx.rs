//! acpx, a headless ACP client others wrote (npm package `acpx`), pinned in
//! `interop/acpx` for `acp check client` to judge
//! (`crates/acp-cli/tests/it/interop_check_client.rs`).
//!
//! It is installed with `npm install` from the lock file, not `npm ci`:
//! acpx 0.19.1 depends on `@openclaw/fs-safe`, whose optional packages for
//! other platforms (darwin, win32, linux-arm64) are not published, so the
//! lock cannot list them and `npm ci` refuses it as out of sync. The lock
//! still pins every package that is installed, with its integrity hash.

use std::io::Write;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Once, OnceLock};

use crate::peer::{MODE_VAR, Mode, mode, run_install_step, runs};
use crate::{install_lock, repo_root, target_dir};

/// The pinned version (`interop/acpx/package.json`).
const VERSION: &str = "0.19.1";

fn installed(dir: &std::path::Path) -> bool {
    std::fs::read_to_string(dir.join("node_modules/acpx/package.json"))
        .ok()
        .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
        .is_some_and(|v| v["version"] == VERSION)
}

fn install() -> Result<PathBuf, String> {
    let dir = repo_root().join("interop/acpx");
    runs("node")?;
    let _lock = install_lock(&target_dir()?)?;
    if !installed(&dir) {
        runs("npm")?;
        eprintln!(
            "acp-interop: running `npm install` in {} (acpx@{VERSION})",
            dir.display()
        );
        run_install_step(
            Command::new("npm")
                .args(["install", "--no-audit", "--no-fund", "--no-save"])
                .current_dir(&dir),
            "`npm install --no-audit --no-fund --no-save` in interop/acpx",
        )?;
        if !installed(&dir) {
            return Err(format!(
                "after `npm install`, acpx@{VERSION} is still missing"
            ));
        }
    }
    Ok(dir.join("node_modules/acpx/dist/cli.js"))
}

/// acpx's program (`dist/cli.js`, run with `node`), installed first if
/// needed. `None` when Node.js or npm is missing, after one line on
/// standard error saying so; with `ACP_INTEROP=require` that panics
/// instead, as does a failed install.
pub fn acpx() -> Option<PathBuf> {
    static INSTALLED: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let missing = runs("node")
        .and_then(|_| {
            if installed(&repo_root().join("interop/acpx")) {
                Ok(String::new())
            } else {
                runs("npm")
            }
        })
        .err();
    if let Some(missing) = missing {
        if mode() == Mode::Require {
            panic!(
                "the acpx interop test cannot run: {missing}, and {MODE_VAR}=require makes that a failure"
            );
        }
        static SAID: Once = Once::new();
        SAID.call_once(|| {
            let _ = writeln!(
                std::io::stderr(),
                "acp-interop: SKIPPED the acpx interop test: {missing} (set {MODE_VAR}=require to make this a failure)"
            );
        });
        return None;
    }
    match INSTALLED.get_or_init(install) {
        Ok(path) => Some(path.clone()),
        Err(e) => panic!("acpx is not available: {e}"),
    }
}
