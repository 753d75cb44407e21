//! Tool calls of v2: one upsert ([`ToolCallUpdate`]) creates or patches a call,
//! [`ToolCallContentChunk`] appends to its content, and file changes are
//! structured ([`Diff`]).

use super::{AbsolutePath, ContentBlock, MediaType};
use crate::initialize::marker_capability;
use crate::util::{setters, string_enum, tagged_union, wire_struct};
use crate::{Meta, RawJson, SessionId, Terminal, ToolCallId, ToolCallLocation, ToolKind};

wire_struct! {
    /// Creates a tool call (the first update with an unseen `toolCallId`) or
    /// patches it: a field left out is unchanged, `null` clears it (`Some(None)`
    /// here), a value replaces it; `content` and `locations` replace the whole
    /// list. Top-level `_meta` patches the call's metadata the same way.
    pub struct ToolCallUpdate {
        /// The call.
        pub tool_call_id: ToolCallId = "toolCallId" (Req),
        /// The tool's programmatic name.
        pub name: Option<Option<String>> = "name" (Patch),
        /// What the tool is doing, for people to read (agents should send it
        /// when they create the call).
        pub title: Option<Option<String>> = "title" (Patch),
        /// What sort of tool it is.
        pub kind: Option<Option<ToolKind>> = "kind" (Patch),
        /// Where the call is in its lifecycle.
        pub status: Option<Option<ToolCallStatus>> = "status" (Patch),
        /// The whole content list.
        pub content: Option<Option<Vec<ToolCallContent>>> = "content" (PatchItems),
        /// The whole list of locations the call touches.
        pub locations: Option<Option<Vec<ToolCallLocation>>> = "locations" (PatchItems),
        /// The input the tool was given.
        pub raw_input: Option<Option<RawJson>> = "rawInput" (Patch),
        /// The output the tool returned.
        pub raw_output: Option<Option<RawJson>> = "rawOutput" (Patch),
        /// What the client may do with the call (cancel it).
        pub capabilities: Option<Option<ToolCallCapabilities>> = "capabilities" (Patch),
        /// Extension metadata, patched by key.
        pub meta: Option<Option<Meta>> = "_meta" (Patch),
    }
}

impl ToolCallUpdate {
    /// An update of call `id` that changes nothing yet; add fields with the setters.
    pub fn new(id: impl Into<ToolCallId>) -> Self {
        ToolCallUpdate {
            tool_call_id: id.into(),
            name: None,
            title: None,
            kind: None,
            status: None,
            content: None,
            locations: None,
            raw_input: None,
            raw_output: None,
            capabilities: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

/// Setters of patch fields: `field(value)` sets a value (`Some(Some(value))`),
/// `clear_field()` sends `null` (`Some(None)`), which clears it.
macro_rules! patch_setters {
    ($name:ident { $( $field:ident / $clear:ident : $ty:ty ),* $(,)? }) => {
        impl $name {
            $(
                #[doc = concat!("Sets `", stringify!($field), "`.")]
                #[must_use]
                pub fn $field(mut self, value: impl Into<$ty>) -> Self {
                    self.$field = Some(Some(value.into()));
                    self
                }

                #[doc = concat!("Clears `", stringify!($field), "` (sends `null`).")]
                #[must_use]
                pub fn $clear(mut self) -> Self {
                    self.$field = Some(None);
                    self
                }
            )*
        }
    };
}
pub(crate) use patch_setters;

patch_setters!(ToolCallUpdate {
    name / clear_name: String,
    title / clear_title: String,
    kind / clear_kind: ToolKind,
    status / clear_status: ToolCallStatus,
    content / clear_content: Vec<ToolCallContent>,
    locations / clear_locations: Vec<ToolCallLocation>,
    raw_input / clear_raw_input: RawJson,
    raw_output / clear_raw_output: RawJson,
    capabilities / clear_capabilities: ToolCallCapabilities,
    meta / clear_meta: Meta,
});

string_enum! {
    /// Where a tool call is in its lifecycle.
    pub enum ToolCallStatus {
        /// Not started (input streaming, or waiting for approval).
        "pending" => Pending,
        /// Running.
        "in_progress" => InProgress,
        /// Stopped for now, to be resumed.
        "paused" => Paused,
        /// Finished.
        "completed" => Completed,
        /// Failed.
        "failed" => Failed,
        /// Cancelled before it finished.
        "cancelled" => Cancelled,
    }
}

tagged_union! {
    /// One item of a tool call's content, tagged by `type`.
    pub enum ToolCallContent: tag "type" {
        /// Displayable content.
        "content" => Content(Content),
        /// File changes.
        "diff" => Diff(Diff),
        /// A display terminal the agent owns (its state arrives as
        /// `terminal_update`s).
        "terminal" => Terminal(Terminal),
    }
}

impl From<ContentBlock> for ToolCallContent {
    fn from(block: ContentBlock) -> Self {
        ToolCallContent::Content(Content::new(block))
    }
}

impl From<Diff> for ToolCallContent {
    fn from(diff: Diff) -> Self {
        ToolCallContent::Diff(diff)
    }
}

wire_struct! {
    /// Displayable content produced by a tool call.
    pub struct Content {
        /// The content.
        pub content: ContentBlock = "content" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl Content {
    /// Wraps `content`.
    pub fn new(content: impl Into<ContentBlock>) -> Self {
        Content {
            content: content.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(Content { opt { meta: Meta } });

wire_struct! {
    /// File changes: the authoritative list of operations, and optionally a
    /// patch a client can render.
    pub struct Diff {
        /// What happened to which files.
        pub changes: Vec<DiffChange> = "changes" (ItemsReq),
        /// Renderable text for some or all of the changes.
        pub patch: Option<DiffPatch> = "patch" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl Diff {
    /// The changes `changes`, without a patch.
    pub fn new(changes: Vec<DiffChange>) -> Self {
        Diff {
            changes,
            patch: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(Diff { opt { patch: DiffPatch, meta: Meta } });

wire_struct! {
    /// One file operation of a diff.
    pub struct DiffChange {
        /// What kind of file it is.
        pub file_type: Option<DiffFileType> = "fileType" (Lenient),
        /// The file's MIME type.
        pub mime_type: Option<MediaType> = "mimeType" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
        /// The operation and its paths (`operation`, `path`, `oldPath`).
        pub operation: DiffOperation = "" (Flatten),
    }
}

impl DiffChange {
    /// The change `operation`.
    pub fn new(operation: impl Into<DiffOperation>) -> Self {
        DiffChange {
            file_type: None,
            mime_type: None,
            meta: None,
            operation: operation.into(),
            extra: Default::default(),
        }
    }

    /// A file added at `path`.
    pub fn add(path: impl Into<AbsolutePath>) -> Self {
        Self::new(DiffOperation::Add(DiffPathChange::new(path)))
    }

    /// A file deleted at `path`.
    pub fn delete(path: impl Into<AbsolutePath>) -> Self {
        Self::new(DiffOperation::Delete(DiffPathChange::new(path)))
    }

    /// A file modified at `path`.
    pub fn modify(path: impl Into<AbsolutePath>) -> Self {
        Self::new(DiffOperation::Modify(DiffPathChange::new(path)))
    }

    /// A file moved from `old_path` to `path`.
    pub fn moved(old_path: impl Into<AbsolutePath>, path: impl Into<AbsolutePath>) -> Self {
        Self::new(DiffOperation::Move(DiffPathPairChange::new(old_path, path)))
    }

    /// A file copied from `old_path` to `path`.
    pub fn copy(old_path: impl Into<AbsolutePath>, path: impl Into<AbsolutePath>) -> Self {
        Self::new(DiffOperation::Copy(DiffPathPairChange::new(old_path, path)))
    }

    /// The path the change leaves the file at (the new path of a move or a
    /// copy), or `None` for an operation this version does not know.
    pub fn path(&self) -> Option<&str> {
        match &self.operation {
            DiffOperation::Add(c) | DiffOperation::Delete(c) | DiffOperation::Modify(c) => {
                Some(&c.path)
            }
            DiffOperation::Move(c) | DiffOperation::Copy(c) => Some(&c.path),
            DiffOperation::Other(_) => None,
        }
    }
}

setters!(DiffChange { opt { file_type: DiffFileType, mime_type: MediaType, meta: Meta } });

tagged_union! {
    /// What a [`DiffChange`] does, tagged by `operation`.
    pub enum DiffOperation: tag "operation" {
        /// A new file.
        "add" => Add(DiffPathChange),
        /// A removed file.
        "delete" => Delete(DiffPathChange),
        /// A changed file.
        "modify" => Modify(DiffPathChange),
        /// A file moved (renamed), maybe changed too.
        "move" => Move(DiffPathPairChange),
        /// A file copied, maybe changed too.
        "copy" => Copy(DiffPathPairChange),
    }
}

wire_struct! {
    /// The path of an added, deleted or modified file.
    pub struct DiffPathChange {
        /// The file.
        pub path: AbsolutePath = "path" (Req),
    }
}

impl DiffPathChange {
    /// The file at `path`.
    pub fn new(path: impl Into<AbsolutePath>) -> Self {
        DiffPathChange {
            path: path.into(),
            extra: Default::default(),
        }
    }
}

wire_struct! {
    /// The paths of a moved or copied file.
    pub struct DiffPathPairChange {
        /// Where it was.
        pub old_path: AbsolutePath = "oldPath" (Req),
        /// Where it is now.
        pub path: AbsolutePath = "path" (Req),
    }
}

impl DiffPathPairChange {
    /// From `old_path` to `path`.
    pub fn new(old_path: impl Into<AbsolutePath>, path: impl Into<AbsolutePath>) -> Self {
        DiffPathPairChange {
            old_path: old_path.into(),
            path: path.into(),
            extra: Default::default(),
        }
    }
}

string_enum! {
    /// What kind of file a diff change is about.
    pub enum DiffFileType {
        /// A text file.
        "text" => Text,
        /// A binary file.
        "binary" => Binary,
        /// A directory.
        "directory" => Directory,
        /// A symbolic link.
        "symlink" => Symlink,
    }
}

wire_struct! {
    /// Renderable text for the changes of a diff.
    pub struct DiffPatch {
        /// How `text` is written.
        pub format: DiffPatchFormat = "format" (Req),
        /// The patch.
        pub text: String = "text" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl DiffPatch {
    /// A patch in Git's format (`diff --git` sections with absolute paths).
    pub fn git(text: impl Into<String>) -> Self {
        DiffPatch {
            format: DiffPatchFormat::GitPatch,
            text: text.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(DiffPatch { opt { meta: Meta } });

string_enum! {
    /// The format of a [`DiffPatch`].
    pub enum DiffPatchFormat {
        /// One or more `diff --git` sections in Git's patch format.
        "git_patch" => GitPatch,
    }
}

wire_struct! {
    /// What the client may do with a tool call.
    #[derive(Default)]
    pub struct ToolCallCapabilities {
        /// Present if the client may send `tool_call/cancel` for it.
        pub cancel: Option<ToolCallCancelCapabilities> = "cancel" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ToolCallCapabilities {
    /// Nothing.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(ToolCallCapabilities { opt { cancel: ToolCallCancelCapabilities, meta: Meta } });

marker_capability!(
    /// Marks a tool call the client may cancel with `tool_call/cancel`.
    ToolCallCancelCapabilities
);

wire_struct! {
    /// Appends one item to a tool call's content.
    pub struct ToolCallContentChunk {
        /// The call.
        pub tool_call_id: ToolCallId = "toolCallId" (Req),
        /// The item to append.
        pub content: ToolCallContent = "content" (Req),
        /// Extension metadata (of the chunk, not a patch of the call's).
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ToolCallContentChunk {
    /// Appends `content` to call `id`.
    pub fn new(id: impl Into<ToolCallId>, content: impl Into<ToolCallContent>) -> Self {
        ToolCallContentChunk {
            tool_call_id: id.into(),
            content: content.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(ToolCallContentChunk { opt { meta: Meta } });

wire_struct! {
    /// `tool_call/cancel`: stop one tool call (one that advertised
    /// `capabilities.cancel`), not the whole turn.
    pub struct CancelToolCallRequest {
        /// The session.
        pub session_id: SessionId = "sessionId" (Req),
        /// The call.
        pub tool_call_id: ToolCallId = "toolCallId" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl CancelToolCallRequest {
    /// Cancels call `tool_call_id` of `session_id`.
    pub fn new(session_id: impl Into<SessionId>, tool_call_id: impl Into<ToolCallId>) -> Self {
        CancelToolCallRequest {
            session_id: session_id.into(),
            tool_call_id: tool_call_id.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(CancelToolCallRequest { opt { meta: Meta } });

wire_struct! {
    /// The result of `tool_call/cancel`.
    #[derive(Default)]
    pub struct CancelToolCallResponse {
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl CancelToolCallResponse {
    /// The empty result.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(CancelToolCallResponse { opt { meta: Meta } });
