//! Passing notices for the user, and context compaction: its progress and its
//! summary, streamed as session updates.

use super::*;

wire_struct! {
    /// Information for the user that is shown once and is not part of the history.
    /// Delivery is best effort.
    pub struct Notice {
        /// How prominently to show it.
        pub severity: NoticeSeverity = "severity" (Req),
        /// A short plain-text title that makes sense alone (not empty).
        pub title: String = "title" (Req),
        /// Optional plain-text details.
        pub description: Option<String> = "description" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl Notice {
    /// A notice titled `title`.
    pub fn new(severity: impl Into<NoticeSeverity>, title: impl Into<String>) -> Self {
        Notice {
            severity: severity.into(),
            title: title.into(),
            description: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(Notice { opt { description: String, meta: Meta } });

string_enum! {
    /// How prominently a notice should be shown. Values starting with `_` are
    /// free for custom use.
    pub enum NoticeSeverity {
        /// For information.
        "info" => Info,
        /// A warning.
        "warning" => Warning,
        /// An error.
        "error" => Error,
    }
}

id_type!(
    /// Identifies a context compaction within a session (chosen by the agent).
    CompactionId
);

string_enum! {
    /// Where a context compaction stands. Values starting with `_` are free for custom use.
    pub enum CompactionStatus {
        /// Started, not finished.
        "in_progress" => InProgress,
        /// Finished successfully.
        "completed" => Completed,
        /// Finished unsuccessfully.
        "failed" => Failed,
        /// Cancelled before it finished.
        "cancelled" => Cancelled,
    }
}

wire_struct! {
    /// Creates or patches a context compaction. The first update with an id fixes
    /// the compaction's place in the timeline; later ones change it in place.
    ///
    /// `summary`, `error` and `_meta` are patches: absent (`None`) leaves the stored
    /// value, `null` (`Some(None)`) clears it, a value (`Some(Some(…))`) replaces it.
    pub struct CompactionUpdate {
        /// The compaction, unique within the session.
        pub compaction_id: CompactionId = "compactionId" (Req),
        /// Its current status.
        pub status: CompactionStatus = "status" (Req),
        /// The whole summary to show, replacing any earlier one (`[]` clears it too);
        /// malformed blocks are dropped.
        pub summary: Option<Option<Vec<ContentBlock>>> = "summary" (PatchItems),
        /// What went wrong, for people to read.
        pub error: Option<Option<String>> = "error" (Patch),
        /// Extension metadata, as a patch (unlike most `_meta` fields, `null` clears it).
        pub meta: Option<Option<Meta>> = "_meta" (Patch),
    }
}

impl CompactionUpdate {
    /// Compaction `compaction_id` is now in `status`; nothing else changes.
    pub fn new(
        compaction_id: impl Into<CompactionId>,
        status: impl Into<CompactionStatus>,
    ) -> Self {
        CompactionUpdate {
            compaction_id: compaction_id.into(),
            status: status.into(),
            summary: None,
            error: None,
            meta: None,
            extra: Default::default(),
        }
    }

    /// Replaces the summary.
    #[must_use]
    pub fn summary(mut self, summary: Vec<ContentBlock>) -> Self {
        self.summary = Some(Some(summary));
        self
    }

    /// Clears the summary (sends `null`).
    #[must_use]
    pub fn clear_summary(mut self) -> Self {
        self.summary = Some(None);
        self
    }

    /// Sets the error text.
    #[must_use]
    pub fn error(mut self, error: impl Into<String>) -> Self {
        self.error = Some(Some(error.into()));
        self
    }

    /// Clears the error text (sends `null`).
    #[must_use]
    pub fn clear_error(mut self) -> Self {
        self.error = Some(None);
        self
    }

    /// Replaces the extension metadata.
    #[must_use]
    pub fn meta(mut self, meta: Meta) -> Self {
        self.meta = Some(Some(meta));
        self
    }

    /// Clears the extension metadata (sends `null`).
    #[must_use]
    pub fn clear_meta(mut self) -> Self {
        self.meta = Some(None);
        self
    }
}

wire_struct! {
    /// A content block appended to a compaction's summary. An unknown id starts a
    /// new compaction, in progress.
    pub struct CompactionSummaryChunk {
        /// The compaction whose summary grows.
        pub compaction_id: CompactionId = "compactionId" (Req),
        /// The block to append.
        pub content: ContentBlock = "content" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl CompactionSummaryChunk {
    /// Appends `content` to the summary of `compaction_id`.
    pub fn new(compaction_id: impl Into<CompactionId>, content: impl Into<ContentBlock>) -> Self {
        CompactionSummaryChunk {
            compaction_id: compaction_id.into(),
            content: content.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(CompactionSummaryChunk { opt { meta: Meta } });
