//! The checking agent's process: a relay between the client and the judge.
//!
//! The client under test starts `{agent}`, a small script in the run's
//! directory that runs this relay with the path of the judge's Unix socket.
//! The relay connects, says who it is in one line (`{"acpCheckRelay":1,…}`),
//! and then copies bytes both ways, unchanged: the client's writes to its
//! stdin go to the judge, the judge's lines go to its stdout. Everything the
//! agent does and judges happens in the judge's process, so the relay
//! neither parses nor buffers lines: what the judge sees is exactly what the
//! client wrote, noise included. The script ignores SIGINT for it (a Ctrl-C
//! sent to the client's process group is for the client).
//!
//! The relay ends when the judge closes the socket (the agent "exits"), or
//! soon after the client closes the agent's stdin (the judge closes then).

use serde_json::json;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

/// Runs the relay to the judge listening on `socket`; returns when the
/// judge closes it.
pub fn run(socket: &Path) -> std::io::Result<()> {
    let mut to_judge = UnixStream::connect(socket).map_err(|e| {
        std::io::Error::new(
            e.kind(),
            format!(
                "the acp check judge is not listening at {}: {e}",
                socket.display()
            ),
        )
    })?;
    let cwd = std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    let hello = json!({"acpCheckRelay": 1, "pid": std::process::id(), "cwd": cwd});
    to_judge.write_all(format!("{hello}\n").as_bytes())?;
    let mut from_judge = to_judge.try_clone()?;
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buf = [0u8; 64 * 1024];
        loop {
            match stdin.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if to_judge.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            }
        }
        let _ = to_judge.shutdown(std::net::Shutdown::Write);
    });
    let mut stdout = std::io::stdout().lock();
    let mut buf = [0u8; 64 * 1024];
    loop {
        match from_judge.read(&mut buf) {
            Ok(0) | Err(_) => return Ok(()),
            Ok(n) => {
                if stdout.write_all(&buf[..n]).is_err() || stdout.flush().is_err() {
                    return Ok(());
                }
            }
        }
    }
}
