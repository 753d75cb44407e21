//! The integration tests of `acp-cli`: one binary, a module per concern
//! (`exec::…`, `cancel::…`, `serve::…`). Each runs the built `acp` as users
//! run it, in a sandbox (`common`: temporary HOME and XDG directories, the
//! environment cleared but for `PATH`), mostly against the fixture agents
//! of crate acp-testkit (`common::test_agent()`, `common::hostile_agent()`).
//! A new test goes into the module of its concern, or a new
//! `tests/it/<concern>.rs` listed here. Golden files are in `tests/golden/`
//! (`BLESS=1` rewrites them), other data in `tests/fixtures/`.
//!
//! The `interop_*` modules run our programs against the official SDKs and
//! acpx (crate acp-interop); a peer whose runtime is missing is skipped,
//! unless `ACP_INTEROP=require`.

mod common;

mod cancel;
mod chat;
mod chat_live;
mod check;
mod check_client;
mod check_v2;
mod completions_and_man;
mod crash;
mod exec;
mod fs_confinement;
mod golden_files;
mod help;
mod hostile;
mod import_zed;
mod interop_check_client;
mod interop_clients;
mod interop_exec;
mod interop_serve;
mod interop_v2;
mod login;
mod mock;
mod permissions;
mod reconnect;
mod record;
mod registry;
mod robustness;
mod serve;
mod terminal;
mod trace;
mod trace_html;
mod trace_v2;
