//! Permission requests: before running a sensitive tool call the agent asks the
//! client to let the user pick one of several options (allow once, reject, …).

use crate::util::{id_type, setters, string_enum, tagged_union, wire_struct};
use crate::{Meta, SessionId, TagOnly, ToolCallUpdate};

wire_struct! {
    /// Params of `session/request_permission`: which tool call, and the choices.
    pub struct RequestPermissionRequest {
        /// The session the tool call belongs to.
        pub session_id: SessionId = "sessionId" (Req),
        /// The tool call to allow or reject, with whatever details help the user decide.
        pub tool_call: ToolCallUpdate = "toolCall" (Req),
        /// The choices offered to the user.
        pub options: Vec<PermissionOption> = "options" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl RequestPermissionRequest {
    /// Asks about `tool_call` in `session_id`, offering `options`.
    pub fn new(
        session_id: impl Into<SessionId>,
        tool_call: impl Into<ToolCallUpdate>,
        options: Vec<PermissionOption>,
    ) -> Self {
        RequestPermissionRequest {
            session_id: session_id.into(),
            tool_call: tool_call.into(),
            options,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(RequestPermissionRequest { opt { meta: Meta } });

wire_struct! {
    /// Result of `session/request_permission`: what the user chose.
    ///
    /// On the wire the outcome is itself an object:
    /// `{"outcome":{"outcome":"selected","optionId":"allow"}}`.
    pub struct RequestPermissionResponse {
        /// The user's decision.
        pub outcome: RequestPermissionOutcome = "outcome" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl RequestPermissionResponse {
    /// A response carrying `outcome`.
    pub fn new(outcome: RequestPermissionOutcome) -> Self {
        RequestPermissionResponse {
            outcome,
            meta: None,
            extra: Default::default(),
        }
    }

    /// The user picked the option `option_id`.
    pub fn selected(option_id: impl Into<PermissionOptionId>) -> Self {
        Self::new(RequestPermissionOutcome::Selected(
            SelectedPermissionOutcome::new(option_id),
        ))
    }

    /// The prompt turn was cancelled before the user answered.
    pub fn cancelled() -> Self {
        Self::new(RequestPermissionOutcome::cancelled())
    }
}

setters!(RequestPermissionResponse { opt { meta: Meta } });

tagged_union! {
    /// How a permission request ended. Tagged by `outcome`.
    pub enum RequestPermissionOutcome: tag "outcome" {
        /// The turn was cancelled before the user answered. A client that sends
        /// `session/cancel` must answer every pending permission request with this.
        "cancelled" => Cancelled(TagOnly),
        /// The user picked one of the options.
        "selected" => Selected(SelectedPermissionOutcome),
    }
}

impl RequestPermissionOutcome {
    /// The turn was cancelled before the user answered.
    pub fn cancelled() -> Self {
        RequestPermissionOutcome::Cancelled(TagOnly::new())
    }

    /// The chosen option, if the user picked one.
    pub fn selected_option(&self) -> Option<&PermissionOptionId> {
        match self {
            RequestPermissionOutcome::Selected(s) => Some(&s.option_id),
            _ => None,
        }
    }
}

wire_struct! {
    /// The option the user picked.
    pub struct SelectedPermissionOutcome {
        /// The chosen option's identifier.
        pub option_id: PermissionOptionId = "optionId" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SelectedPermissionOutcome {
    /// The user chose `option_id`.
    pub fn new(option_id: impl Into<PermissionOptionId>) -> Self {
        SelectedPermissionOutcome {
            option_id: option_id.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(SelectedPermissionOutcome { opt { meta: Meta } });

wire_struct! {
    /// One choice shown to the user.
    pub struct PermissionOption {
        /// Identifies the choice in the response.
        pub option_id: PermissionOptionId = "optionId" (Req),
        /// The label shown to the user.
        pub name: String = "name" (Req),
        /// What the choice means, so clients can style it.
        pub kind: PermissionOptionKind = "kind" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl PermissionOption {
    /// A choice `option_id` labelled `name`.
    pub fn new(
        option_id: impl Into<PermissionOptionId>,
        name: impl Into<String>,
        kind: impl Into<PermissionOptionKind>,
    ) -> Self {
        PermissionOption {
            option_id: option_id.into(),
            name: name.into(),
            kind: kind.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(PermissionOption { opt { meta: Meta } });

id_type!(
    /// Identifies a permission option within one request.
    PermissionOptionId
);

string_enum! {
    /// What a permission option does, for icons and styling.
    pub enum PermissionOptionKind {
        /// Allow this one time.
        "allow_once" => AllowOnce,
        /// Allow, and remember the choice.
        "allow_always" => AllowAlways,
        /// Reject this one time.
        "reject_once" => RejectOnce,
        /// Reject, and remember the choice.
        "reject_always" => RejectAlways,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode;

    #[test]
    fn outcome_is_nested() {
        let json = serde_json::to_string(&RequestPermissionResponse::selected("allow")).unwrap();
        assert_eq!(
            json,
            r#"{"outcome":{"outcome":"selected","optionId":"allow"}}"#
        );
        let back: RequestPermissionResponse = decode(&json).unwrap();
        assert_eq!(
            back.outcome.selected_option().map(|o| o.as_str()),
            Some("allow")
        );

        let json = serde_json::to_string(&RequestPermissionResponse::cancelled()).unwrap();
        assert_eq!(json, r#"{"outcome":{"outcome":"cancelled"}}"#);
        let back: RequestPermissionResponse = decode(&json).unwrap();
        assert_eq!(back.outcome, RequestPermissionOutcome::cancelled());
    }

    #[test]
    fn outcome_errors_and_unknown() {
        // The flat shape is a mistake, not a selected outcome.
        let err = decode::<RequestPermissionResponse>(r#"{"outcome":"selected","optionId":"x"}"#)
            .unwrap_err();
        assert_eq!(err.path, "outcome");
        let err = decode::<RequestPermissionResponse>(r#"{"outcome":{"outcome":"selected"}}"#)
            .unwrap_err();
        assert_eq!(err.path, "outcome");
        assert!(err.message.contains("optionId"), "{err}");
        let err = decode::<RequestPermissionResponse>(
            r#"{"outcome":{"outcome":"selected","optionId":5}}"#,
        )
        .unwrap_err();
        assert_eq!(err.path, "outcome.optionId");

        let raw = r#"{"outcome":{"outcome":"_deferred","until":3}}"#;
        let back: RequestPermissionResponse = decode(raw).unwrap();
        assert!(matches!(back.outcome, RequestPermissionOutcome::Other(_)));
        assert_eq!(serde_json::to_string(&back).unwrap(), raw);
    }

    #[test]
    fn request_round_trip() {
        let raw = r#"{"sessionId":"s","toolCall":{"toolCallId":"t1","title":"rm -rf build"},"options":[{"optionId":"y","name":"Yes","kind":"allow_once"},{"optionId":"n","name":"No","kind":"reject_always"}]}"#;
        let req: RequestPermissionRequest = decode(raw).unwrap();
        assert_eq!(req.options[1].kind, PermissionOptionKind::RejectAlways);
        assert_eq!(serde_json::to_string(&req).unwrap(), raw);
    }
}
