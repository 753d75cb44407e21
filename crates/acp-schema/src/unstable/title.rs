//! Client-set session titles (`unstable-session-title`): `session/set_title`
//! and the `sessionCapabilities.title` marker.

use crate::util::{setters, wire_struct};
use crate::{Meta, SessionId};

wire_struct! {
    /// Marks support for `session/set_title`. Agents report titles they set
    /// themselves with `session_info_update`.
    #[derive(Default)]
    pub struct SessionTitleCapabilities {
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SessionTitleCapabilities {
    /// The marker, written as `{}`.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(SessionTitleCapabilities { opt { meta: Meta } });

wire_struct! {
    /// The `session/set_title` request: give a session a title.
    pub struct SetSessionTitleRequest {
        /// The session to title.
        pub session_id: SessionId = "sessionId" (Req),
        /// The title the user chose.
        pub title: String = "title" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SetSessionTitleRequest {
    /// Title `session_id` with `title`.
    pub fn new(session_id: impl Into<SessionId>, title: impl Into<String>) -> Self {
        SetSessionTitleRequest {
            session_id: session_id.into(),
            title: title.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(SetSessionTitleRequest { opt { meta: Meta } });

wire_struct! {
    /// The result of `session/set_title`: the title the session now has (the
    /// agent may have adjusted it).
    pub struct SetSessionTitleResponse {
        /// The session's title now.
        pub title: String = "title" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SetSessionTitleResponse {
    /// The session is now titled `title`.
    pub fn new(title: impl Into<String>) -> Self {
        SetSessionTitleResponse {
            title: title.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(SetSessionTitleResponse { opt { meta: Meta } });
