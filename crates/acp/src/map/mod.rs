//! Translations between v1 and v2 messages (feature `v2`): pure functions,
//! one file per protocol area, used by the version negotiation and the
//! bridge. What each maps, and what it loses, is written where it is done.

mod initialize;

pub(crate) use initialize::*;
