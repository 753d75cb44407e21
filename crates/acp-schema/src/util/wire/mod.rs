//! How every object type decodes and encodes, without a detour through `Value`.
//!
//! A struct (declared with [`wire_struct!`]) reads its members straight from the
//! deserializer: each known key decodes into its field with the field's *mode*
//! (required, optional, lenient, list with invalid items skipped, `_meta`, …);
//! every other key is kept as raw JSON in the struct's `extra` and written back
//! after the known fields.
//!
//! A tagged union (declared with [`tagged_union!`]) reads keys until it meets its
//! tag. When the tag comes first, as every encoder we know writes it, the rest of
//! the same map decodes straight into the variant. Members seen before the tag
//! are kept as raw text and replayed into the variant first. An unknown tag keeps
//! the whole object, raw, in `Other`.
//!
//! Errors keep naming the field path: members read live are tracked by
//! `serde_path_to_error` as usual, and a member replayed from raw text is decoded
//! with its own tracker, its path carried in the error message (see
//! [`PATH_MARK`]) and spliced back by [`crate::decode`].
//!
//! Layout: this file holds the shared plumbing (error paths, replay of raw
//! members, [`Fields`], [`Flat`], the object visitor, tag search);
//! `tolerant` the lenient decoding of a single value, `modes` the field modes
//! of [`wire_struct!`], and `macros` the declaring macros themselves.

mod macros;
mod modes;
mod tolerant;

pub(crate) use macros::{object_impls, tagged_union, wire_struct};
pub(crate) use modes::{Mode, mode};
pub(crate) use tolerant::{Seen, Tolerant, tolerant_via_raw};

pub(crate) use crate::raw::Key;
use crate::raw::RawJson;
use serde::de::{self, DeserializeOwned, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer};
use std::fmt;
use std::marker::PhantomData;

/// Marks an error message that carries the path inside a nested value:
/// `PATH_MARK path<TAB>message`.
pub(crate) const PATH_MARK: &str = "\u{1}path:";

/// Object members read ahead of time, as raw JSON, in the order received.
pub(crate) type Entries = Vec<(String, RawJson)>;

/// serde_json appends ` at line L column C`; the field path says more, so drop it.
pub(crate) fn strip_position(msg: &str) -> &str {
    match msg.rfind(" at line ") {
        Some(i) if msg[i..].contains(" column ") => &msg[..i],
        _ => msg,
    }
}

/// `outer` followed by `inner` as one dotted path (`a.b`, `a[0]`).
pub(crate) fn join_path(outer: &str, inner: &str) -> String {
    match (outer, inner) {
        ("." | "", i) => i.to_string(),
        (o, "" | ".") => o.to_string(),
        (o, i) if i.starts_with('[') => format!("{o}{i}"),
        (o, i) => format!("{o}.{i}"),
    }
}

/// An error `message` at `path` inside the value being decoded. A message that
/// already carries a path (from deeper down) gets `path` put in front of it.
pub(crate) fn marked<E: de::Error>(path: &str, message: &str) -> E {
    if let Some(rest) = message.strip_prefix(PATH_MARK) {
        if let Some((inner, msg)) = rest.split_once('\t') {
            return E::custom(format_args!("{PATH_MARK}{}\t{msg}", join_path(path, inner)));
        }
    }
    E::custom(format_args!(
        "{PATH_MARK}{path}\t{}",
        strip_position(message)
    ))
}

/// The deserializer a replayed member is decoded with: its raw text, tracked.
pub(crate) type Replay<'a, 'b, 'c, 'd> = serde_path_to_error::Deserializer<
    'a,
    'b,
    &'c mut serde_json::Deserializer<serde_json::de::StrRead<'d>>,
>;

/// Decodes member `key` from its raw text with `put`, naming the path on failure.
pub(crate) fn replay<E: de::Error>(
    key: &str,
    raw: &RawJson,
    put: impl FnOnce(Replay<'_, '_, '_, '_>) -> Result<(), serde_json::Error>,
) -> Result<(), E> {
    let mut track = serde_path_to_error::Track::new();
    let mut de = serde_json::Deserializer::from_str(raw.get());
    match put(serde_path_to_error::Deserializer::new(&mut de, &mut track)) {
        Ok(()) => Ok(()),
        Err(e) => Err(marked(
            &join_path(key, &track.path().to_string()),
            &e.to_string(),
        )),
    }
}

/// Decodes `T` from raw text inside a hand-written `Deserialize`, naming the
/// path on failure: `at` (`"value"`, `"[0]"`, or `""` for the value itself)
/// followed by the path inside the value.
pub(crate) fn nested_at<T: DeserializeOwned, E: de::Error>(at: &str, raw: &str) -> Result<T, E> {
    let mut de = serde_json::Deserializer::from_str(raw);
    serde_path_to_error::deserialize(&mut de).map_err(|err| {
        marked(
            &join_path(at, &err.path().to_string()),
            &err.into_inner().to_string(),
        )
    })
}

/// The value of a union's tag: a string, or `null` (read as absent).
pub(crate) enum TagValue<'de> {
    Null,
    Str(Key<'de>),
}

impl<'de> Deserialize<'de> for TagValue<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl V {
            fn wrong<E: de::Error, T>(what: &str) -> Result<T, E> {
                Err(E::custom(format_args!("expected a string, found {what}")))
            }
        }
        impl<'de> Visitor<'de> for V {
            type Value = TagValue<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<TagValue<'de>, E> {
                Ok(TagValue::Str(Key::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<TagValue<'de>, E> {
                Ok(TagValue::Str(Key::Owned(s.to_owned())))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<TagValue<'de>, E> {
                Ok(TagValue::Str(Key::Owned(s)))
            }
            fn visit_unit<E: de::Error>(self) -> Result<TagValue<'de>, E> {
                Ok(TagValue::Null)
            }
            fn visit_none<E: de::Error>(self) -> Result<TagValue<'de>, E> {
                Ok(TagValue::Null)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<TagValue<'de>, E> {
                V::wrong("a boolean")
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<TagValue<'de>, E> {
                V::wrong("a number")
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<TagValue<'de>, E> {
                V::wrong("a number")
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<TagValue<'de>, E> {
                V::wrong("a number")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<TagValue<'de>, A::Error> {
                V::wrong("an array")
            }
            fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<TagValue<'de>, A::Error> {
                V::wrong("an object")
            }
        }
        d.deserialize_any(V)
    }
}

/// An object type whose members can be read from a map already being read.
pub(crate) trait Fields: Sized {
    /// Completes "expected …" in type errors.
    const EXPECTING: &'static str;

    /// Decodes from `pending` members (read earlier, raw), then the member whose
    /// key is `next` (its value is next in `map`), then the rest of `map`.
    fn from_map<'de, A: MapAccess<'de>>(
        pending: Entries,
        next: Option<Key<'de>>,
        map: A,
    ) -> Result<Self, A::Error>;

    /// Writes the members (without the braces).
    fn write_fields<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error>;
}

/// A part of a struct whose members sit next to the struct's own on the wire
/// (`#[serde(flatten)]`, done here without buffering through serde's `Content`).
pub(crate) trait Flat: Sized {
    /// Takes its members out of `rest`, the members the struct did not know.
    fn take<E: de::Error>(rest: &mut Entries) -> Result<Self, E>;

    /// Writes its members into the struct's map.
    fn write_flat<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error>;
}

/// A map with nothing (more) in it.
pub(crate) struct NoMore<E>(PhantomData<E>);

impl<E> NoMore<E> {
    pub(crate) fn new() -> Self {
        NoMore(PhantomData)
    }
}

impl<'de, E: de::Error> MapAccess<'de> for NoMore<E> {
    type Error = E;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, _: K) -> Result<Option<K::Value>, E> {
        Ok(None)
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, _: V) -> Result<V::Value, E> {
        Err(E::custom("a value was asked of an empty map"))
    }
}

/// The visitor of an object type: `deserialize_map`, then [`Fields::from_map`].
pub(crate) struct ObjectVisitor<T> {
    expecting: &'static str,
    marker: PhantomData<T>,
}

impl<T> ObjectVisitor<T> {
    /// `expecting` completes "expected …" in type errors.
    pub(crate) fn new(expecting: &'static str) -> Self {
        ObjectVisitor {
            expecting,
            marker: PhantomData,
        }
    }
}

impl<'de, T: Fields> Visitor<'de> for ObjectVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::from_map(Vec::new(), None, map)
    }
}

/// The visitor that decodes an object type into `slot`, in place: the
/// deserializer then hands back `()` rather than moving the whole value up
/// through its own frames, and the caller does not move it again (see
/// [`mode::Obj`]).
pub(crate) struct IntoSlot<'s, T>(pub(crate) &'s mut Option<T>);

impl<'de, T: Fields> Visitor<'de> for IntoSlot<'_, T> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(T::EXPECTING)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        *self.0 = Some(T::from_map(Vec::new(), None, map)?);
        Ok(())
    }
}

/// Reads members until the union's `tag`, keeping the others in `pending`.
///
/// Returns the tag's string (`None` if it is absent or `null`; then the whole map
/// has been read) and where it stood among the pending members.
pub(crate) fn find_tag<'de, A: MapAccess<'de>>(
    tag: &'static str,
    pending: &mut Entries,
    next: Option<Key<'de>>,
    map: &mut A,
) -> Result<(Option<Key<'de>>, usize), A::Error> {
    if let Some(i) = pending.iter().position(|(k, _)| k == tag) {
        let (_, raw) = pending.remove(i);
        let mut de = serde_json::Deserializer::from_str(raw.get());
        match TagValue::deserialize(&mut de) {
            Ok(TagValue::Str(s)) => return Ok((Some(Key::Owned(s.as_str().to_owned())), i)),
            Ok(TagValue::Null) => {}
            Err(e) => return Err(marked(tag, &e.to_string())),
        }
    }
    let mut next = next;
    loop {
        let key = match next.take() {
            Some(key) => key,
            None => match map.next_key::<Key<'de>>()? {
                Some(key) => key,
                None => return Ok((None, pending.len())),
            },
        };
        if key.as_str() == tag {
            match map.next_value::<TagValue<'de>>()? {
                TagValue::Str(s) => return Ok((Some(s), pending.len())),
                TagValue::Null => continue,
            }
        }
        let value = map.next_value::<RawJson>()?;
        pending.push((key.as_str().to_owned(), value));
    }
}

/// An unknown variant: the members read so far, the tag where it stood, and
/// the rest of the map.
pub(crate) fn unknown_variant<'de, A: MapAccess<'de>>(
    tag: &'static str,
    value: &str,
    mut pending: Entries,
    at: usize,
    mut map: A,
) -> Result<crate::RawObject, A::Error> {
    pending.insert(
        at.min(pending.len()),
        (tag.to_owned(), RawJson::string(value)),
    );
    while let Some(key) = map.next_key::<Key<'de>>()? {
        let value = map.next_value::<RawJson>()?;
        pending.push((key.as_str().to_owned(), value));
    }
    Ok(crate::RawObject::from(pending))
}
