//! Session settings: the mode (how much the agent may do without asking) and
//! the model, and the user's remembered permission answers.
//!
//! The mode is offered two ways, for clients of either generation: as
//! session modes (`session/set_mode`) and as the config option `mode`. The
//! model is offered as the config option `model` (category `model`,
//! `session/set_config_option`), which every schema of protocol v1 defines.
//! The session results carry no `models` (the unstable session model
//! selector, which no current schema defines any more: a result must not
//! carry a field the client's schema does not know), but a
//! `session/set_model` from an older client still switches the model. Either
//! way, the agent stores the new setting with the session and sends a
//! `config_option_update` with the new current values. The models offered
//! are the config's (see [`crate::config::Config::model_choices`]), plus the
//! session's own if the config no longer lists it; any other model id is
//! refused with -32602.

use super::scope::Scope;
use super::{CodingAgent, Session, invalid_params, lock};
use crate::config::{ModelRef, ProviderKind};
use acp::schema::*;

/// How much the agent may do without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Reads and searches only: no edits, no commands.
    ReadOnly,
    /// Asks before each edit or command (the default).
    Ask,
    /// Edits and runs commands without asking.
    Auto,
}

impl Mode {
    /// All modes, in display order.
    pub const ALL: [Mode; 3] = [Mode::ReadOnly, Mode::Ask, Mode::Auto];

    /// The mode's id on the wire.
    pub fn id(self) -> &'static str {
        match self {
            Mode::ReadOnly => "read-only",
            Mode::Ask => "ask",
            Mode::Auto => "auto",
        }
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Mode::ReadOnly => "Read only",
            Mode::Ask => "Ask",
            Mode::Auto => "Auto",
        }
    }

    pub(super) fn description(self) -> &'static str {
        match self {
            Mode::ReadOnly => "Read and search files; no edits or commands",
            Mode::Ask => "Ask for permission before each edit or command",
            Mode::Auto => "Edit files and run commands without asking",
        }
    }

    /// The mode with wire id `id`.
    pub fn from_id(id: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.id() == id)
    }
}

/// Settings of a session that can change while a turn runs.
pub(super) struct Settings {
    pub(super) mode: Mode,
    pub(super) model: ModelRef,
    /// What the user allowed for the rest of the session (see `scope`).
    pub(super) always_allow: Vec<Scope>,
    /// What the user rejected for the rest of the session.
    pub(super) always_reject: Vec<Scope>,
}

impl Settings {
    /// Settings with no remembered answers.
    pub(super) fn new(mode: Mode, model: ModelRef) -> Self {
        Settings {
            mode,
            model,
            always_allow: Vec::new(),
            always_reject: Vec::new(),
        }
    }
}

impl CodingAgent {
    /// The session modes, with `mode` current.
    pub(super) fn modes(mode: Mode) -> SessionModeState {
        SessionModeState::new(
            mode.id(),
            Mode::ALL
                .into_iter()
                .map(|m| SessionMode::new(m.id(), m.name()).description(m.description()))
                .collect::<Vec<_>>(),
        )
    }

    /// The models a session using `current` may switch to: the config's
    /// choices, with `current` first if they do not include it.
    fn offered_models(&self, current: &ModelRef) -> Vec<ModelRef> {
        let mut models = self.config.model_choices();
        if !models.contains(current) {
            models.insert(0, current.clone());
        }
        models
    }

    /// The config options: the mode and the model.
    pub(super) fn config_options(&self, s: &Settings) -> Vec<SessionConfigOption> {
        let modes: Vec<SessionConfigSelectOption> = Mode::ALL
            .into_iter()
            .map(|m| SessionConfigSelectOption::new(m.id(), m.name()).description(m.description()))
            .collect();
        let models: Vec<SessionConfigSelectOption> = self
            .offered_models(&s.model)
            .iter()
            .map(|m| SessionConfigSelectOption::new(m.id(), m.id()).description(provider_name(m)))
            .collect();
        vec![
            SessionConfigOption::select("mode", "Mode", s.mode.id(), modes)
                .description("How much the agent may do without asking")
                .category(SessionConfigOptionCategory::Mode),
            SessionConfigOption::select("model", "Model", s.model.id(), models)
                .category(SessionConfigOptionCategory::Model),
        ]
    }

    /// The session's modes and config options, for the responses that open
    /// a session.
    pub(super) fn settings_state(
        &self,
        session: &Session,
    ) -> (SessionModeState, Vec<SessionConfigOption>) {
        let s = lock(&session.settings);
        (Self::modes(s.mode), self.config_options(&s))
    }

    /// `session/set_model`.
    pub(super) async fn change_model(
        &self,
        args: SetSessionModelRequest,
    ) -> Result<SetSessionModelResponse, Error> {
        let session = self.session(&args.session_id)?;
        if self.set_model(&session, args.model_id.as_str())? {
            self.settings_changed(&args.session_id, &session, false)
                .await?;
        }
        Ok(SetSessionModelResponse::new())
    }

    /// Sets the session's model to the offered model `id`; whether it
    /// changed.
    fn set_model(&self, session: &Session, id: &str) -> Result<bool, Error> {
        let mut s = lock(&session.settings);
        let offered = self.offered_models(&s.model);
        let Some(model) = offered.iter().find(|m| m.id() == id) else {
            let ids: Vec<String> = offered.iter().map(ModelRef::id).collect();
            return Err(invalid_params(format!(
                "unknown model {id:?}; this session offers {}",
                ids.join(", ")
            )));
        };
        let changed = s.model != *model;
        s.model = model.clone();
        Ok(changed)
    }

    /// `session/set_mode`.
    pub(super) async fn change_mode(
        &self,
        args: SetSessionModeRequest,
    ) -> Result<SetSessionModeResponse, Error> {
        let session = self.session(&args.session_id)?;
        let changed = set_mode(&session, args.mode_id.as_str())?;
        if changed {
            self.settings_changed(&args.session_id, &session, true)
                .await?;
        }
        Ok(SetSessionModeResponse::new())
    }

    /// `session/set_config_option`: `mode` or `model`.
    pub(super) async fn change_config_option(
        &self,
        args: SetSessionConfigOptionRequest,
    ) -> Result<SetSessionConfigOptionResponse, Error> {
        let session = self.session(&args.session_id)?;
        let SessionConfigValue::ValueId(value) = &args.value else {
            return Err(invalid_params("this option takes a value id"));
        };
        let mut mode_changed = false;
        let changed = match args.config_id.as_str() {
            "mode" => {
                mode_changed = set_mode(&session, value.as_str())?;
                mode_changed
            }
            "model" => self.set_model(&session, value.as_str())?,
            other => {
                return Err(invalid_params(format!("unknown config option {other:?}")));
            }
        };
        if changed {
            self.settings_changed(&args.session_id, &session, mode_changed)
                .await?;
        }
        let options = self.config_options(&lock(&session.settings));
        Ok(SetSessionConfigOptionResponse::new(options))
    }

    /// Stores changed settings and tells the client: the current mode (when
    /// it changed) and the config options. A failure to store them is the
    /// request's error (the change holds for this process).
    async fn settings_changed(
        &self,
        session_id: &SessionId,
        session: &Session,
        mode_changed: bool,
    ) -> Result<(), Error> {
        let (mode, model, options) = {
            let s = lock(&session.settings);
            (s.mode, s.model.id(), self.config_options(&s))
        };
        let stored = self
            .store
            .set_settings(session_id.as_str(), mode.id(), &model)
            .await;
        if mode_changed {
            self.notify(session_id, CurrentModeUpdate::new(mode.id()))
                .await;
        }
        self.notify(session_id, ConfigOptionUpdate::new(options))
            .await;
        stored.map_err(super::store_error)
    }
}

/// Which API serves `m`, as the model's description.
fn provider_name(m: &ModelRef) -> &'static str {
    match m.provider {
        ProviderKind::OpenAi => "OpenAI-compatible API",
        ProviderKind::Anthropic => "Anthropic API",
    }
}

/// Sets the session's mode from its wire id; whether it changed.
fn set_mode(session: &Session, id: &str) -> Result<bool, Error> {
    let mode = Mode::from_id(id).ok_or_else(|| {
        invalid_params(format!("unknown mode {id:?}; use read-only, ask or auto"))
    })?;
    let mut s = lock(&session.settings);
    let changed = s.mode != mode;
    s.mode = mode;
    Ok(changed)
}
