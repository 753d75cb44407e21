//! JSON kept as received: the fields a type does not know ([`RawObject`]), the
//! variants it does not know (`Other`), and `_meta` ([`Meta`]).
//!
//! None of these is parsed into a [`Value`] on the way in: each value is kept as
//! its exact JSON text and written back byte for byte. Reading them parses on
//! demand.

use serde::de::{self, DeserializeOwned, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;

/// One JSON value, kept as its exact text.
///
/// Two values are equal when their texts are, or else when they parse to the
/// same JSON (so `{"a":1,"b":2}` equals `{"b":2,"a":1}`).
#[derive(Clone)]
pub struct RawJson(Box<RawValue>);

impl RawJson {
    /// Wraps raw JSON text.
    pub fn from_raw(raw: Box<RawValue>) -> Self {
        RawJson(raw)
    }

    /// Checks that `text` is one JSON value and keeps it as it is.
    pub fn parse(text: impl Into<String>) -> Result<Self, serde_json::Error> {
        RawValue::from_string(text.into()).map(RawJson)
    }

    /// The JSON text of `value`.
    pub fn encode(value: &impl Serialize) -> Result<Self, serde_json::Error> {
        serde_json::value::to_raw_value(value).map(RawJson)
    }

    /// A JSON string holding `s`.
    pub fn string(s: &str) -> Self {
        RawJson::from(Value::from(s))
    }

    /// The exact text.
    pub fn get(&self) -> &str {
        self.0.get()
    }

    /// The exact text, as serde_json's raw value.
    pub fn as_raw(&self) -> &RawValue {
        &self.0
    }

    /// Unwraps the raw value.
    pub fn into_raw(self) -> Box<RawValue> {
        self.0
    }

    /// Decodes the text as `T`.
    pub fn decode<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.get())
    }

    /// The value parsed (always succeeds: the text is valid JSON).
    pub fn to_value(&self) -> Value {
        self.decode().unwrap_or(Value::Null)
    }

    /// Whether this is `null`.
    pub fn is_null(&self) -> bool {
        self.get() == "null"
    }

    /// Whether this is a JSON object.
    pub fn is_object(&self) -> bool {
        self.get().starts_with('{')
    }

    /// The string, if this is a JSON string (borrowed when it has no escapes).
    pub fn as_str(&self) -> Option<Cow<'_, str>> {
        let text = self.get();
        let inner = text.strip_prefix('"')?.strip_suffix('"')?;
        if inner.contains('\\') {
            self.decode::<String>().ok().map(Cow::Owned)
        } else {
            Some(Cow::Borrowed(inner))
        }
    }
}

impl From<Value> for RawJson {
    fn from(value: Value) -> Self {
        // A `Value` always serialises (its numbers are finite, its keys strings).
        RawJson::encode(&value).unwrap_or_else(|_| RawJson::null())
    }
}

impl RawJson {
    fn null() -> Self {
        RawJson(RawValue::NULL.to_owned())
    }
}

impl PartialEq for RawJson {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get() || self.to_value() == other.to_value()
    }
}

impl fmt::Debug for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.get())
    }
}

impl fmt::Display for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.get())
    }
}

impl Serialize for RawJson {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for RawJson {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(d)?;
        if nesting(raw.get()) > MAX_NESTING {
            // serde_json skips a raw value without a depth limit; refuse what it
            // could not parse later (when someone reads the value).
            return Err(de::Error::custom("recursion limit exceeded"));
        }
        Ok(RawJson(raw))
    }
}

/// serde_json's own limit on nested arrays and objects.
const MAX_NESTING: usize = 128;

/// The deepest nesting of arrays and objects in valid JSON text.
fn nesting(text: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut bytes = text.bytes();
    while let Some(b) = bytes.next() {
        match b {
            b'"' => {
                // Skip the string: up to the next quote that is not escaped.
                while let Some(c) = bytes.next() {
                    match c {
                        b'\\' => {
                            bytes.next();
                        }
                        b'"' => break,
                        _ => {}
                    }
                }
            }
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// The members of a JSON object in the order received, each value kept as raw
/// JSON: the fields a type does not know, and the whole of a variant it does
/// not know. Written back in the same order, values byte for byte.
///
/// Two objects are equal when they have the same members, in any order.
///
/// One pointer wide: most objects have no unknown members, and every decoded
/// struct carries one of these, so the members live behind a box that only a
/// non-empty object allocates.
// The box is the point: `Option<Box<Vec<_>>>` is 8 bytes, a `Vec` 24.
#[allow(clippy::box_collection)]
#[derive(Clone, Default)]
pub struct RawObject(Option<Box<Vec<(String, RawJson)>>>);

impl RawObject {
    /// No members.
    pub fn new() -> Self {
        RawObject(None)
    }

    /// The members, in order.
    fn entries(&self) -> &[(String, RawJson)] {
        self.0.as_deref().map_or(&[], Vec::as_slice)
    }

    /// The members, to change.
    fn entries_mut(&mut self) -> &mut Vec<(String, RawJson)> {
        self.0.get_or_insert_with(Default::default)
    }

    /// The members, taken out.
    pub(crate) fn into_vec(self) -> Vec<(String, RawJson)> {
        self.0.map(|b| *b).unwrap_or_default()
    }

    /// How many members there are.
    pub fn len(&self) -> usize {
        self.entries().len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries().is_empty()
    }

    /// The raw value of member `key` (the last one, if it occurs twice).
    pub fn get(&self, key: &str) -> Option<&RawJson> {
        self.entries()
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// Member `key` decoded as `T`: `None` if it is absent, an error if it does not decode.
    pub fn get_as<T: DeserializeOwned>(&self, key: &str) -> Option<Result<T, serde_json::Error>> {
        self.get(key).map(RawJson::decode)
    }

    /// Member `key` if it is a string.
    pub fn get_str(&self, key: &str) -> Option<Cow<'_, str>> {
        self.get(key).and_then(RawJson::as_str)
    }

    /// Whether member `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets member `key` to raw JSON, in place if it exists (returning the old
    /// value), else at the end.
    pub fn insert_raw(&mut self, key: impl Into<String>, value: RawJson) -> Option<RawJson> {
        let key = key.into();
        let entries = self.entries_mut();
        match entries.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => Some(std::mem::replace(&mut slot.1, value)),
            None => {
                entries.push((key, value));
                None
            }
        }
    }

    /// Sets member `key` to `value`, like [`RawObject::insert_raw`].
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<Value>) -> Option<RawJson> {
        self.insert_raw(key, RawJson::from(value.into()))
    }

    /// Removes member `key` (every occurrence), returning its last value.
    pub fn remove(&mut self, key: &str) -> Option<RawJson> {
        let mut last = None;
        let entries = self.0.as_deref_mut()?;
        entries.retain_mut(|(k, v)| {
            if k == key {
                last = Some(v.clone());
                false
            } else {
                true
            }
        });
        last
    }

    /// The members in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &RawJson)> {
        self.entries().iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The member names in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries().iter().map(|(k, _)| k.as_str())
    }

    /// The object parsed into a map.
    pub fn to_map(&self) -> Map<String, Value> {
        self.entries()
            .iter()
            .map(|(k, v)| (k.clone(), v.to_value()))
            .collect()
    }

    /// Writes the members into a map being serialised.
    pub(crate) fn write_entries<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        for (k, v) in self.entries() {
            map.serialize_entry(k, v)?;
        }
        Ok(())
    }
}

impl From<Vec<(String, RawJson)>> for RawObject {
    fn from(entries: Vec<(String, RawJson)>) -> Self {
        if entries.is_empty() {
            RawObject(None)
        } else {
            RawObject(Some(Box::new(entries)))
        }
    }
}

impl<K: Into<String>, V: Into<Value>> FromIterator<(K, V)> for RawObject {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut obj = RawObject::new();
        for (k, v) in iter {
            obj.insert(k, v);
        }
        obj
    }
}

impl IntoIterator for RawObject {
    type Item = (String, RawJson);
    type IntoIter = std::vec::IntoIter<(String, RawJson)>;
    fn into_iter(self) -> Self::IntoIter {
        self.into_vec().into_iter()
    }
}

impl PartialEq for RawObject {
    fn eq(&self, other: &Self) -> bool {
        if self.entries() == other.entries() {
            return true;
        }
        self.len() == other.len() && self.iter().all(|(k, v)| other.get(k) == Some(v))
    }
}

impl fmt::Debug for RawObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Serialize for RawObject {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.len()))?;
        self.write_entries(&mut map)?;
        map.end()
    }
}

impl<'de> Deserialize<'de> for RawObject {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawObject;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawObject, A::Error> {
                let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0).min(64));
                while let Some(key) = map.next_key::<Key<'de>>()? {
                    entries.push((key.as_str().to_owned(), map.next_value::<RawJson>()?));
                }
                Ok(RawObject::from(entries))
            }
        }
        d.deserialize_map(V)
    }
}

/// The `_meta` extension object, kept as the exact JSON text received.
///
/// The protocol reserves `_meta` for extensions and forbids assumptions about
/// what it holds, so it is never parsed on the way in; [`Meta::get`] and
/// [`Meta::get_as`] parse it on demand. Setting a key rewrites the text, keeping
/// the other members in order.
#[derive(Clone, PartialEq)]
pub struct Meta(RawJson);

impl Meta {
    /// An empty object, written `{}`.
    pub fn new() -> Self {
        Meta(RawJson(
            RawValue::from_string("{}".to_string()).expect("`{}` is JSON"),
        ))
    }

    /// Raw JSON as `_meta`: `None` unless it is an object.
    pub fn from_raw(raw: RawJson) -> Option<Self> {
        raw.is_object().then_some(Meta(raw))
    }

    /// Parses `text`, which must be one JSON object.
    pub fn parse(text: impl Into<String>) -> Result<Self, serde_json::Error> {
        let raw = RawJson::parse(text)?;
        Meta::from_raw(raw).ok_or_else(|| de::Error::custom("`_meta` must be a JSON object"))
    }

    /// The exact text.
    pub fn as_raw(&self) -> &RawJson {
        &self.0
    }

    /// The members, values borrowed from the text.
    pub fn entries(&self) -> Vec<(String, &RawValue)> {
        serde_json::from_str::<Entries<'_>>(self.0.get())
            .map(|e| e.0)
            .unwrap_or_default()
    }

    /// The raw value of member `key`.
    pub fn get(&self, key: &str) -> Option<&RawValue> {
        self.entries()
            .into_iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// Member `key` decoded as `T`; `None` if it is absent or does not decode.
    pub fn get_as<T: DeserializeOwned>(&self, key: &str) -> Option<T> {
        self.get(key)
            .and_then(|v| serde_json::from_str(v.get()).ok())
    }

    /// Whether member `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The member names in order.
    pub fn keys(&self) -> Vec<String> {
        self.entries().into_iter().map(|(k, _)| k).collect()
    }

    /// How many members there are.
    pub fn len(&self) -> usize {
        self.entries().len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries().is_empty()
    }

    /// The object parsed into a map.
    pub fn to_map(&self) -> Map<String, Value> {
        self.0.decode().unwrap_or_default()
    }

    /// Sets member `key` to raw JSON, in place if it exists, else at the end.
    pub fn insert_raw(&mut self, key: impl Into<String>, value: RawJson) {
        let key = key.into();
        let mut members: Vec<(String, RawJson)> = self
            .entries()
            .into_iter()
            .map(|(k, v)| (k, RawJson(v.to_owned())))
            .collect();
        match members.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => members.push((key, value)),
        }
        *self = Meta::from_members(members);
    }

    /// Sets member `key` to `value`, like [`Meta::insert_raw`].
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<Value>) {
        self.insert_raw(key, RawJson::from(value.into()));
    }

    /// Removes member `key`; whether it was there.
    pub fn remove(&mut self, key: &str) -> bool {
        let members = self.entries();
        let before = members.len();
        let kept: Vec<(String, RawJson)> = members
            .into_iter()
            .filter(|(k, _)| k != key)
            .map(|(k, v)| (k, RawJson(v.to_owned())))
            .collect();
        let removed = kept.len() != before;
        if removed {
            *self = Meta::from_members(kept);
        }
        removed
    }

    fn from_members(members: Vec<(String, RawJson)>) -> Self {
        let raw = RawJson::encode(&RawObject::from(members)).expect("raw members serialise");
        Meta(raw)
    }
}

impl Default for Meta {
    fn default() -> Self {
        Meta::new()
    }
}

impl From<Map<String, Value>> for Meta {
    fn from(map: Map<String, Value>) -> Self {
        Meta(RawJson::from(Value::Object(map)))
    }
}

impl<K: Into<String>, V: Into<Value>> FromIterator<(K, V)> for Meta {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        Meta::from_members(RawObject::from_iter(iter).into_vec())
    }
}

impl fmt::Debug for Meta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.get())
    }
}

impl Serialize for Meta {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Meta {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = RawJson::deserialize(d)?;
        Meta::from_raw(raw).ok_or_else(|| de::Error::custom("`_meta` must be a JSON object"))
    }
}

/// An object key, borrowed from the input where it can be.
pub(crate) enum Key<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl Key<'_> {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Key::Borrowed(s) => s,
            Key::Owned(s) => s,
        }
    }
}

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key::Borrowed(s))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key::Owned(s.to_owned()))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Key<'de>, E> {
                Ok(Key::Owned(s))
            }
        }
        d.deserialize_str(V)
    }
}

/// The members of an object, values borrowed from its text.
struct Entries<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Entries<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Entries<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries<'a>, A::Error> {
                let mut out = Vec::new();
                while let Some(key) = map.next_key::<Key<'de>>()? {
                    out.push((key.as_str().to_owned(), map.next_value::<&'a RawValue>()?));
                }
                Ok(Entries(out))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_keeps_its_text_and_edits_in_place() {
        let mut meta: Meta = serde_json::from_str(r#"{"z":1.50,"a":{"b":[1e3,null]}}"#).unwrap();
        assert_eq!(
            serde_json::to_string(&meta).unwrap(),
            r#"{"z":1.50,"a":{"b":[1e3,null]}}"#
        );
        assert_eq!(meta.keys(), ["z", "a"]);
        assert_eq!(meta.get("z").map(RawValue::get), Some("1.50"));
        assert_eq!(meta.get_as::<f64>("z"), Some(1.5));
        meta.insert("z", 2);
        meta.insert("new", "x");
        assert_eq!(
            serde_json::to_string(&meta).unwrap(),
            r#"{"z":2,"a":{"b":[1e3,null]},"new":"x"}"#
        );
        assert!(meta.remove("a"));
        assert!(!meta.remove("a"));
        assert_eq!(
            serde_json::to_string(&meta).unwrap(),
            r#"{"z":2,"new":"x"}"#
        );
        assert!(serde_json::from_str::<Meta>("[1]").is_err());
        assert_eq!(Meta::new(), Meta::parse("{ }").unwrap());
    }

    #[test]
    fn raw_values_keep_serde_json_depth_limit() {
        let deep = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
        assert!(serde_json::from_str::<RawJson>(&deep(128)).is_ok());
        assert!(serde_json::from_str::<RawJson>(&deep(129)).is_err());
        let quoted = format!(r#"["{}\"{}"]"#, "[".repeat(200), "{".repeat(200));
        assert!(serde_json::from_str::<RawJson>(&quoted).is_ok());
    }

    #[test]
    fn raw_objects_compare_by_members() {
        let a: RawObject = serde_json::from_str(r#"{"x":1,"y":[2]}"#).unwrap();
        let b: RawObject = serde_json::from_str(r#"{"y":[ 2 ],"x":1}"#).unwrap();
        assert_eq!(a, b);
        assert_eq!(serde_json::to_string(&b).unwrap(), r#"{"y":[ 2 ],"x":1}"#);
        let c: RawObject = serde_json::from_str(r#"{"x":1}"#).unwrap();
        assert_ne!(a, c);
        assert_eq!(a.get_str("x"), None);
        let s: RawObject = serde_json::from_str(r#"{"k":"a\"b","p":"plain"}"#).unwrap();
        assert_eq!(s.get_str("k").as_deref(), Some("a\"b"));
        assert!(matches!(s.get_str("p"), Some(Cow::Borrowed("plain"))));
    }
}
