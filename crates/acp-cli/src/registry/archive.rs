//! Extracting an agent's archive, refusing what could reach outside the
//! directory it is extracted into.
//!
//! Refused, failing the whole extraction (the caller extracts into a
//! temporary directory and removes it on failure, so nothing of a refused
//! archive stays on disk):
//!
//! - a member with an absolute path or a `..` component (or, in a zip, a
//!   backslash, which Windows reads as a separator);
//! - a symbolic link that is absolute, or that leads outside the directory
//!   once every link on its way is followed (checked when it is created
//!   and again, for every link, after the last member, since a later link
//!   can change where an earlier one leads);
//! - a hard link to anything but an earlier member;
//! - a member written through a link (a parent that is a symbolic link),
//!   so no write ever follows one;
//! - device files, FIFOs and other special files;
//! - more than [`Limits::extracted`] bytes written in all, or more than
//!   [`Limits::members`] members (a zip bomb stops at the cap, whatever
//!   sizes its headers claim).
//!
//! Files keep their owner's execute bit; set-user-ID, set-group-ID and
//! write permission for others are dropped. Directories are created
//! `0755`.

use super::Error;
use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

/// How many symbolic links a path may pass through before it is taken for
/// a loop.
const MAX_LINK_HOPS: usize = 40;

/// The kinds of archive the registry lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `.zip`.
    Zip,
    /// `.tar.gz`, `.tgz`.
    TarGz,
    /// `.tar.bz2`, `.tbz2`.
    TarBz2,
    /// The program itself.
    Raw,
}

impl Format {
    /// The format of the archive at `url`, by its file name.
    pub fn of_url(url: &reqwest::Url) -> Format {
        let name = url
            .path_segments()
            .and_then(|mut s| s.next_back())
            .unwrap_or_default()
            .to_ascii_lowercase();
        if name.ends_with(".zip") {
            Format::Zip
        } else if name.ends_with(".tar.gz") || name.ends_with(".tgz") {
            Format::TarGz
        } else if name.ends_with(".tar.bz2") || name.ends_with(".tbz2") {
            Format::TarBz2
        } else {
            Format::Raw
        }
    }
}

/// The caps on an extraction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// The most bytes written, all members together.
    pub extracted: u64,
    /// The most members.
    pub members: u64,
}

impl Default for Limits {
    /// 4 GiB and 100,000 members: far above any agent's release.
    fn default() -> Self {
        Limits {
            extracted: 4 << 30,
            members: 100_000,
        }
    }
}

/// Extracts `archive` (of `format`, downloaded from `origin`) into the
/// existing empty directory `dest`. A raw binary is copied to `cmd`
/// (relative to `dest`) and made executable. On error, `dest` may hold
/// part of the archive: the caller removes it.
pub fn extract(
    format: Format,
    archive: &Path,
    origin: &str,
    dest: &Path,
    cmd: &str,
    limits: Limits,
) -> Result<(), Error> {
    let open = || fs::File::open(archive).map_err(Error::io("cannot open the download"));
    let mut out = Extraction {
        dest,
        origin,
        limits,
        written: 0,
        members: 0,
    };
    match format {
        Format::Zip => out.zip(open()?)?,
        Format::TarGz => out.tar(flate2::read::GzDecoder::new(std::io::BufReader::new(
            open()?
        )))?,
        Format::TarBz2 => out.tar(bzip2::read::BzDecoder::new(
            std::io::BufReader::new(open()?),
        ))?,
        Format::Raw => {
            let rel = command_path(cmd)?;
            out.file(cmd, &rel, &mut open()?, 0o755)?;
        }
    }
    check_links(dest, dest)
}

/// `cmd` as a path relative to the install directory: refused when it is
/// absolute, climbs with `..`, or names the directory itself.
pub fn command_path(cmd: &str) -> Result<PathBuf, Error> {
    let bad = |reason: &str| Error::BadCommand {
        cmd: cmd.to_owned(),
        reason: reason.to_owned(),
    };
    match member_path(cmd.as_bytes()) {
        Ok(Some(path)) => Ok(path),
        Ok(None) => Err(bad("names no file")),
        Err(reason) => Err(bad(&format!("is {reason}"))),
    }
}

/// Checks that `cmd` names a regular file inside `dir` (following links,
/// which must stay inside) and makes it executable by its owner when it is
/// not. Returns the path to run: `dir` joined with `cmd`.
pub fn check_command(dir: &Path, cmd: &str) -> Result<PathBuf, Error> {
    let rel = command_path(cmd)?;
    let bad = |reason: String| Error::BadCommand {
        cmd: cmd.to_owned(),
        reason,
    };
    let real = resolve(dir, Vec::new(), &rel)
        .map_err(|why| bad(format!("leads outside the install directory ({why})")))?;
    let target: PathBuf = real.iter().fold(dir.to_path_buf(), |p, c| p.join(c));
    let meta =
        fs::symlink_metadata(&target).map_err(|_| bad("is not in the archive".to_owned()))?;
    if !meta.is_file() {
        return Err(bad("is not a regular file".to_owned()));
    }
    let mode = meta.permissions().mode();
    if mode & 0o100 == 0 {
        fs::set_permissions(&target, fs::Permissions::from_mode((mode & 0o755) | 0o755)).map_err(
            Error::io(format!("cannot make {} executable", target.display())),
        )?;
    }
    Ok(dir.join(rel))
}

/// A member's name as a relative path: `Ok(None)` for the directory itself
/// (`./`), `Err` (why) when it is absolute or has a `..` component.
fn member_path(name: &[u8]) -> Result<Option<PathBuf>, String> {
    if name.is_empty() {
        return Err("an empty name".into());
    }
    if name.contains(&0) {
        return Err("a name with a NUL byte".into());
    }
    let path = Path::new(OsStr::from_bytes(name));
    let mut rel = PathBuf::new();
    for component in path.components() {
        match component {
            Component::RootDir | Component::Prefix(_) => return Err("an absolute path".into()),
            Component::ParentDir => return Err("a path with a `..` component".into()),
            Component::CurDir => {}
            Component::Normal(part) => rel.push(part),
        }
    }
    Ok((!rel.as_os_str().is_empty()).then_some(rel))
}

/// One step of a path: up, or into a name.
enum Step {
    Up,
    Name(OsString),
}

/// `path`'s steps; `Err` for an absolute path.
fn steps(path: &Path) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    for component in path.components() {
        match component {
            Component::RootDir | Component::Prefix(_) => return Err("an absolute link".into()),
            Component::CurDir => {}
            Component::ParentDir => steps.push(Step::Up),
            Component::Normal(name) => steps.push(Step::Name(name.to_os_string())),
        }
    }
    Ok(steps)
}

/// Where `path` leads inside `root`, starting from `start` (real
/// directories, no links, from `root` down), every link on the way
/// followed: the components from `root`. `Err` (why) when it leaves `root`
/// or loops. Names that do not exist are taken as they are.
fn resolve(root: &Path, start: Vec<OsString>, path: &Path) -> Result<Vec<OsString>, String> {
    let mut current = start;
    let mut pending: VecDeque<Step> = steps(path)?.into();
    let mut hops = 0;
    while let Some(step) = pending.pop_front() {
        match step {
            Step::Up => {
                if current.pop().is_none() {
                    return Err("it climbs above the install directory".into());
                }
            }
            Step::Name(name) => {
                let here = join(root, &current).join(&name);
                match fs::symlink_metadata(&here) {
                    Ok(meta) if meta.file_type().is_symlink() => {
                        hops += 1;
                        if hops > MAX_LINK_HOPS {
                            return Err("too many links on the way (a loop?)".into());
                        }
                        let target = fs::read_link(&here).map_err(|e| e.to_string())?;
                        for step in steps(&target)?.into_iter().rev() {
                            pending.push_front(step);
                        }
                    }
                    _ => current.push(name),
                }
            }
        }
    }
    Ok(current)
}

fn join(root: &Path, components: &[OsString]) -> PathBuf {
    components.iter().fold(root.to_path_buf(), |p, c| p.join(c))
}

/// Checks every symbolic link under `dir` (inside `root`) with
/// [`resolve`].
fn check_links(root: &Path, dir: &Path) -> Result<(), Error> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = fs::read_dir(&dir).map_err(Error::io("cannot list the extracted files"))?;
        for entry in entries {
            let entry = entry.map_err(Error::io("cannot list the extracted files"))?;
            let path = entry.path();
            let kind = entry
                .file_type()
                .map_err(Error::io("cannot list the extracted files"))?;
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_symlink() {
                let rel = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
                let parent: Vec<OsString> = rel
                    .parent()
                    .map(|p| p.iter().map(OsStr::to_os_string).collect())
                    .unwrap_or_default();
                let target = fs::read_link(&path).map_err(Error::io("cannot read a link"))?;
                resolve(root, parent, &target).map_err(|why| Error::UnsafeMember {
                    member: rel.display().to_string(),
                    reason: format!("a link leading outside the install directory ({why})"),
                })?;
            }
        }
    }
    Ok(())
}

/// An extraction under way.
struct Extraction<'d> {
    dest: &'d Path,
    origin: &'d str,
    limits: Limits,
    written: u64,
    members: u64,
}

fn refuse(member: &str, reason: impl Into<String>) -> Error {
    Error::UnsafeMember {
        member: member.to_owned(),
        reason: reason.into(),
    }
}

impl Extraction<'_> {
    fn tar(&mut self, reader: impl Read) -> Result<(), Error> {
        let origin = self.origin;
        let bad = |e: std::io::Error| Error::BadArchive {
            archive: origin.to_owned(),
            reason: e.to_string(),
        };
        let mut archive = tar::Archive::new(reader);
        for entry in archive.entries().map_err(bad)? {
            let mut entry = entry.map_err(bad)?;
            let kind = entry.header().entry_type();
            if kind.is_pax_global_extensions()
                || kind.is_pax_local_extensions()
                || kind.is_gnu_longname()
                || kind.is_gnu_longlink()
            {
                continue;
            }
            let name_bytes = entry.path_bytes().into_owned();
            let name = String::from_utf8_lossy(&name_bytes).into_owned();
            self.count()?;
            let rel = match member_path(&name_bytes).map_err(|why| refuse(&name, why))? {
                Some(rel) => rel,
                None if kind.is_dir() => continue,
                None => return Err(refuse(&name, "the install directory itself")),
            };
            if kind.is_file() || kind.is_contiguous() {
                let mode = entry.header().mode().unwrap_or(0o644);
                self.file(&name, &rel, &mut entry, mode)?;
            } else if kind.is_dir() {
                self.dir(&name, &rel)?;
            } else if kind.is_symlink() {
                let target = entry
                    .link_name_bytes()
                    .map(|t| t.into_owned())
                    .unwrap_or_default();
                self.symlink(&name, &rel, &target)?;
            } else if kind.is_hard_link() {
                let target = entry
                    .link_name_bytes()
                    .map(|t| t.into_owned())
                    .unwrap_or_default();
                self.hard_link(&name, &rel, &target)?;
            } else if kind.is_character_special() || kind.is_block_special() {
                return Err(refuse(&name, "a device file"));
            } else if kind.is_fifo() {
                return Err(refuse(&name, "a FIFO"));
            } else {
                return Err(refuse(
                    &name,
                    format!(
                        "of a kind acp does not extract (tar type {:?})",
                        kind.as_byte() as char
                    ),
                ));
            }
        }
        Ok(())
    }

    fn zip(&mut self, file: fs::File) -> Result<(), Error> {
        let origin = self.origin;
        let bad = |e: zip::result::ZipError| Error::BadArchive {
            archive: origin.to_owned(),
            reason: e.to_string(),
        };
        let mut archive = zip::ZipArchive::new(std::io::BufReader::new(file)).map_err(bad)?;
        if archive.len() as u64 > self.limits.members {
            return Err(Error::ExtractTooLarge {
                what: "members",
                limit: self.limits.members,
            });
        }
        for i in 0..archive.len() {
            let mut member = archive.by_index(i).map_err(bad)?;
            let name_bytes = member.name_raw().to_vec();
            let name = String::from_utf8_lossy(&name_bytes).into_owned();
            self.count()?;
            if name_bytes.contains(&b'\\') {
                return Err(refuse(&name, "a name with a backslash (a Windows path)"));
            }
            let rel = match member_path(&name_bytes).map_err(|why| refuse(&name, why))? {
                Some(rel) => rel,
                None if member.is_dir() => continue,
                None => return Err(refuse(&name, "the install directory itself")),
            };
            let mode = member.unix_mode();
            match mode.map(|m| m & 0o170_000) {
                Some(0o120_000) => {
                    let mut target = Vec::new();
                    (&mut member)
                        .take(4096)
                        .read_to_end(&mut target)
                        .map_err(|e| Error::BadArchive {
                            archive: origin.to_owned(),
                            reason: e.to_string(),
                        })?;
                    self.symlink(&name, &rel, &target)?;
                }
                Some(0o020_000 | 0o060_000) => return Err(refuse(&name, "a device file")),
                Some(0o010_000) => return Err(refuse(&name, "a FIFO")),
                Some(0o140_000) => return Err(refuse(&name, "a socket")),
                _ if member.is_dir() => self.dir(&name, &rel)?,
                _ => {
                    let mode = mode.map(|m| m & 0o777).unwrap_or(0o644);
                    self.file(&name, &rel, &mut member, mode)?;
                }
            }
        }
        Ok(())
    }

    fn count(&mut self) -> Result<(), Error> {
        self.members += 1;
        if self.members > self.limits.members {
            return Err(Error::ExtractTooLarge {
                what: "members",
                limit: self.limits.members,
            });
        }
        Ok(())
    }

    /// Creates `rel`'s parent directories, refusing to go through a link.
    fn parents(&self, name: &str, rel: &Path) -> Result<(), Error> {
        let mut dir = self.dest.to_path_buf();
        let Some(parent) = rel.parent() else {
            return Ok(());
        };
        for part in parent.iter() {
            dir.push(part);
            match fs::symlink_metadata(&dir) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    return Err(refuse(name, "written through a link"));
                }
                Ok(meta) if meta.is_dir() => {}
                Ok(_) => return Err(refuse(name, "inside something that is not a directory")),
                Err(_) => make_dir(&dir)?,
            }
        }
        Ok(())
    }

    /// Makes room at `rel` for a new file or link: an earlier file or
    /// link of the same name is replaced (as tar does); a directory is not.
    fn clear(&self, name: &str, rel: &Path) -> Result<PathBuf, Error> {
        self.parents(name, rel)?;
        let path = self.dest.join(rel);
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_dir() => {
                Err(refuse(name, "a file where the archive has a directory"))
            }
            Ok(_) => {
                fs::remove_file(&path).map_err(Error::io("cannot replace an extracted file"))?;
                Ok(path)
            }
            Err(_) => Ok(path),
        }
    }

    fn file(
        &mut self,
        name: &str,
        rel: &Path,
        data: &mut impl Read,
        mode: u32,
    ) -> Result<(), Error> {
        let path = self.clear(name, rel)?;
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode((mode & 0o755) | 0o600)
            .open(&path)
            .map_err(Error::io(format!("cannot create {}", path.display())))?;
        let room = self.limits.extracted - self.written;
        let copied =
            std::io::copy(&mut data.take(room + 1), &mut file).map_err(|e| Error::BadArchive {
                archive: self.origin.to_owned(),
                reason: format!("{name}: {e}"),
            })?;
        if copied > room {
            return Err(Error::ExtractTooLarge {
                what: "bytes",
                limit: self.limits.extracted,
            });
        }
        self.written += copied;
        file.flush()
            .map_err(Error::io(format!("cannot write {}", path.display())))
    }

    fn dir(&mut self, name: &str, rel: &Path) -> Result<(), Error> {
        self.parents(name, rel)?;
        let path = self.dest.join(rel);
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_dir() => Ok(()),
            Ok(meta) if meta.file_type().is_symlink() => {
                Err(refuse(name, "a directory where the archive has a link"))
            }
            Ok(_) => Err(refuse(name, "a directory where the archive has a file")),
            Err(_) => make_dir(&path),
        }
    }

    fn symlink(&mut self, name: &str, rel: &Path, target: &[u8]) -> Result<(), Error> {
        let leads_outside = |why: String| {
            refuse(
                name,
                format!("a link leading outside the install directory ({why})"),
            )
        };
        if target.is_empty() || target.contains(&0) {
            return Err(refuse(name, "a link to nothing"));
        }
        let target = Path::new(OsStr::from_bytes(target));
        let parent: Vec<OsString> = rel
            .parent()
            .map(|p| p.iter().map(OsStr::to_os_string).collect())
            .unwrap_or_default();
        self.parents(name, rel)?;
        resolve(self.dest, parent, target).map_err(leads_outside)?;
        let path = self.clear(name, rel)?;
        std::os::unix::fs::symlink(target, &path).map_err(Error::io(format!(
            "cannot create the link {}",
            path.display()
        )))
    }

    fn hard_link(&mut self, name: &str, rel: &Path, target: &[u8]) -> Result<(), Error> {
        let not_earlier = || refuse(name, "a hard link to something that is not an earlier file");
        let target_rel = member_path(target)
            .map_err(|why| refuse(name, format!("a hard link to {why}")))?
            .ok_or_else(not_earlier)?;
        // The target's directories must be real ones, and it a file.
        let mut dir = self.dest.to_path_buf();
        for part in target_rel.parent().into_iter().flat_map(Path::iter) {
            dir.push(part);
            if !fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
                return Err(not_earlier());
            }
        }
        let source = self.dest.join(&target_rel);
        if !fs::symlink_metadata(&source).is_ok_and(|m| m.is_file()) {
            return Err(not_earlier());
        }
        let path = self.clear(name, rel)?;
        fs::hard_link(&source, &path).map_err(Error::io(format!(
            "cannot create the link {}",
            path.display()
        )))
    }
}

fn make_dir(path: &Path) -> Result<(), Error> {
    fs::DirBuilder::new()
        .mode(0o755)
        .create(path)
        .map_err(Error::io(format!("cannot create {}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tar of regular files, directories (names ending in `/`) and
    /// symbolic links (`(name, None, target)`).
    fn tar_of(members: &[(&str, Option<&[u8]>, &str)]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for (name, data, link) in members {
            let mut header = tar::Header::new_gnu();
            match (data, name.ends_with('/')) {
                (_, true) => header.set_entry_type(tar::EntryType::Directory),
                (Some(_), false) => header.set_entry_type(tar::EntryType::Regular),
                (None, false) => {
                    header.set_entry_type(tar::EntryType::Symlink);
                    header.set_link_name(link).unwrap();
                }
            }
            let data = data.unwrap_or_default();
            header.set_size(data.len() as u64);
            header.set_mode(0o644);
            header.set_path(name).unwrap();
            header.set_cksum();
            builder.append(&header, data).unwrap();
        }
        builder.into_inner().unwrap()
    }

    fn gz(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    fn extract_bytes(
        format: Format,
        bytes: &[u8],
        cmd: &str,
        limits: Limits,
    ) -> Result<tempfile::TempDir, Error> {
        let dir = tempfile::tempdir().unwrap();
        let archive = dir.path().join("archive");
        fs::write(&archive, bytes).unwrap();
        let dest = dir.path().join("tree");
        fs::create_dir(&dest).unwrap();
        extract(format, &archive, "test", &dest, cmd, limits).map(|()| dir)
    }

    const SMALL: Limits = Limits {
        extracted: 1 << 20,
        members: 5,
    };

    #[test]
    fn bombs_stop_at_the_cap_whatever_the_headers_say() {
        let zeros = vec![0u8; 8 << 20];
        // tar.gz: 8 MiB of zeros compress to a few KiB.
        let bomb = gz(&tar_of(&[("big", Some(&zeros), "")]));
        assert!(bomb.len() < 64 << 10);
        let err = extract_bytes(Format::TarGz, &bomb, "big", SMALL).unwrap_err();
        assert!(
            matches!(err, Error::ExtractTooLarge { what: "bytes", limit } if limit == 1 << 20),
            "{err}"
        );
        // zip: the same, deflated.
        let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        writer.start_file("big", options).unwrap();
        writer.write_all(&zeros).unwrap();
        let bomb = writer.finish().unwrap().into_inner();
        assert!(bomb.len() < 64 << 10);
        let err = extract_bytes(Format::Zip, &bomb, "big", SMALL).unwrap_err();
        assert!(
            matches!(err, Error::ExtractTooLarge { what: "bytes", .. }),
            "{err}"
        );
        // Several files that together pass the cap.
        let half = vec![1u8; 600 << 10];
        let two = gz(&tar_of(&[("a", Some(&half), ""), ("b", Some(&half), "")]));
        let err = extract_bytes(Format::TarGz, &two, "a", SMALL).unwrap_err();
        assert!(
            matches!(err, Error::ExtractTooLarge { what: "bytes", .. }),
            "{err}"
        );
        // A raw binary too.
        let err = extract_bytes(Format::Raw, &zeros, "agent", SMALL).unwrap_err();
        assert!(
            matches!(err, Error::ExtractTooLarge { what: "bytes", .. }),
            "{err}"
        );
    }

    #[test]
    fn too_many_members_are_refused() {
        let names: Vec<String> = (0..6).map(|i| format!("f{i}")).collect();
        let members: Vec<(&str, Option<&[u8]>, &str)> = names
            .iter()
            .map(|n| (n.as_str(), Some(&b"x"[..]), ""))
            .collect();
        let err = extract_bytes(Format::TarGz, &gz(&tar_of(&members)), "f0", SMALL).unwrap_err();
        assert!(
            matches!(
                err,
                Error::ExtractTooLarge {
                    what: "members",
                    limit: 5
                }
            ),
            "{err}"
        );
        let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for name in &names {
            writer
                .start_file(name.as_str(), zip::write::SimpleFileOptions::default())
                .unwrap();
        }
        let zip = writer.finish().unwrap().into_inner();
        let err = extract_bytes(Format::Zip, &zip, "f0", SMALL).unwrap_err();
        assert!(
            matches!(
                err,
                Error::ExtractTooLarge {
                    what: "members",
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn links_inside_are_kept_and_the_command_is_checked() {
        let bytes = gz(&tar_of(&[
            ("pkg/", None, ""),
            ("pkg/lib64/", None, ""),
            ("pkg/lib64/libx.so", Some(b"lib"), ""),
            ("pkg/lib/", None, ""),
            ("pkg/lib/libx.so", None, "../lib64/libx.so"),
            ("pkg/bin/agent", Some(b"#!/bin/sh\n"), ""),
            ("pkg/run", None, "bin/agent"),
            ("pkg/dangling", None, "not/there"),
        ]));
        let limits = Limits::default();
        let dir = extract_bytes(Format::TarGz, &bytes, "pkg/run", limits).unwrap();
        let tree = dir.path().join("tree");
        assert_eq!(fs::read(tree.join("pkg/lib/libx.so")).unwrap(), b"lib");
        // The command through a link, made executable (the archive said 0644).
        let program = check_command(&tree, "./pkg/run").unwrap();
        assert_eq!(program, tree.join("pkg/run"));
        let mode = fs::metadata(tree.join("pkg/bin/agent"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
        for (cmd, why) in [
            ("/bin/sh", "is an absolute path"),
            ("../x", "is a path with a `..` component"),
            ("./", "names no file"),
            ("pkg/missing", "is not in the archive"),
            ("pkg/lib", "is not a regular file"),
            ("pkg/dangling", "is not in the archive"),
        ] {
            let err = check_command(&tree, cmd).unwrap_err();
            assert!(err.to_string().contains(why), "{cmd}: {err}");
        }
        // A link that leads out, made after extraction, is caught too.
        std::os::unix::fs::symlink("../..", tree.join("pkg/up")).unwrap();
        let err = check_command(&tree, "pkg/up/etc/passwd").unwrap_err();
        assert!(err.to_string().contains("leads outside"), "{err}");
        assert!(check_links(&tree, &tree).is_err());
    }

    #[test]
    fn formats_by_file_name() {
        let format = |url: &str| Format::of_url(&reqwest::Url::parse(url).unwrap());
        assert_eq!(format("https://x/a.zip"), Format::Zip);
        assert_eq!(format("https://x/a.TAR.GZ?sig=1"), Format::TarGz);
        assert_eq!(format("https://x/a.tgz"), Format::TarGz);
        assert_eq!(format("https://x/a.tar.bz2"), Format::TarBz2);
        assert_eq!(format("https://x/a.tbz2"), Format::TarBz2);
        assert_eq!(format("https://x/agent-linux-x64"), Format::Raw);
    }

    #[test]
    fn a_corrupt_archive_is_an_error() {
        let bytes = gz(&tar_of(&[("a", Some(b"data"), "")]));
        let err = extract_bytes(
            Format::TarGz,
            &bytes[..bytes.len() / 2],
            "a",
            Limits::default(),
        )
        .unwrap_err();
        assert!(matches!(err, Error::BadArchive { .. }), "{err}");
        let err = extract_bytes(Format::Zip, b"not a zip", "a", Limits::default()).unwrap_err();
        assert!(matches!(err, Error::BadArchive { .. }), "{err}");
    }
}
