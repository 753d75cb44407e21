//! The official JSON Schemas, obtained from the npm registry.
//!
//! The tests check the types against the schemas the ACP project publishes.
//! The repository holds no copy of them: they come from pinned versions of
//! the official TypeScript SDK, `@agentclientprotocol/sdk`, whose tarballs
//! ship them. `npm pack` downloads each tarball once into
//! `target/official-schemas/tarballs/`; its sha512 must equal the pinned
//! integrity (the `dist.integrity` that `npm view` shows), each file taken
//! from it must have its pinned sha256, and the directory built from them,
//! `target/official-schemas/schema/`, is laid out as the tests read it:
//!
//! | folder | from | files |
//! | --- | --- | --- |
//! | `seed/` (schema v0.10.7) | `@agentclientprotocol/sdk@0.13.1` | `schema.unstable.json` as shipped; `schema.json`, `meta.json`, `meta.unstable.json` derived |
//! | `latest/` (schema 1.21.0) | `@agentclientprotocol/sdk@1.4.0` | the same |
//! | `latest/npm-sdk-2.4.0/` | `@agentclientprotocol/sdk@2.4.0` | `schema.json`, `schema.unstable.json` as shipped (`schema/v1/`) |
//! | `latest/v2-sdk-2.4.0/` (protocol v2) | `@agentclientprotocol/sdk@2.4.0` | `schema.json`, `schema.unstable.json` as shipped (`schema/v2/`) |
//!
//! Until 2.0 the package shipped a single `schema/schema.json`, and that file
//! is the *unstable* schema (every experimental method and field included):
//! 0.13.1's is byte for byte v0.10.7's `schema.unstable.json`, 1.4.0's is
//! 1.21.0's. No published version ships those releases' stable
//! `schema.json` or any `meta.json`, so they are derived here
//! (`derive::stable_from_unstable`, `derive::meta_from_schema`) and checked against a
//! pin: the sha256 of the derived value in canonical form (`derive::canonical`) must
//! equal that of the official file (which was compared when the pins were
//! made). Later runs read the cache and need no network.
//!
//! `ACP_SCHEMA_DIR` names a directory with the same layout to use instead
//! (for example a checkout of the schemas beside the repository); its files
//! are used as they are.

use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

pub mod derive;

use derive::{
    canonical, meta_from_schema, protocol_version, sha256_hex, sri_sha512, stable_from_unstable,
};

/// The environment variable naming a schema directory to use instead.
pub const OVERRIDE_VAR: &str = "ACP_SCHEMA_DIR";

/// One pinned npm package version.
#[derive(Debug)]
pub struct Package {
    /// The package name.
    pub name: &'static str,
    /// The exact version.
    pub version: &'static str,
    /// Its tarball's `dist.integrity` (`sha512-` and the base64 digest).
    pub integrity: &'static str,
}

impl Package {
    /// `name@version`.
    pub fn spec(&self) -> String {
        format!("{}@{}", self.name, self.version)
    }

    /// The file `npm pack` writes: `agentclientprotocol-sdk-0.13.1.tgz`.
    pub fn tarball_name(&self) -> String {
        let flat = self.name.trim_start_matches('@').replace('/', "-");
        format!("{flat}-{}.tgz", self.version)
    }
}

/// Where a schema folder's stable `schema.json` comes from.
#[derive(Debug)]
pub enum Stable {
    /// Shipped in the tarball at `entry`, with this sha256.
    Shipped {
        /// The path inside the tarball.
        entry: &'static str,
        /// The sha256 of its bytes (hex).
        sha256: &'static str,
    },
    /// Derived from the unstable schema by `derive::stable_from_unstable`; the
    /// result's canonical sha256 must be `canonical_sha256`.
    Derived {
        /// What is unstable in that release without saying so.
        unmarked: Unmarked,
        /// The sha256 of the official file's canonical form (hex).
        canonical_sha256: &'static str,
    },
}

/// Unstable parts of a schema whose description does not carry the
/// `**UNSTABLE**` marker (they were behind a feature flag all the same).
#[derive(Debug, Default)]
pub struct Unmarked {
    /// Definition names.
    pub defs: &'static [&'static str],
    /// Method-name prefixes: every definition whose `x-method` starts with one.
    pub method_prefixes: &'static [&'static str],
}

/// Derived `meta.json`/`meta.unstable.json` and the canonical sha256 of each.
#[derive(Debug)]
pub struct Meta {
    /// The file in the tarball that states the protocol version
    /// (`export const PROTOCOL_VERSION = 1;`).
    pub version_entry: &'static str,
    /// The canonical sha256 of the official `meta.json`.
    pub stable_sha256: &'static str,
    /// The canonical sha256 of the official `meta.unstable.json`.
    pub unstable_sha256: &'static str,
}

/// One folder of the schema directory and where its files come from.
#[derive(Debug)]
pub struct Folder {
    /// The folder, relative to the schema directory.
    pub path: &'static str,
    /// The package that ships its schemas.
    pub package: Package,
    /// The unstable schema's path inside the tarball.
    pub unstable_entry: &'static str,
    /// The sha256 of that file's bytes (hex).
    pub unstable_sha256: &'static str,
    /// The stable schema.
    pub stable: Stable,
    /// The meta files, for the folders that have them.
    pub meta: Option<Meta>,
}

/// The pins. How they were found: every published version of
/// `@agentclientprotocol/sdk` (and of its former name
/// `@zed-industries/agent-client-protocol`) was packed and each schema file
/// it ships compared byte for byte with the official release files. Only
/// these three versions match: 0.13.1 and 1.4.0 ship exactly the unstable
/// schemas of v0.10.7 and 1.21.0, and 2.4.0 (like 2.3.0, identical files)
/// ships the newest v1 pair.
///
/// To check a canonical sha256 by hand: `python3 -c 'import json,hashlib,sys;
/// print(hashlib.sha256(json.dumps(json.load(open(sys.argv[1])),
/// sort_keys=True, separators=(",",":"),
/// ensure_ascii=False).encode()).hexdigest())' FILE`.
pub const FOLDERS: &[Folder] = &[
    Folder {
        path: "seed",
        package: Package {
            name: "@agentclientprotocol/sdk",
            version: "0.13.1",
            integrity: "sha512-6byvu+F/xc96GBkdAx4hq6/tB3vT63DSBO4i3gYCz8nuyZMerVFna2Gkhm8EHNpZX0J9DjUxzZCW+rnHXUg0FA==",
        },
        unstable_entry: "package/schema/schema.json",
        unstable_sha256: "da00214e4bbc88519923087f76db1a7c63f93341f75f6e54f6875bdb43fe1c02",
        stable: Stable::Derived {
            // Behind the `unstable_session_info_update` flag in v0.10.7.
            unmarked: Unmarked {
                defs: &["SessionInfoUpdate"],
                method_prefixes: &[],
            },
            canonical_sha256: "6179f740899341d22fd91debdc0dae0d4c56795562e652154652864a9a7c2067",
        },
        meta: Some(Meta {
            version_entry: "package/dist/schema/index.js",
            stable_sha256: "e32124b032d69160d9dc14d2d9ad3d6f0e3d780f06eda4dcdcdcb1deb537a148",
            unstable_sha256: "ca33ede76f0182b2f33741135ebe83ca6a20926f32a1aed50349bdd31dcfa9bb",
        }),
    },
    Folder {
        path: "latest",
        package: Package {
            name: "@agentclientprotocol/sdk",
            version: "1.4.0",
            integrity: "sha512-/eufudw+aFY1LKLolT6yFE6UMmYRl7fMJ/DEONSIyR6wI3slHWITBsANRGqXEY8FRzqUxwh7QEaGiZHcJPVThg==",
        },
        unstable_entry: "package/schema/schema.json",
        unstable_sha256: "7f77702b34e0a0558e77220e9007bf8ee161a976bb8ac5021aba1b7e7b2c5708",
        stable: Stable::Derived {
            // Next edit suggestions and the document notifications they use
            // (the `unstable_nes` flag of 1.21.0).
            unmarked: Unmarked {
                defs: &[],
                method_prefixes: &["nes/", "document/"],
            },
            canonical_sha256: "8a5ab031759589fedb08d44e76290c370b2b3ce2933a6e0048eadb258dc69b2c",
        },
        meta: Some(Meta {
            version_entry: "package/dist/schema/index.js",
            stable_sha256: "cd6bae915dc77127149e624be5cda1250ddc726dae9e516eb052de789307efe8",
            unstable_sha256: "1e1032c9f8a55559846133575a8f15c0773b18325b026b992ff4b1cb97772164",
        }),
    },
    Folder {
        path: "latest/npm-sdk-2.4.0",
        package: Package {
            name: "@agentclientprotocol/sdk",
            version: "2.4.0",
            integrity: "sha512-7qJ8nnyj7WesC5ve185ioTpB2/svQoeGV4HA4nLEhgDUrcmBe54/08VcXc/oL4p14tDbxxECZzdYmUYQ+4l+Wg==",
        },
        unstable_entry: "package/schema/v1/schema.unstable.json",
        unstable_sha256: "ce7881d10c854bcac4f0e7d3a9ce4fb0f612ec0a09e64b572940beec4668c189",
        stable: Stable::Shipped {
            entry: "package/schema/v1/schema.json",
            sha256: "0d0b1ca83c4872e5473f68926a894c7a8203b59b118e2a79bfe43dd76fbcbc1a",
        },
        meta: None,
    },
    // Protocol v2 (the draft; `tests/it/v2_schema.rs`), from the same package.
    Folder {
        path: "latest/v2-sdk-2.4.0",
        package: Package {
            name: "@agentclientprotocol/sdk",
            version: "2.4.0",
            integrity: "sha512-7qJ8nnyj7WesC5ve185ioTpB2/svQoeGV4HA4nLEhgDUrcmBe54/08VcXc/oL4p14tDbxxECZzdYmUYQ+4l+Wg==",
        },
        unstable_entry: "package/schema/v2/schema.unstable.json",
        unstable_sha256: "49e10f8c1935854363ed5b176cc6560d856642ba5020c97d264d34de4b6f1b31",
        stable: Stable::Shipped {
            entry: "package/schema/v2/schema.json",
            sha256: "b6c91055df549d6f1db1d76d692d0561dad433e03d8ed114ea9b5baed9da72c5",
        },
        meta: None,
    },
];

// ---------------------------------------------------------------------------
// The schema directory

/// The schema directory the tests read: `$ACP_SCHEMA_DIR` when set, else the
/// cache under `target/`, filled from the npm registry when incomplete.
pub fn resolve() -> Result<PathBuf, String> {
    match std::env::var_os(OVERRIDE_VAR) {
        Some(dir) if !dir.is_empty() => check_override(Path::new(&dir)),
        _ => Cache::new(default_cache_root()).ensure(),
    }
}

/// `<target>/official-schemas` (the parent of cargo's `CARGO_TARGET_TMPDIR`).
pub fn default_cache_root() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().unwrap_or(tmp).join("official-schemas")
}

/// An override directory must have every file the tests read.
pub fn check_override(dir: &Path) -> Result<PathBuf, String> {
    let missing: Vec<String> = expected_files()
        .into_iter()
        .filter(|f| !dir.join(f).is_file())
        .collect();
    if missing.is_empty() {
        Ok(dir.to_path_buf())
    } else {
        Err(format!(
            "{OVERRIDE_VAR}={} lacks {} (it must be laid out like seed/, latest/ and \
             latest/npm-sdk-2.4.0/ and latest/v2-sdk-2.4.0/ of the official schemas); unset {OVERRIDE_VAR} to have \
             the tests download the schemas from the npm registry",
            dir.display(),
            missing.join(", ")
        ))
    }
}

/// Every file of a schema directory, relative to it.
pub fn expected_files() -> Vec<String> {
    let mut out = Vec::new();
    for folder in FOLDERS {
        out.push(format!("{}/schema.json", folder.path));
        out.push(format!("{}/schema.unstable.json", folder.path));
        if folder.meta.is_some() {
            out.push(format!("{}/meta.json", folder.path));
            out.push(format!("{}/meta.unstable.json", folder.path));
        }
    }
    out
}

/// The cache: `tarballs/` and `schema/` under a root directory.
#[derive(Debug, Clone)]
pub struct Cache {
    root: PathBuf,
    /// Extra environment for `npm` (the tests point it at an unreachable
    /// registry).
    npm_env: Vec<(String, String)>,
    /// The program run as `npm`.
    npm: String,
}

/// Whether a file's pin is over its bytes or over its canonical JSON.
#[derive(Debug, Clone, Copy)]
enum Pin {
    Bytes(&'static str),
    Canonical(&'static str),
}

impl Cache {
    /// A cache under `root`, using the `npm` on `PATH`.
    pub fn new(root: PathBuf) -> Cache {
        Cache {
            root,
            npm_env: Vec::new(),
            npm: "npm".into(),
        }
    }

    /// Sets an environment variable for the `npm` runs.
    pub fn npm_env(mut self, key: &str, value: &str) -> Cache {
        self.npm_env.push((key.into(), value.into()));
        self
    }

    /// Runs `program` instead of `npm`.
    pub fn npm_program(mut self, program: &str) -> Cache {
        self.npm = program.into();
        self
    }

    /// The schema directory.
    pub fn schema_dir(&self) -> PathBuf {
        self.root.join("schema")
    }

    /// Where downloaded tarballs are kept.
    pub fn tarball_dir(&self) -> PathBuf {
        self.root.join("tarballs")
    }

    /// Makes sure every file of the schema directory is there with its
    /// pinned checksum, extracting (and downloading) what is missing or
    /// wrong, and returns the directory.
    pub fn ensure(&self) -> Result<PathBuf, String> {
        for folder in FOLDERS {
            if !self.folder_is_complete(folder) {
                self.fill(folder)?;
            }
        }
        Ok(self.schema_dir())
    }

    fn pins(folder: &Folder) -> Vec<(&'static str, Pin)> {
        let mut pins = vec![
            ("schema.unstable.json", Pin::Bytes(folder.unstable_sha256)),
            (
                "schema.json",
                match &folder.stable {
                    Stable::Shipped { sha256, .. } => Pin::Bytes(sha256),
                    Stable::Derived {
                        canonical_sha256, ..
                    } => Pin::Canonical(canonical_sha256),
                },
            ),
        ];
        if let Some(meta) = &folder.meta {
            pins.push(("meta.json", Pin::Canonical(meta.stable_sha256)));
            pins.push(("meta.unstable.json", Pin::Canonical(meta.unstable_sha256)));
        }
        pins
    }

    fn folder_is_complete(&self, folder: &Folder) -> bool {
        let dir = self.schema_dir().join(folder.path);
        Self::pins(folder).into_iter().all(|(file, pin)| {
            std::fs::read(dir.join(file)).is_ok_and(|bytes| matches_pin(&bytes, pin).is_ok())
        })
    }

    /// Writes every file of `folder` from its package's tarball.
    fn fill(&self, folder: &Folder) -> Result<(), String> {
        let package = &folder.package;
        let tarball = self.tarball(package)?;
        let mut wanted = vec![folder.unstable_entry];
        if let Stable::Shipped { entry, .. } = &folder.stable {
            wanted.push(entry);
        }
        if let Some(meta) = &folder.meta {
            wanted.push(meta.version_entry);
        }
        let mut entries =
            read_entries(&tarball, &wanted).map_err(|e| format!("{}: {e}", tarball.display()))?;
        let mut take = |entry: &str| {
            entries
                .remove(entry)
                .ok_or_else(|| format!("{} has no {entry} (a wrong pin?)", package.spec()))
        };
        let from = |what: &str| format!("{what} of {}", package.spec());

        let unstable_bytes = take(folder.unstable_entry)?;
        check_pin(
            &from(folder.unstable_entry),
            &unstable_bytes,
            Pin::Bytes(folder.unstable_sha256),
        )?;
        let unstable = parse(&from(folder.unstable_entry), &unstable_bytes)?;
        let mut files: Vec<(&str, Vec<u8>)> = Vec::new();
        let stable = match &folder.stable {
            Stable::Shipped { entry, sha256 } => {
                let bytes = take(entry)?;
                check_pin(&from(entry), &bytes, Pin::Bytes(sha256))?;
                let value = parse(&from(entry), &bytes)?;
                files.push(("schema.json", bytes));
                value
            }
            Stable::Derived {
                unmarked,
                canonical_sha256,
            } => {
                let value = stable_from_unstable(&unstable, unmarked);
                let bytes = pretty(&value);
                check_pin(
                    &format!(
                        "the stable schema derived from {}",
                        from(folder.unstable_entry)
                    ),
                    &bytes,
                    Pin::Canonical(canonical_sha256),
                )?;
                files.push(("schema.json", bytes));
                value
            }
        };
        if let Some(meta) = &folder.meta {
            let script = take(meta.version_entry)?;
            let version = protocol_version(&String::from_utf8_lossy(&script))
                .ok_or_else(|| format!("no PROTOCOL_VERSION in {}", from(meta.version_entry)))?;
            for (file, schema, pin) in [
                ("meta.json", &stable, meta.stable_sha256),
                ("meta.unstable.json", &unstable, meta.unstable_sha256),
            ] {
                let bytes = pretty(&meta_from_schema(schema, version));
                check_pin(
                    &format!("{file} derived from {}", package.spec()),
                    &bytes,
                    Pin::Canonical(pin),
                )?;
                files.push((file, bytes));
            }
        }
        files.push(("schema.unstable.json", unstable_bytes));

        let dir = self.schema_dir().join(folder.path);
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        for (file, bytes) in files {
            write_atomically(&dir.join(file), &bytes)?;
        }
        Ok(())
    }

    /// The package's tarball, verified: from the cache, else downloaded with
    /// `npm pack` (a cached tarball that fails its check is removed first).
    fn tarball(&self, package: &Package) -> Result<PathBuf, String> {
        let dir = self.tarball_dir();
        let path = dir.join(package.tarball_name());
        if let Ok(bytes) = std::fs::read(&path) {
            if sri_sha512(&bytes) == package.integrity {
                return Ok(path);
            }
            eprintln!(
                "acp-schema tests: {} does not match the pinned integrity of {}; removing it",
                path.display(),
                package.spec()
            );
            std::fs::remove_file(&path)
                .map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
        }
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        eprintln!(
            "acp-schema tests: downloading {} from the npm registry into {} (once)",
            package.spec(),
            dir.display()
        );
        let staging = unique_path(&dir, "download");
        std::fs::create_dir_all(&staging)
            .map_err(|e| format!("cannot create {}: {e}", staging.display()))?;
        let result = self.npm_pack(package, &staging).and_then(|()| {
            let got = staging.join(package.tarball_name());
            let bytes = std::fs::read(&got).map_err(|e| {
                format!(
                    "`npm pack {}` left no {}: {e}",
                    package.spec(),
                    package.tarball_name()
                )
            })?;
            let sri = sri_sha512(&bytes);
            if sri != package.integrity {
                return Err(format!(
                    "the registry's {} tarball has integrity {sri}, not the pinned {}; the \
                     schema tests refuse it",
                    package.spec(),
                    package.integrity
                ));
            }
            std::fs::rename(&got, &path)
                .map_err(|e| format!("cannot move the tarball to {}: {e}", path.display()))
        });
        let _ = std::fs::remove_dir_all(&staging);
        result.map(|()| path)
    }

    fn npm_pack(&self, package: &Package, into: &Path) -> Result<(), String> {
        let spec = package.spec();
        let advice = format!(
            "The schema tests check the types against the official ACP JSON Schemas, which \
             they take from the npm package {spec}. Run `npm pack {spec}` in {} once the npm \
             registry can be reached (the tests verify and use the tarball it leaves there), \
             or set {OVERRIDE_VAR} to a directory laid out like seed/, latest/ and \
             latest/npm-sdk-2.4.0/ and latest/v2-sdk-2.4.0/ of the official schemas.",
            self.tarball_dir().display()
        );
        let mut command = Command::new(&self.npm);
        command
            .args(["pack", &spec, "--ignore-scripts"])
            .current_dir(into)
            .stdin(Stdio::null())
            .env("npm_config_update_notifier", "false")
            .env("npm_config_fund", "false")
            .env("npm_config_audit", "false");
        for (k, v) in &self.npm_env {
            command.env(k, v);
        }
        let out = command.output().map_err(|e| {
            format!(
                "cannot download {spec}: `{}` cannot be run ({e}); npm comes with Node.js.\n{advice}",
                self.npm
            )
        })?;
        if out.status.success() {
            return Ok(());
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(8).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        Err(format!(
            "cannot download {spec} from the npm registry: `npm pack {spec}` failed ({}):\n  {}\n{advice}",
            out.status,
            tail.join("\n  ")
        ))
    }
}

// ---------------------------------------------------------------------------
// Pins and files

fn matches_pin(bytes: &[u8], pin: Pin) -> Result<(), String> {
    let (got, want) = match pin {
        Pin::Bytes(want) => (sha256_hex(bytes), want),
        Pin::Canonical(want) => {
            let value: Value =
                serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
            (sha256_hex(canonical(&value).as_bytes()), want)
        }
    };
    if got == want {
        Ok(())
    } else {
        Err(format!("sha256 {got}, pinned {want}"))
    }
}

fn check_pin(what: &str, bytes: &[u8], pin: Pin) -> Result<(), String> {
    matches_pin(bytes, pin).map_err(|e| {
        let form = match pin {
            Pin::Bytes(_) => "",
            Pin::Canonical(_) => " (canonical JSON)",
        };
        format!("{what} does not match its pin{form}: {e}")
    })
}

fn parse(what: &str, bytes: &[u8]) -> Result<Value, String> {
    serde_json::from_slice(bytes).map_err(|e| format!("{what} is not JSON: {e}"))
}

/// A derived file's bytes: pretty JSON with every object's members sorted, so
/// the file is the same whether or not something in the build turned on
/// serde_json's `preserve_order` (acp-cli does, for a workspace build).
fn pretty(value: &Value) -> Vec<u8> {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut members: Vec<_> = map.iter().collect();
                members.sort_by(|a, b| a.0.cmp(b.0));
                Value::Object(
                    members
                        .into_iter()
                        .map(|(k, v)| (k.clone(), sorted(v)))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    let mut bytes = serde_json::to_vec_pretty(&sorted(value)).expect("a JSON value serialises");
    bytes.push(b'\n');
    bytes
}

/// Reads the `wanted` entries of a `.tgz` into memory.
pub fn read_entries(tarball: &Path, wanted: &[&str]) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let file = std::fs::File::open(tarball).map_err(|e| format!("cannot open: {e}"))?;
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let mut out = BTreeMap::new();
    for entry in archive
        .entries()
        .map_err(|e| format!("not a tarball: {e}"))?
    {
        let mut entry = entry.map_err(|e| format!("bad tarball entry: {e}"))?;
        let path = entry
            .path()
            .map_err(|e| format!("bad tarball path: {e}"))?
            .to_string_lossy()
            .into_owned();
        if wanted.contains(&path.as_str()) {
            let mut bytes = Vec::new();
            entry
                .read_to_end(&mut bytes)
                .map_err(|e| format!("cannot read {path}: {e}"))?;
            out.insert(path, bytes);
        }
    }
    Ok(out)
}

fn unique_path(dir: &Path, stem: &str) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    dir.join(format!(".{stem}-{}-{n}", std::process::id()))
}

/// Writes `path` through a temporary file and a rename, so a reader (another
/// test process) sees the old file or the whole new one.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = unique_path(dir, "partial");
    std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            format!("cannot write {}: {e}", path.display())
        })
}
