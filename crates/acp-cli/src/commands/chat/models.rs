//! `/model`: lists the session's models (the current one marked) or switches
//! to one, through the agent's model selector or its model config option
//! (see [`crate::session::models`]).

use super::Chat;
use crate::exit::Failure;
use crate::session::models::{self, Via};
use acp::schema::*;

impl Chat<'_> {
    /// `/model`, and `/model ID` (or the model's name, which may have
    /// spaces).
    pub(super) async fn model(&mut self, words: &[&str]) -> Result<(), Failure> {
        let choice = self.store(|s| models::choice(s.models.as_ref(), &s.config_options));
        let Some(choice) = choice else {
            self.error(
                "the agent offers no model choice (neither models nor a model config option)",
            );
            return Ok(());
        };
        if words.is_empty() {
            self.say(&choice.listing());
            return Ok(());
        }
        let wanted = words.join(" ");
        let Some(model) = choice.find(&wanted) else {
            self.error(&format!(
                "no model {wanted}; the models are {}",
                choice.ids()
            ));
            return Ok(());
        };
        let id = model.id.clone();
        let conn = self.opened.conn.clone();
        let session_id = self.opened.session_id.clone();
        match choice.via {
            Via::Selector => {
                let request = SetSessionModelRequest::new(session_id, id.as_str());
                if self
                    .request("session/set_model", conn.set_session_model(request))
                    .await?
                    .is_none()
                {
                    return Ok(());
                }
                self.store(|s| models::switched(&mut s.models, &mut s.config_options, &id));
            }
            Via::ConfigOption(option) => {
                let request = SetSessionConfigOptionRequest::new(session_id, option, id.as_str());
                let Some(response) = self
                    .request(
                        "session/set_config_option",
                        conn.set_session_config_option(request),
                    )
                    .await?
                else {
                    return Ok(());
                };
                self.store(|s| s.config_options = response.config_options);
            }
        }
        self.say(&format!("Model: {id}"));
        Ok(())
    }
}
