//! The arguments of `acp watch`.

use super::TraceFormat;
use clap::Args;

/// Arguments of `acp watch`.
#[derive(Debug, Args)]
pub struct WatchArgs {
    /// The server's ACP URL (ws://, wss://, http:// or https://), as
    /// clients reach it.
    #[arg(value_name = "URL")]
    pub url: String,
    /// The connection to watch: its id, or a unique prefix of it. Without
    /// it, the server's connections are listed.
    #[arg(long, value_name = "ID")]
    pub connection: Option<String>,
    /// Start from the oldest traffic the server kept of the connection,
    /// rather than from now.
    #[arg(long, requires = "connection")]
    pub from_start: bool,
    /// Output format: the timeline as `acp trace` shows it, or one JSON
    /// object per event (for the list: one JSON document).
    #[arg(long, value_enum, default_value_t = TraceFormat::Text)]
    pub format: TraceFormat,
}
