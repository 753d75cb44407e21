//! Serde helpers shared by every protocol area: the lenient-decoding hints of the
//! official schema, tagged unions with a lossless fallback, string enums with an
//! `Other` variant, identifier newtypes and builder setters.
//!
//! Everything here is crate-private plumbing except [`Meta`], [`DecodeError`],
//! [`decode`] and [`decode_value`].

use serde::de::{DeserializeOwned, Deserializer, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;
use std::fmt;
use std::marker::PhantomData;

/// The `_meta` extension object: opaque, kept exactly as received.
pub type Meta = serde_json::Map<String, Value>;

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

/// Marks an error message that carries the path inside a nested union.
pub(crate) const PATH_MARK: &str = "\u{1}path:";

/// serde_json appends ` at line L column C`; the field path says more, so drop it.
fn strip_position(msg: &str) -> &str {
    match msg.rfind(" at line ") {
        Some(i) if msg[i..].contains(" column ") => &msg[..i],
        _ => msg,
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

/// Decodes a nested value inside a hand-written `Deserialize`, keeping the inner
/// field path in the error so [`decode`] can report the whole path.
pub(crate) fn nested<T: DeserializeOwned, E: serde::de::Error>(value: Value) -> Result<T, E> {
    serde_path_to_error::deserialize(value).map_err(|err| {
        let path = err.path().to_string();
        let message = err.into_inner().to_string();
        // An already-marked message from deeper down carries its own path: extend it.
        if let Some(rest) = message.strip_prefix(PATH_MARK) {
            if let Some((inner, msg)) = rest.split_once('\t') {
                let joined = match (path.as_str(), inner) {
                    (".", i) => i.to_string(),
                    (p, "") => p.to_string(),
                    (p, i) if i.starts_with('[') => format!("{p}{i}"),
                    (p, i) => format!("{p}.{i}"),
                };
                return E::custom(format_args!("{PATH_MARK}{joined}\t{msg}"));
            }
        }
        let path = if path == "." { String::new() } else { path };
        E::custom(format_args!("{PATH_MARK}{path}\t{message}"))
    })
}

/// `x-deserialize-default-on-error`: a malformed value becomes the default.
pub(crate) fn default_on_error<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    let value = Value::deserialize(d)?;
    Ok(T::deserialize(value).unwrap_or_default())
}

/// `x-deserialize-skip-invalid-items` (with default-on-error): items that do not
/// decode are dropped; a value that is not an array becomes empty.
pub(crate) fn skip_invalid_items<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let value = Value::deserialize(d)?;
    Ok(match value {
        Value::Array(items) => items
            .into_iter()
            .filter_map(|item| T::deserialize(item).ok())
            .collect(),
        _ => Vec::new(),
    })
}

/// Like [`skip_invalid_items`] for an optional list: `null` or garbage is `None`.
pub(crate) fn skip_invalid_items_opt<'de, D, T>(d: D) -> Result<Option<Vec<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let value = Value::deserialize(d)?;
    Ok(match value {
        Value::Array(items) => Some(
            items
                .into_iter()
                .filter_map(|item| T::deserialize(item).ok())
                .collect(),
        ),
        _ => None,
    })
}

/// `_meta`: any object is kept untouched; `null` or a non-object is dropped.
pub(crate) fn meta<'de, D>(d: D) -> Result<Option<Meta>, D::Error>
where
    D: Deserializer<'de>,
{
    Ok(match Option::<Value>::deserialize(d)? {
        Some(Value::Object(map)) => Some(map),
        _ => None,
    })
}

/// Reads the string tag of a tagged union from an object.
pub(crate) fn take_tag<E: serde::de::Error>(
    map: &serde_json::Map<String, Value>,
    tag: &'static str,
) -> Result<Option<String>, E> {
    match map.get(tag) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(E::custom(format_args!(
            "{PATH_MARK}{tag}\texpected a string, found {}",
            kind_of(other)
        ))),
    }
}

/// A short name for the JSON type of a value, for error messages.
pub(crate) fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Declares a union discriminated by a string field (`type`, `sessionUpdate`, …).
///
/// Known tags decode into their variant (errors name the inner field path);
/// an unknown tag decodes into `Other(map)`, which re-encodes unchanged. With
/// `default = Variant`, an object without the tag decodes into that variant and
/// is written without a tag (the stdio MCP server, the agent auth method);
/// `also "tag"` makes an explicit tag decode into the default variant too.
macro_rules! tagged_union {
    (
        $(#[$attr:meta])*
        pub enum $name:ident : tag $tag:literal {
            $(
                $(#[$vattr:meta])*
                $wire:literal => $variant:ident $( ( $inner:ty ) )?
            ),* $(,)?
        }
        $( default $(#[$dattr:meta])* $default:ident ( $dinner:ty ) $( also $alias:literal )? )?
    ) => {
        $(#[$attr])*
        #[derive(Debug, Clone, PartialEq, ::serde::Serialize)]
        #[serde(tag = $tag)]
        #[non_exhaustive]
        pub enum $name {
            $(
                $(#[$vattr])*
                #[serde(rename = $wire)]
                $variant $( ($inner) )?,
            )*
            $(
                $(#[$dattr])*
                #[serde(untagged)]
                $default($dinner),
            )?
            /// A variant this version does not know: the whole object, re-encoded unchanged.
            #[serde(untagged)]
            Other(::serde_json::Map<String, ::serde_json::Value>),
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let map = <::serde_json::Map<String, ::serde_json::Value>>::deserialize(d)?;
                let tag = $crate::util::take_tag::<D::Error>(&map, $tag)?;
                match tag.as_deref() {
                    $(
                        Some($wire) => $crate::util::tagged_union!(@decode map, $name, $variant $( ($inner) )?),
                    )*
                    $($( Some($alias) )?)? | None => {
                        $crate::util::tagged_union!(@default map, $name, $tag $(, $default)?)
                    }
                    Some(_) => Ok($name::Other(map)),
                }
            }
        }
    };
    (@decode $map:ident, $name:ident, $variant:ident ($inner:ty)) => {
        $crate::util::nested::<$inner, D::Error>(::serde_json::Value::Object($map)).map($name::$variant)
    };
    (@decode $map:ident, $name:ident, $variant:ident) => {{
        let _ = $map;
        Ok($name::$variant)
    }};
    (@default $map:ident, $name:ident, $tag:literal) => {{
        let _ = $map;
        Err(<D::Error as ::serde::de::Error>::missing_field($tag))
    }};
    (@default $map:ident, $name:ident, $tag:literal, $default:ident) => {
        $crate::util::nested(::serde_json::Value::Object($map)).map($name::$default)
    };
}
pub(crate) use tagged_union;

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
                struct V;
                impl ::serde::de::Visitor<'_> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        f.write_str("a string")
                    }
                    fn visit_str<E: ::serde::de::Error>(self, v: &str) -> Result<$name, E> {
                        Ok($name::from(v))
                    }
                }
                d.deserialize_str(V)
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
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, ::serde::Serialize, ::serde::Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub ::std::sync::Arc<str>);

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

/// `x-deserialize-default-on-null`: an explicit `null` reads as the default; any
/// other value must decode (a missing field is still an error unless the field
/// also has `#[serde(default)]`).
pub(crate) fn default_on_null<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// `x-deserialize-default-on-error` for a field whose value is a JSON object (or
/// `null`): like `default_on_error`, but an array also falls back to the default
/// (serde would otherwise read an array positionally into a struct).
pub(crate) fn object_default_on_error<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    let value = Value::deserialize(d)?;
    if value.is_array() {
        return Ok(T::default());
    }
    Ok(T::deserialize(value).unwrap_or_default())
}
