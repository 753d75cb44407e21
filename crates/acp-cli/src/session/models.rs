//! The session model and the token usage of a turn, for `acp chat` (`/model`,
//! the status line after a turn) and `--model`.
//!
//! An agent offers the model one way or both: as the session model selector
//! (`models` in the session response, switched with `session/set_model`; an
//! unstable part of the schema that agents such as claude-agent-acp and
//! codex-acp send) or as a config option of category `model` (stable,
//! `session/set_config_option`). `/model` prefers the selector; `--model`
//! prefers the config option and falls back to the selector. After a switch
//! through the selector acp also moves the model config option to the new
//! value, if it has it, so that the two never disagree on screen; the config
//! option is what agents notify (`config_option_update`), so where both are
//! known and the option names one of the selector's models, it is the
//! current one.

use crate::exit::Failure;
use crate::session::open::Opened;
use crate::session::{Interrupted, Session};
use acp::schema::*;

/// A model the user can choose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Model {
    /// The id sent to the agent.
    pub id: String,
    /// The name to show.
    pub name: String,
    /// More detail, if the agent gives it.
    pub description: Option<String>,
}

/// How the agent takes a model choice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Via {
    /// `session/set_model`.
    Selector,
    /// `session/set_config_option` with this option.
    ConfigOption(SessionConfigId),
}

/// The models a session offers and the one it uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Choice {
    /// How to switch.
    pub via: Via,
    /// The current model's id.
    pub current: String,
    /// Every model offered.
    pub models: Vec<Model>,
}

impl Choice {
    /// The model `text` names: its id, or its name in any case.
    pub fn find(&self, text: &str) -> Option<&Model> {
        self.models.iter().find(|m| m.id == text).or_else(|| {
            self.models
                .iter()
                .find(|m| m.name.eq_ignore_ascii_case(text))
        })
    }

    /// The models, one a line, the current one marked with `*`.
    pub fn listing(&self) -> String {
        let mut text = String::from("Models:");
        for m in &self.models {
            let mark = if m.id == self.current { "*" } else { " " };
            text.push_str(&format!("\n {mark} {}", m.id));
            if m.name != m.id {
                text.push_str(&format!("  {}", m.name));
            }
            if let Some(d) = &m.description {
                text.push_str(&format!(" — {d}"));
            }
        }
        text.push_str("\n/model ID switches.");
        text
    }

    /// The ids offered, for messages.
    pub fn ids(&self) -> String {
        let ids: Vec<&str> = self.models.iter().map(|m| m.id.as_str()).collect();
        ids.join(", ")
    }
}

/// The config option of category `model` (or with id `model`), if it is a
/// select.
fn model_option(
    options: &[SessionConfigOption],
) -> Option<(&SessionConfigOption, &SessionConfigSelect)> {
    let option = options
        .iter()
        .find(|o| o.category == Some(SessionConfigOptionCategory::Model))
        .or_else(|| options.iter().find(|o| o.id.to_string() == "model"))?;
    match &option.kind {
        SessionConfigKind::Select(select) => Some((option, select)),
        _ => None,
    }
}

/// The model choice of a session with the selector `models` and the config
/// `options`: the selector's if there is one, else the model config
/// option's; `None` when the agent offers neither.
pub(crate) fn choice(
    models: Option<&SessionModelState>,
    options: &[SessionConfigOption],
) -> Option<Choice> {
    let option = model_option(options);
    if let Some(state) = models {
        let models: Vec<Model> = state
            .available_models
            .iter()
            .map(|m| Model {
                id: m.model_id.to_string(),
                name: m.name.clone(),
                description: m.description.clone(),
            })
            .collect();
        let notified = option
            .map(|(_, select)| select.current_value.to_string())
            .filter(|v| models.iter().any(|m| m.id == *v));
        return Some(Choice {
            via: Via::Selector,
            current: notified.unwrap_or_else(|| state.current_model_id.to_string()),
            models,
        });
    }
    let (option, select) = option?;
    Some(Choice {
        via: Via::ConfigOption(option.id.clone()),
        current: select.current_value.to_string(),
        models: select
            .options
            .iter()
            .map(|o| Model {
                id: o.value.to_string(),
                name: o.name.clone(),
                description: o.description.clone(),
            })
            .collect(),
    })
}

/// Records a switch to `id` through the selector: in `models`, and in the
/// model config option of `options` if it offers `id`.
pub(crate) fn switched(
    models: &mut Option<SessionModelState>,
    options: &mut [SessionConfigOption],
    id: &str,
) {
    if let Some(state) = models {
        state.current_model_id = ModelId::new(id);
    }
    let index = options
        .iter()
        .position(|o| o.category == Some(SessionConfigOptionCategory::Model))
        .or_else(|| options.iter().position(|o| o.id.to_string() == "model"));
    if let Some(option) = index.map(|i| &mut options[i])
        && let SessionConfigKind::Select(select) = &mut option.kind
        && select.options.iter().any(|o| o.value.to_string() == id)
    {
        select.current_value = SessionConfigValueId::new(id);
    }
}

impl Session {
    /// `--model` for an agent that offers the model through its selector
    /// only: `session/set_model`, after checking that the agent offers
    /// `model`. `Ok(false)` when the agent has no selector.
    pub(crate) async fn choose_model_by_selector(
        &mut self,
        opened: &mut Opened,
        model: &str,
    ) -> Result<Result<bool, String>, Failure> {
        let Some(choice) = choice(opened.models.as_ref(), &[]) else {
            return Ok(Ok(false));
        };
        let Some(found) = choice.find(model) else {
            return Ok(Err(format!(
                "the agent has no model {model}; its models are {}",
                choice.ids()
            )));
        };
        if found.id == choice.current {
            return Ok(Ok(true));
        }
        let id = found.id.clone();
        let conn = opened.conn.clone();
        let request = SetSessionModelRequest::new(opened.session_id.clone(), id.as_str());
        self.step("session/set_model", conn.set_session_model(request))
            .await
            .map_err(|Interrupted::Failed(f)| f)?;
        let options = opened.config_options.get_or_insert_with(Vec::new);
        switched(&mut opened.models, options, &id);
        Ok(Ok(true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn selector() -> SessionModelState {
        SessionModelState::new(
            "fast",
            vec![
                ModelInfo::new("fast", "Fast model").description("Quick"),
                ModelInfo::new("smart", "Smart model"),
            ],
        )
    }

    fn option(current: &str) -> Vec<SessionConfigOption> {
        vec![
            SessionConfigOption::select(
                "model",
                "Model",
                current,
                vec![
                    SessionConfigSelectOption::new("fast", "Fast model"),
                    SessionConfigSelectOption::new("smart", "Smart model"),
                ],
            )
            .category(SessionConfigOptionCategory::Model),
        ]
    }

    #[test]
    fn the_selector_first_then_the_config_option() {
        let c = choice(Some(&selector()), &[]).unwrap();
        assert_eq!((c.via.clone(), c.current.as_str()), (Via::Selector, "fast"));
        assert_eq!(c.find("SMART MODEL").unwrap().id, "smart");
        assert_eq!(c.find("huge"), None);
        assert_eq!(
            c.listing(),
            "Models:\n * fast  Fast model — Quick\n   smart  Smart model\n/model ID switches."
        );
        // The notified config option says which is current.
        let c = choice(Some(&selector()), &option("smart")).unwrap();
        assert_eq!((c.via, c.current.as_str()), (Via::Selector, "smart"));
        let c = choice(None, &option("smart")).unwrap();
        assert_eq!(c.via, Via::ConfigOption(SessionConfigId::new("model")));
        assert_eq!(c.ids(), "fast, smart");
        assert_eq!(choice(None, &[]), None);
    }

    #[test]
    fn a_switch_moves_both() {
        let mut models = Some(selector());
        let mut options = option("fast");
        switched(&mut models, &mut options, "smart");
        let c = choice(models.as_ref(), &options).unwrap();
        assert_eq!(c.current, "smart");
        assert_eq!(choice(None, &options).unwrap().current, "smart");
        // A value the option does not have leaves it alone.
        switched(&mut models, &mut options, "other");
        assert_eq!(choice(None, &options).unwrap().current, "smart");
    }
}
