//! The declaring macros: [`wire_struct!`], [`object_impls!`] and
//! [`tagged_union!`].

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
/// The mode in parentheses is one of [`mode`](super::mode)'s types. A `Flatten` field's wire
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
            const EXPECTING: &'static str = concat!("struct ", stringify!($name));

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
                                    <mode::$mode as Mode<$ty>>::decode_into(d, &mut self.$field)?;
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

        $crate::util::wire::object_impls!($name);
    };
}
pub(crate) use wire_struct;

/// `Serialize`, `Deserialize`, tolerant decoding and flattening for a type
/// that implements [`Fields`](super::Fields).
macro_rules! object_impls {
    ($name:ident) => {
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
                d.deserialize_map($crate::util::wire::ObjectVisitor::<Self>::new(
                    <Self as $crate::util::wire::Fields>::EXPECTING,
                ))
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
            const EXPECTING: &'static str = "a map";

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

        $crate::util::wire::object_impls!($name);
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
