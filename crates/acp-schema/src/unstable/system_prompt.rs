//! Client-provided system prompts (`unstable-system-prompt`): instructions a
//! client gives a session when it creates, loads, resumes (or forks) it, and
//! the `sessionCapabilities.systemPrompt` capability that allows them.

use crate::util::{setters, string_enum, wire_struct};
use crate::{ContentBlock, Meta};

wire_struct! {
    /// The agent accepts `systemPrompt` on session requests (`{}`: in the
    /// `append` mode only).
    #[derive(Default)]
    pub struct SessionSystemPromptCapabilities {
        /// Modes the agent supports besides `append`.
        pub mode: Option<SessionSystemPromptModeCapabilities> = "mode" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SessionSystemPromptCapabilities {
    /// `append` only.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(SessionSystemPromptCapabilities {
    opt { mode: SessionSystemPromptModeCapabilities, meta: Meta }
});

wire_struct! {
    /// System prompt modes an agent supports besides `append` (which every
    /// agent with the capability supports).
    #[derive(Default)]
    pub struct SessionSystemPromptModeCapabilities {
        /// Present if the agent can replace its own instructions (`override`).
        pub override_mode: Option<SessionSystemPromptOverrideCapabilities> = "override" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SessionSystemPromptModeCapabilities {
    /// No mode besides `append`.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(SessionSystemPromptModeCapabilities {
    opt { override_mode: SessionSystemPromptOverrideCapabilities, meta: Meta }
});

wire_struct! {
    /// Marks support for the `override` system prompt mode.
    #[derive(Default)]
    pub struct SessionSystemPromptOverrideCapabilities {
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SessionSystemPromptOverrideCapabilities {
    /// The marker, written as `{}`.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(SessionSystemPromptOverrideCapabilities { opt { meta: Meta } });

wire_struct! {
    /// Instructions a client gives a session, combined with the agent's own as
    /// `mode` says.
    pub struct SystemPrompt {
        /// How the instructions combine with the agent's.
        pub mode: SystemPromptMode = "mode" (Req),
        /// The instructions.
        pub content: Vec<ContentBlock> = "content" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SystemPrompt {
    /// `content`, combined with the agent's instructions as `mode` says.
    pub fn new(mode: impl Into<SystemPromptMode>, content: Vec<ContentBlock>) -> Self {
        SystemPrompt {
            mode: mode.into(),
            content,
            meta: None,
            extra: Default::default(),
        }
    }

    /// Text appended to the agent's own instructions.
    pub fn append(text: impl Into<String>) -> Self {
        Self::new(
            SystemPromptMode::Append,
            vec![ContentBlock::from(text.into())],
        )
    }
}

setters!(SystemPrompt { opt { meta: Meta } });

string_enum! {
    /// How a client's system prompt combines with the agent's instructions.
    pub enum SystemPromptMode {
        /// Added after the agent's own instructions.
        "append" => Append,
        /// Replaces the agent's built-in instructions (needs
        /// `systemPrompt.mode.override`).
        "override" => Override,
    }
}
