//! The integration tests of `acp-check`: one binary, a module per concern.
//! A new test goes into the module of its concern, or a new
//! `tests/it/<concern>.rs` listed here.
//!
//! - `kit_shapes`: the shapes of the official kit's fixture agents
//!   (conforming, wrong stop reason on cancel, a race, late updates,
//!   missing fields, wrong ids, an agent that stops answering) get the
//!   tiered verdict, judged by behaviour rather than timeouts.
//! - `mutants`: each mutant agent (`acp-check-mutant BUG`, crate
//!   acp-testkit) fails exactly the checks of `acp check agent` its bug
//!   breaks.
//! - `mutants_v2`: the same for `acp check agent --protocol 2` and
//!   `acp-check-mutant-v2 BUG`.
//! - `mutant_clients`: the same for `acp check client` and
//!   `acp-check-mutant-client BUG`, with a client answering wrong ids and
//!   one that stops answering.
//! - `mutant_clients_v2`: the same for `acp check client --protocol 2`
//!   and `acp-check-mutant-client-v2 BUG`.
//! - `strict_table`: `src/strict/v1.types` is rendered from the official
//!   schema (`BLESS=1` rewrites it).

// The official schemas, obtained as acp-schema's tests obtain them: their
// loader is shared, not copied. Written for acp-schema's older toolchain
// (no let-chains there).
#[allow(dead_code, clippy::collapsible_if)]
#[path = "../../../acp-schema/tests/it/common"]
mod common {
    pub mod official;
}

mod kit_shapes;
mod mutant_clients;
mod mutant_clients_v2;
mod mutants;
mod mutants_v2;
mod strict_table;
