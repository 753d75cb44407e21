//! `acp record --redact`: masks secrets in what is written to the record
//! file (never in what passes through the proxy).
//!
//! What is masked, with [`MASK`]:
//! - every string under a field whose name contains `key`, `token`,
//!   `secret`, `password`, `passwd`, `credential`, `authorization` or
//!   `cookie` (any case), at any depth: `"apiKey"`, `"x-auth-token"`, …;
//! - the values of environment variables and HTTP headers handed to MCP
//!   servers (`env` and `headers`: `[{"name", "value"}]` lists or objects);
//! - every string in the `_meta` of an `authenticate` request and of its
//!   response, and in the `_meta` of the agent's `authMethods`;
//! - anywhere else, in any line (standard error included) and in the
//!   agent's command line, every value masked so far and the value of every
//!   environment variable of the proxy whose name looks like a secret
//!   (`*KEY*`, `*TOKEN*`, `*SECRET*`, `*PASSWORD*`, …), so a key echoed
//!   back by the agent is masked too. Only values of at least
//!   [`MIN_ECHO_LEN`] characters are looked for this way, so a short
//!   value does not mask every word that happens to match it.
//!
//! A JSON line that was changed is written back with serde_json (same key
//! order); any other line is changed only where a known secret appears.

use crate::recording::Source;
use serde_json::Value;
use std::collections::HashSet;

/// What a masked value becomes.
pub const MASK: &str = "[REDACTED]";

/// The shortest value looked for outside the field that held it.
pub const MIN_ECHO_LEN: usize = 8;

const SECRET_WORDS: [&str; 8] = [
    "key",
    "token",
    "secret",
    "password",
    "passwd",
    "credential",
    "authorization",
    "cookie",
];

/// Whether a field or variable called `name` holds a secret.
pub fn secret_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    SECRET_WORDS.iter().any(|word| lower.contains(word))
}

/// The redaction state of one recording: the secrets seen so far and the
/// `authenticate` requests waiting for their answer.
#[derive(Debug, Default)]
pub struct Redactor {
    /// Values to mask wherever they appear, longest first, each with how
    /// it appears inside a JSON string.
    secrets: Vec<(String, String)>,
    /// `(side that asked, id as JSON)` of pending `authenticate` requests.
    auth_requests: HashSet<(Source, String)>,
}

#[derive(Clone, Copy)]
struct Scope {
    /// Mask every string below.
    all: bool,
    /// Inside an authentication message: `_meta` is masked whole.
    auth: bool,
}

impl Redactor {
    /// A redactor that also looks for the values of the secret-looking
    /// variables of `env`.
    pub fn new(env: impl IntoIterator<Item = (String, String)>) -> Redactor {
        let mut redactor = Redactor::default();
        for (name, value) in env {
            if secret_name(&name) {
                redactor.learn(&value);
            }
        }
        redactor
    }

    fn learn(&mut self, value: &str) {
        if value.chars().count() < MIN_ECHO_LEN || value == MASK {
            return;
        }
        if !self.secrets.iter().any(|(s, _)| s == value) {
            let quoted = serde_json::to_string(value).unwrap_or_default();
            // Without its quotes: how the value appears inside a JSON string.
            let escaped = quoted[1..quoted.len() - 1].to_owned();
            self.secrets.push((value.to_owned(), escaped));
            self.secrets
                .sort_by_key(|(s, _)| std::cmp::Reverse(s.len()));
        }
    }

    /// The agent's command line with secrets masked: known values, and the
    /// value of an option named like a secret (`--api-key=V`, `--token V`).
    pub fn args(&mut self, args: &[String]) -> Vec<String> {
        let mut out = Vec::with_capacity(args.len());
        let mut mask_next = false;
        for arg in args {
            if mask_next {
                self.learn(arg);
                out.push(MASK.to_owned());
                mask_next = false;
                continue;
            }
            if let Some(option) = arg.strip_prefix('-') {
                match option.split_once('=') {
                    Some((name, value)) if secret_name(name) => {
                        self.learn(value);
                        out.push(format!("-{name}={MASK}"));
                        continue;
                    }
                    None if secret_name(option) => mask_next = true,
                    _ => {}
                }
            }
            out.push(
                self.mask_known(arg.as_bytes())
                    .map_or_else(|| arg.clone(), |b| String::from_utf8_lossy(&b).into_owned()),
            );
        }
        out
    }

    /// The line as it should be recorded, or `None` when nothing in it is
    /// secret.
    pub fn line(&mut self, from: Source, bytes: &[u8]) -> Option<Vec<u8>> {
        let mut rewritten = None;
        if from != Source::Stderr
            && self.may_hold_secrets(bytes)
            && let Ok(mut value) = serde_json::from_slice::<Value>(bytes)
        {
            let auth = self.is_auth(from, &value);
            let scope = Scope { all: false, auth };
            if self.walk(&mut value, scope) {
                rewritten = Some(value.to_string().into_bytes());
            }
        }
        let current = rewritten.as_deref().unwrap_or(bytes);
        match self.mask_known(current) {
            Some(masked) => Some(masked),
            None => rewritten,
        }
    }

    /// Whether the line may hold a field this redactor masks: parsing
    /// every line as JSON would cost far more than this look.
    fn may_hold_secrets(&self, bytes: &[u8]) -> bool {
        if !self.auth_requests.is_empty() {
            return true;
        }
        static FINDERS: std::sync::LazyLock<Vec<memchr::memmem::Finder<'static>>> =
            std::sync::LazyLock::new(|| {
                SECRET_WORDS
                    .iter()
                    .chain(&[
                        "\"env\"",
                        "\"headers\"",
                        "\"_meta\"",
                        "authenticate",
                        "authmethods",
                    ])
                    .map(|word| memchr::memmem::Finder::new(word.as_bytes()))
                    .collect()
            });
        let lower = bytes.to_ascii_lowercase();
        FINDERS.iter().any(|finder| finder.find(&lower).is_some())
    }

    /// Whether `value` is an `authenticate` request or the answer to one.
    fn is_auth(&mut self, from: Source, value: &Value) -> bool {
        let Some(id) = value.get("id").filter(|id| !id.is_null()) else {
            return false;
        };
        match value.get("method").and_then(Value::as_str) {
            Some("authenticate") => {
                self.auth_requests.insert((from, id.to_string()));
                true
            }
            Some(_) => false,
            None => {
                let asker = match from {
                    Source::Client => Source::Agent,
                    _ => Source::Client,
                };
                self.auth_requests.remove(&(asker, id.to_string()))
            }
        }
    }

    /// Masks what `scope` and the field names say; true when it changed.
    fn walk(&mut self, value: &mut Value, scope: Scope) -> bool {
        match value {
            Value::String(text) if scope.all => {
                if text == MASK {
                    return false;
                }
                self.learn(text);
                *text = MASK.to_owned();
                true
            }
            Value::Array(items) => {
                let mut changed = false;
                for item in items {
                    changed |= self.walk(item, scope);
                }
                changed
            }
            Value::Object(map) => {
                let mut changed = false;
                for (key, child) in map.iter_mut() {
                    let auth = scope.auth || key == "authMethods";
                    let all = scope.all || secret_name(key) || (key == "_meta" && auth);
                    if (key == "env" || key == "headers") && !all {
                        changed |= self.mask_variables(child);
                        continue;
                    }
                    changed |= self.walk(child, Scope { all, auth });
                }
                changed
            }
            _ => false,
        }
    }

    /// Masks the values of an `env` or `headers` field: a list of
    /// `{"name", "value"}` objects, or an object of values.
    fn mask_variables(&mut self, value: &mut Value) -> bool {
        let all = Scope {
            all: true,
            auth: false,
        };
        match value {
            Value::Array(items) => {
                let mut changed = false;
                for item in items {
                    match item.as_object_mut() {
                        Some(entry) if entry.contains_key("value") => {
                            for (key, field) in entry.iter_mut() {
                                if key != "name" {
                                    changed |= self.walk(field, all);
                                }
                            }
                        }
                        _ => changed |= self.walk(item, all),
                    }
                }
                changed
            }
            other => self.walk(other, all),
        }
    }

    /// `bytes` with every known secret masked, or `None` when none occurs.
    fn mask_known(&self, bytes: &[u8]) -> Option<Vec<u8>> {
        let mut current: Option<Vec<u8>> = None;
        for (secret, escaped) in &self.secrets {
            for needle in [secret.as_str(), escaped.as_str()] {
                let haystack = current.as_deref().unwrap_or(bytes);
                if memchr::memmem::find(haystack, needle.as_bytes()).is_some() {
                    current = Some(replace_all(haystack, needle.as_bytes(), MASK.as_bytes()));
                }
            }
        }
        current
    }
}

fn replace_all(haystack: &[u8], needle: &[u8], with: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(haystack.len());
    let mut rest = haystack;
    while let Some(at) = memchr::memmem::find(rest, needle) {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(with);
        rest = &rest[at + needle.len()..];
    }
    out.extend_from_slice(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redact(r: &mut Redactor, from: Source, line: &str) -> String {
        match r.line(from, line.as_bytes()) {
            Some(bytes) => String::from_utf8(bytes).unwrap(),
            None => line.to_owned(),
        }
    }

    #[test]
    fn fields_named_like_secrets_are_masked_at_any_depth() {
        let mut r = Redactor::default();
        let line = r#"{"jsonrpc":"2.0","method":"x","params":{"apiKey":"sk-1","deep":{"AUTH_TOKEN":["a",{"b":"c"}],"tokens":12},"name":"kept"}}"#;
        assert_eq!(
            redact(&mut r, Source::Client, line),
            r#"{"jsonrpc":"2.0","method":"x","params":{"apiKey":"[REDACTED]","deep":{"AUTH_TOKEN":["[REDACTED]",{"b":"[REDACTED]"}],"tokens":12},"name":"kept"}}"#
        );
        // Unchanged lines are recorded as they were, byte for byte.
        let plain = r#"{"jsonrpc":"2.0", "id":1,"result":{}}"#;
        assert_eq!(r.line(Source::Agent, plain.as_bytes()), None);
    }

    #[test]
    fn mcp_env_values_are_masked_and_then_masked_when_echoed() {
        let mut r = Redactor::default();
        let new = r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/w","mcpServers":[{"name":"db","command":"db-mcp","args":[],"env":[{"name":"DB_URL","value":"postgres://u:hunter2hunter2@h/db"}],"headers":[]}]}}"#;
        let out = redact(&mut r, Source::Client, new);
        assert!(
            out.contains(r#"{"name":"DB_URL","value":"[REDACTED]"}"#),
            "{out}"
        );
        assert!(out.contains(r#""name":"db""#), "{out}");
        let echo = "connecting to postgres://u:hunter2hunter2@h/db";
        assert_eq!(
            redact(&mut r, Source::Stderr, echo),
            "connecting to [REDACTED]"
        );
    }

    #[test]
    fn authenticate_meta_is_masked_in_the_request_and_its_answer() {
        let mut r = Redactor::default();
        let request = r#"{"jsonrpc":"2.0","id":7,"method":"authenticate","params":{"methodId":"login","_meta":{"session":"abcdefghij"}}}"#;
        assert_eq!(
            redact(&mut r, Source::Client, request),
            r#"{"jsonrpc":"2.0","id":7,"method":"authenticate","params":{"methodId":"login","_meta":{"session":"[REDACTED]"}}}"#
        );
        let answer =
            r#"{"jsonrpc":"2.0","id":7,"result":{"_meta":{"user":"someone@example.test"}}}"#;
        assert_eq!(
            redact(&mut r, Source::Agent, answer),
            r#"{"jsonrpc":"2.0","id":7,"result":{"_meta":{"user":"[REDACTED]"}}}"#
        );
        // Another answer with the same id is not an authentication answer.
        let later = r#"{"jsonrpc":"2.0","id":7,"result":{"_meta":{"user":"x"}}}"#;
        assert_eq!(redact(&mut r, Source::Agent, later), later);
        // Nor is an ordinary request's _meta.
        let other = r#"{"jsonrpc":"2.0","id":8,"method":"session/prompt","params":{"_meta":{"trace":"t1"}}}"#;
        assert_eq!(redact(&mut r, Source::Client, other), other);
    }

    #[test]
    fn environment_secrets_are_masked_anywhere_even_when_short_ones_are_not() {
        let env = [
            (
                "ANTHROPIC_API_KEY".to_owned(),
                "sk-ant-0123456789".to_owned(),
            ),
            ("GITHUB_TOKEN".to_owned(), "short".to_owned()),
            ("HOME".to_owned(), "/home/someone".to_owned()),
        ];
        let mut r = Redactor::new(env);
        let update = r#"{"jsonrpc":"2.0","method":"session/update","params":{"text":"key is sk-ant-0123456789, home /home/someone, short"}}"#;
        assert_eq!(
            redact(&mut r, Source::Agent, update),
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"text":"key is [REDACTED], home /home/someone, short"}}"#
        );
        assert_eq!(
            r.args(&[
                "agent".into(),
                "--api-key=abc".into(),
                "--token".into(),
                "t0ps3cretvalue".into(),
                "--model".into(),
                "sk-ant-0123456789".into(),
            ]),
            [
                "agent",
                "--api-key=[REDACTED]",
                "--token",
                "[REDACTED]",
                "--model",
                "[REDACTED]"
            ]
        );
        // What an option revealed is masked later on, too.
        assert_eq!(
            redact(&mut r, Source::Stderr, "using t0ps3cretvalue"),
            "using [REDACTED]"
        );
    }

    #[test]
    fn escaped_secrets_are_found_in_json_text() {
        let mut r = Redactor::default();
        r.learn("pa\"ss/word12");
        let line = r#"{"m":"pa\"ss/word12"}"#;
        assert_eq!(redact(&mut r, Source::Agent, line), r#"{"m":"[REDACTED]"}"#);
    }
}
