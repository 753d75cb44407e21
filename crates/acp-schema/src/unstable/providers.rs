//! LLM providers (`unstable-providers`): which model back ends an agent can
//! route to, and `providers/list`, `providers/set` and `providers/disable` to
//! configure them.

use crate::util::{id_type, setters, string_enum, wire_struct};
use crate::{Meta, OrderedMap};

wire_struct! {
    /// Marks support for the `providers/*` methods.
    #[derive(Default)]
    pub struct ProvidersCapabilities {
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ProvidersCapabilities {
    /// The marker, written as `{}`.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(ProvidersCapabilities { opt { meta: Meta } });

id_type!(
    /// Identifies a configurable LLM provider.
    ProviderId
);

string_enum! {
    /// An API protocol an LLM provider speaks. Unknown ones are kept as they are.
    pub enum LlmProtocol {
        /// Anthropic's Messages API.
        "anthropic" => Anthropic,
        /// OpenAI's API.
        "openai" => OpenAi,
        /// Azure OpenAI.
        "azure" => Azure,
        /// Google Vertex AI.
        "vertex" => Vertex,
        /// Amazon Bedrock.
        "bedrock" => Bedrock,
    }
}

wire_struct! {
    /// Where a provider currently routes (no secrets).
    pub struct ProviderCurrentConfig {
        /// The protocol in use.
        pub api_type: LlmProtocol = "apiType" (Req),
        /// The endpoint in use.
        pub base_url: String = "baseUrl" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ProviderCurrentConfig {
    /// Routing with `api_type` to `base_url`.
    pub fn new(api_type: impl Into<LlmProtocol>, base_url: impl Into<String>) -> Self {
        ProviderCurrentConfig {
            api_type: api_type.into(),
            base_url: base_url.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(ProviderCurrentConfig { opt { meta: Meta } });

wire_struct! {
    /// A configurable LLM provider.
    pub struct ProviderInfo {
        /// The provider's id.
        pub provider_id: ProviderId = "providerId" (Req),
        /// The protocols it can be configured with (unknown ones kept, bad ones dropped).
        pub supported: Vec<LlmProtocol> = "supported" (ItemsReq),
        /// Whether the agent needs this provider configured to work.
        pub required: bool = "required" (Req),
        /// Its current routing, if it is configured.
        pub current: Option<ProviderCurrentConfig> = "current" (Opt),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ProviderInfo {
    /// Provider `provider_id`, speaking `supported`.
    pub fn new(
        provider_id: impl Into<ProviderId>,
        supported: impl Into<Vec<LlmProtocol>>,
        required: bool,
    ) -> Self {
        ProviderInfo {
            provider_id: provider_id.into(),
            supported: supported.into(),
            required,
            current: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(ProviderInfo { opt { current: ProviderCurrentConfig, meta: Meta } });

wire_struct! {
    /// The `providers/list` request.
    #[derive(Default)]
    pub struct ListProvidersRequest {
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ListProvidersRequest {
    /// An empty request.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(ListProvidersRequest { opt { meta: Meta } });

wire_struct! {
    /// The result of `providers/list`.
    pub struct ListProvidersResponse {
        /// Every configurable provider.
        pub providers: Vec<ProviderInfo> = "providers" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl ListProvidersResponse {
    /// The providers `providers`.
    pub fn new(providers: impl Into<Vec<ProviderInfo>>) -> Self {
        ListProvidersResponse {
            providers: providers.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(ListProvidersResponse { opt { meta: Meta } });

wire_struct! {
    /// The `providers/set` request: replaces the whole configuration of one
    /// provider.
    pub struct SetProviderRequest {
        /// The provider to configure.
        pub provider_id: ProviderId = "providerId" (Req),
        /// The protocol to use.
        pub api_type: LlmProtocol = "apiType" (Req),
        /// The endpoint to use.
        pub base_url: String = "baseUrl" (Req),
        /// Headers to send with every call (credentials go here), in order.
        pub headers: Option<OrderedMap<String>> = "headers" (Opt),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SetProviderRequest {
    /// Route `provider_id` with `api_type` to `base_url`.
    pub fn new(
        provider_id: impl Into<ProviderId>,
        api_type: impl Into<LlmProtocol>,
        base_url: impl Into<String>,
    ) -> Self {
        SetProviderRequest {
            provider_id: provider_id.into(),
            api_type: api_type.into(),
            base_url: base_url.into(),
            headers: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(SetProviderRequest { opt { headers: OrderedMap<String>, meta: Meta } });

wire_struct! {
    /// The (empty) result of `providers/set`.
    #[derive(Default)]
    pub struct SetProviderResponse {
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl SetProviderResponse {
    /// An empty response.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(SetProviderResponse { opt { meta: Meta } });

wire_struct! {
    /// The `providers/disable` request: stop using one provider.
    pub struct DisableProviderRequest {
        /// The provider to disable.
        pub provider_id: ProviderId = "providerId" (Req),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl DisableProviderRequest {
    /// Disable `provider_id`.
    pub fn new(provider_id: impl Into<ProviderId>) -> Self {
        DisableProviderRequest {
            provider_id: provider_id.into(),
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(DisableProviderRequest { opt { meta: Meta } });

wire_struct! {
    /// The (empty) result of `providers/disable`.
    #[derive(Default)]
    pub struct DisableProviderResponse {
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl DisableProviderResponse {
    /// An empty response.
    pub fn new() -> Self {
        Self::default()
    }
}

setters!(DisableProviderResponse { opt { meta: Meta } });
