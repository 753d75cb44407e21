//! Tolerant decoding: a value that may be malformed.

use crate::raw::RawJson;
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

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
pub(super) struct Items<T>(PhantomData<T>);

impl<T: Tolerant> Items<T> {
    /// Every item, `None` where it did not decode.
    pub(super) fn read<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Vec<Option<T>>>, D::Error> {
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
    pub(super) fn valid<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<T>>, D::Error> {
        Ok(Self::read(d)?.map(|items| items.into_iter().flatten().collect()))
    }
}
