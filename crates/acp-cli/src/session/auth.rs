//! Logging in: what `acp` tells agents it can do, what it makes of the
//! methods an agent offers, the advice it gives when an agent wants a login,
//! and running a terminal login.
//!
//! `acp` always advertises terminal logins, both as the protocol has it
//! (`clientCapabilities.auth.terminal`) and as several agents still look for
//! it (`clientCapabilities._meta["terminal-auth"]`): even without a terminal
//! it can tell the user the exact command to run.
//!
//! Agents describe their logins in several shapes, and [`Login::parse`]
//! reads them all into one:
//!
//! - `type: "terminal"` with `args` and `env`: the agent's own command with
//!   those arguments, run in the user's terminal (exit status 0 means logged
//!   in).
//! - an agent method (no `type`) with the whole command line in
//!   `_meta["terminal-auth"]` (`command`, `args`), or whose `_meta` says
//!   `type: "terminal"` with `args`: the same terminal login, in older
//!   shapes.
//! - `type: "env_var"` with `vars`: variables to set (then `authenticate`).
//! - an agent method whose description names a variable (`` `OPENAI_API_KEY` ``)
//!   or whose `_meta["api-key"]` names a provider: the variable to set.
//! - any other agent method: `authenticate` (`--auth ID`).
//!
//! [`advice`] turns an authentication error and those methods into one
//! message that says what to do next, and never suggests what cannot work:
//! no `--auth` for a method whose variable is not set yet, and nothing of its
//! own when the agent's message already says how.

use crate::config::shell_quote;
use acp::AgentCommand;
use acp::schema::*;
use serde_json::Value;
use std::ffi::OsString;
use std::path::Path;

/// Adds terminal login support to `caps`, in both the protocol's and the
/// `_meta` convention's form.
pub fn advertise(caps: ClientCapabilities) -> ClientCapabilities {
    let mut meta = caps.meta.clone().unwrap_or_default();
    meta.insert("terminal-auth".to_owned(), Value::Bool(true));
    caps.auth(AuthCapabilities::new().terminal(true)).meta(meta)
}

/// A program to run in the user's terminal to log in.
#[derive(Debug, Clone, PartialEq)]
pub struct TerminalCommand {
    /// The program.
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Variables set on top of acp's environment (the agent's configured
    /// ones, then the method's).
    pub env: Vec<(OsString, OsString)>,
}

impl TerminalCommand {
    /// The command as a shell would be given it (quoted where needed),
    /// with the method's own variables in front.
    pub fn display(&self, extra_env: &[(String, String)]) -> String {
        let mut words: Vec<String> = extra_env
            .iter()
            .map(|(k, v)| format!("{k}={}", shell_quote(v)))
            .collect();
        words.push(shell_quote(&self.program.to_string_lossy()));
        words.extend(self.args.iter().map(|a| shell_quote(&a.to_string_lossy())));
        words.join(" ")
    }

    /// Runs the command with the terminal as its standard input and
    /// output, in `cwd`, and waits for it. Blocking.
    pub fn run(&self, cwd: &Path) -> std::io::Result<std::process::ExitStatus> {
        std::process::Command::new(&self.program)
            .args(&self.args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .current_dir(cwd)
            .status()
    }
}

/// What kind of method the agent offers.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// The agent logs in itself when asked with `authenticate`.
    Agent,
    /// A login in the terminal; never passed to `authenticate`.
    Terminal,
    /// Variables to set before `authenticate`.
    EnvVar,
    /// A kind acp does not know (its `type`).
    Unknown(String),
}

/// One of the agent's login methods, read from any of its shapes.
#[derive(Debug, Clone, PartialEq)]
pub struct Login {
    /// The method's id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: Option<String>,
    /// Its kind.
    pub kind: Kind,
    /// The variables it needs (from `vars`, the description, `_meta`),
    /// optional ones marked.
    pub vars: Vec<(String, bool)>,
    /// The variables the method sets for its terminal login (`env`).
    pub env: Vec<(String, String)>,
    /// Where to get the credentials, if the agent says.
    pub link: Option<String>,
    /// The terminal login, for a terminal method or an agent method that
    /// names one in `_meta`.
    pub terminal: Option<TerminalCommand>,
}

impl Login {
    /// Reads the agent's methods. `agent` is how acp starts the agent: a
    /// terminal login runs its program with its arguments and the method's.
    pub fn parse(methods: &[AuthMethod], agent: &AgentCommand) -> Vec<Login> {
        methods
            .iter()
            .filter_map(|m| Login::from_value(&serde_json::to_value(m).ok()?, agent))
            .collect()
    }

    /// Reads one method from its JSON (also the methods an error's `data`
    /// lists).
    pub fn from_value(value: &Value, agent: &AgentCommand) -> Option<Login> {
        let object = value.as_object()?;
        let text = |key: &str| object.get(key).and_then(Value::as_str).map(str::to_owned);
        let id = text("id")?;
        let name = text("name").unwrap_or_else(|| id.clone());
        let description = text("description").filter(|d| !d.trim().is_empty());
        let meta = object.get("_meta").and_then(Value::as_object);
        let kind = match object.get("type").and_then(Value::as_str) {
            None | Some("agent") => Kind::Agent,
            Some("terminal") => Kind::Terminal,
            Some("env_var") => Kind::EnvVar,
            Some(other) => Kind::Unknown(other.to_owned()),
        };
        let mut login = Login {
            id,
            name,
            description,
            kind,
            vars: Vec::new(),
            env: string_pairs(object.get("env")),
            link: text("link"),
            terminal: None,
        };
        if let Some(Value::Array(vars)) = object.get("vars") {
            for var in vars {
                if let Some(name) = var.get("name").and_then(Value::as_str) {
                    let optional = var.get("optional").and_then(Value::as_bool) == Some(true);
                    login.add_var(name, optional);
                }
            }
        }
        for name in env_names(login.description.as_deref().unwrap_or("")) {
            login.add_var(&name, false);
        }
        if let Some(provider) = meta
            .and_then(|m| m.get("api-key"))
            .and_then(|k| k.get("provider"))
            .and_then(Value::as_str)
            && let Some(var) = provider_variable(provider)
        {
            login.add_var(var, false);
        }
        let own_args = || string_list(object.get("args"));
        login.terminal = match &login.kind {
            // As the protocol has it: the agent's own command line, plus
            // the method's arguments (a `_meta` command is for clients that
            // cannot do that).
            Kind::Terminal => Some(agent_command(agent, &own_args(), &login.env)),
            // The older shape: an agent method with a terminal login in `_meta`.
            Kind::Agent => meta_command(meta, &login.env).or_else(|| {
                let hint = meta?;
                (hint.get("type").and_then(Value::as_str) == Some("terminal")).then(|| {
                    let args = string_list(hint.get("args"));
                    let env = string_pairs(hint.get("env"));
                    agent_command(agent, &args, &env)
                })
            }),
            _ => None,
        };
        Some(login)
    }

    fn add_var(&mut self, name: &str, optional: bool) {
        if !self.vars.iter().any(|(n, _)| n == name) {
            self.vars.push((name.to_owned(), optional));
        }
    }

    /// The required variables that `is_set` says are missing.
    pub fn missing_vars(&self, is_set: &dyn Fn(&str) -> bool) -> Vec<&str> {
        self.vars
            .iter()
            .filter(|(name, optional)| !optional && !is_set(name))
            .map(|(name, _)| name.as_str())
            .collect()
    }

    /// Whether `authenticate` can be called with this method.
    pub fn authenticates(&self) -> bool {
        matches!(self.kind, Kind::Agent | Kind::EnvVar)
    }
}

/// `_meta["terminal-auth"]`: the whole command line, as the agent gives it.
fn meta_command(
    meta: Option<&serde_json::Map<String, Value>>,
    env: &[(String, String)],
) -> Option<TerminalCommand> {
    let hint = meta?.get("terminal-auth")?;
    let program = hint.get("command")?.as_str()?;
    let mut env: Vec<(OsString, OsString)> =
        env.iter().map(|(k, v)| (k.into(), v.into())).collect();
    env.extend(
        string_pairs(hint.get("env"))
            .into_iter()
            .map(|(k, v)| (k.into(), v.into())),
    );
    Some(TerminalCommand {
        program: program.into(),
        args: string_list(hint.get("args"))
            .into_iter()
            .map(OsString::from)
            .collect(),
        env,
    })
}

/// The agent's own command line with `args` appended and `env` on top of
/// its configured variables.
fn agent_command(
    agent: &AgentCommand,
    args: &[String],
    env: &[(String, String)],
) -> TerminalCommand {
    let mut all_env = agent.get_envs().to_vec();
    all_env.extend(env.iter().map(|(k, v)| (k.into(), v.into())));
    let mut all_args = agent.get_args().to_vec();
    all_args.extend(args.iter().map(OsString::from));
    TerminalCommand {
        program: agent.get_program().to_owned(),
        args: all_args,
        env: all_env,
    }
}

fn string_list(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// An object of strings (`{"K": "v"}`) or a list of `{name, value}`.
fn string_pairs(value: Option<&Value>) -> Vec<(String, String)> {
    match value {
        Some(Value::Object(map)) => map
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
            .collect(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|item| {
                let name = item.get("name")?.as_str()?;
                let value = item.get("value")?.as_str()?;
                Some((name.to_owned(), value.to_owned()))
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The variable an agent reads the key of a provider from, for a method
/// whose `_meta["api-key"]` names the provider.
fn provider_variable(provider: &str) -> Option<&'static str> {
    Some(match provider {
        "google" | "gemini" => "GEMINI_API_KEY",
        "anthropic" => "ANTHROPIC_API_KEY",
        "openai" => "OPENAI_API_KEY",
        _ => return None,
    })
}

/// The environment variable names in a text: words quoted in backticks
/// that look like `NAME_OF_A_VARIABLE`, and bare words ending like a
/// credential's (`…_API_KEY`, `…_TOKEN`, `…_SECRET`, `…_CREDENTIALS`).
pub fn env_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut push = |name: &str| {
        if !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
        }
    };
    for (i, part) in text.split('`').enumerate() {
        if i % 2 == 1 && is_variable_name(part) {
            push(part);
        }
    }
    for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        let credential = ["_KEY", "_TOKEN", "_SECRET", "_CREDENTIALS"]
            .iter()
            .any(|end| word.ends_with(end));
        if credential && is_variable_name(word) {
            push(word);
        }
    }
    names
}

fn is_variable_name(word: &str) -> bool {
    word.len() >= 3
        && word.contains('_')
        && word.starts_with(|c: char| c.is_ascii_uppercase())
        && word
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// Every string in a JSON value, depth first, but for the methods an
/// error lists (`authMethods`) and extension data (`_meta`).
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map
            .iter()
            .filter(|(k, _)| *k != "authMethods" && *k != "_meta")
            .for_each(|(_, v)| strings(v, out)),
        _ => {}
    }
}

/// Whether an error answer means the user must log in: `auth_required`,
/// or the HTTP-style 401 some agents answer with.
pub fn is_auth_error(error: &Error) -> bool {
    error.code == ErrorCode::AUTH_REQUIRED || error.code.0 == 401
}

/// What failed: the request and the error it was answered with.
#[derive(Debug, Clone)]
pub struct Problem<'a> {
    /// The request (`session/new`, `authenticate`, …).
    pub method: &'a str,
    /// The agent's error answer.
    pub error: &'a Error,
    /// The method `authenticate` was called with, if that is what failed.
    pub tried: Option<&'a str>,
}

/// How to repeat the run with a login method, for advice.
#[derive(Clone)]
pub struct Context<'a> {
    /// The `--agent …` words to repeat in an `acp login` command (empty for
    /// the default agent).
    pub agent_flag: &'a str,
    /// Whether acp can run a terminal login right here (a terminal is
    /// attached); the advice then says so.
    pub interactive: bool,
    /// Whether a variable is set for the agent (in acp's environment or the
    /// agent's configured one).
    pub is_set: &'a dyn Fn(&str) -> bool,
}

/// The methods that matter for `problem`: those listed in the error's
/// `data` (an agent may name the ones that fit the failure), else all.
pub fn relevant(problem: &Problem<'_>, logins: &[Login], agent: &AgentCommand) -> Vec<Login> {
    let data = problem.error.data.as_ref().map(RawJson::to_value);
    let listed: Vec<Login> = data
        .as_ref()
        .and_then(|d| d.get("authMethods"))
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|v| Login::from_value(v, agent))
                .collect()
        })
        .unwrap_or_default();
    if listed.is_empty() {
        logins.to_vec()
    } else {
        listed
    }
}

/// The message for an authentication failure: what the agent said, then
/// what to do next, built from everything it sent.
pub fn advice(problem: &Problem<'_>, logins: &[Login], cx: &Context<'_>) -> String {
    let error = problem.error;
    let mut message = match problem.tried {
        Some(id) => format!(
            "logging in with {id} failed ({} answered: {})",
            problem.method, error.message
        ),
        None => format!(
            "the agent requires authentication ({} answered: {})",
            problem.method, error.message
        ),
    };
    // What the error's data says in words (a variable that is not set…);
    // methods it lists are used below, not quoted.
    let mut said = Vec::new();
    if let Some(data) = &error.data {
        strings(&data.to_value(), &mut said);
    }
    let said: Vec<String> = said
        .into_iter()
        .map(|s| s.trim().to_owned())
        .filter(|s| s.len() <= 300 && (s.contains(' ') || !env_names(s).is_empty()))
        .collect();
    if !said.is_empty() && said.len() <= 3 {
        message.push_str(&format!(": {}", said.join("; ")));
    }
    let named_in_error: Vec<String> = {
        let mut text = error.message.clone();
        for s in &said {
            text.push(' ');
            text.push_str(s);
        }
        env_names(&text)
    };
    let mut steps = Vec::new();
    // A variable the error names that is not set comes first.
    let missing_named: Vec<&String> = named_in_error.iter().filter(|n| !(cx.is_set)(n)).collect();
    if !missing_named.is_empty() {
        let names: Vec<&str> = missing_named.iter().map(|s| s.as_str()).collect();
        let mut step = format!("set {} in the environment", join_words(&names));
        if let Some(id) = problem.tried {
            step.push_str(&format!(", then run again with --auth {id}"));
        } else {
            step.push_str(", then run again");
        }
        steps.push(step);
    }
    for login in logins {
        if let Some(id) = problem.tried
            && id == login.id
            && !missing_named.is_empty()
        {
            continue;
        }
        if let Some(step) = method_step(login, problem, cx) {
            steps.push(step);
        }
    }
    let generic = {
        let m = error.message.trim().trim_end_matches('.');
        m.eq_ignore_ascii_case("authentication required") || m.is_empty()
    };
    match steps.len() {
        0 if generic => message.push_str(
            "\nThe agent offers no login method acp can use; see its documentation for how to log in.",
        ),
        0 => {}
        1 => message.push_str(&format!("\nTo log in: {}.", steps[0])),
        _ => {
            message.push_str("\nTo log in, do one of these:");
            for step in steps {
                message.push_str(&format!("\n  - {step}"));
            }
        }
    }
    message
}

/// What to do for one method.
fn method_step(login: &Login, problem: &Problem<'_>, cx: &Context<'_>) -> Option<String> {
    let label = if login.name == login.id {
        login.id.clone()
    } else {
        format!("{} ({})", login.name, login.id)
    };
    let missing = login.missing_vars(cx.is_set);
    let login_cmd = if cx.agent_flag.is_empty() {
        format!("acp login {}", shell_quote(&login.id))
    } else {
        format!("acp login {} {}", cx.agent_flag, shell_quote(&login.id))
    };
    let mut step = match (&login.kind, &login.terminal) {
        (Kind::Unknown(kind), _) => {
            format!(
                "{label}: a kind of login acp does not know ({kind}); see the agent's documentation"
            )
        }
        _ if !missing.is_empty() => {
            let mut step = format!("{label}: set {}", join_words(&missing));
            if login.authenticates() {
                step.push_str(&format!(", then run again with --auth {}", login.id));
            } else {
                step.push_str(", then run again");
            }
            step
        }
        (Kind::Terminal, Some(command)) | (Kind::Agent, Some(command)) => {
            // The method's own variables are shown; the agent's configured
            // ones (which may hold secrets) are set but not printed.
            let shown = command.display(&login.env);
            let mut step = format!("{label}: run `{shown}` in a terminal, or `{login_cmd}`");
            if cx.interactive {
                step.push_str(" (acp chat offers to run it for you)");
            }
            if login.kind == Kind::Agent {
                step.push_str(&format!("; or run again with --auth {}", login.id));
            }
            step
        }
        (Kind::Terminal, None) => format!("{label}: `{login_cmd}`"),
        (Kind::Agent | Kind::EnvVar, _) => {
            if problem.tried == Some(login.id.as_str()) {
                // It was just tried and failed; repeating it cannot help.
                format!("{label}: it did not work this time; see the message above")
            } else {
                format!("{label}: run again with --auth {}", login.id)
            }
        }
    };
    // A description that only names the variables already named adds
    // nothing.
    if let Some(d) = &login.description {
        let names = env_names(d);
        let restates = !names.is_empty() && names.iter().all(|n| step.contains(n.as_str()));
        if !restates && !step.contains(d.as_str()) {
            step.push_str(&format!(" — {d}"));
        }
    }
    if let Some(link) = &login.link {
        step.push_str(&format!(" (get credentials at {link})"));
    }
    Some(step)
}

fn join_words(words: &[&str]) -> String {
    match words {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// The agent's methods in a list for `acp login` and usage errors.
pub fn describe(logins: &[Login], is_set: &dyn Fn(&str) -> bool) -> String {
    if logins.is_empty() {
        return "The agent offers no login methods.".to_owned();
    }
    let mut text = String::from("The agent's login methods:");
    for (i, login) in logins.iter().enumerate() {
        let kind = match &login.kind {
            Kind::Agent if login.terminal.is_some() => "in the agent or in a terminal".to_owned(),
            Kind::Agent => "done by the agent".to_owned(),
            Kind::Terminal => "in a terminal".to_owned(),
            Kind::EnvVar => "environment variables".to_owned(),
            Kind::Unknown(k) => format!("unknown kind {k}"),
        };
        text.push_str(&format!(
            "\n  {}) {} ({}): {kind}",
            i + 1,
            login.id,
            login.name
        ));
        let missing = login.missing_vars(is_set);
        if !login.vars.is_empty() {
            let names: Vec<String> = login
                .vars
                .iter()
                .map(|(n, _)| {
                    let state = if missing.contains(&n.as_str()) {
                        "not set"
                    } else {
                        "set"
                    };
                    format!("{n} ({state})")
                })
                .collect();
            text.push_str(&format!("; needs {}", names.join(", ")));
        }
        if let Some(d) = &login.description {
            text.push_str(&format!(" — {d}"));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn agent() -> AgentCommand {
        AgentCommand::new("npx")
            .args(["-y", "some-agent"])
            .env("A", "1")
    }

    fn logins(methods: Value) -> Vec<Login> {
        let methods: Vec<AuthMethod> = serde_json::from_value(methods).unwrap();
        Login::parse(&methods, &agent())
    }

    #[test]
    fn advertises_terminal_auth_both_ways() {
        let caps = serde_json::to_value(advertise(ClientCapabilities::new())).unwrap();
        assert_eq!(caps["auth"]["terminal"], true);
        assert_eq!(caps["_meta"]["terminal-auth"], true);
    }

    #[test]
    fn reads_every_shape() {
        let all = logins(json!([
            {"type": "terminal", "id": "console", "name": "Console", "args": ["--login"], "env": {"MODE": "c"}},
            {"id": "meta", "name": "Meta",
             "_meta": {"terminal-auth": {"command": "/usr/bin/node", "args": ["/a/cli.js", "--login"]}}},
            {"id": "openai", "name": "Use OpenAI API key",
             "description": "Requires setting the `OPENAI_API_KEY` environment variable",
             "_meta": {"type": "terminal", "args": ["--auth-type=openai"]}},
            {"type": "env_var", "id": "codex-api-key", "name": "Use CODEX_API_KEY",
             "vars": [{"name": "CODEX_API_KEY"}, {"name": "EXTRA", "optional": true}]},
            {"id": "gemini-api-key", "name": "Gemini API key", "_meta": {"api-key": {"provider": "google"}}},
            {"type": "carrier-pigeon", "id": "bird", "name": "Bird"},
        ]));
        assert_eq!(all.len(), 6);
        let console = all[0].terminal.clone().unwrap();
        assert_eq!(console.program, "npx");
        assert_eq!(console.args, ["-y", "some-agent", "--login"]);
        assert_eq!(
            console.env,
            [("A".into(), "1".into()), ("MODE".into(), "c".into())]
        );
        let meta = all[1].terminal.clone().unwrap();
        assert_eq!(meta.program, "/usr/bin/node");
        assert_eq!(meta.args, ["/a/cli.js", "--login"]);
        assert_eq!(all[2].kind, Kind::Agent);
        assert_eq!(all[2].vars, [("OPENAI_API_KEY".to_owned(), false)]);
        assert_eq!(
            all[2].terminal.as_ref().unwrap().args,
            ["-y", "some-agent", "--auth-type=openai"]
        );
        assert_eq!(all[3].kind, Kind::EnvVar);
        assert_eq!(all[3].missing_vars(&|_| false), ["CODEX_API_KEY"]);
        assert_eq!(all[4].vars, [("GEMINI_API_KEY".to_owned(), false)]);
        assert_eq!(all[5].kind, Kind::Unknown("carrier-pigeon".into()));
    }

    #[test]
    fn finds_variable_names() {
        assert_eq!(
            env_names("Requires setting the `GEMINI_API_KEY` environment variable"),
            ["GEMINI_API_KEY"]
        );
        assert_eq!(env_names("CODEX_API_KEY is not set"), ["CODEX_API_KEY"]);
        assert_eq!(
            env_names("use `MY_VAR` or GITHUB_TOKEN"),
            ["MY_VAR", "GITHUB_TOKEN"]
        );
        assert!(env_names("An API_KEY_thing and `lower_case` and HTTP").is_empty());
    }

    fn cx<'a>(is_set: &'a dyn Fn(&str) -> bool) -> Context<'a> {
        Context {
            agent_flag: "--agent claude",
            interactive: false,
            is_set,
        }
    }

    #[test]
    fn advice_names_the_variable_and_no_auth_before_it_is_set() {
        let all = logins(json!([
            {"type": "env_var", "id": "codex-api-key", "name": "Use CODEX_API_KEY",
             "vars": [{"name": "CODEX_API_KEY"}]},
            {"id": "chatgpt", "name": "Login with ChatGPT"},
        ]));
        let error = Error::auth_required();
        let problem = Problem {
            method: "session/new",
            error: &error,
            tried: None,
        };
        let unset = |_: &str| false;
        let text = advice(&problem, &all, &cx(&unset));
        assert_eq!(
            text,
            "the agent requires authentication (session/new answered: Authentication required)\n\
             To log in, do one of these:\n  \
             - Use CODEX_API_KEY (codex-api-key): set CODEX_API_KEY, then run again with --auth codex-api-key\n  \
             - Login with ChatGPT (chatgpt): run again with --auth chatgpt"
        );
        // The key set: --auth is what to do.
        let set = |n: &str| n == "CODEX_API_KEY";
        let text = advice(&problem, &all, &cx(&set));
        assert!(
            text.contains("(codex-api-key): run again with --auth codex-api-key"),
            "{text}"
        );
    }

    #[test]
    fn advice_after_a_failed_authenticate_uses_the_data() {
        let all = logins(json!([
            {"type": "env_var", "id": "codex-api-key", "name": "Use CODEX_API_KEY",
             "vars": [{"name": "CODEX_API_KEY"}]},
        ]));
        let error = Error::new(ErrorCode::INTERNAL_ERROR, "Internal error")
            .data("CODEX_API_KEY is not set");
        let problem = Problem {
            method: "authenticate",
            error: &error,
            tried: Some("codex-api-key"),
        };
        let unset = |_: &str| false;
        let text = advice(&problem, &all, &cx(&unset));
        assert_eq!(
            text,
            "logging in with codex-api-key failed (authenticate answered: Internal error): CODEX_API_KEY is not set\n\
             To log in: set CODEX_API_KEY in the environment, then run again with --auth codex-api-key."
        );
    }

    #[test]
    fn advice_for_terminal_logins_gives_the_command() {
        let all = logins(json!([
            {"type": "terminal", "id": "console-login", "name": "Anthropic Console", "args": ["--cli", "login"]},
        ]));
        let error = Error::auth_required();
        let problem = Problem {
            method: "session/new",
            error: &error,
            tried: None,
        };
        let unset = |_: &str| false;
        let text = advice(&problem, &all, &cx(&unset));
        assert!(
            text.ends_with(
                "To log in: Anthropic Console (console-login): run `npx -y some-agent --cli login` \
                 in a terminal, or `acp login --agent claude console-login`."
            ),
            "{text}"
        );
    }

    #[test]
    fn no_advice_of_its_own_when_the_agent_says_how() {
        let error = Error::new(
            ErrorCode::AUTH_REQUIRED,
            "Gemini API key is missing or not configured.",
        );
        let problem = Problem {
            method: "session/new",
            error: &error,
            tried: None,
        };
        let unset = |_: &str| false;
        let text = advice(&problem, &[], &cx(&unset));
        assert_eq!(
            text,
            "the agent requires authentication (session/new answered: Gemini API key is missing or not configured.)"
        );
        let error = Error::auth_required();
        let problem = Problem {
            method: "session/new",
            error: &error,
            tried: None,
        };
        assert!(advice(&problem, &[], &cx(&unset)).contains("offers no login method"));
    }
}
