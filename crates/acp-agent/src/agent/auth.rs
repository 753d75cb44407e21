//! Authentication: the methods offered in `initialize` and `authenticate`.
//!
//! The agent has no sign-in of its own: it uses the API keys it was started
//! with (the environment or the config file). It offers, all of them methods
//! the agent handles (written without `type`, the only kind besides
//! `terminal` that the schema defines):
//!
//! - [`AUTH_METHOD_ID`]: `authenticate` with it succeeds when a model is
//!   usable, else fails with `auth_required` saying what to set;
//! - one method per provider ([`ENV_VAR_METHODS`]) that names the
//!   environment variables it takes, in its description and, in the
//!   auth-methods RFD's `env_var` shape (`vars` with `name`, `label`,
//!   `secret`, `optional`, and a `link` where the key is had), under
//!   `_meta.env_var`, so that a client can ask the user for the key and start
//!   the agent with it set. `authenticate` with one succeeds when that
//!   provider's key is set (in the environment, or in the config file) and a
//!   model is usable, and otherwise fails with `auth_required` naming the
//!   variable.
//!
//! The RFD's typed `env_var` method is not sent as such: no published
//! schema defines it (it was an unstable variant of the Rust schema crate,
//! dropped when terminal authentication was stabilised), and a result must
//! not carry what the client's schema does not define.

use super::{CodingAgent, invalid_params};
use crate::config::{Config, ProviderKind};
use acp::schema::*;
use serde_json::json;

/// The id of the agent-handled method: configuration by environment (or
/// config file).
pub const AUTH_METHOD_ID: &str = "environment";

/// One environment variable a provider's method names.
struct EnvVar {
    name: &'static str,
    label: &'static str,
    secret: bool,
    optional: bool,
}

/// A method that names the variables configuring one provider.
struct EnvVarMethod {
    id: &'static str,
    name: &'static str,
    description: &'static str,
    provider: ProviderKind,
    vars: &'static [EnvVar],
    link: &'static str,
}

/// The methods that name a provider's environment variables, one per
/// provider.
const ENV_VAR_METHODS: &[EnvVarMethod] = &[
    EnvVarMethod {
        id: "openai-api-key",
        name: "OpenAI API key",
        description: "Start the agent with OPENAI_API_KEY set: a key of OpenAI, or of \
                      another hosted OpenAI-compatible API together with its OPENAI_BASE_URL. \
                      Choose the model with ACP_AGENT_MODEL (default openai:gpt-4.1).",
        provider: ProviderKind::OpenAi,
        vars: &[
            EnvVar {
                name: "OPENAI_API_KEY",
                label: "OpenAI API key",
                secret: true,
                optional: false,
            },
            EnvVar {
                name: "OPENAI_BASE_URL",
                label: "Base URL of another OpenAI-compatible API",
                secret: false,
                optional: true,
            },
        ],
        link: "https://platform.openai.com/api-keys",
    },
    EnvVarMethod {
        id: "anthropic-api-key",
        name: "Anthropic API key",
        description: "Start the agent with ANTHROPIC_API_KEY set: a key of the Anthropic \
                      API. Choose the model with ACP_AGENT_MODEL (default \
                      anthropic:claude-sonnet-4-5).",
        provider: ProviderKind::Anthropic,
        vars: &[EnvVar {
            name: "ANTHROPIC_API_KEY",
            label: "Anthropic API key",
            secret: true,
            optional: false,
        }],
        link: "https://console.anthropic.com/settings/keys",
    },
];

impl EnvVarMethod {
    /// The method as `initialize` offers it: handled by the agent, its
    /// variables named in the description and, in the RFD's `env_var`
    /// shape, under `_meta.env_var`.
    fn advertised(&self) -> AuthMethod {
        let vars: Vec<serde_json::Value> = self
            .vars
            .iter()
            .map(|v| {
                json!({
                    "name": v.name,
                    "label": v.label,
                    "secret": v.secret,
                    "optional": v.optional,
                })
            })
            .collect();
        let mut meta = Meta::new();
        meta.insert("env_var", json!({"vars": vars, "link": self.link}));
        AuthMethod::from(
            AuthMethodAgent::new(self.id, self.name)
                .description(self.description)
                .meta(meta),
        )
    }

    /// The variable holding the key: the first one, which is required.
    fn key_var(&self) -> &'static str {
        self.vars[0].name
    }

    /// Whether the provider's key is set.
    fn key_is_set(&self, config: &Config) -> bool {
        config
            .provider(self.provider)
            .is_some_and(|p| p.api_key.is_some())
    }
}

/// The methods `initialize` offers: the general one, then one per
/// provider.
pub(super) fn methods() -> Vec<AuthMethod> {
    let agent = AuthMethodAgent::new(AUTH_METHOD_ID, "Environment variables or config file")
        .description(
            "Set OPENAI_API_KEY (and optionally OPENAI_BASE_URL), OPENAI_BASE_URL alone for a \
             local OpenAI-compatible server, or ANTHROPIC_API_KEY; choose the model with \
             ACP_AGENT_MODEL=provider:model. Or make the same settings in the config file \
             (`acp-agent --help` tells where it is). Then restart the agent.",
        );
    std::iter::once(AuthMethod::from(agent))
        .chain(ENV_VAR_METHODS.iter().map(EnvVarMethod::advertised))
        .collect()
}

impl CodingAgent {
    /// `authenticate`: checks that what the method needs is configured (the
    /// agent was started with it); nothing is stored.
    pub(super) fn check_auth(
        &self,
        method_id: &AuthMethodId,
    ) -> Result<AuthenticateResponse, Error> {
        let id = method_id.as_str();
        if id != AUTH_METHOD_ID {
            let Some(method) = ENV_VAR_METHODS.iter().find(|m| m.id == id) else {
                let known: Vec<&str> = std::iter::once(AUTH_METHOD_ID)
                    .chain(ENV_VAR_METHODS.iter().map(|m| m.id))
                    .collect();
                return Err(invalid_params(format!(
                    "unknown auth method {id:?}; this agent offers {}",
                    known.join(", ")
                )));
            };
            if !method.key_is_set(&self.config) {
                let var = method.key_var();
                return Err(Error::new(
                    ErrorCode::AUTH_REQUIRED,
                    format!(
                        "{var} is not set: start the agent with {var} in its environment \
                         (or {} in the config file)",
                        config_key(var)
                    ),
                )
                .data(json!({"methodId": id, "missing": [var]})));
            }
        }
        match &self.config.model {
            Ok(_) => Ok(AuthenticateResponse::new()),
            Err(why) => Err(Error::new(ErrorCode::AUTH_REQUIRED, why.to_string())),
        }
    }
}

/// The config file's name for environment variable `var`.
fn config_key(var: &str) -> &'static str {
    crate::config::SETTINGS
        .iter()
        .find(|(_, env)| *env == var)
        .map_or("the matching setting", |(key, _)| key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_ids_are_unique_and_each_key_var_is_a_secret() {
        let mut ids: Vec<String> = methods()
            .iter()
            .map(|m| m.id().unwrap().into_owned())
            .collect();
        let n = ids.len();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), n);
        for m in ENV_VAR_METHODS {
            assert!(m.vars[0].secret && !m.vars[0].optional, "{}", m.id);
            assert_ne!(config_key(m.key_var()), "the matching setting", "{}", m.id);
        }
    }
}
