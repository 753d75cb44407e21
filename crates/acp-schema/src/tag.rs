//! [`TagOnly`]: a union variant that carries nothing but its tag.

use crate::util::wire_struct;

wire_struct! {
    /// The members of a union variant that has nothing but its tag (a cancelled
    /// permission outcome, a declined elicitation): only what the sender added.
    #[derive(Default)]
    pub struct TagOnly {}
}

impl TagOnly {
    /// Nothing but the tag.
    pub fn new() -> Self {
        Self::default()
    }
}
