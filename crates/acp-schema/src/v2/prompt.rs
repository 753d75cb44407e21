//! The prompt of v2: `session/prompt` only acknowledges the prompt, with the
//! id the agent gave the user message. The turn's end is an idle
//! [`StateUpdate`](super::StateUpdate) carrying a [`StopReason`].

use super::ContentBlock;
use crate::util::wire::{Entries, Flat, Tolerant};
use crate::util::{setters, wire_struct};
use crate::{Error, MessageId, Meta, SessionId};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

wire_struct! {
    /// Params of `session/prompt`: a user message for the session.
    pub struct PromptRequest {
        /// The session.
        pub session_id: SessionId = "sessionId" (Req),
        /// The message's content.
        pub prompt: Vec<ContentBlock> = "prompt" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl PromptRequest {
    /// The message `prompt` for `session_id`.
    pub fn new(session_id: impl Into<SessionId>, prompt: Vec<ContentBlock>) -> Self {
        PromptRequest {
            session_id: session_id.into(),
            prompt,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(PromptRequest { opt { meta: Meta } });

wire_struct! {
    /// The result of `session/prompt`: the prompt was accepted, and inserted in
    /// the history as the user message `messageId` (which the agent also reports
    /// in a `user_message` update). It does not end anything.
    pub struct PromptResponse {
        /// The id the agent gave the user message.
        pub message_id: MessageId = "messageId" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl PromptResponse {
    /// Accepted as the user message `message_id`.
    pub fn new(message_id: impl Into<MessageId>) -> Self {
        PromptResponse {
            message_id: message_id.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(PromptResponse { opt { meta: Meta } });

/// Why foreground work stopped: the `stopReason` of an idle state update (and,
/// for [`StopReason::Error`], its `error` beside it).
///
/// Custom reasons begin with `_`; an unknown one is kept in `Other`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum StopReason {
    /// The model finished its turn.
    EndTurn,
    /// The model hit its token limit.
    MaxTokens,
    /// The turn hit the agent's limit of model requests.
    MaxTurnRequests,
    /// The model refused to go on.
    Refusal,
    /// The client cancelled the work (`session/cancel`, `session/close`).
    Cancelled,
    /// The work failed.
    Error(ErrorStopReason),
    /// A reason this version does not know, kept verbatim.
    Other(String),
}

impl StopReason {
    /// The wire spelling (`end_turn`).
    pub fn as_str(&self) -> &str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::MaxTokens => "max_tokens",
            StopReason::MaxTurnRequests => "max_turn_requests",
            StopReason::Refusal => "refusal",
            StopReason::Cancelled => "cancelled",
            StopReason::Error(_) => "error",
            StopReason::Other(s) => s,
        }
    }

    /// The work failed with `error`.
    pub fn error(error: Error) -> Self {
        StopReason::Error(ErrorStopReason::new().error(error))
    }
}

impl From<&str> for StopReason {
    /// A reason by its wire spelling (`error` without an error object).
    fn from(s: &str) -> Self {
        match s {
            "end_turn" => StopReason::EndTurn,
            "max_tokens" => StopReason::MaxTokens,
            "max_turn_requests" => StopReason::MaxTurnRequests,
            "refusal" => StopReason::Refusal,
            "cancelled" => StopReason::Cancelled,
            "error" => StopReason::Error(ErrorStopReason::new()),
            other => StopReason::Other(other.to_string()),
        }
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

wire_struct! {
    /// What accompanies the stop reason `error`.
    #[derive(Default)]
    pub struct ErrorStopReason {
        /// What went wrong.
        pub error: Option<Error> = "error" (Lenient),
    }
}

impl ErrorStopReason {
    /// No details.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(ErrorStopReason { opt { error: Error } });

/// The optional stop reason of an idle update, flattened into it: `stopReason`
/// and, for `error`, `error`. Absent, `null` or malformed is `None`.
impl Flat for Option<StopReason> {
    fn take<E: serde::de::Error>(rest: &mut Entries) -> Result<Self, E> {
        let Some(at) = rest.iter().position(|(k, _)| k == "stopReason") else {
            return Ok(None);
        };
        let (_, raw) = rest.remove(at);
        let Some(tag) = raw.as_str().map(|s| s.into_owned()) else {
            return Ok(None);
        };
        let reason = StopReason::from(tag.as_str());
        Ok(Some(match reason {
            StopReason::Error(_) => {
                let error = match rest.iter().position(|(k, _)| k == "error") {
                    Some(i) => {
                        let (_, raw) = rest.remove(i);
                        let mut de = serde_json::Deserializer::from_str(raw.get());
                        Error::tolerant(&mut de).map_err(E::custom)?
                    }
                    None => None,
                };
                StopReason::Error(ErrorStopReason {
                    error,
                    extra: Default::default(),
                })
            }
            other => other,
        }))
    }

    fn write_flat<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        let Some(reason) = self else { return Ok(()) };
        map.serialize_entry("stopReason", reason.as_str())?;
        if let StopReason::Error(e) = reason {
            if let Some(error) = &e.error {
                map.serialize_entry("error", error)?;
            }
            e.extra.write_entries(map)?;
        }
        Ok(())
    }
}

impl Serialize for StopReason {
    /// The reason as its members (`{"stopReason":"error","error":{…}}`).
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        Some(self.clone()).write_flat(&mut map)?;
        map.end()
    }
}

impl<'de> Deserialize<'de> for StopReason {
    /// Reads the members written by `Serialize`; `stopReason` is required.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut rest: Entries = crate::RawObject::deserialize(d)?.into_vec();
        if !rest.iter().any(|(k, _)| k == "stopReason") {
            return Err(serde::de::Error::missing_field("stopReason"));
        }
        <Option<StopReason> as Flat>::take::<D::Error>(&mut rest)?
            .ok_or_else(|| serde::de::Error::custom("`stopReason` must be a string"))
    }
}
