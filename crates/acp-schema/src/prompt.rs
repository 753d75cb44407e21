//! Prompt turns: the client sends the user's message with `session/prompt`, the
//! agent streams progress as session updates and finally answers with why it stopped.

#[cfg(feature = "unstable-session-usage")]
use crate::Usage;
use crate::util::{feature_setter, setters, string_enum, wire_struct};
use crate::{ContentBlock, Meta, SessionId};

wire_struct! {
    /// Params of `session/prompt`: a user message for a session.
    pub struct PromptRequest {
        /// The session the message is for.
        pub session_id: SessionId = "sessionId" (Req),
        /// The content blocks making up the message (`text` and `resource_link` always
        /// work; other kinds depend on the agent's prompt capabilities).
        pub prompt: Vec<ContentBlock> = "prompt" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl PromptRequest {
    /// A prompt of `prompt` blocks for `session_id`.
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
    /// Result of `session/prompt`: the turn is over.
    pub struct PromptResponse {
        /// Why the agent stopped working on the turn.
        pub stop_reason: StopReason = "stopReason" (Req),
        /// How many tokens the turn used.
        pub usage: Option<Usage> = "usage" (Lenient) if "unstable-session-usage",
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl PromptResponse {
    /// A response ending the turn for `stop_reason`.
    pub fn new(stop_reason: impl Into<StopReason>) -> Self {
        PromptResponse {
            stop_reason: stop_reason.into(),
            #[cfg(feature = "unstable-session-usage")]
            usage: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(PromptResponse { opt { meta: Meta } });
feature_setter!("unstable-session-usage", PromptResponse { usage: Usage });

string_enum! {
    /// Why an agent ended a prompt turn.
    pub enum StopReason {
        /// The turn finished normally.
        "end_turn" => EndTurn,
        /// The model hit its token limit.
        "max_tokens" => MaxTokens,
        /// The agent hit its limit of model requests for one user turn.
        "max_turn_requests" => MaxTurnRequests,
        /// The model refused to go on; the prompt and what followed it are dropped
        /// from the next turn's context.
        "refusal" => Refusal,
        /// The client cancelled the turn with `session/cancel` (required answer to a cancel).
        "cancelled" => Cancelled,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode;

    #[test]
    fn prompt_request_wire_order() {
        let req = PromptRequest::new(SessionId::new("s"), vec![ContentBlock::from("hi")]);
        let json = serde_json::to_string(&req).unwrap();
        assert_eq!(
            json,
            r#"{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}"#
        );
    }

    #[test]
    fn stop_reason_known_and_unknown() {
        let r: PromptResponse = decode(r#"{"stopReason":"cancelled"}"#).unwrap();
        assert_eq!(r.stop_reason, StopReason::Cancelled);
        let r: PromptResponse = decode(r#"{"stopReason":"_vendor_pause"}"#).unwrap();
        assert_eq!(r.stop_reason, StopReason::Other("_vendor_pause".into()));
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"stopReason":"_vendor_pause"}"#
        );
        assert!(decode::<PromptResponse>("{}").is_err());
    }
}
