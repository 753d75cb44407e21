//! Archives for the tests, built member by member with names and link
//! targets written as they are (a hostile archive's), in every format the
//! registry lists.

use crate::common::ACP;
use std::io::Write;

/// This machine's platform as the registry names it.
pub fn platform() -> &'static str {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "linux-x86_64",
        ("linux", "aarch64") => "linux-aarch64",
        ("macos", "x86_64") => "darwin-x86_64",
        ("macos", "aarch64") => "darwin-aarch64",
        other => panic!("no registry platform for {other:?}"),
    }
}

/// A member of a test archive.
#[derive(Clone)]
pub enum Member {
    File(String, Vec<u8>, u32),
    Dir(String),
    Symlink(String, String),
    HardLink(String, String),
    CharDevice(String),
    Fifo(String),
}

pub fn file(name: impl Into<String>, data: impl Into<Vec<u8>>, mode: u32) -> Member {
    Member::File(name.into(), data.into(), mode)
}

pub fn symlink(name: impl Into<String>, to: impl Into<String>) -> Member {
    Member::Symlink(name.into(), to.into())
}

/// A tar archive of `members`, their names and link targets written as
/// they are (no check: a hostile archive's).
pub fn tar(members: &[Member]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for member in members {
        let mut header = tar::Header::new_gnu();
        let (name, kind, link, data, mode): (&str, tar::EntryType, &str, &[u8], u32) = match member
        {
            Member::File(name, data, mode) => {
                (name.as_str(), tar::EntryType::Regular, "", data, *mode)
            }
            Member::Dir(name) => (name.as_str(), tar::EntryType::Directory, "", b"", 0o755),
            Member::Symlink(name, to) => (
                name.as_str(),
                tar::EntryType::Symlink,
                to.as_str(),
                b"",
                0o777,
            ),
            Member::HardLink(name, to) => {
                (name.as_str(), tar::EntryType::Link, to.as_str(), b"", 0o644)
            }
            Member::CharDevice(name) => (name.as_str(), tar::EntryType::Char, "", b"", 0o666),
            Member::Fifo(name) => (name.as_str(), tar::EntryType::Fifo, "", b"", 0o644),
        };
        let old = header.as_old_mut();
        old.name[..name.len()].copy_from_slice(name.as_bytes());
        old.linkname[..link.len()].copy_from_slice(link.as_bytes());
        header.set_entry_type(kind);
        header.set_mode(mode);
        header.set_size(data.len() as u64);
        header.set_cksum();
        builder.append(&header, data).unwrap();
    }
    builder.into_inner().unwrap()
}

pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

pub fn bzip2(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

pub fn zip(members: &[Member]) -> Vec<u8> {
    use zip::write::SimpleFileOptions;
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for member in members {
        match member {
            Member::File(name, data, mode) => {
                let options = SimpleFileOptions::default().unix_permissions(*mode);
                writer.start_file(name.as_str(), options).unwrap();
                writer.write_all(data).unwrap();
            }
            Member::Dir(name) => writer
                .add_directory(name.as_str(), SimpleFileOptions::default())
                .unwrap(),
            Member::Symlink(name, to) => writer
                .add_symlink(name.as_str(), to.as_str(), SimpleFileOptions::default())
                .unwrap(),
            _ => panic!("not in a zip"),
        }
    }
    writer.finish().unwrap().into_inner()
}

/// The archive formats of the registry, by the file name's ending.
#[derive(Clone, Copy, Debug)]
pub enum Format {
    TarGz,
    Tgz,
    TarBz2,
    Zip,
    Raw,
}

impl Format {
    pub fn suffix(self) -> &'static str {
        match self {
            Format::TarGz => ".tar.gz",
            Format::Tgz => ".tgz",
            Format::TarBz2 => ".tar.bz2",
            Format::Zip => ".zip",
            Format::Raw => "",
        }
    }

    pub fn pack(self, members: &[Member]) -> Vec<u8> {
        match self {
            Format::TarGz | Format::Tgz => gzip(&tar(members)),
            Format::TarBz2 => bzip2(&tar(members)),
            Format::Zip => zip(members),
            Format::Raw => match members {
                [Member::File(_, data, _)] => data.clone(),
                _ => panic!("a raw binary is one file"),
            },
        }
    }
}

/// The test agent: a script that checks its argument and environment (as
/// the registry gives them), then runs `acp mock` with the mock script
/// `mock` (a shell word).
pub fn agent_script(mock: &str) -> Vec<u8> {
    format!(
        "#!/bin/sh\n\
         [ \"$1\" = --acp-flag ] && [ \"$GREETING\" = hi ] || \
         {{ echo \"agent: args $* GREETING=$GREETING\" >&2; exit 3; }}\n\
         exec '{ACP}' mock --script {mock}\n"
    )
    .into_bytes()
}

/// The mock script of version `version`: it says so.
pub fn mock_script(version: &str) -> String {
    format!(
        "expect initialize\n\
         reply {{\"protocolVersion\":1,\"agentCapabilities\":{{}}}}\n\
         expect session/new\n\
         reply {{\"sessionId\":\"s1\"}}\n\
         expect session/prompt\n\
         send update {{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{{\"type\":\"text\",\"text\":\"Hello from registry agent {version}\\n\"}}}}\n\
         reply {{\"stopReason\":\"end_turn\"}}\n"
    )
}
