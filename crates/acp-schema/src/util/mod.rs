//! Serde helpers shared by every protocol area: decoding with field paths,
//! string enums with an `Other` variant, identifier newtypes, builder setters,
//! and (in [`wire`]) the object and union machinery.
//!
//! Everything here is crate-private plumbing except [`DecodeError`], [`decode`],
//! [`decode_value`] and [`OrderedMap`].

pub(crate) mod wire;

use serde::de::{DeserializeOwned, Deserializer, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;
use std::fmt;
use std::marker::PhantomData;

pub(crate) use wire::{PATH_MARK, strip_position, tagged_union, wire_struct};

/// A value that failed to decode, with the JSON path of the offending field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// Dotted path of the field that failed (`update.content.text`); empty at the top level.
    pub path: String,
    /// What serde said went wrong.
    pub message: String,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() || self.path == "." {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for DecodeError {}

impl DecodeError {
    fn from_tracked(err: serde_path_to_error::Error<serde_json::Error>) -> Self {
        let outer = err.path().to_string();
        let message = err.into_inner().to_string();
        // A nested union reports its own inner path as `PATH_MARK inner<TAB>message`;
        // splice it onto the outer path so the caller sees one dotted path.
        if let Some(rest) = message.strip_prefix(PATH_MARK) {
            if let Some((inner, msg)) = rest.split_once('\t') {
                let msg = strip_position(msg);
                let path = match (outer.as_str(), inner) {
                    (".", i) | ("", i) => i.to_string(),
                    (o, "") => o.to_string(),
                    (o, i) if i.starts_with('[') => format!("{o}{i}"),
                    (o, i) => format!("{o}.{i}"),
                };
                return DecodeError {
                    path,
                    message: msg.to_string(),
                };
            }
        }
        DecodeError {
            path: if outer == "." { String::new() } else { outer },
            message: strip_position(&message).to_string(),
        }
    }
}

/// Decodes `T` from JSON text, naming the field path on failure.
///
/// ```
/// use acp_schema::{decode, SessionNotification};
/// let err = decode::<SessionNotification>(
///     r#"{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":7}}}"#,
/// ).unwrap_err();
/// assert_eq!(err.path, "update.content.text");
/// ```
pub fn decode<T: DeserializeOwned>(json: &str) -> Result<T, DecodeError> {
    // Fast path: most input is valid, and tracking the path costs time on every
    // field. Only a failure is decoded again, with tracking, to name the field.
    if let Ok(value) = serde_json::from_str(json) {
        return Ok(value);
    }
    let mut de = serde_json::Deserializer::from_str(json);
    let value = serde_path_to_error::deserialize(&mut de).map_err(DecodeError::from_tracked)?;
    de.end().map_err(|e| DecodeError {
        path: String::new(),
        message: strip_position(&e.to_string()).to_string(),
    })?;
    Ok(value)
}

/// Decodes `T` from an already-parsed JSON value, naming the field path on failure.
pub fn decode_value<T: DeserializeOwned>(value: Value) -> Result<T, DecodeError> {
    serde_path_to_error::deserialize(value).map_err(DecodeError::from_tracked)
}

/// The visitor of a type read from a string through its `From<&str>` (the
/// string enums and identifier types below).
pub(crate) struct FromStrVisitor<T>(PhantomData<T>);

impl<T> FromStrVisitor<T> {
    pub(crate) fn new() -> Self {
        FromStrVisitor(PhantomData)
    }
}

impl<T: for<'a> From<&'a str>> Visitor<'_> for FromStrVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<T, E> {
        Ok(T::from(v))
    }
}

/// Declares a string enum whose unknown values decode into `Other(String)` and
/// re-encode unchanged. Implements `Display`, `as_str` and `From<&str>`.
macro_rules! string_enum {
    (
        $(#[$attr:meta])*
        pub enum $name:ident {
            $(
                $(#[$vattr:meta])*
                $wire:literal => $variant:ident
            ),* $(,)?
        }
    ) => {
        $(#[$attr])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$vattr])* $variant, )*
            /// A value this version does not know, kept verbatim.
            Other(String),
        }

        impl $name {
            /// The wire spelling of this value.
            pub fn as_str(&self) -> &str {
                match self {
                    $( $name::$variant => $wire, )*
                    $name::Other(s) => s,
                }
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                match s {
                    $( $wire => $name::$variant, )*
                    other => $name::Other(other.to_string()),
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_str($crate::util::FromStrVisitor::<$name>::new())
            }
        }

        impl $crate::util::wire::Tolerant for $name {
            fn tolerant<'de, D: ::serde::Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
                Ok(match $crate::util::wire::Seen::read(d)? {
                    $crate::util::wire::Seen::Str(s) => Some($name::from(&*s)),
                    _ => None,
                })
            }
        }
    };
}
pub(crate) use string_enum;

/// Declares a string identifier newtype (`SessionId`, `ToolCallId`, …): cheap to
/// clone, transparent on the wire.
macro_rules! id_type {
    ($(#[$attr:meta])* $name:ident) => {
        $(#[$attr])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, ::serde::Serialize)]
        #[serde(transparent)]
        pub struct $name(pub ::std::sync::Arc<str>);

        // Straight into the `Arc` through `From<&str>` (serde's own `Arc<str>`
        // goes through a `Box<str>`: one allocation and one copy more).
        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_str($crate::util::FromStrVisitor::<$name>::new())
            }
        }

        impl $name {
            /// Wraps a string.
            pub fn new(id: impl Into<::std::sync::Arc<str>>) -> Self {
                $name(id.into())
            }
            /// The identifier as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                $name(s.into())
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                $name(s.into())
            }
        }

        impl From<&String> for $name {
            fn from(s: &String) -> Self {
                $name(s.as_str().into())
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl ::std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl $crate::util::wire::Tolerant for $name {
            fn tolerant<'de, D: ::serde::Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
                Ok(match $crate::util::wire::Seen::read(d)? {
                    $crate::util::wire::Seen::Str(s) => Some($name(::std::sync::Arc::from(&*s))),
                    _ => None,
                })
            }
        }
    };
}
pub(crate) use id_type;

/// Chainable `#[must_use]` setters for the fields of a builder-style struct.
///
/// `set { field: Type }` makes `fn field(self, impl Into<Type>) -> Self`;
/// `opt { field: Type }` does the same for an `Option<Type>` field.
macro_rules! setters {
    ($name:ident {
        $( set { $( $sfield:ident : $sty:ty ),* $(,)? } )?
        $( opt { $( $ofield:ident : $oty:ty ),* $(,)? } )?
    }) => {
        impl $name {
            $($(
                #[doc = concat!("Sets `", stringify!($sfield), "`.")]
                #[must_use]
                pub fn $sfield(mut self, value: impl Into<$sty>) -> Self {
                    self.$sfield = value.into();
                    self
                }
            )*)?
            $($(
                #[doc = concat!("Sets `", stringify!($ofield), "`.")]
                #[must_use]
                pub fn $ofield(mut self, value: impl Into<$oty>) -> Self {
                    self.$ofield = Some(value.into());
                    self
                }
            )*)?
        }
    };
}
pub(crate) use setters;

/// A chainable setter for an `Option` field that only exists with a cargo
/// feature: `feature_setter!("feature", Type { field: FieldType })`.
macro_rules! feature_setter {
    ($feat:literal, $name:ident { $( $field:ident : $ty:ty ),* $(,)? }) => {
        #[cfg(feature = $feat)]
        impl $name {
            $(
                #[doc = concat!("Sets `", stringify!($field), "` (feature `", $feat, "`).")]
                #[must_use]
                pub fn $field(mut self, value: impl Into<$ty>) -> Self {
                    self.$field = Some(value.into());
                    self
                }
            )*
        }
    };
}
pub(crate) use feature_setter;

/// A JSON object with values of one type that keeps its keys in the order they
/// were received or inserted (form fields are shown in this order). A key that
/// occurs twice keeps its first position and its last value.
#[derive(Debug, Clone, PartialEq)]
pub struct OrderedMap<V>(pub Vec<(String, V)>);

impl<V> Default for OrderedMap<V> {
    fn default() -> Self {
        OrderedMap(Vec::new())
    }
}

impl<V> OrderedMap<V> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<&V> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Replaces the value under `key` in place, or appends the entry.
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<V>) {
        let key = key.into();
        let value = value.into();
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.0.push((key, value)),
        }
    }

    /// Removes and returns the value under `key`, keeping the others in order.
    pub fn remove(&mut self, key: &str) -> Option<V> {
        let i = self.0.iter().position(|(k, _)| k == key)?;
        Some(self.0.remove(i).1)
    }

    /// The entries in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &V)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The keys in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(k, _)| k.as_str())
    }

    /// How many entries there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<V, K: Into<String>, W: Into<V>> FromIterator<(K, W)> for OrderedMap<V> {
    fn from_iter<I: IntoIterator<Item = (K, W)>>(iter: I) -> Self {
        let mut map = OrderedMap::new();
        for (k, v) in iter {
            map.insert(k, v);
        }
        map
    }
}

impl<V> IntoIterator for OrderedMap<V> {
    type Item = (String, V);
    type IntoIter = std::vec::IntoIter<(String, V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<V: Serialize> Serialize for OrderedMap<V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for OrderedMap<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Vis<V>(PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for Vis<V> {
            type Value = OrderedMap<V>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut access: A,
            ) -> Result<OrderedMap<V>, A::Error> {
                let mut map =
                    OrderedMap(Vec::with_capacity(access.size_hint().unwrap_or(0).min(64)));
                while let Some(key) = access.next_key::<String>()? {
                    let value = access.next_value::<V>()?;
                    match map.0.iter_mut().find(|(k, _)| *k == key) {
                        Some(slot) => slot.1 = value,
                        None => map.0.push((key, value)),
                    }
                }
                Ok(map)
            }
        }
        d.deserialize_map(Vis(PhantomData))
    }
}
