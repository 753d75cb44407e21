//! Field modes: how one field of a [`wire_struct!`](super::wire_struct) decodes,
//! what its absence means, and when it is written.

use super::Tolerant;
use super::tolerant::Items;
use super::{Entries, Fields, Flat, IntoSlot};
use crate::raw::{Meta, RawJson};
use serde::de::{self, DeserializeOwned};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize};

/// How one field of a [`wire_struct!`](super::wire_struct) decodes, what its absence means, and
/// when it is written.
pub(crate) trait Mode<T> {
    /// Whether the field is a [`Flat`] part rather than a member.
    const FLAT: bool = false;

    /// Decodes the member's value.
    fn decode<'de, D: Deserializer<'de>>(d: D) -> Result<T, D::Error>;

    /// Decodes the member's value into the struct's slot for it.
    #[inline]
    fn decode_into<'de, D: Deserializer<'de>>(d: D, slot: &mut Option<T>) -> Result<(), D::Error> {
        *slot = Some(Self::decode(d)?);
        Ok(())
    }

    /// The field's value once the whole object is read (`slot`: what was decoded).
    fn finish<E: de::Error>(
        slot: Option<T>,
        wire: &'static str,
        rest: &mut Entries,
    ) -> Result<T, E>;

    /// Writes the field (or nothing).
    fn write<M: SerializeMap>(value: &T, wire: &'static str, map: &mut M) -> Result<(), M::Error>;
}

/// The field modes, named in [`wire_struct!`](super::wire_struct) declarations.
pub(crate) mod mode {
    /// Required; always written.
    pub(crate) struct Req;
    /// [`Req`] for an object type, decoded in place (no move of the value
    /// up through the deserializer's frames): for the members of messages
    /// that arrive by the thousand, as a notification's `update`.
    pub(crate) struct Obj;
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
    /// A [`Flat`](super::Flat) part: its members sit next to the struct's own.
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

impl<T: Fields + DeserializeOwned + Serialize> Mode<T> for mode::Obj {
    fn decode<'de, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
        T::deserialize(d)
    }
    #[inline]
    fn decode_into<'de, D: Deserializer<'de>>(d: D, slot: &mut Option<T>) -> Result<(), D::Error> {
        d.deserialize_map(IntoSlot(slot))
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
