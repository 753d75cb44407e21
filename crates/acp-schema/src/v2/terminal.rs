//! Agent-owned display terminals of v2: the agent runs commands itself and
//! shows their output; the client only displays it (no input, no control; v1's
//! client `terminal/*` methods are gone). [`TerminalUpdate`] upserts a
//! terminal's state, [`TerminalOutputChunk`] appends bytes.

use super::AbsolutePath;
use super::tool_call::patch_setters;
use crate::initialize::marker_capability;
use crate::util::{setters, wire_struct};
use crate::{Meta, SessionId, TerminalExitStatus, TerminalId};

wire_struct! {
    /// Creates a display terminal (the first update of a `terminalId`) or
    /// patches it: a field left out is unchanged, `null` clears it, a value
    /// replaces it. `output` replaces every byte stored so far.
    pub struct TerminalUpdate {
        /// The terminal.
        pub terminal_id: TerminalId = "terminalId" (Req),
        /// The command line it runs.
        pub command: Option<Option<String>> = "command" (Patch),
        /// Where it runs.
        pub cwd: Option<Option<AbsolutePath>> = "cwd" (Patch),
        /// All its output so far (a snapshot).
        pub output: Option<Option<TerminalOutput>> = "output" (Patch),
        /// How it exited; present once it has.
        pub exit_status: Option<Option<TerminalExitStatus>> = "exitStatus" (Patch),
        /// Its size in character cells.
        pub size: Option<Option<TerminalSize>> = "size" (Patch),
        /// What the client may do with it (cancel it).
        pub capabilities: Option<Option<TerminalCapabilities>> = "capabilities" (Patch),
        /// Extension metadata, patched by key.
        pub meta: Option<Option<Meta>> = "_meta" (Patch),
    }
}

impl TerminalUpdate {
    /// An update of `terminal_id` that changes nothing yet.
    pub fn new(terminal_id: impl Into<TerminalId>) -> Self {
        TerminalUpdate {
            terminal_id: terminal_id.into(),
            command: None,
            cwd: None,
            output: None,
            exit_status: None,
            size: None,
            capabilities: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

patch_setters!(TerminalUpdate {
    command / clear_command: String,
    cwd / clear_cwd: AbsolutePath,
    output / clear_output: TerminalOutput,
    exit_status / clear_exit_status: TerminalExitStatus,
    size / clear_size: TerminalSize,
    capabilities / clear_capabilities: TerminalCapabilities,
    meta / clear_meta: Meta,
});

wire_struct! {
    /// A snapshot of a terminal's output: every byte the client should keep.
    pub struct TerminalOutput {
        /// The bytes, base64-encoded.
        pub data: String = "data" (Req),
        /// Extension metadata (of the snapshot).
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl TerminalOutput {
    /// The snapshot of base64 `data`.
    pub fn new(data: impl Into<String>) -> Self {
        TerminalOutput {
            data: data.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(TerminalOutput { opt { meta: Meta } });

wire_struct! {
    /// A terminal's size in character cells.
    pub struct TerminalSize {
        /// Columns (at least 1).
        pub cols: u16 = "cols" (Req),
        /// Rows (at least 1).
        pub rows: u16 = "rows" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl TerminalSize {
    /// `cols` by `rows`.
    pub fn new(cols: u16, rows: u16) -> Self {
        TerminalSize {
            cols,
            rows,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(TerminalSize { opt { meta: Meta } });

wire_struct! {
    /// What the client may do with a display terminal.
    #[derive(Default)]
    pub struct TerminalCapabilities {
        /// Present if the client may send `terminal/cancel` for it.
        pub cancel: Option<TerminalCancelCapabilities> = "cancel" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl TerminalCapabilities {
    /// Nothing.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(TerminalCapabilities { opt { cancel: TerminalCancelCapabilities, meta: Meta } });

marker_capability!(
    /// Marks a terminal the client may cancel with `terminal/cancel`.
    TerminalCancelCapabilities
);

wire_struct! {
    /// Appends bytes to a terminal's output.
    pub struct TerminalOutputChunk {
        /// The terminal.
        pub terminal_id: TerminalId = "terminalId" (Req),
        /// The bytes, base64-encoded on their own (a chunk may split a UTF-8
        /// character or an escape sequence).
        pub data: String = "data" (Req),
        /// Extension metadata (of the chunk).
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl TerminalOutputChunk {
    /// Appends base64 `data` to `terminal_id`.
    pub fn new(terminal_id: impl Into<TerminalId>, data: impl Into<String>) -> Self {
        TerminalOutputChunk {
            terminal_id: terminal_id.into(),
            data: data.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(TerminalOutputChunk { opt { meta: Meta } });

wire_struct! {
    /// `terminal/cancel`: stop the command of one display terminal (one that
    /// advertised `capabilities.cancel`).
    pub struct CancelTerminalRequest {
        /// The session.
        pub session_id: SessionId = "sessionId" (Req),
        /// The terminal.
        pub terminal_id: TerminalId = "terminalId" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl CancelTerminalRequest {
    /// Cancels `terminal_id` of `session_id`.
    pub fn new(session_id: impl Into<SessionId>, terminal_id: impl Into<TerminalId>) -> Self {
        CancelTerminalRequest {
            session_id: session_id.into(),
            terminal_id: terminal_id.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(CancelTerminalRequest { opt { meta: Meta } });

super::auth::empty_object!(
    /// The result of `terminal/cancel`.
    CancelTerminalResponse
);
