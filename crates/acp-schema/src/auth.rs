//! Authentication: the methods an agent offers in its `initialize` response, the
//! `authenticate` request that picks one, and `logout`.

use crate::util::{id_type, setters, tagged_union, wire_struct};
use crate::{Meta, OrderedMap};
use std::borrow::Cow;

id_type!(
    /// Identifies one of the authentication methods an agent offers.
    AuthMethodId
);

tagged_union! {
    /// A way for the user to authenticate, offered by the agent. Tagged by `type`;
    /// an object without `type` is an agent-handled method.
    pub enum AuthMethod: tag "type" {
        /// The client runs the agent program in an interactive terminal so the user
        /// can sign in there; never passed to `authenticate`. Only offered when the
        /// client set `auth.terminal`.
        "terminal" => Terminal(AuthMethodTerminal),
    }
    default
    /// The agent handles authentication itself when the client calls `authenticate`
    /// (written without a `type`).
    Agent(AuthMethodAgent)
}

impl AuthMethod {
    /// The method's id (`None` only for an unknown method kind without a string `id`).
    pub fn id(&self) -> Option<Cow<'_, str>> {
        match self {
            AuthMethod::Agent(m) => Some(Cow::Borrowed(m.id.as_str())),
            AuthMethod::Terminal(m) => Some(Cow::Borrowed(m.id.as_str())),
            AuthMethod::Other(map) => map.get_str("id"),
        }
    }

    /// The method's display name (`None` only for an unknown method kind without a string `name`).
    pub fn name(&self) -> Option<Cow<'_, str>> {
        match self {
            AuthMethod::Agent(m) => Some(Cow::Borrowed(&m.name)),
            AuthMethod::Terminal(m) => Some(Cow::Borrowed(&m.name)),
            AuthMethod::Other(map) => map.get_str("name"),
        }
    }
}

impl From<AuthMethodAgent> for AuthMethod {
    fn from(m: AuthMethodAgent) -> Self {
        AuthMethod::Agent(m)
    }
}

impl From<AuthMethodTerminal> for AuthMethod {
    fn from(m: AuthMethodTerminal) -> Self {
        AuthMethod::Terminal(m)
    }
}

wire_struct! {
    /// An authentication method the agent carries out itself through `authenticate`.
    pub struct AuthMethodAgent {
        /// The method's id, passed back in `authenticate`.
        pub id: AuthMethodId = "id" (Req),
        /// A name to show the user.
        pub name: String = "name" (Req),
        /// More detail to show the user.
        pub description: Option<String> = "description" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl AuthMethodAgent {
    /// A method `id` shown as `name`.
    pub fn new(id: impl Into<AuthMethodId>, name: impl Into<String>) -> Self {
        AuthMethodAgent {
            id: id.into(),
            name: name.into(),
            description: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(AuthMethodAgent { opt { description: String, meta: Meta } });

wire_struct! {
    /// An authentication method where the client launches the agent program (as it
    /// is configured, plus `args` and `env`) in an interactive terminal. Exit status
    /// zero means the user signed in.
    pub struct AuthMethodTerminal {
        /// The method's id.
        pub id: AuthMethodId = "id" (Req),
        /// A name to show the user.
        pub name: String = "name" (Req),
        /// More detail to show the user.
        pub description: Option<String> = "description" (Lenient),
        /// Arguments appended to the configured agent command line.
        pub args: Option<Vec<String>> = "args" (ItemsOpt),
        /// Environment variables set on top of (and overriding) the configured ones.
        pub env: Option<OrderedMap<String>> = "env" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl AuthMethodTerminal {
    /// A terminal method `id` shown as `name`, with no extra arguments or variables.
    pub fn new(id: impl Into<AuthMethodId>, name: impl Into<String>) -> Self {
        AuthMethodTerminal {
            id: id.into(),
            name: name.into(),
            description: None,
            args: None,
            env: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(AuthMethodTerminal {
    opt {
        description: String,
        args: Vec<String>,
        env: OrderedMap<String>,
        meta: Meta,
    }
});

wire_struct! {
    /// The `authenticate` request: sign in with one of the advertised agent methods.
    pub struct AuthenticateRequest {
        /// Which advertised method to use.
        pub method_id: AuthMethodId = "methodId" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl AuthenticateRequest {
    /// Authenticate with `method_id`.
    pub fn new(method_id: impl Into<AuthMethodId>) -> Self {
        AuthenticateRequest {
            method_id: method_id.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(AuthenticateRequest { opt { meta: Meta } });

wire_struct! {
    /// The (empty) result of `authenticate`.
    #[derive(Default)]
    pub struct AuthenticateResponse {
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl AuthenticateResponse {
    /// An empty response.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(AuthenticateResponse { opt { meta: Meta } });

wire_struct! {
    /// The `logout` request: end the authenticated state (needs `auth.logout`).
    #[derive(Default)]
    pub struct LogoutRequest {
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl LogoutRequest {
    /// An empty request.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(LogoutRequest { opt { meta: Meta } });

wire_struct! {
    /// The (empty) result of `logout`.
    #[derive(Default)]
    pub struct LogoutResponse {
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl LogoutResponse {
    /// An empty response.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(LogoutResponse { opt { meta: Meta } });

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auth_method_variants_round_trip() {
        let agent = r#"{"id":"oauth","name":"Sign in","description":"Browser sign-in"}"#;
        let m: AuthMethod = crate::decode(agent).unwrap();
        assert!(matches!(m, AuthMethod::Agent(_)));
        assert_eq!(m.id().as_deref(), Some("oauth"));
        assert_eq!(serde_json::to_string(&m).unwrap(), agent);

        let term = r#"{"type":"terminal","id":"tui","name":"Terminal","args":["--login"],"env":{"A":"1"}}"#;
        let m: AuthMethod = crate::decode(term).unwrap();
        assert!(matches!(m, AuthMethod::Terminal(_)));
        assert_eq!(serde_json::to_string(&m).unwrap(), term);

        let other = r#"{"type":"_web","id":"w","name":"Web","url":"https://x"}"#;
        let m: AuthMethod = crate::decode(other).unwrap();
        assert!(matches!(m, AuthMethod::Other(_)));
        assert_eq!(m.name().as_deref(), Some("Web"));
        assert_eq!(serde_json::to_string(&m).unwrap(), other);
    }

    #[test]
    fn terminal_method_lenient_fields() {
        let m: AuthMethodTerminal =
            crate::decode(r#"{"id":"t","name":"T","args":null,"env":null}"#).unwrap();
        assert_eq!(m, AuthMethodTerminal::new("t", "T"));
        let m: AuthMethodTerminal =
            crate::decode(r#"{"id":"t","name":"T","args":["a",1],"env":{"A":2}}"#).unwrap();
        assert_eq!(m.args, Some(vec!["a".to_string()]));
        assert_eq!(m.env, None);
    }
}
