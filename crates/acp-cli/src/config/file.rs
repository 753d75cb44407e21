//! Writing the config file: the `[agents]` table of a `toml_edit`
//! document (the user's comments, order and formatting kept), and
//! replacing the file atomically.

use crate::exit::Failure;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The `[agents]` table of `doc`, created when missing (implicit, so an
/// empty file gets no `[agents]` header of its own) and made a table when
/// it was written inline (`agents = { … }`). `origin` names the file in
/// errors.
pub fn agents_table<'d>(
    doc: &'d mut toml_edit::DocumentMut,
    origin: &Path,
) -> Result<&'d mut toml_edit::Table, Failure> {
    let created = !doc.contains_key("agents");
    if let Some(toml_edit::Item::Value(toml_edit::Value::InlineTable(inline))) = doc.get("agents") {
        let table = inline.clone().into_table();
        doc["agents"] = toml_edit::Item::Table(table);
    }
    let table = doc
        .entry("agents")
        .or_insert_with(toml_edit::table)
        .as_table_mut()
        .ok_or_else(|| {
            Failure::usage(format!(
                "bad config file {}: agents is not a table",
                origin.display()
            ))
        })?;
    if created {
        table.set_implicit(true);
    }
    Ok(table)
}

/// Replaces the file at `path` with `text`: a temporary file in the same
/// directory, synced, then renamed over it. A symbolic link is followed, so
/// the file it points to is the one replaced. A new file is readable only
/// by its owner (0600); an old file's permissions are kept, or with
/// `private` narrowed to the owner's.
pub fn write_atomically(path: &Path, text: &str, private: bool) -> std::io::Result<()> {
    let target = match std::fs::canonicalize(path) {
        Ok(real) => real,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => path.to_path_buf(),
        Err(e) => return Err(e),
    };
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir)?;
    let mut file = tempfile::Builder::new()
        .prefix(".config.toml.")
        .tempfile_in(&dir)?;
    file.write_all(text.as_bytes())?;
    file.as_file().sync_all()?;
    use std::os::unix::fs::PermissionsExt;
    let permissions = match std::fs::metadata(&target) {
        Ok(meta) if private => std::fs::Permissions::from_mode(meta.permissions().mode() & 0o700),
        Ok(meta) => meta.permissions(),
        Err(_) => std::fs::Permissions::from_mode(0o600),
    };
    file.as_file().set_permissions(permissions)?;
    file.persist(&target).map_err(|e| e.error)?;
    Ok(())
}

/// The config file opened for a change: its text as a `toml_edit`
/// document, saved with [`ConfigFile::save`].
#[derive(Debug, Clone)]
pub struct ConfigFile {
    path: PathBuf,
    doc: toml_edit::DocumentMut,
}

/// An agent's entry as `acp agents add` and `update` write it.
#[derive(Debug, Clone, PartialEq)]
pub struct AddedAgent<'a> {
    /// The program.
    pub command: &'a str,
    /// Its arguments.
    pub args: &'a [String],
    /// The environment the registry asks for.
    pub env: &'a std::collections::BTreeMap<String, String>,
    /// Where it came from.
    pub origin: &'a super::RegistryOrigin,
}

impl ConfigFile {
    /// Reads the config file at `path` (a missing file is an empty one); it
    /// must be a valid config.
    pub fn open(path: &Path) -> Result<ConfigFile, Failure> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => {
                return Err(Failure::usage(format!(
                    "cannot read config file {}: {e}",
                    path.display()
                )));
            }
        };
        super::Config::parse(&text, path)?;
        let doc = text
            .parse()
            .map_err(|e| Failure::usage(format!("bad config file {}: {e}", path.display())))?;
        Ok(ConfigFile {
            path: path.to_path_buf(),
            doc,
        })
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The config as it stands.
    pub fn config(&self) -> Result<super::Config, Failure> {
        super::Config::parse(&self.doc.to_string(), &self.path)
    }

    /// Writes `[agents.NAME]` for an agent of the registry. An existing
    /// entry keeps its other keys (`default_mode`, …) and the environment
    /// variables the user added; its `command`, `args`, `registry` and the
    /// registry's variables are replaced.
    pub fn set_agent(&mut self, name: &str, agent: &AddedAgent<'_>) -> Result<(), Failure> {
        let path = self.path.clone();
        let agents = agents_table(&mut self.doc, &path)?;
        let entry = agents
            .entry(name)
            .or_insert_with(toml_edit::table)
            .as_table_like_mut()
            .ok_or_else(|| {
                Failure::usage(format!(
                    "bad config file {}: agents.{name} is not a table",
                    path.display()
                ))
            })?;
        entry.insert("command", toml_edit::value(agent.command));
        if agent.args.is_empty() {
            entry.remove("args");
        } else {
            let args: toml_edit::Array = agent.args.iter().map(String::as_str).collect();
            entry.insert("args", toml_edit::value(args));
        }
        if !agent.env.is_empty() {
            let env = entry
                .entry("env")
                .or_insert_with(|| toml_edit::value(toml_edit::InlineTable::new()))
                .as_table_like_mut()
                .ok_or_else(|| {
                    Failure::usage(format!(
                        "bad config file {}: agents.{name}.env is not a table",
                        path.display()
                    ))
                })?;
            for (key, value) in agent.env {
                env.insert(key, toml_edit::value(value.as_str()));
            }
        }
        let mut origin = toml_edit::InlineTable::new();
        origin.insert("version", agent.origin.version.as_str().into());
        origin.insert("distribution", agent.origin.distribution.as_str().into());
        entry.insert("registry", toml_edit::value(origin));
        Ok(())
    }

    /// Removes `[agents.NAME]`; whether it was there.
    pub fn remove_agent(&mut self, name: &str) -> bool {
        self.doc
            .get_mut("agents")
            .and_then(|agents| agents.as_table_like_mut())
            .is_some_and(|agents| agents.remove(name).is_some())
    }

    /// Replaces the file with the document, if it is still a valid config.
    pub fn save(&self) -> Result<(), Failure> {
        let text = self.doc.to_string();
        super::Config::parse(&text, &self.path).map_err(|f| {
            Failure::usage(format!(
                "the changed config would not be valid, so nothing was written: {}",
                f.message
            ))
        })?;
        write_atomically(&self.path, &text, false).map_err(|e| {
            Failure::usage(format!(
                "cannot write config file {}: {e} (it was left as it was)",
                self.path.display()
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RegistryOrigin;
    use std::collections::BTreeMap;

    #[test]
    fn set_and_remove_keep_the_rest_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let text = "# mine\ndefault_agent = \"x\" # keep\n\n[agents.x]\ncommand = \"x\"\n\n\
                    [agents.reg]\ncommand = \"/old/agent\"\nargs = [\"--old\"]\n\
                    default_mode = \"plan\" # mine too\nenv = { MINE = \"1\", R = \"old\" }\n\
                    registry = { version = \"1.0.0\", distribution = \"binary\" }\n";
        std::fs::write(&path, text).unwrap();
        let mut file = ConfigFile::open(&path).unwrap();
        let env = BTreeMap::from([("R".to_owned(), "new".to_owned())]);
        let origin = RegistryOrigin {
            version: "2.0.0".into(),
            distribution: "binary".into(),
        };
        let agent = AddedAgent {
            command: "/new/agent",
            args: &[],
            env: &env,
            origin: &origin,
        };
        file.set_agent("reg", &agent).unwrap();
        file.set_agent("fresh", &agent).unwrap();
        file.save().unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "# mine\ndefault_agent = \"x\" # keep\n\n[agents.x]\ncommand = \"x\"\n\n\
             [agents.reg]\ncommand = \"/new/agent\"\n\
             default_mode = \"plan\" # mine too\nenv = { MINE = \"1\", R = \"new\" }\n\
             registry = { version = \"2.0.0\", distribution = \"binary\" }\n\n\
             [agents.fresh]\ncommand = \"/new/agent\"\nenv = { R = \"new\" }\n\
             registry = { version = \"2.0.0\", distribution = \"binary\" }\n"
        );
        let mut file = ConfigFile::open(&path).unwrap();
        assert!(file.remove_agent("reg"));
        assert!(!file.remove_agent("nothing"));
        file.save().unwrap();
        let config = file.config().unwrap();
        assert_eq!(config.agents.keys().collect::<Vec<_>>(), ["fresh", "x"]);
        // A missing file is an empty config; a new one is created.
        let other = dir.path().join("new.toml");
        let mut file = ConfigFile::open(&other).unwrap();
        file.set_agent("fresh", &agent).unwrap();
        file.save().unwrap();
        assert!(
            std::fs::read_to_string(&other)
                .unwrap()
                .starts_with("[agents.fresh]\n")
        );
    }
}
