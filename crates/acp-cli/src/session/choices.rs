//! The session's mode, model and config options once it is open.
//!
//! They come from `--mode` and `--model`, else from the agent's config
//! entry (`default_mode`, `default_model`, `default_config_options`, as
//! imported from Zed). A flag that does not fit the agent is a usage error;
//! a config default that does not fit is a note.

use crate::cli::SessionArgs;
use crate::exit::Failure;
use crate::session::open::Opened;
use crate::session::{Interrupted, Session};
use acp::schema::*;

impl Session {
    /// Sets the mode, model and config options the flags or the agent's
    /// config entry ask for.
    pub(super) async fn apply_choices(
        &mut self,
        args: &SessionArgs,
        opened: &mut Opened,
    ) -> Result<(), Failure> {
        let defaults = self.agent_defaults().clone();
        let mode = match &args.mode {
            Some(mode) => Some((mode.clone(), true)),
            None => defaults.mode.map(|m| (m, false)),
        };
        if let Some((mode, explicit)) = mode {
            self.choose_mode(opened, &mode, explicit).await?;
        }
        let model = match &args.model {
            Some(model) => Some((model.clone(), true)),
            None => defaults.model.map(|m| (m, false)),
        };
        if let Some((model, explicit)) = model {
            let option = find_option(opened, SessionConfigOptionCategory::Model, "model");
            match option {
                Some(id) => {
                    self.choose_option(opened, &id, &model, explicit, "--model")
                        .await?
                }
                None => match self
                    .choose_model_by_selector(opened, &model)
                    .await?
                {
                    Ok(true) => {}
                    Ok(false) => self.refuse(
                        explicit,
                        format!(
                            "the agent offers no model choice, so the model {model} cannot be chosen"
                        ),
                    )?,
                    Err(why) => self.refuse(explicit, why)?,
                },
            }
        }
        for (id, value) in defaults.options {
            self.choose_option(opened, &id, &value, false, "").await?;
        }
        Ok(())
    }

    /// A choice that cannot be made: a usage error for a flag, a note for a
    /// default from the config.
    fn refuse(&self, explicit: bool, why: String) -> Result<(), Failure> {
        if explicit {
            return Err(Failure::usage(why));
        }
        self.client.with_view(|v| {
            v.note(&format!(
                "[note] {why} (a default of the agent's config entry)"
            ))
        });
        Ok(())
    }

    async fn choose_mode(
        &mut self,
        opened: &mut Opened,
        mode: &str,
        explicit: bool,
    ) -> Result<(), Failure> {
        if let Some(modes) = &opened.modes {
            let known = modes
                .available_modes
                .iter()
                .any(|m| m.id.to_string() == mode);
            if !known {
                let ids: Vec<String> = modes
                    .available_modes
                    .iter()
                    .map(|m| m.id.to_string())
                    .collect();
                return self.refuse(
                    explicit,
                    format!(
                        "the agent has no mode {mode}; its modes are {}",
                        ids.join(", ")
                    ),
                );
            }
            if modes.current_mode_id.to_string() == mode {
                return Ok(());
            }
            let conn = opened.conn.clone();
            let request = SetSessionModeRequest::new(opened.session_id.clone(), mode);
            self.step("session/set_mode", conn.set_session_mode(request))
                .await
                .map_err(|Interrupted::Failed(f)| f)?;
            if let Some(modes) = &mut opened.modes {
                modes.current_mode_id = SessionModeId::new(mode);
            }
            return Ok(());
        }
        match find_option(opened, SessionConfigOptionCategory::Mode, "mode") {
            Some(id) => {
                self.choose_option(opened, &id, mode, explicit, "--mode")
                    .await
            }
            None => self.refuse(
                explicit,
                format!("the agent has no session modes, so the mode {mode} cannot be chosen"),
            ),
        }
    }

    /// Sets config option `id` to `value` (a value id or name; `true` or
    /// `false` for a boolean).
    async fn choose_option(
        &mut self,
        opened: &mut Opened,
        id: &str,
        value: &str,
        explicit: bool,
        flag: &str,
    ) -> Result<(), Failure> {
        let options = opened.config_options.clone().unwrap_or_default();
        let Some(option) = options.iter().find(|o| o.id.to_string() == id) else {
            return self.refuse(explicit, format!("the agent has no config option {id}"));
        };
        let value = match parse_config_value(option, value) {
            Ok(value) => value,
            Err(why) if flag.is_empty() => return self.refuse(explicit, why),
            Err(why) => return self.refuse(explicit, format!("{flag}: {why}")),
        };
        let unchanged = match (&option.kind, &value) {
            (SessionConfigKind::Select(s), SessionConfigValue::ValueId(v)) => s.current_value == *v,
            (SessionConfigKind::Boolean(b), SessionConfigValue::Boolean(v)) => {
                b.current_value == *v
            }
            _ => false,
        };
        if unchanged {
            return Ok(());
        }
        let conn = opened.conn.clone();
        let request =
            SetSessionConfigOptionRequest::new(opened.session_id.clone(), option.id.clone(), value);
        let response = self
            .step(
                "session/set_config_option",
                conn.set_session_config_option(request),
            )
            .await
            .map_err(|Interrupted::Failed(f)| f)?;
        opened.config_options = Some(response.config_options);
        Ok(())
    }
}

/// The id of the config option of `category` (or, failing that, the one
/// with id `fallback`).
fn find_option(
    opened: &Opened,
    category: SessionConfigOptionCategory,
    fallback: &str,
) -> Option<String> {
    let options = opened.config_options.as_ref()?;
    options
        .iter()
        .find(|o| o.category.as_ref() == Some(&category))
        .or_else(|| options.iter().find(|o| o.id.to_string() == fallback))
        .map(|o| o.id.to_string())
}

/// A config option's current value and its choices.
pub(crate) fn describe_value(option: &SessionConfigOption) -> String {
    match &option.kind {
        SessionConfigKind::Select(select) => {
            let values: Vec<String> = select.options.iter().map(|o| o.value.to_string()).collect();
            format!("{} (one of {})", select.current_value, values.join(", "))
        }
        SessionConfigKind::Boolean(b) => format!("{} (true or false)", b.current_value),
        _ => "(a kind of option acp cannot show)".to_owned(),
    }
}

/// Reads a value typed for a config option: a value id or name for a
/// select, `true`/`false` (`on`/`off`, `yes`/`no`) for a boolean.
pub(crate) fn parse_config_value(
    option: &SessionConfigOption,
    text: &str,
) -> Result<SessionConfigValue, String> {
    match &option.kind {
        SessionConfigKind::Select(select) => select
            .options
            .iter()
            .find(|o| o.value.to_string() == text || o.name.eq_ignore_ascii_case(text))
            .map(|o| SessionConfigValue::from(o.value.clone()))
            .ok_or_else(|| {
                let values: Vec<String> =
                    select.options.iter().map(|o| o.value.to_string()).collect();
                format!("{} takes one of {}", option.id, values.join(", "))
            }),
        SessionConfigKind::Boolean(_) => match text.to_ascii_lowercase().as_str() {
            "true" | "on" | "yes" => Ok(true.into()),
            "false" | "off" | "no" => Ok(false.into()),
            _ => Err(format!("{} takes true or false", option.id)),
        },
        _ => Err(format!(
            "acp cannot set {}: unknown kind of option",
            option.id
        )),
    }
}
