//! `acp exec --format json`: every `session/update` as one JSON object per
//! line on standard output (history replays included), then the result;
//! notes go to standard error.

use acp::schema::*;
use std::io::Write;

/// The JSON lines screen: two writers (normally stdout and stderr).
pub(super) struct JsonLines {
    out: Box<dyn Write + Send>,
    err: Box<dyn Write + Send>,
}

impl JsonLines {
    /// Updates and the result to `out`, notes to `err`.
    pub(super) fn new(out: Box<dyn Write + Send>, err: Box<dyn Write + Send>) -> Self {
        JsonLines { out, err }
    }

    /// Writes a note line to standard error.
    pub(super) fn note(&mut self, line: &str) {
        let _ = writeln!(self.err, "{line}");
        let _ = self.err.flush();
    }

    /// Writes the notification as one line.
    pub(super) fn update(&mut self, notification: &SessionNotification) {
        if let Ok(line) = serde_json::to_string(notification) {
            let _ = writeln!(self.out, "{line}");
            let _ = self.out.flush();
        }
    }

    /// Writes the result line: `{"sessionId":…,"stopReason":…}`.
    pub(super) fn finish(&mut self, session_id: &SessionId, stop_reason: &StopReason) {
        let line = serde_json::json!({ "sessionId": session_id, "stopReason": stop_reason });
        let _ = writeln!(self.out, "{line}");
        let _ = self.out.flush();
    }
}
