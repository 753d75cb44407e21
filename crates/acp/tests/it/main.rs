//! The integration tests of `acp`: one binary, a module per concern, so a
//! test's name says what it is about (`cancellation::…`, `wire::…`). A new
//! test goes into the module of its concern, or a new `tests/it/<concern>.rs`
//! listed here. `support` holds what they share: connected pairs over an
//! in-memory transport, the raw-bytes peer, bounded waits, small agents.
//! The tests that measure this process's memory are in `tests/memory/`.

mod support;

mod backpressure;
mod cancellation;
mod close;
mod codec;
mod concurrency;
mod dropped;
mod examples;
mod methods;
mod ordering;
mod over_long;
mod process;
mod readme;
// The remote transports need their features (`cargo test -p acp --all-features`,
// or the workspace's tests, where acp-cli turns them on).
#[cfg(all(feature = "websocket", feature = "http", feature = "server"))]
mod remote;
#[cfg(all(feature = "websocket", feature = "http", feature = "server"))]
mod remote_faults;
#[cfg(all(feature = "websocket", feature = "http", feature = "server"))]
mod remote_operators;
#[cfg(all(feature = "websocket", feature = "http", feature = "server"))]
mod remote_resume;
#[cfg(all(feature = "websocket", feature = "http", feature = "server"))]
mod remote_support;
mod robustness;
mod tap;
mod unstable;
#[cfg(feature = "v2")]
mod v2_bridge;
#[cfg(feature = "v2")]
mod v2_map;
mod v2_readme;
#[cfg(feature = "v2")]
mod v2_runtime;
mod wire;
