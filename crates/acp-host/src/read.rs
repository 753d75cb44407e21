//! Reading text files for `fs/read_text_file`.
//!
//! Only regular files are read: a FIFO, a device, a socket or a directory
//! is refused at once, without opening it in a way that could block (a
//! FIFO with no writer would otherwise never answer). The answer must fit
//! in one message of the connection, so a file, or a range of lines, whose
//! content would exceed the budget is refused with an error that tells the
//! agent to read a smaller range with `line` and `limit`; the file is read
//! in a streaming way, so memory stays within that budget too. Text that is
//! not UTF-8 is refused, naming the line where it stops being text.

use crate::roots::invalid;
use acp_schema::{Error, ErrorCode};
use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The bytes of a response message that are not the file's content
/// (`{"jsonrpc":"2.0","id":…,"result":{"content":"…"}}`, with room for a
/// long request id).
pub const ENVELOPE: usize = 1024;

/// Reads `path` (already resolved) as UTF-8 text: from 1-based `line`, at
/// most `limit` lines (each with its line ending), as the protocol says.
/// `budget` is the most bytes the content may take in the JSON answer
/// (escapes included).
pub fn read_text(
    path: &Path,
    line: Option<u32>,
    limit: Option<u32>,
    budget: usize,
) -> Result<String, Error> {
    if line == Some(0) {
        return Err(invalid("line numbers start at 1; line 0 was asked for"));
    }
    let meta = std::fs::metadata(path).map_err(|e| io_error("read", path, &e))?;
    refuse_special(path, &meta.file_type())?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits() | nix::fcntl::OFlag::O_NOCTTY.bits())
        .open(path)
        .map_err(|e| io_error("read", path, &e))?;
    // Checked again on the open file: it may have been swapped meanwhile.
    let meta = file.metadata().map_err(|e| io_error("read", path, &e))?;
    refuse_special(path, &meta.file_type())?;
    if line.is_none() && limit.is_none() {
        if meta.len() > budget as u64 {
            return Err(too_big(path, meta.len(), budget));
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        file.take(budget as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| io_error("read", path, &e))?;
        let text = utf8(path, bytes, 1)?;
        let size = json_len(&text);
        if size > budget {
            return Err(too_big(path, size as u64, budget));
        }
        return Ok(text);
    }
    read_lines(
        path,
        BufReader::new(file),
        line.unwrap_or(1),
        limit.map_or(usize::MAX, |n| n as usize),
        budget,
    )
}

/// Streams lines `first..first+limit` out of `reader`.
fn read_lines(
    path: &Path,
    mut reader: impl BufRead,
    first: u32,
    limit: usize,
    budget: usize,
) -> Result<String, Error> {
    let mut current: u64 = 1;
    let mut taken = 0usize;
    let mut out: Vec<u8> = Vec::new();
    let mut size = 0usize;
    while taken < limit {
        let chunk = reader.fill_buf().map_err(|e| io_error("read", path, &e))?;
        if chunk.is_empty() {
            break;
        }
        let (part, ends_line) = match memchr(b'\n', chunk) {
            Some(i) => (&chunk[..=i], true),
            None => (chunk, false),
        };
        let used = part.len();
        if current >= u64::from(first) {
            size += part.iter().map(|&b| escaped_len(b)).sum::<usize>();
            if size > budget {
                return Err(invalid(format!(
                    "the lines asked for from {} (from line {first}) come to more than \
                     {budget} bytes, the most one answer can carry; read fewer lines at a \
                     time with line and limit",
                    path.display()
                )));
            }
            out.extend_from_slice(part);
        }
        reader.consume(used);
        if ends_line {
            if current >= u64::from(first) {
                taken += 1;
            }
            current += 1;
        }
    }
    utf8(path, out, u64::from(first))
}

fn memchr(needle: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|&b| b == needle)
}

/// Refuses anything but a regular file.
fn refuse_special(path: &Path, kind: &std::fs::FileType) -> Result<(), Error> {
    let what = if kind.is_file() {
        return Ok(());
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO (named pipe)"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        "not a regular file"
    };
    Err(invalid(format!(
        "{} is {what}; only regular text files can be read",
        path.display()
    )))
}

/// `bytes` as text, or an error naming the first line that is not UTF-8
/// (`first_line` is the number of the first line in `bytes`).
fn utf8(path: &Path, bytes: Vec<u8>, first_line: u64) -> Result<String, Error> {
    String::from_utf8(bytes).map_err(|e| {
        let bad = e.utf8_error().valid_up_to();
        let line = first_line + e.as_bytes()[..bad].iter().filter(|&&b| b == b'\n').count() as u64;
        invalid(format!(
            "{} is not UTF-8 text (line {line} has bytes that are not UTF-8); \
             only text files can be read",
            path.display()
        ))
    })
}

fn too_big(path: &Path, size: u64, budget: usize) -> Error {
    invalid(format!(
        "{} is too large to send in one answer ({size} bytes; at most {budget}); \
         read it in parts with line and limit",
        path.display()
    ))
}

/// The length of `text` as a JSON string's content, with serde_json's
/// escapes.
pub fn json_len(text: &str) -> usize {
    text.bytes().map(escaped_len).sum()
}

fn escaped_len(b: u8) -> usize {
    match b {
        b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
        0..0x20 => 6,
        _ => 1,
    }
}

/// An error for a failed file operation: `resource_not_found` when the
/// file does not exist, else `internal_error` with the system's reason.
pub(crate) fn io_error(what: &str, path: &Path, e: &std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::NotFound {
        Error::new(
            ErrorCode::RESOURCE_NOT_FOUND,
            format!("cannot {what} {}: no such file", path.display()),
        )
    } else {
        Error::new(
            ErrorCode::INTERNAL_ERROR,
            format!("cannot {what} {}: {e}", path.display()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BIG: usize = 1 << 20;

    #[test]
    fn line_and_limit() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "one\ntwo\nthree\nfour").unwrap();
        let read = |l, n| read_text(&file, l, n, BIG);
        assert_eq!(read(None, None).unwrap(), "one\ntwo\nthree\nfour");
        assert_eq!(read(Some(2), Some(2)).unwrap(), "two\nthree\n");
        assert_eq!(read(Some(4), None).unwrap(), "four");
        assert_eq!(read(None, Some(1)).unwrap(), "one\n");
        assert_eq!(read(Some(9), None).unwrap(), "");
        assert_eq!(read(Some(1), Some(0)).unwrap(), "");
        assert!(
            read(Some(0), None)
                .unwrap_err()
                .message
                .contains("start at 1")
        );
    }

    #[test]
    fn budget_and_encoding() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "ab\"\n").unwrap();
        // `ab\"\n` takes 6 bytes in JSON.
        assert_eq!(read_text(&file, None, None, 6).unwrap(), "ab\"\n");
        let e = read_text(&file, None, None, 5).unwrap_err();
        assert!(e.message.contains("line and limit"), "{}", e.message);
        assert!(read_text(&file, Some(1), None, 5).is_err());
        std::fs::write(&file, b"ok\nstill ok\n\xff\xfe\n").unwrap();
        let e = read_text(&file, None, None, BIG).unwrap_err();
        assert!(e.message.contains("line 3 has bytes"), "{}", e.message);
        assert_eq!(
            read_text(&file, Some(2), Some(1), BIG).unwrap(),
            "still ok\n"
        );
        let e = read_text(&file, Some(2), None, BIG).unwrap_err();
        assert!(e.message.contains("line 3 has bytes"), "{}", e.message);
    }

    #[test]
    fn special_files_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let e = read_text(&fifo, None, None, BIG).unwrap_err();
        assert!(e.message.contains("FIFO"), "{}", e.message);
        let e = read_text(Path::new("/dev/zero"), None, Some(1), BIG).unwrap_err();
        assert!(e.message.contains("a device"), "{}", e.message);
        let e = read_text(dir.path(), None, None, BIG).unwrap_err();
        assert!(e.message.contains("a directory"), "{}", e.message);
        let e = read_text(&dir.path().join("nope"), None, None, BIG).unwrap_err();
        assert_eq!(e.code, ErrorCode::RESOURCE_NOT_FOUND);
    }
}
