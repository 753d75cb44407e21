//! Tool calls: what an agent reports about the tools it runs (reading files,
//! running commands, editing code), first as a whole and then as partial updates.
//!
//! A [`ToolCall`] arrives in a `tool_call` session update; later
//! `tool_call_update`s carry a [`ToolCallUpdate`] with only the fields that
//! changed, which [`ToolCallUpdate::apply_to`] merges into the stored call.

use crate::util::{id_type, setters, string_enum, tagged_union, wire_struct};
use crate::{ContentBlock, Meta, RawJson, TerminalId};

id_type!(
    /// Identifies a tool call within a session.
    ToolCallId
);

wire_struct! {
    /// A tool call the agent started, as first reported to the client.
    ///
    /// `kind` and `status` default to `other` and `pending` when the sender omits
    /// them (or sends something unreadable); both are always written.
    pub struct ToolCall {
        /// The call's identifier, unique within the session.
        pub tool_call_id: ToolCallId = "toolCallId" (Req),
        /// What the tool is doing, for people to read.
        pub title: String = "title" (Req),
        /// What sort of tool it is, so clients can pick an icon.
        pub kind: ToolKind = "kind" (LenientVal),
        /// Where the call is in its lifecycle.
        pub status: ToolCallStatus = "status" (LenientVal),
        /// What the tool produced so far (omitted when empty).
        pub content: Vec<ToolCallContent> = "content" (ItemsNonEmpty),
        /// Files the tool reads or changes, for "follow the agent" views (omitted when empty).
        pub locations: Vec<ToolCallLocation> = "locations" (ItemsNonEmpty),
        /// The input the tool was given, in whatever shape the tool uses.
        pub raw_input: Option<RawJson> = "rawInput" (Lenient),
        /// The output the tool returned, in whatever shape the tool uses.
        pub raw_output: Option<RawJson> = "rawOutput" (Lenient),
        /// The tool's programmatic name, when known.
        pub name: Option<String> = "name" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ToolCall {
    /// A pending call of kind `other` with identifier `id` and title `title`.
    pub fn new(id: impl Into<ToolCallId>, title: impl Into<String>) -> Self {
        ToolCall {
            tool_call_id: id.into(),
            title: title.into(),
            kind: ToolKind::default(),
            status: ToolCallStatus::default(),
            content: Vec::new(),
            locations: Vec::new(),
            raw_input: None,
            raw_output: None,
            name: None,
            meta: None,
            extra: Default::default(),
        }
    }

    /// Merges `update` into this call (see [`ToolCallUpdate::apply_to`]).
    pub fn apply(&mut self, update: &ToolCallUpdate) {
        update.apply_to(self);
    }
}

setters!(ToolCall {
    set {
        title: String,
        kind: ToolKind,
        status: ToolCallStatus,
        content: Vec<ToolCallContent>,
        locations: Vec<ToolCallLocation>,
    }
    opt {
        raw_input: RawJson,
        raw_output: RawJson,
        name: String,
        meta: Meta,
    }
});

wire_struct! {
    /// A change to a tool call already reported. Only `toolCallId` is required; a
    /// field left out (or `null`) stays as it was. `content` and `locations`, when
    /// present, replace the whole list.
    pub struct ToolCallUpdate {
        /// The call being changed.
        pub tool_call_id: ToolCallId = "toolCallId" (Req),
        /// A new kind.
        pub kind: Option<ToolKind> = "kind" (Lenient),
        /// A new status.
        pub status: Option<ToolCallStatus> = "status" (Lenient),
        /// A new title.
        pub title: Option<String> = "title" (Lenient),
        /// A new programmatic tool name.
        pub name: Option<String> = "name" (Lenient),
        /// The complete new content list.
        pub content: Option<Vec<ToolCallContent>> = "content" (ItemsOpt),
        /// The complete new list of locations.
        pub locations: Option<Vec<ToolCallLocation>> = "locations" (ItemsOpt),
        /// New raw input.
        pub raw_input: Option<RawJson> = "rawInput" (Lenient),
        /// New raw output.
        pub raw_output: Option<RawJson> = "rawOutput" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ToolCallUpdate {
    /// An update of call `id` that changes nothing yet; add fields with the setters.
    pub fn new(id: impl Into<ToolCallId>) -> Self {
        ToolCallUpdate {
            tool_call_id: id.into(),
            kind: None,
            status: None,
            title: None,
            name: None,
            content: None,
            locations: None,
            raw_input: None,
            raw_output: None,
            meta: None,
            extra: Default::default(),
        }
    }

    /// Writes every field present in this update into `call`, replacing what was
    /// there (lists are replaced whole, `_meta` too). Absent fields are left alone.
    /// The identifiers are not compared: the caller picks the call to update.
    pub fn apply_to(&self, call: &mut ToolCall) {
        if let Some(kind) = &self.kind {
            call.kind = kind.clone();
        }
        if let Some(status) = &self.status {
            call.status = status.clone();
        }
        if let Some(title) = &self.title {
            call.title = title.clone();
        }
        if let Some(name) = &self.name {
            call.name = Some(name.clone());
        }
        if let Some(content) = &self.content {
            call.content = content.clone();
        }
        if let Some(locations) = &self.locations {
            call.locations = locations.clone();
        }
        if let Some(raw_input) = &self.raw_input {
            call.raw_input = Some(raw_input.clone());
        }
        if let Some(raw_output) = &self.raw_output {
            call.raw_output = Some(raw_output.clone());
        }
        if let Some(meta) = &self.meta {
            call.meta = Some(meta.clone());
        }
    }

    /// Builds a tool call from this update, for a client that sees an update
    /// before (or without) the call itself. `None` without a title.
    pub fn to_tool_call(&self) -> Option<ToolCall> {
        let title = self.title.clone()?;
        let mut call = ToolCall::new(self.tool_call_id.clone(), title);
        self.apply_to(&mut call);
        Some(call)
    }
}

setters!(ToolCallUpdate {
    opt {
        kind: ToolKind,
        status: ToolCallStatus,
        title: String,
        name: String,
        content: Vec<ToolCallContent>,
        locations: Vec<ToolCallLocation>,
        raw_input: RawJson,
        raw_output: RawJson,
        meta: Meta,
    }
});

impl From<ToolCall> for ToolCallUpdate {
    /// An update that sets every field of `call` (e.g. to show it in a permission request).
    fn from(call: ToolCall) -> Self {
        ToolCallUpdate {
            tool_call_id: call.tool_call_id,
            kind: Some(call.kind),
            status: Some(call.status),
            title: Some(call.title),
            name: call.name,
            content: Some(call.content),
            locations: Some(call.locations),
            raw_input: call.raw_input,
            raw_output: call.raw_output,
            meta: call.meta,
            extra: Default::default(),
        }
    }
}

string_enum! {
    /// What sort of tool a call runs; clients use it for icons and layout.
    pub enum ToolKind {
        /// Reads files or data.
        "read" => Read,
        /// Changes files or content.
        "edit" => Edit,
        /// Removes files or data.
        "delete" => Delete,
        /// Moves or renames files.
        "move" => Move,
        /// Searches for information.
        "search" => Search,
        /// Runs commands or code.
        "execute" => Execute,
        /// Internal reasoning or planning.
        "think" => Think,
        /// Fetches data from outside.
        "fetch" => Fetch,
        /// Switches the session's mode.
        "switch_mode" => SwitchMode,
        /// Any other tool (the default). Named `OtherKind` because `Other(String)`
        /// holds values this version does not know.
        "other" => OtherKind,
    }
}

impl Default for ToolKind {
    /// `other`.
    fn default() -> Self {
        ToolKind::OtherKind
    }
}

string_enum! {
    /// Where a tool call is in its lifecycle.
    pub enum ToolCallStatus {
        /// Not running yet: its input is still streaming or it awaits permission (the default).
        "pending" => Pending,
        /// Running.
        "in_progress" => InProgress,
        /// Finished successfully.
        "completed" => Completed,
        /// Finished with an error.
        "failed" => Failed,
    }
}

impl Default for ToolCallStatus {
    /// `pending`.
    fn default() -> Self {
        ToolCallStatus::Pending
    }
}

tagged_union! {
    /// Something a tool call produced, shown by the client. Tagged by `type`.
    // `Content` holds a whole content block; boxing it would only add an allocation.
    #[allow(clippy::large_enum_variant)]
    pub enum ToolCallContent: tag "type" {
        /// An ordinary content block (text, image, resource…).
        "content" => Content(Content),
        /// A change to a file, shown as a diff.
        "diff" => Diff(Diff),
        /// A live terminal created with `terminal/create`.
        "terminal" => Terminal(Terminal),
    }
}

impl From<ContentBlock> for ToolCallContent {
    fn from(block: ContentBlock) -> Self {
        ToolCallContent::Content(Content::new(block))
    }
}

impl From<&str> for ToolCallContent {
    fn from(text: &str) -> Self {
        ToolCallContent::Content(Content::new(text))
    }
}

impl From<String> for ToolCallContent {
    fn from(text: String) -> Self {
        ToolCallContent::Content(Content::new(text))
    }
}

impl From<Content> for ToolCallContent {
    fn from(content: Content) -> Self {
        ToolCallContent::Content(content)
    }
}

impl From<Diff> for ToolCallContent {
    fn from(diff: Diff) -> Self {
        ToolCallContent::Diff(diff)
    }
}

impl From<Terminal> for ToolCallContent {
    fn from(terminal: Terminal) -> Self {
        ToolCallContent::Terminal(terminal)
    }
}

impl From<TerminalId> for ToolCallContent {
    fn from(id: TerminalId) -> Self {
        ToolCallContent::Terminal(Terminal::new(id))
    }
}

wire_struct! {
    /// Tool call content that is a plain content block.
    pub struct Content {
        /// The block.
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
    /// A change to one file.
    pub struct Diff {
        /// Absolute path of the file.
        pub path: String = "path" (Req),
        /// The text before the change; `None` for a new file, written as
        /// `"oldText": null` (some clients show a diff only when the key is
        /// there).
        pub old_text: Option<String> = "oldText" (LenientNull),
        /// The text after the change.
        pub new_text: String = "newText" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl Diff {
    /// A diff of `path` from `old_text` (`None` for a new file) to `new_text`.
    pub fn new(
        path: impl Into<String>,
        old_text: impl Into<Option<String>>,
        new_text: impl Into<String>,
    ) -> Self {
        Diff {
            path: path.into(),
            old_text: old_text.into(),
            new_text: new_text.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(Diff { opt { old_text: String, meta: Meta } });

wire_struct! {
    /// Tool call content showing a terminal's live output.
    pub struct Terminal {
        /// The terminal, as returned by `terminal/create`. It must be shown before it is released.
        pub terminal_id: TerminalId = "terminalId" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl Terminal {
    /// Embeds terminal `terminal_id`.
    pub fn new(terminal_id: impl Into<TerminalId>) -> Self {
        Terminal {
            terminal_id: terminal_id.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(Terminal { opt { meta: Meta } });

wire_struct! {
    /// A file (and optionally a line) a tool call touches.
    pub struct ToolCallLocation {
        /// Absolute path of the file.
        pub path: String = "path" (Req),
        /// Line number in the file, counting from 1.
        pub line: Option<u32> = "line" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ToolCallLocation {
    /// The file at `path`.
    pub fn new(path: impl Into<String>) -> Self {
        ToolCallLocation {
            path: path.into(),
            line: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(ToolCallLocation { opt { line: u32, meta: Meta } });

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode;

    #[test]
    fn defaults_and_fallbacks() {
        let call: ToolCall = decode(
            r#"{"toolCallId":"c","title":"t","kind":42,"status":{"x":1},"content":"nope","locations":null,"rawInput":{"cmd":"ls"},"name":7}"#,
        )
        .unwrap();
        assert_eq!(call.kind, ToolKind::OtherKind);
        assert_eq!(call.status, ToolCallStatus::Pending);
        assert!(call.content.is_empty() && call.locations.is_empty() && call.name.is_none());
        assert_eq!(
            serde_json::to_string(&call).unwrap(),
            r#"{"toolCallId":"c","title":"t","kind":"other","status":"pending","rawInput":{"cmd":"ls"}}"#
        );
        // Unknown strings are kept, not replaced by the default.
        let call: ToolCall =
            decode(r#"{"toolCallId":"c","title":"t","kind":"_browse","status":"paused"}"#).unwrap();
        assert_eq!(call.kind, ToolKind::Other("_browse".into()));
        assert_eq!(call.status, ToolCallStatus::Other("paused".into()));
        // The required fields are still required.
        let err = decode::<ToolCall>(r#"{"toolCallId":"c","title":3}"#).unwrap_err();
        assert_eq!(err.path, "title");
    }

    #[test]
    fn invalid_list_items_are_skipped() {
        let raw = r#"{"toolCallId":"c","title":"t","kind":"edit","status":"completed","content":[{"type":"diff","path":"/a","oldText":null,"newText":"x"},{"type":"diff","path":"/b"},{"type":"terminal","terminalId":"term-1"},{"type":"content","content":{"type":"text","text":"ok"}},{"type":"_hologram","data":1}],"locations":[{"path":"/a","line":3},{"line":4},"junk",{"path":"/b","line":-1}]}"#;
        let call: ToolCall = decode(raw).unwrap();
        assert_eq!(
            call.content,
            vec![
                Diff::new("/a", None, "x").into(),
                ToolCallContent::from(TerminalId::new("term-1")),
                ToolCallContent::from("ok"),
                ToolCallContent::Other(
                    serde_json::from_str(r#"{"type":"_hologram","data":1}"#).unwrap()
                ),
            ]
        );
        assert_eq!(
            call.locations,
            vec![
                ToolCallLocation::new("/a").line(3u32),
                ToolCallLocation::new("/b")
            ]
        );
        assert_eq!(
            serde_json::to_string(&call).unwrap(),
            r#"{"toolCallId":"c","title":"t","kind":"edit","status":"completed","content":[{"type":"diff","path":"/a","oldText":null,"newText":"x"},{"type":"terminal","terminalId":"term-1"},{"type":"content","content":{"type":"text","text":"ok"}},{"type":"_hologram","data":1}],"locations":[{"path":"/a","line":3},{"path":"/b"}]}"#
        );
    }

    #[test]
    fn update_fields_are_optional_and_lenient() {
        let up: ToolCallUpdate = decode(r#"{"toolCallId":"c"}"#).unwrap();
        assert_eq!(up, ToolCallUpdate::new("c"));
        assert_eq!(serde_json::to_string(&up).unwrap(), r#"{"toolCallId":"c"}"#);

        let up: ToolCallUpdate =
            decode(r#"{"toolCallId":"c","status":5,"title":null,"locations":[{"path":"/x"},{"nope":1}],"content":{}}"#).unwrap();
        assert_eq!(
            up,
            ToolCallUpdate::new("c").locations(vec![ToolCallLocation::new("/x")])
        );
        assert_eq!(
            serde_json::to_string(&up).unwrap(),
            r#"{"toolCallId":"c","locations":[{"path":"/x"}]}"#
        );

        let raw = r#"{"toolCallId":"c","kind":"execute","status":"in_progress","title":"ls","name":"shell","content":[],"locations":[],"rawInput":{"a":1},"rawOutput":"done","_meta":{"k":1}}"#;
        let up: ToolCallUpdate = decode(raw).unwrap();
        assert_eq!(serde_json::to_string(&up).unwrap(), raw);
    }

    #[test]
    fn apply_update() {
        let mut call = ToolCall::new("c", "Run tests")
            .kind(ToolKind::Execute)
            .content(vec![ToolCallContent::from("starting")])
            .raw_input(serde_json::json!({"cmd": "cargo test"}));
        let before = call.clone();
        ToolCallUpdate::new("c").apply_to(&mut call);
        assert_eq!(call, before, "an empty update changes nothing");

        let update = ToolCallUpdate::new("c")
            .status(ToolCallStatus::Completed)
            .content(vec![
                ToolCallContent::from("ok"),
                Diff::new("/f", "a".to_string(), "b").into(),
            ])
            .raw_output(serde_json::json!(0));
        call.apply(&update);
        assert_eq!(call.status, ToolCallStatus::Completed);
        assert_eq!(call.kind, ToolKind::Execute);
        assert_eq!(call.title, "Run tests");
        assert_eq!(call.content.len(), 2);
        assert_eq!(
            call.raw_input,
            Some(RawJson::from(serde_json::json!({"cmd": "cargo test"})))
        );
        assert_eq!(call.raw_output, Some(RawJson::from(serde_json::json!(0))));

        let full = ToolCallUpdate::from(call.clone());
        assert_eq!(full.to_tool_call(), Some(call));
        assert_eq!(ToolCallUpdate::new("x").to_tool_call(), None);
    }
}
