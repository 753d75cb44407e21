//! Authentication in v2: methods under `auth/` (`auth/login`, `auth/logout`),
//! and auth method descriptors with a required `type` and a `methodId`.

#[cfg(feature = "v2-unstable")]
use crate::util::string_enum;
use crate::util::{setters, tagged_union, wire_struct};
use crate::{AuthMethodId, EnvVariable, Meta};

tagged_union! {
    /// A way for the user to log in, tagged by `type`. Custom types begin with
    /// `_`; an unknown type is kept in `Other`.
    pub enum AuthMethod: tag "type" {
        /// The client runs the agent's own login command in a terminal (only
        /// when the client advertised `auth.terminal`).
        "terminal" => Terminal(AuthMethodTerminal),
        /// The agent logs in by itself when the client calls `auth/login`.
        "agent" => Agent(AuthMethodAgent),
    }
}

impl AuthMethod {
    /// The method's id (`None` for a method of a type this version does not
    /// know and whose `methodId` is not a string).
    pub fn method_id(&self) -> Option<AuthMethodId> {
        match self {
            AuthMethod::Terminal(m) => Some(m.method_id.clone()),
            AuthMethod::Agent(m) => Some(m.method_id.clone()),
            AuthMethod::Other(raw) => raw.get_str("methodId").map(|s| AuthMethodId::new(&*s)),
        }
    }

    /// The method's name, for people to read.
    pub fn name(&self) -> Option<String> {
        match self {
            AuthMethod::Terminal(m) => Some(m.name.clone()),
            AuthMethod::Agent(m) => Some(m.name.clone()),
            AuthMethod::Other(raw) => raw.get_str("name").map(|s| s.into_owned()),
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
    /// A login the client runs in a terminal: the agent's own command with
    /// `args` and `env`.
    pub struct AuthMethodTerminal {
        /// The method's id.
        pub method_id: AuthMethodId = "methodId" (Req),
        /// Its name, for people to read.
        pub name: String = "name" (Req),
        /// What it does.
        pub description: Option<String> = "description" (Lenient),
        /// Arguments to run the agent's command with.
        pub args: Vec<String> = "args" (NullDfltNonEmpty),
        /// Environment variables to set.
        pub env: Vec<EnvVariable> = "env" (NullDfltNonEmpty),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl AuthMethodTerminal {
    /// The terminal login `method_id`, called `name`.
    pub fn new(method_id: impl Into<AuthMethodId>, name: impl Into<String>) -> Self {
        AuthMethodTerminal {
            method_id: method_id.into(),
            name: name.into(),
            description: None,
            args: Vec::new(),
            env: Vec::new(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(AuthMethodTerminal {
    set { args: Vec<String>, env: Vec<EnvVariable> }
    opt { description: String, meta: Meta }
});

wire_struct! {
    /// A login the agent runs by itself when the client calls `auth/login`.
    pub struct AuthMethodAgent {
        /// The method's id.
        pub method_id: AuthMethodId = "methodId" (Req),
        /// Its name, for people to read.
        pub name: String = "name" (Req),
        /// What it does.
        pub description: Option<String> = "description" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl AuthMethodAgent {
    /// The agent login `method_id`, called `name`.
    pub fn new(method_id: impl Into<AuthMethodId>, name: impl Into<String>) -> Self {
        AuthMethodAgent {
            method_id: method_id.into(),
            name: name.into(),
            description: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(AuthMethodAgent { opt { description: String, meta: Meta } });

wire_struct! {
    /// Params of `auth/login`: log in with one of the advertised methods.
    pub struct LoginAuthRequest {
        /// The method.
        pub method_id: AuthMethodId = "methodId" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl LoginAuthRequest {
    /// Logs in with `method_id`.
    pub fn new(method_id: impl Into<AuthMethodId>) -> Self {
        LoginAuthRequest {
            method_id: method_id.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(LoginAuthRequest { opt { meta: Meta } });

/// Declares a struct whose only member is `_meta` (an empty request or result).
macro_rules! empty_object {
    ($(#[$attr:meta])* $name:ident) => {
        wire_struct! {
            $(#[$attr])*
            #[derive(Default)]
            pub struct $name {
                /// Extension metadata.
                pub meta: Option<Meta> = "_meta" (MetaField),
            }
        }

        impl $name {
            /// The empty object, written `{}`.
            pub fn new() -> Self {
                Self::default()
            }
        }

        setters!($name { opt { meta: Meta } });
    };
}
pub(crate) use empty_object;

empty_object!(
    /// The result of `auth/login`.
    LoginAuthResponse
);
empty_object!(
    /// Params of `auth/logout`: end the authenticated state.
    LogoutAuthRequest
);
empty_object!(
    /// The result of `auth/logout`.
    LogoutAuthResponse
);
#[cfg(feature = "v2-unstable")]
empty_object!(
    /// Params of `auth/status`: ask whether the user is logged in (feature
    /// `v2-unstable`).
    AuthStatusRequest
);

#[cfg(feature = "v2-unstable")]
wire_struct! {
    /// The result of `auth/status` (feature `v2-unstable`).
    pub struct AuthStatusResponse {
        /// Whether the user is logged in.
        pub state: AuthState = "state" (Req),
        /// The accounts logged in (omitted when empty).
        pub accounts: Vec<AuthAccount> = "accounts" (ItemsNonEmpty),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

#[cfg(feature = "v2-unstable")]
impl AuthStatusResponse {
    /// The state `state`, no accounts.
    pub fn new(state: AuthState) -> Self {
        AuthStatusResponse {
            state,
            accounts: Vec::new(),
            meta: None,
            extra: Default::default(),
        }
    }
}

#[cfg(feature = "v2-unstable")]
setters!(AuthStatusResponse { set { accounts: Vec<AuthAccount> } opt { meta: Meta } });

#[cfg(feature = "v2-unstable")]
wire_struct! {
    /// `auth/status_update`: the agent's authentication state changed (feature
    /// `v2-unstable`).
    pub struct AuthStatusUpdateNotification {
        /// Whether the user is logged in.
        pub state: AuthState = "state" (Req),
        /// The accounts logged in (omitted when empty).
        pub accounts: Vec<AuthAccount> = "accounts" (ItemsNonEmpty),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

#[cfg(feature = "v2-unstable")]
impl AuthStatusUpdateNotification {
    /// The state `state`, no accounts.
    pub fn new(state: AuthState) -> Self {
        AuthStatusUpdateNotification {
            state,
            accounts: Vec::new(),
            meta: None,
            extra: Default::default(),
        }
    }
}

#[cfg(feature = "v2-unstable")]
setters!(AuthStatusUpdateNotification { set { accounts: Vec<AuthAccount> } opt { meta: Meta } });

#[cfg(feature = "v2-unstable")]
string_enum! {
    /// Whether the user is logged in (feature `v2-unstable`).
    pub enum AuthState {
        /// Logged in.
        "authenticated" => Authenticated,
        /// Not logged in.
        "unauthenticated" => Unauthenticated,
        /// The agent needs no login.
        "not_required" => NotRequired,
        /// The agent cannot tell.
        "unknown" => Unknown,
    }
}

#[cfg(feature = "v2-unstable")]
wire_struct! {
    /// An account the user is logged in with (feature `v2-unstable`).
    pub struct AuthAccount {
        /// How to show it.
        pub label: String = "label" (Req),
        /// Whether it is the one in use.
        pub active: Option<bool> = "active" (Lenient),
        /// The user's name.
        pub name: Option<String> = "name" (Lenient),
        /// The user's email address.
        pub email: Option<String> = "email" (Lenient),
        /// The organization.
        pub organization: Option<String> = "organization" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

#[cfg(feature = "v2-unstable")]
impl AuthAccount {
    /// The account shown as `label`.
    pub fn new(label: impl Into<String>) -> Self {
        AuthAccount {
            label: label.into(),
            active: None,
            name: None,
            email: None,
            organization: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

#[cfg(feature = "v2-unstable")]
setters!(AuthAccount {
    opt { active: bool, name: String, email: String, organization: String, meta: Meta }
});
