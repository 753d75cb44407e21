//! Token usage of a prompt turn (`unstable-session-usage`), reported in the
//! `session/prompt` result.

use crate::Meta;
use crate::util::{setters, wire_struct};

wire_struct! {
    /// How many tokens a prompt turn used.
    pub struct Usage {
        /// All tokens of the turn.
        pub total_tokens: u64 = "totalTokens" (Req),
        /// Tokens sent to the model.
        pub input_tokens: u64 = "inputTokens" (Req),
        /// Tokens the model produced.
        pub output_tokens: u64 = "outputTokens" (Req),
        /// Reasoning tokens, if the model reports them.
        pub thought_tokens: Option<u64> = "thoughtTokens" (Lenient),
        /// Input tokens read from the prompt cache.
        pub cached_read_tokens: Option<u64> = "cachedReadTokens" (Lenient),
        /// Input tokens written to the prompt cache.
        pub cached_write_tokens: Option<u64> = "cachedWriteTokens" (Lenient),
        /// Extension metadata.
        pub meta: Option<Meta> = "_meta" (MetaField),
    }
}

impl Usage {
    /// `total_tokens`, of which `input_tokens` in and `output_tokens` out.
    pub fn new(total_tokens: u64, input_tokens: u64, output_tokens: u64) -> Self {
        Usage {
            total_tokens,
            input_tokens,
            output_tokens,
            thought_tokens: None,
            cached_read_tokens: None,
            cached_write_tokens: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

setters!(Usage {
    opt {
        thought_tokens: u64,
        cached_read_tokens: u64,
        cached_write_tokens: u64,
        meta: Meta,
    }
});
