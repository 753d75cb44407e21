//! Server-sent events: the framing both providers stream their responses in.

/// Splits a byte stream into server-sent events' `data` payloads.
#[derive(Default)]
pub(super) struct SseBuffer {
    pending: Vec<u8>,
    data: Vec<String>,
}

impl SseBuffer {
    /// Feeds bytes; returns the data of each event completed by them.
    pub(super) fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        self.pending.extend_from_slice(bytes);
        let mut events = Vec::new();
        while let Some(pos) = self.pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=pos).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if !self.data.is_empty() {
                    events.push(self.data.join("\n"));
                    self.data.clear();
                }
            } else if let Some(rest) = line.strip_prefix("data:") {
                self.data
                    .push(rest.strip_prefix(' ').unwrap_or(rest).to_string());
            }
            // `event:`, `id:`, `retry:` and comments carry nothing we need.
        }
        events
    }

    /// The last event, if the stream ended without a blank line after it.
    pub(super) fn finish(&mut self) -> Option<String> {
        let rest = String::from_utf8_lossy(&std::mem::take(&mut self.pending)).to_string();
        if let Some(d) = rest.trim_end().strip_prefix("data:") {
            self.data.push(d.trim_start().to_string());
        }
        (!self.data.is_empty()).then(|| std::mem::take(&mut self.data).join("\n"))
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_across_pushes_and_crlf() {
        let mut sse = SseBuffer::default();
        assert!(sse.push(b"event: x\ndata: {\"a\"").is_empty());
        assert_eq!(
            sse.push(b":1}\r\n\r\ndata: two\ndata: lines\n\n"),
            ["{\"a\":1}", "two\nlines"]
        );
        assert!(sse.push(b"data: last").is_empty());
        assert_eq!(sse.finish().as_deref(), Some("last"));
        assert_eq!(sse.finish(), None);
    }
}
