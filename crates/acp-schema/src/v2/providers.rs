//! LLM providers in v2 (feature `v2-unstable`): v1's unstable methods,
//! unchanged on the wire; their params are newtypes, their results v1's types.

use super::same_params;

same_params!(
    /// Params of `providers/list`: v1's, unchanged.
    ListProvidersRequest => crate::ListProvidersRequest, new()
);

same_params!(
    /// Params of `providers/set`: v1's, unchanged.
    SetProviderRequest => crate::SetProviderRequest,
    new(provider_id: crate::ProviderId, api_type: crate::LlmProtocol, base_url: String)
);

same_params!(
    /// Params of `providers/disable`: v1's, unchanged.
    DisableProviderRequest => crate::DisableProviderRequest, new(provider_id: crate::ProviderId)
);
