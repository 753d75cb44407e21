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

pub(crate) use crate::raw::Key;
use crate::raw::{Meta, RawJson};
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use std::borrow::Cow;
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

// ---------------------------------------------------------------------------
// Tolerant decoding: a value that may be malformed

/// A type that can be decoded leniently: a value of the wrong shape (or `null`)
/// reads as `None` instead of failing, while broken JSON still fails.
pub(crate) trait Tolerant: Sized {
    fn tolerant<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error>;
}

/// [`Tolerant`] for an object type: its raw text is read, then decoded.
pub(crate) fn tolerant_via_raw<'de, T: DeserializeOwned, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    let raw = RawJson::deserialize(d)?;
    Ok(if raw.is_null() {
        None
    } else {
        raw.decode().ok()
    })
}

/// A scalar as seen, compound values skipped over.
pub(crate) enum Seen<'de> {
    Str(Cow<'de, str>),
    Bool(bool),
    U(u64),
    I(i64),
    F(f64),
    Other,
}

impl<'de> Seen<'de> {
    pub(crate) fn read<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Seen<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Seen<'de>, E> {
                Ok(Seen::Str(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Seen<'de>, E> {
                Ok(Seen::Str(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Seen<'de>, E> {
                Ok(Seen::Str(Cow::Owned(s)))
            }
            fn visit_bool<E: de::Error>(self, b: bool) -> Result<Seen<'de>, E> {
                Ok(Seen::Bool(b))
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Seen<'de>, E> {
                Ok(Seen::U(n))
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Seen<'de>, E> {
                Ok(Seen::I(n))
            }
            fn visit_f64<E: de::Error>(self, n: f64) -> Result<Seen<'de>, E> {
                Ok(Seen::F(n))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Seen<'de>, E> {
                Ok(Seen::Other)
            }
            fn visit_none<E: de::Error>(self) -> Result<Seen<'de>, E> {
                Ok(Seen::Other)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Seen<'de>, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Seen::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Seen<'de>, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Seen::Other)
            }
        }
        d.deserialize_any(V)
    }
}

impl Tolerant for String {
    fn tolerant<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
        Ok(match Seen::read(d)? {
            Seen::Str(s) => Some(s.into_owned()),
            _ => None,
        })
    }
}

impl Tolerant for bool {
    fn tolerant<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
        Ok(match Seen::read(d)? {
            Seen::Bool(b) => Some(b),
            _ => None,
        })
    }
}

impl Tolerant for f64 {
    fn tolerant<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
        Ok(match Seen::read(d)? {
            Seen::U(n) => Some(n as f64),
            Seen::I(n) => Some(n as f64),
            Seen::F(n) => Some(n),
            _ => None,
        })
    }
}

macro_rules! tolerant_int {
    ($($ty:ty),*) => {$(
        impl Tolerant for $ty {
            fn tolerant<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
                Ok(match Seen::read(d)? {
                    Seen::U(n) => <$ty>::try_from(n).ok(),
                    Seen::I(n) => <$ty>::try_from(n).ok(),
                    _ => None,
                })
            }
        }
    )*};
}
tolerant_int!(u16, u32, u64, i64);

impl Tolerant for Value {
    fn tolerant<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::Null => None,
            v => Some(v),
        })
    }
}

impl Tolerant for RawJson {
    fn tolerant<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
        let raw = RawJson::deserialize(d)?;
        Ok((!raw.is_null()).then_some(raw))
    }
}

impl<T: DeserializeOwned> Tolerant for Vec<T> {
    /// A list that does not decode as a whole is `None` (for lists whose
    /// invalid items are not skipped one by one).
    fn tolerant<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
        tolerant_via_raw(d)
    }
}

impl<V: DeserializeOwned> Tolerant for crate::OrderedMap<V> {
    fn tolerant<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
        tolerant_via_raw(d)
    }
}

/// A seed reading one value tolerantly.
struct TolerantSeed<T>(PhantomData<T>);

impl<'de, T: Tolerant> DeserializeSeed<'de> for TolerantSeed<T> {
    type Value = Option<T>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<T>, D::Error> {
        T::tolerant(d)
    }
}

/// `x-deserialize-skip-invalid-items`: the items of a list, each read
/// tolerantly; `None` if the value is not a list.
struct Items<T>(PhantomData<T>);

impl<T: Tolerant> Items<T> {
    /// Every item, `None` where it did not decode.
    fn read<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<Option<T>>>, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Tolerant> Visitor<'de> for V<T> {
            type Value = Option<Vec<Option<T>>>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(256));
                while let Some(item) = seq.next_element_seed(TolerantSeed::<T>(PhantomData))? {
                    out.push(item);
                }
                Ok(Some(out))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(None)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(None)
            }
        }
        d.deserialize_any(V(PhantomData))
    }

    /// The items that decoded; `None` if the value is not a list.
    fn valid<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<T>>, D::Error> {
        Ok(Self::read(d)?.map(|items| items.into_iter().flatten().collect()))
    }
}

// ---------------------------------------------------------------------------
// Field modes

/// How one field of a [`wire_struct!`] decodes, what its absence means, and
/// when it is written.
pub(crate) trait Mode<T> {
    /// Whether the field is a [`Flat`] part rather than a member.
    const FLAT: bool = false;

    /// Decodes the member's value.
    fn decode<'de, D: Deserializer<'de>>(d: D) -> Result<T, D::Error>;

    /// The field's value once the whole object is read (`slot`: what was decoded).
    fn finish<E: de::Error>(
        slot: Option<T>,
        wire: &'static str,
        rest: &mut Entries,
    ) -> Result<T, E>;

    /// Writes the field (or nothing).
    fn write<M: SerializeMap>(value: &T, wire: &'static str, map: &mut M) -> Result<(), M::Error>;
}

/// The field modes, named in [`wire_struct!`] declarations.
pub(crate) mod mode {
    /// Required; always written.
    pub(crate) struct Req;
    /// Optional (`None` when absent or `null`); must decode when present; omitted when `None`.
    pub(crate) struct Opt;
    /// Its default when absent; must decode when present; always written.
    pub(crate) struct Dflt;
    /// `x-deserialize-default-on-error` for an `Option`: absent, `null` or
    /// malformed is `None`; omitted when `None`.
    pub(crate) struct Lenient;
    /// [`Lenient`], but written as `null` when `None` (a field whose `null`
    /// says something, such as a new file's `oldText`).
    pub(crate) struct LenientNull;
    /// `x-deserialize-default-on-error` for a value with a default: absent or
    /// malformed is the default; always written.
    pub(crate) struct LenientVal;
    /// `x-deserialize-skip-invalid-items` list: bad items dropped, a non-list
    /// (or absence) is empty; always written.
    pub(crate) struct Items;
    /// Like [`Items`], but required.
    pub(crate) struct ItemsReq;
    /// Like [`Items`], omitted when empty.
    pub(crate) struct ItemsNonEmpty;
    /// [`Items`] for an `Option<Vec<_>>`: a non-list is `None`; omitted when `None`.
    pub(crate) struct ItemsOpt;
    /// `x-deserialize-default-on-null`: `null` is the default; required; always written.
    pub(crate) struct NullDflt;
    /// `null` or absence is the default (an empty list); omitted when empty.
    pub(crate) struct NullDfltNonEmpty;
    /// `_meta`: any object kept as raw text; anything else is `None`; omitted when `None`.
    pub(crate) struct MetaField;
    /// A patch: absent `None`, `null` `Some(None)`, a value `Some(Some(_))`, a
    /// malformed value counts as absent.
    pub(crate) struct Patch;
    /// [`Patch`] for a list whose bad items are dropped (a non-list counts as absent).
    pub(crate) struct PatchItems;
    /// A [`Flat`] part: its members sit next to the struct's own.
    pub(crate) struct Flatten;
    /// Any JSON, kept raw (`null` included, as `Some`); `None` when absent.
    #[allow(dead_code)] // used by unstable types
    pub(crate) struct Raw;
}

fn write_some<T: Serialize, M: SerializeMap>(
    value: &Option<T>,
    wire: &'static str,
    map: &mut M,
) -> Result<(), M::Error> {
    match value {
        Some(v) => map.serialize_entry(wire, v),
        None => Ok(()),
    }
}

fn write_nonempty<T: Serialize, M: SerializeMap>(
    value: &[T],
    wire: &'static str,
    map: &mut M,
) -> Result<(), M::Error> {
    if value.is_empty() {
        Ok(())
    } else {
        map.serialize_entry(wire, value)
    }
}

fn missing<T, E: de::Error>(slot: Option<T>, wire: &'static str) -> Result<T, E> {
    slot.ok_or_else(|| E::missing_field(wire))
}

impl<T: DeserializeOwned + Serialize> Mode<T> for mode::Req {
    fn decode<'de, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
        T::deserialize(d)
    }
    fn finish<E: de::Error>(slot: Option<T>, wire: &'static str, _: &mut Entries) -> Result<T, E> {
        missing(slot, wire)
    }
    fn write<M: SerializeMap>(value: &T, wire: &'static str, map: &mut M) -> Result<(), M::Error> {
        map.serialize_entry(wire, value)
    }
}

impl<T: DeserializeOwned + Serialize> Mode<Option<T>> for mode::Opt {
    fn decode<'de, D: Deserializer<'de>>(d: D) -> Result<Option<T>, D::Error> {
        Option::<T>::deserialize(d)
    }
    fn finish<E: de::Error>(
        slot: Option<Option<T>>,
        _: &'static str,
        _: &mut Entries,
    ) -> Result<Option<T>, E> {
        Ok(slot.flatten())
    }
    fn write<M: SerializeMap>(
        value: &Option<T>,
        wire: &'static str,
        map: &mut M,
    ) -> Result<(), M::Error> {
        write_some(value, wire, map)
    }
}

impl<T: DeserializeOwned + Serialize + Default> Mode<T> for mode::Dflt {
    fn decode<'de, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
        T::deserialize(d)
    }
    fn finish<E: de::Error>(slot: Option<T>, _: &'static str, _: &mut Entries) -> Result<T, E> {
        Ok(slot.unwrap_or_default())
    }
    fn write<M: SerializeMap>(value: &T, wire: &'static str, map: &mut M) -> Result<(), M::Error> {
        map.serialize_entry(wire, value)
    }
}

impl<T: Tolerant + Serialize> Mode<Option<T>> for mode::Lenient {
    fn decode<'de, D: Deserializer<'de>>(d: D) -> Result<Option<T>, D::Error> {
        T::tolerant(d)
    }
    fn finish<E: de::Error>(
        slot: Option<Option<T>>,
        _: &'static str,
        _: &mut Entries,
    ) -> Result<Option<T>, E> {
        Ok(slot.flatten())
    }
    fn write<M: SerializeMap>(
        value: &Option<T>,
        wire: &'static str,
        map: &mut M,
    ) -> Result<(), M::Error> {
        write_some(value, wire, map)
    }
}

impl<T: Tolerant + Serialize> Mode<Option<T>> for mode::LenientNull {
    fn decode<'de, D: Deserializer<'de>>(d: D) -> Result<Option<T>, D::Error> {
        T::tolerant(d)
    }
    fn finish<E: de::Error>(
        slot: Option<Option<T>>,
        _: &'static str,
        _: &mut Entries,
    ) -> Result<Option<T>, E> {
        Ok(slot.flatten())
    }
    fn write<M: SerializeMap>(
        value: &Option<T>,
        wire: &'static str,
        map: &mut M,
    ) -> Result<(), M::Error> {
        map.serialize_entry(wire, value)
    }
}

impl<T: Tolerant + Serialize + Default> Mode<T> for mode::LenientVal {
    fn decode<'de, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
        Ok(T::tolerant(d)?.unwrap_or_default())
    }
    fn finish<E: de::Error>(slot: Option<T>, _: &'static str, _: &mut Entries) -> Result<T, E> {
        Ok(slot.unwrap_or_default())
    }
    fn write<M: SerializeMap>(value: &T, wire: &'static str, map: &mut M) -> Result<(), M::Error> {
        map.serialize_entry(wire, value)
    }
}

impl<T: Tolerant + Serialize> Mode<Vec<T>> for mode::Items {
    fn decode<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<T>, D::Error> {
        Ok(Items::<T>::valid(d)?.unwrap_or_default())
    }
    fn finish<E: de::Error>(
        slot: Option<Vec<T>>,
        _: &'static str,
        _: &mut Entries,
    ) -> Result<Vec<T>, E> {
        Ok(slot.unwrap_or_default())
    }
    fn write<M: SerializeMap>(
        value: &Vec<T>,
        wire: &'static str,
        map: &mut M,
    ) -> Result<(), M::Error> {
        map.serialize_entry(wire, value)
    }
}

impl<T: Tolerant + Serialize> Mode<Vec<T>> for mode::ItemsReq {
    fn decode<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<T>, D::Error> {
        Ok(Items::<T>::valid(d)?.unwrap_or_default())
    }
    fn finish<E: de::Error>(
        slot: Option<Vec<T>>,
        wire: &'static str,
        _: &mut Entries,
    ) -> Result<Vec<T>, E> {
        missing(slot, wire)
    }
    fn write<M: SerializeMap>(
        value: &Vec<T>,
        wire: &'static str,
        map: &mut M,
    ) -> Result<(), M::Error> {
        map.serialize_entry(wire, value)
    }
}

impl<T: Tolerant + Serialize> Mode<Vec<T>> for mode::ItemsNonEmpty {
    fn decode<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<T>, D::Error> {
        Ok(Items::<T>::valid(d)?.unwrap_or_default())
    }
    fn finish<E: de::Error>(
        slot: Option<Vec<T>>,
        _: &'static str,
        _: &mut Entries,
    ) -> Result<Vec<T>, E> {
        Ok(slot.unwrap_or_default())
    }
    fn write<M: SerializeMap>(
        value: &Vec<T>,
        wire: &'static str,
        map: &mut M,
    ) -> Result<(), M::Error> {
        write_nonempty(value, wire, map)
    }
}

impl<T: Tolerant + Serialize> Mode<Option<Vec<T>>> for mode::ItemsOpt {
    fn decode<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<T>>, D::Error> {
        Items::<T>::valid(d)
    }
    fn finish<E: de::Error>(
        slot: Option<Option<Vec<T>>>,
        _: &'static str,
        _: &mut Entries,
    ) -> Result<Option<Vec<T>>, E> {
        Ok(slot.flatten())
    }
    fn write<M: SerializeMap>(
        value: &Option<Vec<T>>,
        wire: &'static str,
        map: &mut M,
    ) -> Result<(), M::Error> {
        write_some(value, wire, map)
    }
}

impl<T: DeserializeOwned + Serialize + Default> Mode<T> for mode::NullDflt {
    fn decode<'de, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
        Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
    }
    fn finish<E: de::Error>(slot: Option<T>, wire: &'static str, _: &mut Entries) -> Result<T, E> {
        missing(slot, wire)
    }
    fn write<M: SerializeMap>(value: &T, wire: &'static str, map: &mut M) -> Result<(), M::Error> {
        map.serialize_entry(wire, value)
    }
}

impl<T: DeserializeOwned + Serialize> Mode<Vec<T>> for mode::NullDfltNonEmpty {
    fn decode<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<T>, D::Error> {
        Ok(Option::<Vec<T>>::deserialize(d)?.unwrap_or_default())
    }
    fn finish<E: de::Error>(
        slot: Option<Vec<T>>,
        _: &'static str,
        _: &mut Entries,
    ) -> Result<Vec<T>, E> {
        Ok(slot.unwrap_or_default())
    }
    fn write<M: SerializeMap>(
        value: &Vec<T>,
        wire: &'static str,
        map: &mut M,
    ) -> Result<(), M::Error> {
        write_nonempty(value, wire, map)
    }
}

impl Mode<Option<Meta>> for mode::MetaField {
    fn decode<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Meta>, D::Error> {
        Ok(Meta::from_raw(RawJson::deserialize(d)?))
    }
    fn finish<E: de::Error>(
        slot: Option<Option<Meta>>,
        _: &'static str,
        _: &mut Entries,
    ) -> Result<Option<Meta>, E> {
        Ok(slot.flatten())
    }
    fn write<M: SerializeMap>(
        value: &Option<Meta>,
        wire: &'static str,
        map: &mut M,
    ) -> Result<(), M::Error> {
        write_some(value, wire, map)
    }
}

fn write_patch<T: Serialize, M: SerializeMap>(
    value: &Option<Option<T>>,
    wire: &'static str,
    map: &mut M,
) -> Result<(), M::Error> {
    match value {
        None => Ok(()),
        Some(None) => map.serialize_entry(wire, &()),
        Some(Some(v)) => map.serialize_entry(wire, v),
    }
}

impl<T: DeserializeOwned + Serialize> Mode<Option<Option<T>>> for mode::Patch {
    fn decode<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<T>>, D::Error> {
        let raw = RawJson::deserialize(d)?;
        Ok(if raw.is_null() {
            Some(None)
        } else {
            raw.decode::<T>().ok().map(Some)
        })
    }
    fn finish<E: de::Error>(
        slot: Option<Option<Option<T>>>,
        _: &'static str,
        _: &mut Entries,
    ) -> Result<Option<Option<T>>, E> {
        Ok(slot.flatten())
    }
    fn write<M: SerializeMap>(
        value: &Option<Option<T>>,
        wire: &'static str,
        map: &mut M,
    ) -> Result<(), M::Error> {
        write_patch(value, wire, map)
    }
}

/// The valid items of a list; an error if it is not a list.
struct ValidItems<T>(Vec<T>);

impl<'de, T: Tolerant> Deserialize<'de> for ValidItems<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Items::<T>::valid(d)?
            .map(ValidItems)
            .ok_or_else(|| de::Error::custom("not a list"))
    }
}

impl<T: Tolerant + Serialize> Mode<Option<Option<Vec<T>>>> for mode::PatchItems {
    fn decode<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<Vec<T>>>, D::Error> {
        let raw = RawJson::deserialize(d)?;
        Ok(if raw.is_null() {
            Some(None)
        } else {
            raw.decode::<ValidItems<T>>().ok().map(|v| Some(v.0))
        })
    }
    fn finish<E: de::Error>(
        slot: Option<Option<Option<Vec<T>>>>,
        _: &'static str,
        _: &mut Entries,
    ) -> Result<Option<Option<Vec<T>>>, E> {
        Ok(slot.flatten())
    }
    fn write<M: SerializeMap>(
        value: &Option<Option<Vec<T>>>,
        wire: &'static str,
        map: &mut M,
    ) -> Result<(), M::Error> {
        write_patch(value, wire, map)
    }
}

impl Mode<Option<RawJson>> for mode::Raw {
    fn decode<'de, D: Deserializer<'de>>(d: D) -> Result<Option<RawJson>, D::Error> {
        RawJson::deserialize(d).map(Some)
    }
    fn finish<E: de::Error>(
        slot: Option<Option<RawJson>>,
        _: &'static str,
        _: &mut Entries,
    ) -> Result<Option<RawJson>, E> {
        Ok(slot.flatten())
    }
    fn write<M: SerializeMap>(
        value: &Option<RawJson>,
        wire: &'static str,
        map: &mut M,
    ) -> Result<(), M::Error> {
        write_some(value, wire, map)
    }
}

impl<T: Flat> Mode<T> for mode::Flatten {
    const FLAT: bool = true;
    fn decode<'de, D: Deserializer<'de>>(_: D) -> Result<T, D::Error> {
        Err(de::Error::custom("a flattened part has no key of its own"))
    }
    fn finish<E: de::Error>(_: Option<T>, _: &'static str, rest: &mut Entries) -> Result<T, E> {
        T::take(rest)
    }
    fn write<M: SerializeMap>(value: &T, _: &'static str, map: &mut M) -> Result<(), M::Error> {
        value.write_flat(map)
    }
}

// ---------------------------------------------------------------------------
// The declaring macros

/// Declares a wire struct: the struct (with `extra` for members it does not
/// know), its `Serialize` and `Deserialize`, and its tolerant decoding.
///
/// ```text
/// wire_struct! {
///     /// Doc.
///     pub struct TextContent {
///         /// Doc.
///         pub text: String = "text" (Req),
///         pub meta: Option<Meta> = "_meta" (MetaField),
///     }
/// }
/// ```
///
/// The mode in parentheses is one of [`mode`]'s types. A `Flatten` field's wire
/// name is `""` (it has no key of its own).
macro_rules! wire_struct {
    (
        $(#[$attr:meta])*
        pub struct $name:ident {
            $(
                $(#[$fattr:meta])*
                pub $field:ident : $ty:ty = $wire:literal ($mode:ident) $( if $feat:literal )?
            ),* $(,)?
        }
    ) => {
        $(#[$attr])*
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        pub struct $name {
            $(
                $(#[$fattr])*
                $( #[cfg(feature = $feat)] )?
                pub $field: $ty,
            )*
            /// Members this version does not know, kept as received and written
            /// back unchanged (after the known ones).
            pub extra: $crate::RawObject,
        }

        impl $crate::util::wire::Fields for $name {
            #[inline]
            fn from_map<'de, A: ::serde::de::MapAccess<'de>>(
                pending: $crate::util::wire::Entries,
                next: Option<$crate::util::wire::Key<'de>>,
                mut map: A,
            ) -> Result<Self, A::Error> {
                #[allow(unused_imports)]
                use $crate::util::wire::{mode, Key, Mode};
                #[derive(Default)]
                struct Slots {
                    $( $( #[cfg(feature = $feat)] )? $field: Option<$ty>, )*
                    rest: $crate::util::wire::Entries,
                }
                impl Slots {
                    fn put<'x, D: ::serde::Deserializer<'x>>(
                        &mut self,
                        key: &str,
                        d: D,
                    ) -> Result<(), D::Error> {
                        match key {
                            $(
                                $( #[cfg(feature = $feat)] )?
                                $wire if !<mode::$mode as Mode<$ty>>::FLAT => {
                                    if self.$field.is_some() {
                                        return Err(<D::Error as ::serde::de::Error>::duplicate_field($wire));
                                    }
                                    self.$field = Some(<mode::$mode as Mode<$ty>>::decode(d)?);
                                }
                            )*
                            _ => {
                                let value = <$crate::RawJson as ::serde::Deserialize>::deserialize(d)?;
                                self.rest.push((key.to_owned(), value));
                            }
                        }
                        Ok(())
                    }
                }
                struct Put<'s, 'k>(&'s mut Slots, &'k str);
                impl<'x> ::serde::de::DeserializeSeed<'x> for Put<'_, '_> {
                    type Value = ();
                    fn deserialize<D: ::serde::Deserializer<'x>>(self, d: D) -> Result<(), D::Error> {
                        self.0.put(self.1, d)
                    }
                }

                let mut slots = Slots::default();
                for (key, raw) in &pending {
                    $crate::util::wire::replay::<A::Error>(key, raw, |d| slots.put(key, d))?;
                }
                if let Some(key) = next {
                    map.next_value_seed(Put(&mut slots, key.as_str()))?;
                }
                while let Some(key) = map.next_key::<Key<'de>>()? {
                    map.next_value_seed(Put(&mut slots, key.as_str()))?;
                }
                #[allow(unused_mut)]
                let Slots { $( $( #[cfg(feature = $feat)] )? $field, )* mut rest } = slots;
                $(
                    $( #[cfg(feature = $feat)] )?
                    let $field = <mode::$mode as Mode<$ty>>::finish::<A::Error>($field, $wire, &mut rest)?;
                )*
                Ok($name {
                    $( $( #[cfg(feature = $feat)] )? $field, )*
                    extra: $crate::RawObject::from(rest),
                })
            }

            fn write_fields<M: ::serde::ser::SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
                #[allow(unused_imports)]
                use $crate::util::wire::{mode, Mode};
                $(
                    $( #[cfg(feature = $feat)] )?
                    <mode::$mode as Mode<$ty>>::write(&self.$field, $wire, map)?;
                )*
                self.extra.write_entries(map)
            }
        }

        $crate::util::wire::object_impls!($name, concat!("struct ", stringify!($name)));
    };
}
pub(crate) use wire_struct;

/// `Serialize`, `Deserialize`, tolerant decoding and flattening for a type
/// that implements [`Fields`].
macro_rules! object_impls {
    ($name:ident, $expecting:expr) => {
        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use ::serde::ser::SerializeMap;
                let mut map = s.serialize_map(None)?;
                <Self as $crate::util::wire::Fields>::write_fields(self, &mut map)?;
                map.end()
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_map($crate::util::wire::ObjectVisitor::<Self>::new($expecting))
            }
        }

        impl $crate::util::wire::Tolerant for $name {
            fn tolerant<'de, D: ::serde::Deserializer<'de>>(
                d: D,
            ) -> Result<Option<Self>, D::Error> {
                $crate::util::wire::tolerant_via_raw(d)
            }
        }

        impl $crate::util::wire::Flat for $name {
            fn take<E: ::serde::de::Error>(
                rest: &mut $crate::util::wire::Entries,
            ) -> Result<Self, E> {
                <Self as $crate::util::wire::Fields>::from_map(
                    ::std::mem::take(rest),
                    None,
                    $crate::util::wire::NoMore::<E>::new(),
                )
            }
            fn write_flat<M: ::serde::ser::SerializeMap>(
                &self,
                map: &mut M,
            ) -> Result<(), M::Error> {
                <Self as $crate::util::wire::Fields>::write_fields(self, map)
            }
        }
    };
}
pub(crate) use object_impls;

/// Declares a union discriminated by a string member (`type`, `sessionUpdate`, …).
///
/// Known tags decode into their variant (errors name the inner field path); an
/// unknown tag decodes into `Other`, which re-encodes unchanged. With
/// `default Variant(Type)`, an object without the tag decodes into that variant
/// and is written without a tag (the stdio MCP server, the agent auth method);
/// `also "tag"` makes an explicit tag decode into the default variant too.
/// A variant whose object has nothing but the tag carries [`crate::TagOnly`].
macro_rules! tagged_union {
    (
        $(#[$attr:meta])*
        pub enum $name:ident : tag $tag:literal {
            $(
                $(#[$vattr:meta])*
                $wire:literal => $variant:ident ( $inner:ty ) $( if $vfeat:literal )?
            ),* $(,)?
        }
        $( default $(#[$dattr:meta])* $default:ident ( $dinner:ty ) $( also $alias:literal )? )?
    ) => {
        $(#[$attr])*
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$vattr])* $( #[cfg(feature = $vfeat)] )? $variant($inner), )*
            $( $(#[$dattr])* $default($dinner), )?
            /// A variant this version does not know: the whole object, kept as
            /// received and re-encoded unchanged.
            Other($crate::RawObject),
        }

        impl $crate::util::wire::Fields for $name {
            #[inline]
            fn from_map<'de, A: ::serde::de::MapAccess<'de>>(
                mut pending: $crate::util::wire::Entries,
                next: Option<$crate::util::wire::Key<'de>>,
                mut map: A,
            ) -> Result<Self, A::Error> {
                let (tag, at) = $crate::util::wire::find_tag($tag, &mut pending, next, &mut map)?;
                let Some(tag) = tag else {
                    return $crate::util::wire::tagged_union!(
                        @absent $name, $tag, pending, A $(, $default, $dinner)?
                    );
                };
                match tag.as_str() {
                    $(
                        $( #[cfg(feature = $vfeat)] )?
                        $wire => <$inner as $crate::util::wire::Fields>::from_map(pending, None, map).map($name::$variant),
                    )*
                    $($( $alias => <$dinner as $crate::util::wire::Fields>::from_map(pending, None, map).map($name::$default), )?)?
                    other => $crate::util::wire::unknown_variant($tag, other, pending, at, map)
                        .map($name::Other),
                }
            }

            fn write_fields<M: ::serde::ser::SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
                match self {
                    $(
                        $( #[cfg(feature = $vfeat)] )?
                        $name::$variant(v) => {
                        map.serialize_entry($tag, $wire)?;
                        $crate::util::wire::Fields::write_fields(v, map)
                    } )*
                    $( $name::$default(v) => $crate::util::wire::Fields::write_fields(v, map), )?
                    $name::Other(o) => o.write_entries(map),
                }
            }
        }

        $crate::util::wire::object_impls!($name, "a map");
    };
    (@absent $name:ident, $tag:literal, $pending:ident, $A:ident) => {
        Err(<$A::Error as ::serde::de::Error>::missing_field($tag))
    };
    (@absent $name:ident, $tag:literal, $pending:ident, $A:ident, $default:ident, $dinner:ty) => {
        <$dinner as $crate::util::wire::Fields>::from_map(
            $pending,
            None,
            $crate::util::wire::NoMore::<$A::Error>::new(),
        )
        .map($name::$default)
    };
}
pub(crate) use tagged_union;
