//! Extension methods: any method whose name starts with `_`, with raw JSON params.
//!
//! Both sides may send extension requests and notifications. Their params and
//! results are kept as the exact JSON text received.

use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;
use std::sync::Arc;

/// An extension request (`_vendor/method`), params kept as raw JSON.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ExtRequest {
    /// The method name, starting with `_`.
    pub method: Arc<str>,
    /// The params, exactly as received.
    pub params: Box<RawValue>,
}

impl ExtRequest {
    /// An extension request with params serialised from `params`.
    pub fn new(method: impl Into<Arc<str>>, params: &impl Serialize) -> serde_json::Result<Self> {
        Ok(ExtRequest {
            method: method.into(),
            params: serde_json::value::to_raw_value(params)?,
        })
    }

    /// An extension request with params that are already JSON.
    pub fn from_raw(method: impl Into<Arc<str>>, params: Box<RawValue>) -> Self {
        ExtRequest {
            method: method.into(),
            params,
        }
    }
}

impl PartialEq for ExtRequest {
    fn eq(&self, other: &Self) -> bool {
        self.method == other.method && self.params.get() == other.params.get()
    }
}

impl Serialize for ExtRequest {
    /// Serialises the params only; the method travels in the envelope.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.params.serialize(s)
    }
}

/// An extension notification (`_vendor/event`), params kept as raw JSON.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ExtNotification {
    /// The method name, starting with `_`.
    pub method: Arc<str>,
    /// The params, exactly as received.
    pub params: Box<RawValue>,
}

impl ExtNotification {
    /// An extension notification with params serialised from `params`.
    pub fn new(method: impl Into<Arc<str>>, params: &impl Serialize) -> serde_json::Result<Self> {
        Ok(ExtNotification {
            method: method.into(),
            params: serde_json::value::to_raw_value(params)?,
        })
    }

    /// An extension notification with params that are already JSON.
    pub fn from_raw(method: impl Into<Arc<str>>, params: Box<RawValue>) -> Self {
        ExtNotification {
            method: method.into(),
            params,
        }
    }
}

impl PartialEq for ExtNotification {
    fn eq(&self, other: &Self) -> bool {
        self.method == other.method && self.params.get() == other.params.get()
    }
}

impl Serialize for ExtNotification {
    /// Serialises the params only; the method travels in the envelope.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.params.serialize(s)
    }
}

/// The result of an extension request, kept as raw JSON.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ExtResponse(pub Box<RawValue>);

impl ExtResponse {
    /// A result serialised from `value`.
    pub fn new(value: &impl Serialize) -> serde_json::Result<Self> {
        Ok(ExtResponse(serde_json::value::to_raw_value(value)?))
    }
}

impl PartialEq for ExtResponse {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
    }
}
