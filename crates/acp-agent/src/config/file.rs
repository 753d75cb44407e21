//! The config file: TOML holding the settings that the environment variables
//! make, plus the list of models to offer. Each environment variable, when
//! set, overrides the matching file setting (see [`Config::load`]).
//!
//! ```toml
//! model = "openai:gpt-4.1"
//! models = ["openai:gpt-4.1", "openai:gpt-4.1-mini"]
//! max_turn_requests = 50
//!
//! [openai]
//! api_key = "sk-..."
//! ```
//!
//! [`Config::load`]: super::Config::load

use super::ModelRef;
use serde::Deserialize;
use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// Each file setting and the environment variable that overrides it.
pub const SETTINGS: [(&str, &str); 13] = [
    ("model", "ACP_AGENT_MODEL"),
    ("openai.base_url", "OPENAI_BASE_URL"),
    ("openai.api_key", "OPENAI_API_KEY"),
    ("anthropic.base_url", "ANTHROPIC_BASE_URL"),
    ("anthropic.api_key", "ANTHROPIC_API_KEY"),
    ("max_turn_requests", "ACP_AGENT_MAX_TURN_REQUESTS"),
    ("max_output_tokens", "ACP_AGENT_MAX_OUTPUT_TOKENS"),
    ("thinking_budget", "ACP_AGENT_THINKING_BUDGET"),
    ("images", "ACP_AGENT_IMAGES"),
    ("context_window", "ACP_AGENT_CONTEXT_WINDOW"),
    ("request_timeout_secs", "ACP_AGENT_REQUEST_TIMEOUT_SECS"),
    ("max_retries", "ACP_AGENT_MAX_RETRIES"),
    ("compact_at_percent", "ACP_AGENT_COMPACT_AT_PERCENT"),
];

/// A config file that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFileError {
    /// The file.
    pub path: PathBuf,
    /// Line and column (from 1) of the fault, when it is in the text.
    pub position: Option<(usize, usize)>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ConfigFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "config file {}", self.path.display())?;
        if let Some((line, column)) = self.position {
            write!(f, ", line {line}, column {column}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ConfigFileError {}

/// The file's text as written, before the values are checked.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    model: Option<Spanned<String>>,
    models: Option<Vec<Spanned<String>>>,
    openai: Option<RawProvider>,
    anthropic: Option<RawProvider>,
    max_turn_requests: Option<Spanned<u64>>,
    max_output_tokens: Option<Spanned<u64>>,
    thinking_budget: Option<Spanned<u64>>,
    images: Option<Spanned<bool>>,
    context_window: Option<Spanned<u64>>,
    request_timeout_secs: Option<Spanned<u64>>,
    max_retries: Option<Spanned<u64>>,
    compact_at_percent: Option<Spanned<u64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProvider {
    base_url: Option<Spanned<String>>,
    api_key: Option<Spanned<String>>,
}

/// One value from the file, and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    key: &'static str,
    value: String,
    line: usize,
}

/// A parsed and checked config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFile {
    path: PathBuf,
    /// Values by the name of the environment variable that overrides them.
    values: HashMap<&'static str, Entry>,
    models: Vec<ModelRef>,
}

/// Line and column (from 1) of byte `offset` in `text`.
fn position(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, column)
}

impl ConfigFile {
    /// The default location: `config.toml` in the user's config directory,
    /// e.g. `~/.config/acp-agent/config.toml`; `None` without a home
    /// directory.
    pub fn default_path() -> Option<PathBuf> {
        directories::ProjectDirs::from("", "", "acp-agent")
            .map(|d| d.config_dir().join("config.toml"))
    }

    /// Reads and checks the file at `path`. A missing file is `Ok(None)`
    /// unless it is `required` (named by the user).
    pub fn load(path: &Path, required: bool) -> Result<Option<ConfigFile>, ConfigFileError> {
        match std::fs::read_to_string(path) {
            Ok(text) => Self::parse(path, &text).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => Ok(None),
            Err(e) => Err(ConfigFileError {
                path: path.to_path_buf(),
                position: None,
                message: format!("cannot be read: {e}"),
            }),
        }
    }

    /// Parses and checks `text`, the contents of the file at `path`.
    pub fn parse(path: &Path, text: &str) -> Result<ConfigFile, ConfigFileError> {
        let fail = |span: Option<Range<usize>>, message: String| ConfigFileError {
            path: path.to_path_buf(),
            position: span.map(|s| position(text, s.start)),
            message,
        };
        let raw: Raw = toml::from_str(text).map_err(|e| fail(e.span(), e.message().into()))?;
        let mut file = ConfigFile {
            path: path.to_path_buf(),
            values: HashMap::new(),
            models: Vec::new(),
        };
        let mut put = |var: &'static str, key: &'static str, value: String, span: Range<usize>| {
            let line = position(text, span.start).0;
            file.values.insert(var, Entry { key, value, line });
        };
        let model = |name: &Spanned<String>| {
            ModelRef::parse(name.get_ref().trim())
                .map_err(|e| fail(Some(name.span()), e.to_string()))
        };
        if let Some(name) = &raw.model {
            model(name)?;
            put(
                "ACP_AGENT_MODEL",
                "model",
                name.get_ref().clone(),
                name.span(),
            );
        }
        let mut models = Vec::new();
        for name in raw.models.iter().flatten() {
            let m = model(name)?;
            if !models.contains(&m) {
                models.push(m);
            }
        }
        // Without `model`, the first model offered is the default.
        if let (None, Some(first)) = (&raw.model, raw.models.iter().flatten().next()) {
            put(
                "ACP_AGENT_MODEL",
                "models",
                first.get_ref().clone(),
                first.span(),
            );
        }
        for (provider, url_var, key_var, url_key, key_key) in [
            (
                &raw.openai,
                "OPENAI_BASE_URL",
                "OPENAI_API_KEY",
                "openai.base_url",
                "openai.api_key",
            ),
            (
                &raw.anthropic,
                "ANTHROPIC_BASE_URL",
                "ANTHROPIC_API_KEY",
                "anthropic.base_url",
                "anthropic.api_key",
            ),
        ] {
            let Some(p) = provider else { continue };
            if let Some(url) = &p.base_url {
                put(url_var, url_key, url.get_ref().clone(), url.span());
            }
            if let Some(key) = &p.api_key {
                put(key_var, key_key, key.get_ref().clone(), key.span());
            }
        }
        for (value, var, key, zero_allowed) in [
            (
                &raw.max_turn_requests,
                "ACP_AGENT_MAX_TURN_REQUESTS",
                "max_turn_requests",
                false,
            ),
            (
                &raw.max_output_tokens,
                "ACP_AGENT_MAX_OUTPUT_TOKENS",
                "max_output_tokens",
                false,
            ),
            (
                &raw.thinking_budget,
                "ACP_AGENT_THINKING_BUDGET",
                "thinking_budget",
                true,
            ),
            (
                &raw.context_window,
                "ACP_AGENT_CONTEXT_WINDOW",
                "context_window",
                false,
            ),
            (
                &raw.request_timeout_secs,
                "ACP_AGENT_REQUEST_TIMEOUT_SECS",
                "request_timeout_secs",
                false,
            ),
            (
                &raw.max_retries,
                "ACP_AGENT_MAX_RETRIES",
                "max_retries",
                true,
            ),
            (
                &raw.compact_at_percent,
                "ACP_AGENT_COMPACT_AT_PERCENT",
                "compact_at_percent",
                true,
            ),
        ] {
            let Some(n) = value else { continue };
            if *n.get_ref() == 0 && !zero_allowed {
                return Err(fail(Some(n.span()), format!("{key} must be at least 1")));
            }
            if key == "compact_at_percent" && *n.get_ref() > 100 {
                return Err(fail(
                    Some(n.span()),
                    format!("{key} is a percentage: at most 100 (0 turns compaction off)"),
                ));
            }
            put(var, key, n.get_ref().to_string(), n.span());
        }
        if let Some(images) = &raw.images {
            put(
                "ACP_AGENT_IMAGES",
                "images",
                images.get_ref().to_string(),
                images.span(),
            );
        }
        file.models = models;
        Ok(file)
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The models listed in `models`, in order.
    pub fn models(&self) -> &[ModelRef] {
        &self.models
    }

    /// Whether the file holds an API key.
    pub fn has_api_key(&self) -> bool {
        ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"]
            .iter()
            .any(|v| self.values.contains_key(v))
    }

    /// The value the file gives for what environment variable `var` sets,
    /// with a description of where it is (for messages).
    pub(super) fn get(&self, var: &str) -> Option<(String, String)> {
        self.values.get(var).map(|e| {
            (
                e.value.clone(),
                format!("`{}` in {}:{}", e.key, self.path.display(), e.line),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ConfigFile, ConfigFileError> {
        ConfigFile::parse(Path::new("/etc/acp.toml"), text)
    }

    #[test]
    fn every_setting() {
        let f = parse(
            r#"
model = "openai:gpt-4.1"
models = ["openai:gpt-4.1", "anthropic:claude-haiku-4-5", "openai:gpt-4.1"]
max_turn_requests = 7
max_output_tokens = 9000
thinking_budget = 0
images = false
context_window = 64000
request_timeout_secs = 20
max_retries = 0
compact_at_percent = 90

[openai]
base_url = "http://localhost:8080/v1"
api_key = "sk-file"

[anthropic]
base_url = "https://proxy.example/anthropic"
api_key = "ant-file"
"#,
        )
        .unwrap();
        let value = |var: &str| f.get(var).unwrap().0;
        assert_eq!(value("ACP_AGENT_MODEL"), "openai:gpt-4.1");
        assert_eq!(value("OPENAI_BASE_URL"), "http://localhost:8080/v1");
        assert_eq!(value("OPENAI_API_KEY"), "sk-file");
        assert_eq!(
            value("ANTHROPIC_BASE_URL"),
            "https://proxy.example/anthropic"
        );
        assert_eq!(value("ANTHROPIC_API_KEY"), "ant-file");
        assert_eq!(value("ACP_AGENT_MAX_TURN_REQUESTS"), "7");
        assert_eq!(value("ACP_AGENT_MAX_OUTPUT_TOKENS"), "9000");
        assert_eq!(value("ACP_AGENT_THINKING_BUDGET"), "0");
        assert_eq!(value("ACP_AGENT_IMAGES"), "false");
        assert_eq!(value("ACP_AGENT_CONTEXT_WINDOW"), "64000");
        assert_eq!(value("ACP_AGENT_REQUEST_TIMEOUT_SECS"), "20");
        assert_eq!(value("ACP_AGENT_MAX_RETRIES"), "0");
        assert_eq!(value("ACP_AGENT_COMPACT_AT_PERCENT"), "90");
        let ids: Vec<String> = f.models().iter().map(ModelRef::id).collect();
        assert_eq!(ids, ["openai:gpt-4.1", "anthropic:claude-haiku-4-5"]);
        assert!(f.has_api_key());
        for (key, var) in SETTINGS {
            let from = f.get(var).unwrap().1;
            assert!(
                from.starts_with(&format!("`{key}` in /etc/acp.toml:")),
                "{from}"
            );
        }
        assert_eq!(
            f.get("OPENAI_API_KEY").unwrap().1,
            "`openai.api_key` in /etc/acp.toml:15"
        );
    }

    #[test]
    fn empty_file_sets_nothing() {
        let f = parse("# nothing yet\n").unwrap();
        for (_, var) in SETTINGS {
            assert_eq!(f.get(var), None);
        }
        assert!(f.models().is_empty());
        assert!(!f.has_api_key());
    }

    #[test]
    fn first_model_offered_is_the_default_without_model() {
        let f = parse("models = [\"openai:a\", \"openai:b\"]\n").unwrap();
        let (value, from) = f.get("ACP_AGENT_MODEL").unwrap();
        assert_eq!(value, "openai:a");
        assert_eq!(from, "`models` in /etc/acp.toml:1");
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let cases = [
            (
                "model = \"openai:x\"\nmax_turn_requests = \"ten\"\n",
                2,
                "invalid type",
            ),
            ("model = \"openai:x\n", 1, ""),
            (
                "[openai]\nbase_url = \"u\"\napi_kye = \"k\"\n",
                3,
                "api_kye",
            ),
            ("\n\nmodle = \"openai:x\"\n", 3, "modle"),
            ("model = \"gpt-4.1\"\n", 1, "provider:model"),
            (
                "models = [\n  \"openai:a\",\n  \"mistral:b\",\n]\n",
                3,
                "mistral",
            ),
            ("context_window = 0\n", 1, "at least 1"),
            ("max_output_tokens = -5\n", 1, ""),
            ("images = \"yes\"\n", 1, "invalid type"),
        ];
        for (text, line, needle) in cases {
            let e = parse(text).unwrap_err();
            assert_eq!(e.position.map(|p| p.0), Some(line), "{text}: {e}");
            assert!(e.message.contains(needle), "{text}: {e}");
            let shown = e.to_string();
            assert!(
                shown.starts_with(&format!("config file /etc/acp.toml, line {line}, column ")),
                "{shown}"
            );
        }
    }

    #[test]
    fn missing_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        assert_eq!(ConfigFile::load(&path, false).unwrap(), None);
        let e = ConfigFile::load(&path, true).unwrap_err();
        assert!(e.to_string().contains("config.toml"), "{e}");
        assert!(e.message.contains("cannot be read"), "{e}");
        std::fs::write(&path, "images = true\n").unwrap();
        let f = ConfigFile::load(&path, true).unwrap().unwrap();
        assert_eq!(f.get("ACP_AGENT_IMAGES").unwrap().0, "true");
        assert_eq!(f.path(), path);
    }

    #[test]
    fn positions() {
        assert_eq!(position("ab\ncd", 0), (1, 1));
        assert_eq!(position("ab\ncd", 4), (2, 2));
        assert_eq!(position("é\nx", 4), (2, 2));
        assert_eq!(position("ab", 99), (1, 3));
    }
}
