//! Configuration from the environment: which model providers are usable and
//! which model a new session starts with.

use std::fmt;

/// A model provider the agent can talk to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProviderKind {
    /// An OpenAI-compatible Chat Completions API (OpenAI, Ollama, vLLM,
    /// llama.cpp, LM Studio, …).
    OpenAi,
    /// The Anthropic Messages API.
    Anthropic,
}

impl ProviderKind {
    /// The prefix used in `provider:model` names.
    pub fn prefix(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
        }
    }

    fn parse(prefix: &str) -> Option<Self> {
        match prefix {
            "openai" => Some(ProviderKind::OpenAi),
            "anthropic" => Some(ProviderKind::Anthropic),
            _ => None,
        }
    }
}

/// Where and how to reach one provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderConfig {
    /// The API's base URL, e.g. `https://api.openai.com/v1`.
    pub base_url: String,
    /// The API key, if any (local servers usually need none).
    pub api_key: Option<String>,
}

/// A model, named as `provider:model`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ModelRef {
    /// The provider serving it.
    pub provider: ProviderKind,
    /// The provider's name for the model.
    pub model: String,
}

impl ModelRef {
    /// Parses `provider:model` (e.g. `openai:gpt-4.1`).
    pub fn parse(s: &str) -> Result<Self, String> {
        let (prefix, model) = s.split_once(':').ok_or_else(|| {
            format!("model {s:?} is not of the form provider:model (e.g. openai:gpt-4.1)")
        })?;
        let provider = ProviderKind::parse(prefix).ok_or_else(|| {
            format!("unknown provider {prefix:?} in {s:?}: use openai or anthropic")
        })?;
        if model.is_empty() {
            return Err(format!("model {s:?} names no model after the provider"));
        }
        Ok(ModelRef {
            provider,
            model: model.to_string(),
        })
    }

    /// The `provider:model` form, used as the config option value.
    pub fn id(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for ModelRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.provider.prefix(), self.model)
    }
}

/// Default OpenAI model when only OpenAI is configured.
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-4.1";
/// Default Anthropic model when only Anthropic is configured.
pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";
/// Default limit of model calls in one prompt turn.
pub const DEFAULT_MAX_TURN_REQUESTS: usize = 50;

/// What to tell the user to set when no model is usable.
pub const SETUP_HELP: &str = "No model is configured. Set OPENAI_API_KEY (optionally OPENAI_BASE_URL) \
for OpenAI, or OPENAI_BASE_URL alone for a local OpenAI-compatible server (Ollama, vLLM, llama.cpp, \
LM Studio), or ANTHROPIC_API_KEY for Anthropic; then name the model with ACP_AGENT_MODEL=provider:model \
(e.g. openai:gpt-4.1 or anthropic:claude-sonnet-4-5), which is required for a local server. \
Restart the agent after changing the environment.";

/// The agent's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// The OpenAI-compatible provider, if configured.
    pub openai: Option<ProviderConfig>,
    /// The Anthropic provider, if configured.
    pub anthropic: Option<ProviderConfig>,
    /// The model new sessions use, or why there is none.
    pub model: Result<ModelRef, String>,
    /// The most model calls one prompt turn may make.
    pub max_turn_requests: usize,
    /// The context window size reported in `usage_update`.
    pub context_window: u64,
    /// Most output tokens per model call, where the API requires a limit
    /// (Anthropic).
    pub max_output_tokens: u64,
    /// Whether models take images: `Some` when set by `ACP_AGENT_IMAGES`,
    /// else decided per provider (see [`Config::accepts_images`]).
    pub images: Option<bool>,
    /// Longest time to wait for a model's HTTP response headers and between
    /// stream chunks.
    pub request_timeout_secs: u64,
}

fn non_empty(v: Option<String>) -> Option<String> {
    v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

impl Config {
    /// Reads the configuration from the process environment.
    pub fn from_env() -> Self {
        Self::from_lookup(|k| std::env::var(k).ok())
    }

    /// Reads the configuration through `get` (the environment, or a map in
    /// tests).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Self {
        let openai_key = non_empty(get("OPENAI_API_KEY"));
        let openai_url = non_empty(get("OPENAI_BASE_URL"));
        let openai = match (&openai_key, &openai_url) {
            (None, None) => None,
            _ => Some(ProviderConfig {
                base_url: openai_url
                    .clone()
                    .unwrap_or_else(|| "https://api.openai.com/v1".into()),
                api_key: openai_key.clone(),
            }),
        };
        let anthropic_key = non_empty(get("ANTHROPIC_API_KEY"));
        let anthropic = anthropic_key.map(|key| ProviderConfig {
            base_url: non_empty(get("ANTHROPIC_BASE_URL"))
                .unwrap_or_else(|| "https://api.anthropic.com".into()),
            api_key: Some(key),
        });
        let model = match non_empty(get("ACP_AGENT_MODEL")) {
            Some(name) => ModelRef::parse(&name).and_then(|m| {
                let configured = match m.provider {
                    ProviderKind::OpenAi => openai.is_some(),
                    ProviderKind::Anthropic => anthropic.is_some(),
                };
                if configured {
                    Ok(m)
                } else {
                    Err(format!(
                        "ACP_AGENT_MODEL={name} names provider {}, which is not configured. {SETUP_HELP}",
                        m.provider.prefix()
                    ))
                }
            }),
            None => match (&openai, &anthropic) {
                // A custom base URL without a key is a local server: its model
                // names are unknowable, so one must be named.
                (Some(o), _) if o.api_key.is_some() => Ok(ModelRef {
                    provider: ProviderKind::OpenAi,
                    model: DEFAULT_OPENAI_MODEL.into(),
                }),
                (_, Some(_)) => Ok(ModelRef {
                    provider: ProviderKind::Anthropic,
                    model: DEFAULT_ANTHROPIC_MODEL.into(),
                }),
                (Some(_), None) => Err(format!(
                    "OPENAI_BASE_URL is set without a model: set ACP_AGENT_MODEL=openai:<model name on your server>. {SETUP_HELP}"
                )),
                (None, None) => Err(SETUP_HELP.to_string()),
            },
        };
        let number = |k: &str, default: u64| {
            non_empty(get(k))
                .and_then(|v| v.parse::<u64>().ok())
                .filter(|n| *n > 0)
                .unwrap_or(default)
        };
        Config {
            openai,
            anthropic,
            model,
            max_turn_requests: number(
                "ACP_AGENT_MAX_TURN_REQUESTS",
                DEFAULT_MAX_TURN_REQUESTS as u64,
            ) as usize,
            context_window: number("ACP_AGENT_CONTEXT_WINDOW", 128_000),
            images: non_empty(get("ACP_AGENT_IMAGES")).map(|v| matches!(v.as_str(), "1" | "true" | "yes")),
            max_output_tokens: number("ACP_AGENT_MAX_OUTPUT_TOKENS", 16_000),
            request_timeout_secs: number("ACP_AGENT_REQUEST_TIMEOUT_SECS", 300),
        }
    }

    /// The provider configuration for `kind`, if configured.
    pub fn provider(&self, kind: ProviderKind) -> Option<&ProviderConfig> {
        match kind {
            ProviderKind::OpenAi => self.openai.as_ref(),
            ProviderKind::Anthropic => self.anthropic.as_ref(),
        }
    }

    /// Whether `model` is sent images: as `ACP_AGENT_IMAGES` says, else yes
    /// for Anthropic and for OpenAI's own API, no for other OpenAI-compatible
    /// servers (whose models often take text only).
    pub fn accepts_images(&self, model: &ModelRef) -> bool {
        if let Some(v) = self.images {
            return v;
        }
        match model.provider {
            ProviderKind::Anthropic => true,
            ProviderKind::OpenAi => self
                .openai
                .as_ref()
                .is_some_and(|o| o.base_url.starts_with("https://api.openai.com")),
        }
    }

    /// Models offered in the model selector: the default first, then
    /// well-known models of the configured hosted providers.
    pub fn model_choices(&self) -> Vec<ModelRef> {
        let mut out = Vec::new();
        if let Ok(m) = &self.model {
            out.push(m.clone());
        }
        let mut push = |provider, name: &str| {
            let m = ModelRef {
                provider,
                model: name.to_string(),
            };
            if !out.contains(&m) {
                out.push(m);
            }
        };
        if let Some(o) = &self.openai
            && o.api_key.is_some()
            && o.base_url.starts_with("https://api.openai.com")
        {
            for name in ["gpt-4.1", "gpt-4.1-mini", "o4-mini"] {
                push(ProviderKind::OpenAi, name);
            }
        }
        if self.anthropic.is_some() {
            for name in ["claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5"] {
                push(ProviderKind::Anthropic, name);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn cfg(vars: &[(&str, &str)]) -> Config {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_lookup(|k| map.get(k).cloned())
    }

    #[test]
    fn nothing_configured_explains_what_to_set() {
        let c = cfg(&[]);
        let err = c.model.unwrap_err();
        assert!(err.contains("OPENAI_API_KEY") && err.contains("ACP_AGENT_MODEL"));
    }

    #[test]
    fn defaults_per_provider() {
        assert_eq!(
            cfg(&[("OPENAI_API_KEY", "k")]).model.unwrap().id(),
            "openai:gpt-4.1"
        );
        assert_eq!(
            cfg(&[("ANTHROPIC_API_KEY", "k")]).model.unwrap().id(),
            "anthropic:claude-sonnet-4-5"
        );
        let local = cfg(&[("OPENAI_BASE_URL", "http://localhost:11434/v1")]);
        assert!(local.model.unwrap_err().contains("ACP_AGENT_MODEL=openai:"));
        let local = cfg(&[
            ("OPENAI_BASE_URL", "http://localhost:11434/v1"),
            ("ACP_AGENT_MODEL", "openai:qwen3"),
        ]);
        assert_eq!(local.model.unwrap().model, "qwen3");
        assert_eq!(local.openai.unwrap().api_key, None);
    }

    #[test]
    fn bad_model_names() {
        assert!(
            cfg(&[("OPENAI_API_KEY", "k"), ("ACP_AGENT_MODEL", "gpt")])
                .model
                .is_err()
        );
        assert!(
            cfg(&[("OPENAI_API_KEY", "k"), ("ACP_AGENT_MODEL", "x:y")])
                .model
                .is_err()
        );
        let e = cfg(&[("OPENAI_API_KEY", "k"), ("ACP_AGENT_MODEL", "anthropic:c")])
            .model
            .unwrap_err();
        assert!(e.contains("not configured"), "{e}");
    }

    #[test]
    fn limits() {
        let c = cfg(&[
            ("OPENAI_API_KEY", "k"),
            ("ACP_AGENT_MAX_TURN_REQUESTS", "3"),
        ]);
        assert_eq!(c.max_turn_requests, 3);
        assert_eq!(cfg(&[]).max_turn_requests, DEFAULT_MAX_TURN_REQUESTS);
    }
}
