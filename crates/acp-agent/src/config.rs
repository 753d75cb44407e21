//! Configuration from the environment and the config file (see [`file`]):
//! which model providers are usable, which model a new session starts with
//! and which models are offered.

mod file;

pub use file::{ConfigFile, ConfigFileError, SETTINGS};

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

/// Why a `provider:model` name does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelRefError {
    /// No `:` separates a provider from a model.
    #[error("model {0:?} is not of the form provider:model (e.g. openai:gpt-4.1)")]
    NotProviderModel(String),
    /// The provider is neither `openai` nor `anthropic`.
    #[error("unknown provider {provider:?} in {name:?}: use openai or anthropic")]
    UnknownProvider {
        /// The text before the `:`.
        provider: String,
        /// The whole name.
        name: String,
    },
    /// Nothing follows the `:`.
    #[error("model {0:?} names no model after the provider")]
    NoModel(String),
}

/// Why no model is usable for new sessions ([`Config::model`]); each text
/// ends with how to set one up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoModel {
    /// The configured model name does not parse.
    #[error("{from}: {error}")]
    Invalid {
        /// Where it was set (a variable, or a key of the config file).
        from: String,
        /// What is wrong with it.
        error: ModelRefError,
    },
    /// The configured model's provider has no key or URL.
    #[error(
        "the model {name} (set by {from}) needs provider {}, which is not configured. {SETUP_HELP}",
        provider.prefix()
    )]
    ProviderMissing {
        /// The model, as configured.
        name: String,
        /// Where it was set.
        from: String,
        /// Its provider.
        provider: ProviderKind,
    },
    /// An OpenAI-compatible base URL without a key (a local server) and no
    /// model named: its model names cannot be guessed.
    #[error(
        "a base URL is set by {from} without a model: set ACP_AGENT_MODEL=openai:<model name on your server> \
         (or `model` in the config file). {SETUP_HELP}"
    )]
    Unnamed {
        /// Where the base URL was set.
        from: String,
    },
    /// No provider is configured at all.
    #[error("{SETUP_HELP}")]
    NoProvider,
}

impl ModelRef {
    /// Parses `provider:model` (e.g. `openai:gpt-4.1`).
    pub fn parse(s: &str) -> Result<Self, ModelRefError> {
        let (prefix, model) = s
            .split_once(':')
            .ok_or_else(|| ModelRefError::NotProviderModel(s.to_string()))?;
        let provider =
            ProviderKind::parse(prefix).ok_or_else(|| ModelRefError::UnknownProvider {
                provider: prefix.to_string(),
                name: s.to_string(),
            })?;
        if model.is_empty() {
            return Err(ModelRefError::NoModel(s.to_string()));
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
The same can be set in the config file (`acp-agent --help` tells where it is). \
Restart the agent after changing the environment or the file.";

/// The agent's configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// The OpenAI-compatible provider, if configured.
    pub openai: Option<ProviderConfig>,
    /// The Anthropic provider, if configured.
    pub anthropic: Option<ProviderConfig>,
    /// The model new sessions use, or why there is none.
    pub model: Result<ModelRef, NoModel>,
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
    /// Tokens Anthropic models may think for before answering (extended
    /// thinking), when set by `ACP_AGENT_THINKING_BUDGET`.
    pub thinking_budget: Option<u64>,
    /// The models to offer, from the config file's `models` (empty: the
    /// well-known models of the configured hosted providers).
    pub models: Vec<ModelRef>,
    /// Most retries of a model call that failed in a transient way (see
    /// [`crate::llm::retry`]).
    pub max_retries: u32,
    /// The share of `context_window`, in percent, at which older turns are
    /// summarised automatically (0: never).
    pub compact_at_percent: u64,
}

/// Default number of retries of a model call.
pub const DEFAULT_MAX_RETRIES: u32 = 4;
/// Default share of the context window at which older turns are compacted.
pub const DEFAULT_COMPACT_AT_PERCENT: u64 = 80;

fn non_empty(v: Option<String>) -> Option<String> {
    v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

impl Config {
    /// Reads the configuration from the process environment alone.
    pub fn from_env() -> Self {
        Self::load(None)
    }

    /// Reads the configuration from the process environment and `file`: each
    /// environment variable that is set (and not empty) overrides the
    /// matching file setting.
    pub fn load(file: Option<&ConfigFile>) -> Self {
        Self::from_sources(|k| std::env::var(k).ok(), file)
    }

    /// Reads the configuration through `get` (the environment, or a map in
    /// tests).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Self {
        Self::from_sources(get, None)
    }

    /// Reads the configuration through `env` (the environment, or a map in
    /// tests), falling back to `file` for what `env` does not set.
    pub fn from_sources(env: impl Fn(&str) -> Option<String>, file: Option<&ConfigFile>) -> Self {
        // A setting's value and where it comes from, for messages.
        let setting = |k: &str| -> Option<(String, String)> {
            match non_empty(env(k)) {
                Some(v) => Some((v, k.to_string())),
                None => file
                    .and_then(|f| f.get(k))
                    .and_then(|(v, from)| Some((non_empty(Some(v))?, from))),
            }
        };
        let get = |k: &str| setting(k).map(|(v, _)| v);
        let openai_key = get("OPENAI_API_KEY");
        let openai_url = setting("OPENAI_BASE_URL");
        let openai = match (&openai_key, &openai_url) {
            (None, None) => None,
            _ => Some(ProviderConfig {
                base_url: openai_url
                    .as_ref()
                    .map(|(url, _)| url.clone())
                    .unwrap_or_else(|| "https://api.openai.com/v1".into()),
                api_key: openai_key.clone(),
            }),
        };
        let anthropic_key = get("ANTHROPIC_API_KEY");
        let anthropic = anthropic_key.map(|key| ProviderConfig {
            base_url: get("ANTHROPIC_BASE_URL")
                .unwrap_or_else(|| "https://api.anthropic.com".into()),
            api_key: Some(key),
        });
        let model = match setting("ACP_AGENT_MODEL") {
            Some((name, from)) => ModelRef::parse(&name)
                .map_err(|error| NoModel::Invalid {
                    from: from.clone(),
                    error,
                })
                .and_then(|m| {
                    let configured = match m.provider {
                        ProviderKind::OpenAi => openai.is_some(),
                        ProviderKind::Anthropic => anthropic.is_some(),
                    };
                    if configured {
                        Ok(m)
                    } else {
                        Err(NoModel::ProviderMissing {
                            name: name.clone(),
                            from: from.clone(),
                            provider: m.provider,
                        })
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
                (Some(_), None) => {
                    let from = openai_url.as_ref().map_or("OPENAI_BASE_URL", |(_, f)| f);
                    Err(NoModel::Unnamed {
                        from: from.to_string(),
                    })
                }
                (None, None) => Err(NoModel::NoProvider),
            },
        };
        let number = |k: &str, default: u64| {
            get(k)
                .and_then(|v| v.parse::<u64>().ok())
                .filter(|n| *n > 0)
                .unwrap_or(default)
        };
        // Zero is a value here (retries off, compaction off).
        let count = |k: &str, default: u64, max: u64| {
            get(k)
                .and_then(|v| v.parse::<u64>().ok())
                .filter(|n| *n <= max)
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
            images: get("ACP_AGENT_IMAGES").map(|v| matches!(v.as_str(), "1" | "true" | "yes")),
            max_output_tokens: number("ACP_AGENT_MAX_OUTPUT_TOKENS", 16_000),
            request_timeout_secs: number("ACP_AGENT_REQUEST_TIMEOUT_SECS", 300),
            thinking_budget: Some(number("ACP_AGENT_THINKING_BUDGET", 0)).filter(|b| *b > 0),
            models: file.map(|f| f.models().to_vec()).unwrap_or_default(),
            max_retries: count("ACP_AGENT_MAX_RETRIES", u64::from(DEFAULT_MAX_RETRIES), 100) as u32,
            compact_at_percent: count(
                "ACP_AGENT_COMPACT_AT_PERCENT",
                DEFAULT_COMPACT_AT_PERCENT,
                100,
            ),
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

    /// Models offered in the model selector: the default first, then the
    /// config file's `models` whose provider is configured or, when the file
    /// lists none, well-known models of the configured hosted providers.
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
        if !self.models.is_empty() {
            for m in &self.models {
                if self.provider(m.provider).is_some() {
                    push(m.provider, &m.model);
                }
            }
            return out;
        }
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
        let err = c.model.unwrap_err().to_string();
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
        assert!(
            local
                .model
                .unwrap_err()
                .to_string()
                .contains("ACP_AGENT_MODEL=openai:")
        );
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
            .unwrap_err()
            .to_string();
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
        assert_eq!(c.thinking_budget, None);
        let c = cfg(&[("ACP_AGENT_THINKING_BUDGET", "8000")]);
        assert_eq!(c.thinking_budget, Some(8000));
        assert_eq!(
            cfg(&[("ACP_AGENT_THINKING_BUDGET", "0")]).thinking_budget,
            None
        );
    }

    fn with_file(vars: &[(&str, &str)], text: &str) -> Config {
        let file = ConfigFile::parse(std::path::Path::new("/home/u/acp.toml"), text).unwrap();
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_sources(|k| map.get(k).cloned(), Some(&file))
    }

    const LOCAL: &str = r#"
model = "openai:qwen3"
max_turn_requests = 9
context_window = 32000
images = true
thinking_budget = 2048

[openai]
base_url = "http://localhost:11434/v1"
"#;

    #[test]
    fn the_file_alone() {
        let c = with_file(&[], LOCAL);
        assert_eq!(c.model.as_ref().unwrap().id(), "openai:qwen3");
        let openai = c.openai.as_ref().unwrap();
        assert_eq!(openai.base_url, "http://localhost:11434/v1");
        assert_eq!(openai.api_key, None);
        assert_eq!(c.anthropic, None);
        assert_eq!(c.max_turn_requests, 9);
        assert_eq!(c.context_window, 32000);
        assert_eq!(c.images, Some(true));
        assert_eq!(c.thinking_budget, Some(2048));
        assert_eq!(c.max_output_tokens, 16_000);
        assert_eq!(c.request_timeout_secs, 300);
        assert_eq!(c.max_retries, DEFAULT_MAX_RETRIES);
        assert_eq!(c.compact_at_percent, DEFAULT_COMPACT_AT_PERCENT);
    }

    #[test]
    fn retries_and_compaction_take_zero() {
        let c = cfg(&[
            ("ACP_AGENT_MAX_RETRIES", "0"),
            ("ACP_AGENT_COMPACT_AT_PERCENT", "0"),
        ]);
        assert_eq!((c.max_retries, c.compact_at_percent), (0, 0));
        let c = with_file(&[], "max_retries = 2\ncompact_at_percent = 50\n");
        assert_eq!((c.max_retries, c.compact_at_percent), (2, 50));
        // Out of range in the environment: the default.
        let c = cfg(&[("ACP_AGENT_COMPACT_AT_PERCENT", "150")]);
        assert_eq!(c.compact_at_percent, DEFAULT_COMPACT_AT_PERCENT);
        let e = ConfigFile::parse(
            std::path::Path::new("/c.toml"),
            "compact_at_percent = 101\n",
        )
        .unwrap_err();
        assert!(e.message.contains("at most 100"), "{e}");
    }

    #[test]
    fn the_environment_overrides_the_file() {
        let c = with_file(
            &[
                ("ACP_AGENT_MODEL", "openai:llama3"),
                ("OPENAI_BASE_URL", "http://gpu:8000/v1"),
                ("ACP_AGENT_MAX_TURN_REQUESTS", "4"),
                ("ACP_AGENT_IMAGES", "0"),
                ("ACP_AGENT_THINKING_BUDGET", "0"),
                // Empty counts as unset: the file's value stays.
                ("ACP_AGENT_CONTEXT_WINDOW", ""),
            ],
            LOCAL,
        );
        assert_eq!(c.model.unwrap().id(), "openai:llama3");
        assert_eq!(c.openai.unwrap().base_url, "http://gpu:8000/v1");
        assert_eq!(c.max_turn_requests, 4);
        assert_eq!(c.images, Some(false));
        assert_eq!(c.thinking_budget, None);
        assert_eq!(c.context_window, 32000);
    }

    #[test]
    fn providers_from_both() {
        let c = with_file(
            &[("OPENAI_API_KEY", "sk-env")],
            "[anthropic]\napi_key = \"ant-file\"\nbase_url = \"http://proxy/anthropic\"\n",
        );
        assert_eq!(
            c.openai.as_ref().unwrap().api_key.as_deref(),
            Some("sk-env")
        );
        let anthropic = c.anthropic.as_ref().unwrap();
        assert_eq!(anthropic.api_key.as_deref(), Some("ant-file"));
        assert_eq!(anthropic.base_url, "http://proxy/anthropic");
        // Both configured, no model named: OpenAI's default, as with the
        // environment alone.
        assert_eq!(c.model.unwrap().id(), "openai:gpt-4.1");
        // An environment variable overrides a key in the file.
        let c = with_file(
            &[("ANTHROPIC_API_KEY", "ant-env")],
            "[anthropic]\napi_key = \"ant-file\"\n",
        );
        assert_eq!(c.anthropic.unwrap().api_key.as_deref(), Some("ant-env"));
    }

    #[test]
    fn models_offered_from_the_file() {
        let text = r#"
models = ["openai:gpt-4.1-mini", "anthropic:claude-haiku-4-5", "openai:gpt-4.1"]
[openai]
api_key = "sk"
"#;
        let c = with_file(&[], text);
        // Without `model`, the first listed is the default.
        assert_eq!(c.model.as_ref().unwrap().id(), "openai:gpt-4.1-mini");
        let ids: Vec<String> = c.model_choices().iter().map(ModelRef::id).collect();
        // Anthropic is not configured: its model is not offered.
        assert_eq!(ids, ["openai:gpt-4.1-mini", "openai:gpt-4.1"]);
        let c = with_file(&[("ACP_AGENT_MODEL", "openai:o4-mini")], text);
        let ids: Vec<String> = c.model_choices().iter().map(ModelRef::id).collect();
        assert_eq!(
            ids,
            ["openai:o4-mini", "openai:gpt-4.1-mini", "openai:gpt-4.1"]
        );
        // Without a list, the well-known models of OpenAI's own API.
        let ids: Vec<String> = cfg(&[("OPENAI_API_KEY", "k")])
            .model_choices()
            .iter()
            .map(ModelRef::id)
            .collect();
        assert_eq!(
            ids,
            ["openai:gpt-4.1", "openai:gpt-4.1-mini", "openai:o4-mini"]
        );
    }

    #[test]
    fn messages_say_where_a_setting_comes_from() {
        let e = with_file(
            &[("OPENAI_API_KEY", "k")],
            "\nmodel = \"anthropic:claude-opus-4-1\"\n",
        )
        .model
        .unwrap_err()
        .to_string();
        assert!(e.contains("`model` in /home/u/acp.toml:2"), "{e}");
        assert!(e.contains("not configured"), "{e}");
        let e = with_file(&[], "[openai]\nbase_url = \"http://localhost:1/v1\"\n")
            .model
            .unwrap_err()
            .to_string();
        assert!(e.contains("`openai.base_url` in /home/u/acp.toml:2"), "{e}");
        assert!(e.contains("ACP_AGENT_MODEL=openai:"), "{e}");
        let e = cfg(&[("OPENAI_API_KEY", "k"), ("ACP_AGENT_MODEL", "gpt")])
            .model
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("ACP_AGENT_MODEL: "), "{e}");
    }
}
