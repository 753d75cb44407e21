//! Session settings: the mode (how much the agent may do without asking) and
//! the model, offered to the client both as session modes and as config
//! options, and the user's remembered permission answers.

use super::scope::Scope;
use super::{CodingAgent, Session, invalid_params, lock};
use crate::config::ModelRef;
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

    /// The config options: the mode and the model.
    pub(super) fn config_options(&self, s: &Settings) -> Vec<SessionConfigOption> {
        let modes: Vec<SessionConfigSelectOption> = Mode::ALL
            .into_iter()
            .map(|m| SessionConfigSelectOption::new(m.id(), m.name()).description(m.description()))
            .collect();
        let mut models = self.config.model_choices();
        if !models.contains(&s.model) {
            models.insert(0, s.model.clone());
        }
        let models: Vec<SessionConfigSelectOption> = models
            .iter()
            .map(|m| SessionConfigSelectOption::new(m.id(), m.id()))
            .collect();
        vec![
            SessionConfigOption::select("mode", "Mode", s.mode.id(), modes)
                .description("How much the agent may do without asking")
                .category(SessionConfigOptionCategory::Mode),
            SessionConfigOption::select("model", "Model", s.model.id(), models)
                .category(SessionConfigOptionCategory::Model),
        ]
    }

    /// The session's modes and config options, for the responses that open a
    /// session.
    pub(super) fn settings_state(
        &self,
        session: &Session,
    ) -> (SessionModeState, Vec<SessionConfigOption>) {
        let s = lock(&session.settings);
        (Self::modes(s.mode), self.config_options(&s))
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
            "model" => {
                let model = ModelRef::parse(value.as_str()).map_err(invalid_params)?;
                if self.config.provider(model.provider).is_none() {
                    return Err(invalid_params(format!(
                        "provider {} is not configured",
                        model.provider.prefix()
                    )));
                }
                let mut s = lock(&session.settings);
                let changed = s.model != model;
                s.model = model;
                changed
            }
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
