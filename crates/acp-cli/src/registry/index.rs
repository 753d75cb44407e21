//! The registry's document: `{"version": …, "agents": [...]}`, each agent
//! with its `id`, `name`, `version`, `description`, … and a `distribution`
//! that is one or more of `binary` (per platform: an `archive` URL, the
//! `cmd` inside it, `args`, `env`, optionally the archive's `sha256`),
//! `npx` and `uvx` (a `package`, optionally the `cmd` it provides, `args`,
//! `env`).
//!
//! Read tolerantly: an agent that does not decode, or whose `id` or
//! `version` could not safely name a directory, is left out (and counted
//! in [`Index::skipped`]) rather than failing the whole registry. Unknown
//! fields are ignored.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The registry: its agents, by id.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Index {
    /// The format's version (`"1.0.0"`).
    pub version: String,
    /// The agents, sorted by id.
    pub agents: Vec<Agent>,
    /// The entries left out, each with why.
    pub skipped: Vec<String>,
}

/// One agent of the registry.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Agent {
    /// Its identifier: lowercase letters, digits and hyphens, starting with
    /// a letter. It names the agent in acp's config and its directory.
    pub id: String,
    /// The name people know it by.
    pub name: String,
    /// The version the registry offers now.
    pub version: String,
    /// What it is.
    #[serde(default)]
    pub description: String,
    /// Its source code.
    #[serde(default)]
    pub repository: Option<String>,
    /// Its home page.
    #[serde(default)]
    pub website: Option<String>,
    /// Who wrote it.
    #[serde(default)]
    pub authors: Vec<String>,
    /// Its license (SPDX).
    #[serde(default)]
    pub license: Option<String>,
    /// How to get it.
    pub distribution: Distribution,
}

/// How an agent is distributed: one or more of these.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Distribution {
    /// Archives to download, by platform (`linux-x86_64`, …).
    #[serde(default)]
    pub binary: BTreeMap<String, BinaryTarget>,
    /// An npm package, run with `npx`.
    #[serde(default)]
    pub npx: Option<Package>,
    /// A PyPI package, run with `uvx`.
    #[serde(default)]
    pub uvx: Option<Package>,
}

/// A platform's archive.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct BinaryTarget {
    /// Its URL: a `.zip`, `.tar.gz`/`.tgz`, `.tar.bz2`/`.tbz2`, or the
    /// program itself.
    pub archive: String,
    /// The program to run, relative to where the archive is extracted.
    pub cmd: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment variables to set.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The archive's SHA-256, hex-encoded, when the registry gives it.
    #[serde(default)]
    pub sha256: Option<String>,
}

/// A package that a package runner (`npx`, `uvx`) fetches and runs.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Package {
    /// The package, possibly with its version (`@scope/name@1.2.3`,
    /// `name==1.2.3`).
    pub package: String,
    /// The program of the package to run, when it is not the package's
    /// default one.
    #[serde(default)]
    pub cmd: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment variables to set.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// The kinds of distribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// An archive downloaded into acp's data directory.
    Binary,
    /// An npm package run with `npx`.
    Npx,
    /// A PyPI package run with `uvx`.
    Uvx,
}

impl Kind {
    /// Its name in the registry (`binary`, `npx`, `uvx`).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Binary => "binary",
            Kind::Npx => "npx",
            Kind::Uvx => "uvx",
        }
    }

    /// The kind named `name`.
    pub fn parse(name: &str) -> Option<Kind> {
        match name {
            "binary" => Some(Kind::Binary),
            "npx" => Some(Kind::Npx),
            "uvx" => Some(Kind::Uvx),
            _ => None,
        }
    }
}

/// This machine's platform as the registry names it (`linux-x86_64`,
/// `darwin-aarch64`, …), or `None` on one it has no name for.
pub fn current_platform() -> Option<&'static str> {
    Some(match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "linux-x86_64",
        ("linux", "aarch64") => "linux-aarch64",
        ("macos", "x86_64") => "darwin-x86_64",
        ("macos", "aarch64") => "darwin-aarch64",
        ("windows", "x86_64") => "windows-x86_64",
        ("windows", "aarch64") => "windows-aarch64",
        _ => return None,
    })
}

/// Whether `id` is a registry id (`^[a-z][a-z0-9-]*$`), and so safe as a
/// directory name and a config key.
pub fn valid_id(id: &str) -> bool {
    let mut chars = id.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// Whether `version` can name a directory: 1 to 64 of `0-9A-Za-z.+_-`,
/// starting with a digit or a letter (never `.` or `..`).
pub fn valid_version(version: &str) -> bool {
    version.len() <= 64
        && version
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".+_-".contains(c))
}

impl Index {
    /// Reads the registry's JSON. Fails only when the document as a whole
    /// is not the registry format; bad agents are skipped.
    pub fn parse(bytes: &[u8]) -> Result<Index, String> {
        #[derive(Deserialize)]
        struct Document {
            #[serde(default)]
            version: String,
            agents: Vec<serde_json::Value>,
        }
        let document: Document = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        let mut index = Index {
            version: document.version,
            ..Index::default()
        };
        for (n, value) in document.agents.into_iter().enumerate() {
            let named = value
                .get("id")
                .and_then(|id| id.as_str())
                .map(|id| format!("{id:?}"))
                .unwrap_or_else(|| format!("number {}", n + 1));
            match serde_json::from_value::<Agent>(value) {
                Ok(agent) if !valid_id(&agent.id) => {
                    index.skipped.push(format!("{named}: not a valid agent id"))
                }
                Ok(agent) if !valid_version(&agent.version) => index.skipped.push(format!(
                    "{named}: its version {:?} cannot name a directory",
                    agent.version
                )),
                Ok(agent) if index.agents.iter().any(|a: &Agent| a.id == agent.id) => {
                    index.skipped.push(format!("{named}: listed twice"))
                }
                Ok(agent) => index.agents.push(agent),
                Err(e) => index.skipped.push(format!("{named}: {e}")),
            }
        }
        index.agents.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(index)
    }

    /// The agent `id`.
    pub fn get(&self, id: &str) -> Option<&Agent> {
        self.agents.iter().find(|a| a.id == id)
    }

    /// The agents whose id, name or description contains `text` (ignoring
    /// case); all of them for an empty text.
    pub fn search(&self, text: &str) -> Vec<&Agent> {
        let text = text.to_lowercase();
        self.agents
            .iter()
            .filter(|a| {
                [&a.id, &a.name, &a.description]
                    .iter()
                    .any(|field| field.to_lowercase().contains(&text))
            })
            .collect()
    }
}

impl Agent {
    /// The kinds of distribution usable on `platform`, in the order acp
    /// prefers them: binary (when there is one for `platform`), npx, uvx.
    pub fn kinds(&self, platform: Option<&str>) -> Vec<Kind> {
        let mut kinds = Vec::new();
        if platform.is_some_and(|p| self.distribution.binary.contains_key(p)) {
            kinds.push(Kind::Binary);
        }
        if self.distribution.npx.is_some() {
            kinds.push(Kind::Npx);
        }
        if self.distribution.uvx.is_some() {
            kinds.push(Kind::Uvx);
        }
        kinds
    }

    /// The package of kind `kind` (npx or uvx).
    pub fn package(&self, kind: Kind) -> Option<&Package> {
        match kind {
            Kind::Npx => self.distribution.npx.as_ref(),
            Kind::Uvx => self.distribution.uvx.as_ref(),
            Kind::Binary => None,
        }
    }
}

impl Package {
    /// The command line that runs it with `kind`'s runner: `npx -y PACKAGE
    /// ARGS…` or `uvx PACKAGE ARGS…`; with a `cmd`, `npx -y --package
    /// PACKAGE CMD ARGS…` or `uvx --from PACKAGE CMD ARGS…`. A package or
    /// command that would be read as an option (`-…`) is refused.
    pub fn command_line(&self, kind: Kind) -> Result<(String, Vec<String>), String> {
        if self.package.is_empty() || self.package.starts_with('-') {
            return Err(format!("the package name {:?} is not valid", self.package));
        }
        if let Some(cmd) = &self.cmd
            && (cmd.is_empty() || cmd.starts_with('-'))
        {
            return Err(format!("the command {cmd:?} is not valid"));
        }
        let mut args: Vec<String> = match (kind, &self.cmd) {
            (Kind::Npx, None) => vec!["-y".into(), self.package.clone()],
            (Kind::Npx, Some(cmd)) => vec![
                "-y".into(),
                "--package".into(),
                self.package.clone(),
                cmd.clone(),
            ],
            (Kind::Uvx, None) => vec![self.package.clone()],
            (Kind::Uvx, Some(cmd)) => vec!["--from".into(), self.package.clone(), cmd.clone()],
            (Kind::Binary, _) => return Err("not a package".into()),
        };
        args.extend(self.args.iter().cloned());
        Ok((kind.as_str().to_owned(), args))
    }
}

/// Whether `candidate` is a newer version than `installed` (semantic
/// versions; for versions that are not, whether they differ).
pub fn is_newer(candidate: &str, installed: &str) -> bool {
    match (
        semver::Version::parse(candidate),
        semver::Version::parse(installed),
    ) {
        (Ok(c), Ok(i)) => c > i,
        _ => candidate != installed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_agents_are_left_out_not_the_registry() {
        let text = br#"{"version":"1.0.0","agents":[
            {"id":"b-agent","name":"B","version":"2.0.0","description":"Second","distribution":{"npx":{"package":"@b/agent@2.0.0","args":["--acp"]}},"extra":1},
            {"id":"../evil","name":"E","version":"1.0.0","distribution":{}},
            {"id":"dots","name":"D","version":"..","distribution":{}},
            {"id":"a-agent","name":"A","version":"1.0.0","distribution":{"uvx":{"package":"a==1.0.0","cmd":"a-acp"}}},
            {"id":"nodist","name":"N","version":"1.0.0"},
            {"id":"a-agent","name":"A2","version":"1.0.0","distribution":{}}
        ]}"#;
        let index = Index::parse(text).unwrap();
        let ids: Vec<&str> = index.agents.iter().map(|a| a.id.as_str()).collect();
        assert_eq!(ids, ["a-agent", "b-agent"]);
        assert_eq!(index.skipped.len(), 4, "{:?}", index.skipped);
        assert!(index.skipped[0].starts_with("\"../evil\": not a valid agent id"));
        assert_eq!(index.search("SECOND").len(), 1);
        assert_eq!(index.search("").len(), 2);
        assert!(Index::parse(b"[]").is_err());
        assert!(Index::parse(b"{\"agents\":3}").is_err());
    }

    #[test]
    fn package_command_lines() {
        let npx = Package {
            package: "@x/agent@1.0.0".into(),
            cmd: None,
            args: vec!["--acp".into()],
            env: BTreeMap::new(),
        };
        assert_eq!(
            npx.command_line(Kind::Npx).unwrap(),
            (
                "npx".into(),
                vec!["-y".into(), "@x/agent@1.0.0".into(), "--acp".into()]
            )
        );
        let uvx = Package {
            package: "agent==1.0".into(),
            cmd: Some("agent-acp".into()),
            ..npx.clone()
        };
        assert_eq!(
            uvx.command_line(Kind::Uvx).unwrap().1,
            ["--from", "agent==1.0", "agent-acp", "--acp"]
        );
        assert_eq!(
            uvx.command_line(Kind::Npx).unwrap().1,
            ["-y", "--package", "agent==1.0", "agent-acp", "--acp"]
        );
        let option = Package {
            package: "--registry=evil".into(),
            ..npx
        };
        assert!(option.command_line(Kind::Npx).is_err());
    }

    #[test]
    fn ids_versions_and_order() {
        assert!(valid_id("acp-agent2"));
        for bad in ["", "Agent", "2agent", "a/b", "a.b", "-a"] {
            assert!(!valid_id(bad), "{bad}");
        }
        assert!(valid_version("1.2.3-beta.1+build"));
        for bad in ["", ".", "..", "1/2", ".1", "1 2"] {
            assert!(!valid_version(bad), "{bad}");
        }
        assert!(is_newer("1.10.0", "1.9.0"));
        assert!(!is_newer("1.0.0", "1.0.0"));
        assert!(!is_newer("1.0.0-beta", "1.0.0"));
        assert!(is_newer("nightly-2", "nightly-1"));
    }
}
