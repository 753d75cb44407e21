//! `agent.json`, the entry for the ACP registry, checked against the
//! registry's format (its `FORMAT.md` and the checks its CI runs): required
//! fields, the id's form, a semantic version equal to the crate's, known
//! distribution kinds and platforms, archive URLs under this version's GitHub
//! release with a supported archive type, named as a `cargo dist`-style
//! release names them (`acp-agent-<target triple>.tar.gz`, `.zip` on
//! Windows, the binary in a folder named like the archive); and the icon.
//! Then the registry CI's live check: the built agent, started as the CI
//! starts it, offers an agent or terminal auth method in `initialize`.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

const AGENT_JSON: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/agent.json"));
const ICON: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/icon.svg"));

/// The registry's platforms and the Rust target each is built for.
const PLATFORMS: [(&str, &str); 6] = [
    ("darwin-aarch64", "aarch64-apple-darwin"),
    ("darwin-x86_64", "x86_64-apple-darwin"),
    ("linux-aarch64", "aarch64-unknown-linux-gnu"),
    ("linux-x86_64", "x86_64-unknown-linux-gnu"),
    ("windows-aarch64", "aarch64-pc-windows-msvc"),
    ("windows-x86_64", "x86_64-pc-windows-msvc"),
];

/// Archive types the registry installs (installers such as `.dmg` are not).
const ARCHIVE_TYPES: [&str; 5] = [".zip", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2"];

fn entry() -> serde_json::Map<String, Value> {
    let v: Value = serde_json::from_str(AGENT_JSON).expect("agent.json is JSON");
    v.as_object().expect("agent.json is an object").clone()
}

fn string<'a>(v: &'a Value, what: &str) -> &'a str {
    v.as_str()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| panic!("{what} must be a non-empty string, is {v}"))
}

#[test]
fn the_entry_has_the_registry_fields_and_this_crates_identity() {
    let e = entry();
    for field in ["id", "name", "version", "description", "distribution"] {
        assert!(e.contains_key(field), "agent.json lacks {field:?}");
    }
    let known = [
        "id",
        "name",
        "version",
        "description",
        "repository",
        "website",
        "authors",
        "license",
        "icon",
        "distribution",
    ];
    for key in e.keys() {
        assert!(known.contains(&key.as_str()), "unknown field {key:?}");
    }
    // The id: a letter, then lowercase letters, digits and hyphens; the
    // binary's name.
    let id = string(&e["id"], "id");
    assert!(id.starts_with(|c: char| c.is_ascii_lowercase()), "{id}");
    assert!(
        id.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
        "{id}"
    );
    assert_eq!(id, "acp-agent");
    string(&e["name"], "name");
    string(&e["description"], "description");
    // A semantic version, this crate's.
    let version = string(&e["version"], "version");
    let parts: Vec<&str> = version.split('.').collect();
    assert!(
        parts.len() >= 3 && parts[..3].iter().all(|p| p.parse::<u64>().is_ok()),
        "{version} is not a semantic version"
    );
    assert_eq!(version, env!("CARGO_PKG_VERSION"));
    assert_eq!(string(&e["license"], "license"), env!("CARGO_PKG_LICENSE"));
    let repository = string(&e["repository"], "repository");
    assert!(
        repository.starts_with("https://github.com/"),
        "{repository}"
    );
    assert!(!repository.ends_with('/'), "{repository}");
    let authors = e["authors"].as_array().expect("authors is a list");
    assert!(!authors.is_empty());
    for a in authors {
        string(a, "an author");
    }
}

#[test]
fn every_platform_has_a_release_archive_and_the_command_in_it() {
    let e = entry();
    let version = e["version"].as_str().unwrap();
    let release = format!(
        "{}/releases/download/v{version}/",
        e["repository"].as_str().unwrap()
    );
    let distribution = e["distribution"].as_object().expect("an object");
    assert!(!distribution.is_empty());
    for kind in distribution.keys() {
        assert!(["binary", "npx", "uvx"].contains(&kind.as_str()), "{kind}");
    }
    let binary = distribution["binary"].as_object().expect("binary targets");
    assert!(!binary.is_empty());
    for family in ["darwin", "linux", "windows"] {
        assert!(
            binary.keys().any(|p| p.starts_with(&format!("{family}-"))),
            "no {family} build"
        );
    }
    for (platform, target) in binary {
        let triple = PLATFORMS
            .iter()
            .find(|(p, _)| p == platform)
            .unwrap_or_else(|| panic!("unknown platform {platform:?}"))
            .1;
        let target = target.as_object().expect("a target is an object");
        for key in target.keys() {
            assert!(
                ["archive", "cmd", "args", "env"].contains(&key.as_str()),
                "{platform}: unknown field {key:?}"
            );
        }
        // The archive: this version's release asset (never `latest`), of a
        // type the registry installs, named as cargo dist names it.
        let archive = string(&target["archive"], "archive");
        let name = archive
            .strip_prefix(&release)
            .unwrap_or_else(|| panic!("{platform}: {archive} is not under {release}"));
        assert!(!archive.contains("/latest/"), "{archive}");
        let ext = ARCHIVE_TYPES
            .iter()
            .find(|t| name.ends_with(*t))
            .unwrap_or_else(|| panic!("{platform}: {name} is not a supported archive"));
        let windows = platform.starts_with("windows-");
        assert_eq!(*ext, if windows { ".zip" } else { ".tar.gz" }, "{platform}");
        let stem = format!("acp-agent-{triple}");
        assert_eq!(name, format!("{stem}{ext}"), "{platform}");
        // The command: the binary in the archive's folder, a relative path
        // that stays inside it.
        let cmd = string(&target["cmd"], "cmd");
        let exe = if windows { ".exe" } else { "" };
        assert_eq!(cmd, format!("./{stem}/acp-agent{exe}"), "{platform}");
        assert!(!cmd.split('/').any(|c| c == ".."), "{cmd}");
        if let Some(args) = target.get("args") {
            for a in args.as_array().expect("args is a list") {
                assert!(a.is_string(), "{platform}: {a}");
            }
        }
        if let Some(env) = target.get("env") {
            for v in env.as_object().expect("env is an object").values() {
                assert!(v.is_string(), "{platform}: {v}");
            }
        }
    }
}

#[test]
fn the_icon_is_a_16_pixel_square_in_the_themes_colour() {
    assert!(ICON.trim_start().starts_with("<svg"), "the root is <svg>");
    assert!(!ICON.contains("<!--"), "no comments (they break MDX)");
    for attr in ["width=\"16\"", "height=\"16\"", "viewBox=\"0 0 16 16\""] {
        assert!(ICON.contains(attr), "the icon lacks {attr}");
    }
    let colours = regex::Regex::new(r#"\b(fill|stroke)\s*[=:]\s*"?([^";\s>]+)"#).unwrap();
    let mut current = false;
    for c in colours.captures_iter(ICON) {
        let value = c[2].to_ascii_lowercase();
        assert!(
            ["currentcolor", "none", "inherit"].contains(&value.as_str()),
            "a fixed colour: {}",
            &c[0]
        );
        current |= value == "currentcolor";
    }
    assert!(current, "the icon takes the theme's colour (currentColor)");
}

/// The registry CI starts the agent with a bare environment and a fresh
/// HOME, sends `initialize` and requires an auth method of type `agent` or
/// `terminal` (no `type` means `agent`).
#[test]
fn a_live_initialize_offers_an_agent_auth_method() {
    let home = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_acp-agent"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("TERM", "dumb")
        .current_dir(home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": 1,
        "clientInfo": {"name": "ACP Registry Validator", "version": "1.0.0"},
        "clientCapabilities": {
            "terminal": true,
            "fs": {"readTextFile": true, "writeTextFile": true},
            "_meta": {"terminal_output": true, "terminal-auth": true}
        }
    }});
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{init}").unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    let answer: Value = serde_json::from_str(&line).expect("the first line is JSON");
    let methods = answer["result"]["authMethods"]
        .as_array()
        .expect("authMethods");
    let agent_or_terminal = methods.iter().filter(|m| {
        matches!(
            m.get("type").and_then(Value::as_str),
            None | Some("agent" | "terminal")
        )
    });
    assert!(agent_or_terminal.count() >= 1, "{methods:?}");
}
