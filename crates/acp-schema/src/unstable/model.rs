//! Session models (`unstable-session-model`): the models an agent offers for a
//! session, the one in use, and `session/set_model` to switch.
//!
//! (Schema v0.10's unstable surface; newer schemas express the model choice as
//! a config option of category `model`, which agents send alongside.)

use crate::util::{id_type, setters, wire_struct};
use crate::{Meta, SessionId};

id_type!(
    /// Identifies a model an agent offers.
    ModelId
);

wire_struct! {
    /// A model the agent can use in a session.
    pub struct ModelInfo {
        /// The model's id, passed to `session/set_model`.
        pub model_id: ModelId = "modelId" (Req),
        /// A name to show the user.
        pub name: String = "name" (Req),
        /// More detail to show the user.
        pub description: Option<String> = "description" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ModelInfo {
    /// Model `model_id` shown as `name`.
    pub fn new(model_id: impl Into<ModelId>, name: impl Into<String>) -> Self {
        ModelInfo {
            model_id: model_id.into(),
            name: name.into(),
            description: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(ModelInfo { opt { description: String, meta: Meta } });

wire_struct! {
    /// The models a session offers and the one it uses.
    pub struct SessionModelState {
        /// The model in use.
        pub current_model_id: ModelId = "currentModelId" (Req),
        /// Every model the session can switch to.
        pub available_models: Vec<ModelInfo> = "availableModels" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SessionModelState {
    /// Using `current_model_id`, out of `available_models`.
    pub fn new(
        current_model_id: impl Into<ModelId>,
        available_models: impl Into<Vec<ModelInfo>>,
    ) -> Self {
        SessionModelState {
            current_model_id: current_model_id.into(),
            available_models: available_models.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(SessionModelState { opt { meta: Meta } });

wire_struct! {
    /// The `session/set_model` request: switch a session to another model.
    pub struct SetSessionModelRequest {
        /// The session to switch.
        pub session_id: SessionId = "sessionId" (Req),
        /// The model to use (one of `availableModels`).
        pub model_id: ModelId = "modelId" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SetSessionModelRequest {
    /// Switch `session_id` to `model_id`.
    pub fn new(session_id: impl Into<SessionId>, model_id: impl Into<ModelId>) -> Self {
        SetSessionModelRequest {
            session_id: session_id.into(),
            model_id: model_id.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(SetSessionModelRequest { opt { meta: Meta } });

wire_struct! {
    /// The (empty) result of `session/set_model`.
    #[derive(Default)]
    pub struct SetSessionModelResponse {
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SetSessionModelResponse {
    /// An empty response.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(SetSessionModelResponse { opt { meta: Meta } });
