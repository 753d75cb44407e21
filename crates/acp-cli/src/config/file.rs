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
