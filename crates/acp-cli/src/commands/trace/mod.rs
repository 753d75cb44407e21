//! `acp trace FILE` and `acp watch URL`: recordings of `acp record` (or of
//! a live connection of `acp serve`, [`watch`]) shown as a timeline.
//!
//! `acp trace` reads a recording and shows it as a
//! timeline ([`model`], built by [`build`]): as text ([`text`]), as JSON for scripts
//! (`--format json`: the [`model::Timeline`] as one JSON document), or as
//! one self-contained HTML page ([`html`], `--html OUT`). A recording still
//! being made (`acp watch`) is shown as it happens by [`live`], with the
//! same lines.
//!
//! A recording cut off by a crash is read up to its last whole line; lines
//! that are not records are left out with a warning.

pub mod build;
pub mod html;
pub mod live;
pub mod model;
pub mod text;
pub mod watch;

use crate::cli::{TraceArgs, TraceFormat};
use crate::exit::{self, Failure};
use crate::recording::Recording;
use model::Timeline;
use std::io::Write as _;
use std::path::Path;

/// Runs `acp trace`.
pub fn run(args: TraceArgs) -> Result<u8, Failure> {
    let recording = Recording::read(&args.file)?;
    let mut timeline = Timeline::of(&recording);
    timeline.filter(args.session.as_deref(), args.turn);
    let name = args.file.display().to_string();
    if let Some(out) = &args.html {
        let page = html::render(&timeline, &name);
        write_atomically(out, page.as_bytes()).map_err(|e| {
            Failure::new(
                exit::AGENT_ERROR,
                format!("cannot write {}: {e}", out.display()),
            )
        })?;
        eprintln!("acp trace: wrote {}", out.display());
        return Ok(exit::OK);
    }
    let output = match args.format {
        TraceFormat::Text => text::render(&timeline, &name),
        TraceFormat::Json => {
            let mut json = serde_json::to_string_pretty(&timeline)
                .map_err(|e| Failure::agent(format!("cannot encode the timeline: {e}")))?;
            json.push('\n');
            json
        }
    };
    let mut stdout = std::io::stdout().lock();
    // A closed pipe (`acp trace F | head`) is not an error worth a message.
    let _ = stdout
        .write_all(output.as_bytes())
        .and_then(|()| stdout.flush());
    Ok(exit::OK)
}

/// Writes `bytes` to a temporary file beside `path` and renames it over
/// `path`, so a reader never sees half a page.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(bytes)?;
    file.as_file().sync_data()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}
